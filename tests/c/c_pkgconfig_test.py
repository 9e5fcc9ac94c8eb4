#!/usr/bin/env python3
"""C made first-class, as a user meets it (docs/c-api.md, docs/schema.md "Generating a C header"):

- `pkg-config --cflags --libs evring` works from the build tree with nothing
  installed (PKG_CONFIG_PATH=BUILD/meson-uninstalled): the source tree's
  include/ and a run path to this build's libevring.so;
- a C program built exactly `cc -std=c11 prog.c $(pkg-config --cflags --libs evring)`
  writes ten typed events through a header `evring schema compile --lang c`
  generated, and `evring watch` decodes them to the values written;
- the generated headers of every schema in the tree compile under
  -std=c11 and -std=gnu11 with -Wall -Wextra -Wpedantic -Werror, two at once.

Environment (tests/c/meson.build): EVRING_BIN, BUILD_ROOT, SOURCE_ROOT, CC, PKG_CONFIG.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

EVRING = os.environ["EVRING_BIN"]
BUILD = os.environ["BUILD_ROOT"]
SOURCE = os.environ["SOURCE_ROOT"]
CC = os.environ.get("CC", "cc")
PKG_CONFIG = os.environ.get("PKG_CONFIG", "pkg-config")
STRICT = ["-Wall", "-Wextra", "-Wpedantic", "-Werror"]


def run(args, env=None, timeout=120):
    done = subprocess.run(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(args)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return done.stdout


def uninstalled_env():
    env = dict(os.environ)
    env["PKG_CONFIG_PATH"] = os.path.join(BUILD, "meson-uninstalled")
    env.pop("LD_LIBRARY_PATH", None)  # the program must find libevring.so by its run path
    return env


def compile_header(schema, out, *extra):
    run([EVRING, "schema", "compile", "--lang", "c", *extra, schema, "-o", out])


def test_pkg_config_from_the_build_tree(tmp):
    flags = run([PKG_CONFIG, "--cflags", "--libs", "evring"], env=uninstalled_env()).split()
    assert f"-I{os.path.join(SOURCE, 'include')}" in flags, flags
    assert f"-L{os.path.join(BUILD, 'lib', 'bindings')}" in flags and "-levring" in flags, flags
    assert f"-Wl,-rpath,{os.path.join(BUILD, 'lib', 'bindings')}" in flags, flags


def test_a_c_program_writes_ten_typed_events_that_watch_decodes(tmp):
    header = os.path.join(tmp, "orders_schema.h")
    compile_header(os.path.join(SOURCE, "tests", "schemas", "orders.toml"), header)
    program = os.path.join(tmp, "c_typed_writer")
    env = uninstalled_env()
    flags = run([PKG_CONFIG, "--cflags", "--libs", "evring"], env=env).split()
    run([CC, "-std=c11", *STRICT, "-I", tmp, os.path.join(SOURCE, "tests", "c", "c_typed_writer.c"), *flags,
         "-o", program], env=env)
    ring = f"/dev/shm/evring-c-typed-{os.getpid()}"
    try:
        out = run([program, ring], env=env)
        assert out.startswith("wrote 10 events"), out
        lines = run([EVRING, "watch", ring, "--from", "oldest", "--format", "jsonl"]).splitlines()
    finally:
        for left in [ring, ring + ".readers"]:  # the kept ring, and the registry evring watch joined
            if os.path.exists(left):
                os.unlink(left)
    events = [json.loads(line) for line in lines]
    assert [e["type_name"] for e in events] == [
        "ORDER_NEW", "ORDER_NEW", "ORDER_CANCEL", "FILL", "HEARTBEAT", "BOOK_SNAPSHOT", "ORDER_NEW",
        "ORDER_CANCEL", "FILL", "HEARTBEAT"], events
    assert [e["seqno"] for e in events] == list(range(1, 11))
    first = events[0]["fields"]
    assert first["order_id"] == 1001 and first["price"] == {"mantissa": 12345, "exponent": -2}, first
    assert first["quantity"] == 10 and first["side"] == "BUY" and first["tags"] == [1, 2, 3], first
    assert first["trader"] == "0x" + "11" * 20 and first["note_length"] == 5, first
    assert first["note"] == "0x" + b"first".hex(), first
    assert events[0]["content_ext"][:2] == [7, 1001], events[0]
    assert events[1]["fields"]["side"] == "SELL" and events[1]["fields"]["note"] == "0x", events[1]
    assert events[2]["fields"] == {"order_id": 1001, "reason": "NO_FUNDS"}, events[2]
    f = events[3]["fields"]
    assert f["order_id"] == 1002 and f["quantity"] == 7 and f["is_final"] is True and f["fee_ratio"] == 0.5, f
    assert int(f["notional"], 0) == 2**64 + 2**40 + 5 and int(f["venue_fees"], 0) == 1, f
    assert f["legs_count"] == 2, f
    assert f["legs"] == [{"venue": 3, "quantity": 4, "rate": 0.25}, {"venue": 5, "quantity": 3, "rate": 1.5}], f
    assert events[4]["payload_size"] == 0
    book = events[5]["fields"]
    assert [lv["price"]["mantissa"] for lv in book["levels"]] == [100, 101, 102, 103], book
    assert [lv["size"] for lv in book["levels"]] == [0, 10, 20, 30], book
    assert book["checksum"] == "0xdeadbeef" and book["sequence"] == 99, book
    assert events[6]["fields"]["note"] == "0x78" and events[7]["fields"]["reason"] == "PRICE_BAND"
    assert events[8]["fields"]["legs"] == [] and events[8]["fields"]["legs_count"] == 0


def test_every_schema_of_the_tree_compiles_to_strict_c(tmp):
    schemas = [os.path.join(SOURCE, "schemas", n) for n in sorted(os.listdir(os.path.join(SOURCE, "schemas")))]
    schemas += [os.path.join(SOURCE, "tests", "schemas", n)
                for n in sorted(os.listdir(os.path.join(SOURCE, "tests", "schemas")))]
    includes = []
    for i, schema in enumerate(schemas):
        header = os.path.join(tmp, f"schema{i}.h")
        # The monad schemas share content_name monad_exec: each header gets its own prefix.
        compile_header(schema, header, "--namespace", f"s{i}")
        includes.append(f'#include "schema{i}.h"\n')
    unit = os.path.join(tmp, "all.c")
    with open(unit, "w") as f:
        f.write("".join(includes) + "int main(void) { return 0; }\n")
    flags = run([PKG_CONFIG, "--cflags", "evring"], env=uninstalled_env()).split()
    for std in ["-std=c11", "-std=gnu11"]:
        run([CC, std, *STRICT, "-I", tmp, *flags, "-c", unit, "-o", os.path.join(tmp, "all.o")])
    # The content_name is the default prefix.
    compile_header(os.path.join(SOURCE, "tests", "schemas", "hostile_names.toml"), os.path.join(tmp, "hostile.h"))
    with open(os.path.join(tmp, "hostile.h")) as f:
        text = f.read()
    assert "typedef struct hostile_names_EOF {" in text and "HOSTILE_NAMES_STDIN_LINUX = 3," in text, text[:2000]
    assert "uint64_t unix_;" in text and "uint32_t errno_;" in text, "macro names get a trailing _"


def test_a_prefix_that_is_not_a_c_name_is_refused(tmp):
    schema = os.path.join(SOURCE, "tests", "schemas", "orders.toml")
    for bad in ["a::b", "int", "9lives"]:
        done = subprocess.run([EVRING, "schema", "compile", "--lang", "c", "--namespace", bad, schema, "-o",
                               os.path.join(tmp, "x.h")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              timeout=60)
        assert done.returncode == 1, (bad, done.stderr)
        assert f"'{bad}' is not a C name" in done.stderr, done.stderr
        assert not os.path.exists(os.path.join(tmp, "x.h"))


def test_names_that_collide_in_c_are_refused(tmp):
    schema = os.path.join(tmp, "clash.toml")
    with open(schema, "w") as f:
        f.write('content_type = 77\ncontent_name = "clash"\n'
                '[[event]]\nnumber = 2\nname = "tick"\n[[event]]\nnumber = 3\nname = "TICK"\n')
    done = subprocess.run([EVRING, "schema", "compile", "--lang", "c", schema, "-o", os.path.join(tmp, "x.h")],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert "event 'tick' and event 'TICK' would both be named CLASH_TICK in C" in done.stderr or \
        "event 'TICK' and event 'tick' would both be named CLASH_TICK in C" in done.stderr, done.stderr


def main():
    failures = 0
    tests = [(name, fn) for name, fn in globals().items() if name.startswith("test_")]
    for name, fn in tests:
        tmp = tempfile.mkdtemp(prefix="evring-c-pkgconfig-")
        try:
            fn(tmp)
            print(f"ok {name}")
        except Exception as e:  # an assertion, or a value that is not what was written
            failures += 1
            print(f"FAILED {name}: {e}", file=sys.stderr)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
