#!/usr/bin/env python3
"""Runs the Rust crate's tests (`cargo test --offline`) and reports each one as
a TAP test case, so meson counts them (scripts/count-results.py counts test
cases in meson's JUnit log).

    cargo_tap.py CARGO MANIFEST_DIR

The environment says where libevring.so is (PKG_CONFIG_PATH=BUILD/meson-uninstalled,
read by rust/build.rs) and where cargo builds (CARGO_TARGET_DIR). A test that
skips itself writes "NAME<TAB>REASON" to the file EVRING_SKIP_FILE names
(rust/tests/common/mod.rs): it is reported as skipped with its reason. A build
that fails is one failed test case. cargo's whole output goes to the log as
TAP comments.
"""
import os
import re
import subprocess
import sys
import tempfile

RESULT = re.compile(r"^test (.+?) \.\.\. (ok|FAILED|ignored)$")
RUNNING = re.compile(r"^\s*Running (?:unittests )?(\S+)")
DOCTESTS = re.compile(r"^\s*Doc-tests (\S+)")


def main():
    cargo, manifest_dir = sys.argv[1], sys.argv[2]
    env = dict(os.environ)
    # The rustc and rustdoc beside this cargo (Debian's /usr/bin), not others first on PATH
    # (a rustdoc of another version cannot read the crate this rustc built).
    for tool in ["rustc", "rustdoc"]:
        path = os.path.join(os.path.dirname(cargo), tool)
        if tool.upper() not in env and os.access(path, os.X_OK):
            env[tool.upper()] = path
    with tempfile.NamedTemporaryFile("r", prefix="evring-rust-skips-", suffix=".txt") as skips:
        env["EVRING_SKIP_FILE"] = skips.name
        run = subprocess.run(
            [cargo, "test", "--offline", "--locked", "--manifest-path", os.path.join(manifest_dir, "Cargo.toml"),
             "--", "--test-threads=2"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        skipped = {}
        for line in skips.read().splitlines():
            name, _, reason = line.partition("\t")
            skipped[name] = reason
    cases = []
    suite = "evring"
    for line in run.stdout.splitlines():
        print("# " + line)
        m = RUNNING.match(line)
        if m:
            suite = os.path.basename(m.group(1)).split("-")[0].split(".")[0]
            suite = "unit" if suite == "lib" else suite
            continue
        m = DOCTESTS.match(line)
        if m:
            suite = "doc"
            continue
        m = RESULT.match(line)
        if m:
            cases.append((f"{suite}: {m.group(1)}", m.group(2), m.group(1)))
    n = 0
    for name, result, bare in cases:
        n += 1
        if result == "ok" and bare in skipped:
            print(f"ok {n} - {name} # SKIP {skipped[bare]}")
        elif result == "ok":
            print(f"ok {n} - {name}")
        elif result == "ignored":
            print(f"ok {n} - {name} # SKIP ignored")
        else:
            print(f"not ok {n} - {name}")
    if run.returncode != 0 and all(result != "FAILED" for _, result, _ in cases):
        n += 1
        print(f"not ok {n} - cargo test exited with status {run.returncode} (a build failure: see the log)")
    print(f"1..{n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
