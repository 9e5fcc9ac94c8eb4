"""Bad arguments raise evring.Error naming the argument and the reason (issue 32,
"Bad input gets a clear error"), and what a message echoes is bounded and
escaped (python/src/arguments.hpp, lib/bindings/error_text.hpp).

Before: pybind11's "Unable to cast Python instance to C++ type" for lone
surrogates, None as a type name, flow tags of -1 and 2^64, levels of 2^70,
3.5 and '3'; level=True, a bool field of 2, an f32 of 1e300 (stored as inf),
an f64 of "1.5" and char[N] bytes that are not UTF-8 were taken; a bytes[n]
field left out was refused; open(wait=nan) never returned; keyword lists and
names of a megabyte were echoed whole.
"""
import math
import os
import re
import subprocess
import sys

import pytest

import evring

SCHEMA = """
content_type = 4662
content_name = "arguments"
keywords = ["trades", "quotes"]

[[event]]
number = 7
name = "VALUES"
fields = [
  { name = "flag", type = "bool" },
  { name = "f", type = "f32" },
  { name = "d", type = "f64" },
  { name = "s", type = "char[8]" },
  { name = "n", type = "u32" },
  { name = "blob", type = "bytes[n]" },
]
"""

# lib/bindings/error_text.hpp's bound, plus the note of what was left out.
MAX_MESSAGE = 1024 + 64


@pytest.fixture
def writer(ring_path):
    with evring.create(ring_path, descriptor_shift=8, payload_shift=16, schema=SCHEMA) as w:
        yield w


def refused(call, pattern):
    with pytest.raises(evring.Error, match=pattern) as caught:
        call()
    message = str(caught.value)
    assert len(message) <= MAX_MESSAGE and all(c >= " " for c in message), message
    return message


def test_event_types_that_are_neither_a_number_nor_a_name(writer):
    refused(lambda: writer.record("\ud800", b""), r"event type: '\\ud800' holds a lone surrogate \(U\+D800\)")
    refused(lambda: writer.record(None, b""), r"event type: give a number \(0\.\.65535\) or a name .*, not None$")
    refused(lambda: writer.record(3.0, b""), r"event type: give a number .*, not float 3\.0")
    refused(lambda: writer.record(True, b""), r"event type: give a number .*, not bool True")
    refused(lambda: writer.record(-1, b""), r"event type -1 is not in 0\.\.65535")
    refused(lambda: writer.wants(None), r"event type: give a number")
    message = refused(lambda: writer.record("N" * 1_000_000, b""), r"the schema has no event type named 'NNN")
    assert "(1000000 bytes)" in message


def test_flow_tags_outside_64_bits(writer):
    refused(lambda: writer.record_raw(3, b"x", (-1,)), r"^flow\[0\] -1 is not in 0\.\.2\^64-1$")
    refused(lambda: writer.record_raw(3, b"x", (0, 2**64)), r"^flow\[1\] 18446744073709551616 is not in 0\.\.2\^64-1$")
    refused(lambda: writer.record("VALUES", flag=True, flow=(-1,)), r"flow\[0\] -1 is not in")
    refused(lambda: writer.record_raw(3, b"x", ("1",)), r"flow\[0\]: give an int \(0\.\.2\^64-1\), not str '1'")
    refused(lambda: writer.record_raw(3, b"x", 5), r"flow: give a tuple of up to 4 flow tags .*, not int 5")
    refused(lambda: writer.record("VALUES", {}, (1,), flow=(2,)), r"flow given twice")
    assert writer.record_raw(3, b"x", [2**64 - 1, 0]) == 1   # a list is a sequence of tags too


def test_levels_and_keywords(ring_path, writer):
    refused(lambda: evring.open(ring_path, level=2**70), r"^level 1180591620717411303424 is not in 0\.\.15$")
    refused(lambda: evring.open(ring_path, level=3.5), r"^level: give an int \(0\.\.15\), not float 3\.5$")
    refused(lambda: evring.open(ring_path, level="3"), r"^level: give an int \(0\.\.15\), not str '3'$")
    refused(lambda: evring.open(ring_path, level=True), r"^level: give an int \(0\.\.15\), not bool True$")
    refused(lambda: evring.open(ring_path, keywords=["trades", 7]), r"^keywords\[1\]: give a str, not int$")
    refused(lambda: evring.open(ring_path, keywords=7), r"^keywords: give a list of keyword names")
    with evring.open(ring_path, level=3, keywords=["trades"]) as reader:
        assert reader.registered


def test_huge_keywords_and_names_are_not_echoed_whole(ring_path, writer):
    for keywords in ("k" * 1_048_576, ["k" * 1000] * 100):
        message = refused(lambda: evring.open(ring_path, keywords=keywords), r"unknown keyword 'kkk")
        # Shortened where the library names the keyword (util/text_escape: "...(N bytes)"),
        # or at the binding's boundary (error_text: "bytes left out"): never echoed whole.
        assert len(message) < 4096 and message.endswith("(schema 'arguments' has: trades, quotes)")
        assert "bytes left out" in message or re.search(r"\.\.\.\(\d+ bytes\)", message)
    # Refused by the stream source's URL parser when built with libnats, else as an unknown scheme.
    message = refused(lambda: evring.open("nats://" + "h" * 1_048_576 + ":4222/feed"), r"'nats://hhh")
    assert "bytes left out" in message or re.search(r"\.\.\.\(\d+ bytes\)", message)
    message = refused(lambda: evring.open("/dev/shm/" + "n" * 300_000), r"^opening '/dev/shm/nnn")
    assert "bytes left out" in message and message.endswith("File name too long")


