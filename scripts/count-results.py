#!/usr/bin/env python3
"""Counts test cases in meson's JUnit logs: prints 'N passed, N failed, N skipped'.

meson test writes one <testsuite> per test executable and, for GoogleTest
executables and TAP tests (rust_test: tests/rust/cargo_tap.py reports each
test of the Rust crate), one <testcase> per test. A test executable that crashed before
writing its results has no test cases of its own: it counts as one failure.
"""
import sys
import xml.etree.ElementTree as ET

passed = failed = skipped = 0
args = sys.argv[1:]
if args and args[0] == "--extra-failure":
    failed += 1
    args = args[1:]

for path in args:
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as error:
        print(f"count-results: cannot read {path}: {error}", file=sys.stderr)
        failed += 1
        continue
    for suite in root.iter("testsuite"):
        cases = list(suite.iter("testcase"))
        if not cases:
            if int(suite.get("failures", 0)) or int(suite.get("errors", 0)):
                failed += 1
            continue
        for case in cases:
            if case.find("failure") is not None or case.find("error") is not None:
                failed += 1
            elif case.find("skipped") is not None:
                skipped += 1
            else:
                passed += 1

print(f"{passed} passed, {failed} failed, {skipped} skipped")