def test_paths_that_name_nothing_a_file_can_be(ring_path):
    refused(lambda: evring.open("\ud800"), r"^source: '\\ud800' holds a lone surrogate \(U\+D800\)")
    refused(lambda: evring.open(None), r"^source: give a path or a name \(str, bytes or os\.PathLike\), not NoneType$")
    refused(lambda: evring.create(None), r"^name: give a path or a name")
    refused(lambda: evring.create(ring_path, schema="\ud800\n"), r"^schema: '\\ud800\\n' holds a lone surrogate")
    refused(lambda: evring.open(ring_path, schema=5), r"^schema: give a path or a name")
    # A name read from a directory keeps its undecodable bytes (os.fsdecode): named, escaped.
    refused(lambda: evring.open(os.fsdecode(b"/dev/shm/evring-pytest-\xff-none")),
            r"evring-pytest-\\xff-none': No such file or directory")
    refused(lambda: evring.open("/dev/shm/evring-pytest-\x1b[31mred"), r"evring-pytest-\\x1b\[31mred")
    refused(lambda: evring.create(ring_path, descriptor_shift=-1), r"^descriptor_shift -1 is not in 0\.\.63$")
    refused(lambda: evring.create(ring_path, content_type="1"), r"^content_type: give an int")


def test_timeouts_and_batch_sizes(ring_path, writer):
    reader = evring.open(ring_path)
    refused(lambda: reader.follow(timeout="1"), r"^bad timeout '1': give seconds \(an int or a float\), not str$")
    refused(lambda: reader.follow(timeout=math.nan), r"^bad timeout nan: give seconds, 0 or more$")
    refused(lambda: reader.follow(timeout=-2**80), r"^bad timeout -1208925819614629174706176: give seconds")
    refused(lambda: reader.read_batch(-1), r"^max_events -1 is not in 0\.\.")
    refused(lambda: reader.read_batch(None), r"^max_events: give an int")
    refused(lambda: reader.seek("\udc80"), r"^start: '\\udc80' holds a lone surrogate")
    refused(lambda: reader.set_where(7), r"^expression: give a str, not int$")
    reader.follow(timeout=10**400)   # more than a float holds: no limit, not an error
    reader.close()


def test_waiting_for_nan_seconds_is_refused_at_once(ring_path):
    # It waited forever: every comparison with NaN is false, so its deadline never came.
    code = ("import math, evring\n"
            "try:\n"
            f"    evring.open({ring_path + '-never'!r}, wait=math.nan)\n"
            "except evring.Error as e:\n"
            "    print(e)\n")
    child = subprocess.run([sys.executable, "-c", code], env=dict(os.environ), capture_output=True, text=True,
                           timeout=60)
    assert child.stdout == "wait: nan is not a number of seconds, 0 or more\n", child.stdout + child.stderr
    refused(lambda: evring.open(ring_path + "-never", wait=-1), r"^wait: -1 is not a number of seconds")
    refused(lambda: evring.open(ring_path + "-never", wait="5"), r"^wait: give seconds")


def test_field_values_are_what_their_type_can_hold(writer):
    refused(lambda: writer.record("VALUES", flag=2), r"^'flag' is a bool: give True or False \(or 1 or 0\), not int 2$")
    refused(lambda: writer.record("VALUES", flag="x" * 10_000), r"^'flag' is a bool: .*not str 'xxx")
    refused(lambda: writer.record("VALUES", f=1e300), r"^'f' = 1e\+300 is out of the range of an f32")
    refused(lambda: writer.record("VALUES", f=-1e39), r"^'f' = -1e\+39 is out of the range of an f32")
    refused(lambda: writer.record("VALUES", d="1.5"), r"^'d' is an f64: give a number, not str '1\.5'$")
    refused(lambda: writer.record("VALUES", d=True), r"^'d' is an f64: give a number, not bool True$")
    refused(lambda: writer.record("VALUES", d=10**400), r"^'d' = .* does not fit an f64$")
    refused(lambda: writer.record("VALUES", s=b"\xff\xfe"), r"^'s' is a char\[8\] string: its bytes \"\\xff\\xfe\" are not UTF-8$")
    refused(lambda: writer.record("VALUES", s="\udc80"), r"^'s': '\\udc80' holds a lone surrogate")
    refused(lambda: writer.record("VALUES", {1: 2}), r"^the payload: field names are str, not int 1$")
    refused(lambda: writer.record("VALUES", {"\ud800": 2}), r"lone surrogate")
    assert writer.record("VALUES", flag=1, f=math.inf, d=2, s=b"ok") == 1   # 1 is True; inf is an f32
    with evring.open(writer.path) as reader:
        (event,) = reader.replay("oldest")
        assert event.fields["flag"] is True and event.fields["f"] == math.inf and event.fields["s"] == "ok"


def test_a_bytes_field_left_out_is_empty(writer):
    # "A field left out is zero": for bytes[n], no bytes. It was refused ("takes bytes, not tuple").
    assert writer.record("VALUES", flag=True) == 1
    assert writer.record("VALUES") == 2
    with evring.open(writer.path) as reader:
        first, second = reader.replay("oldest")
        assert first.fields["n"] == 0 and first.fields["blob"] == b""
        assert second.fields == {"flag": False, "f": 0.0, "d": 0.0, "s": "", "n": 0, "blob": b""}
