"""Values that lie or act while Writer.record encodes them (issue 32, defects 8 and 9).

- Defect 8: a trailing or fixed array was sized by len() and then filled with
  what the object yielded: one whose len() is smaller wrote past the payload
  (SIGSEGV, "double free or corruption"); one whose len() is larger left zeros
  counted as elements. Elements are now counted as they come.
- Defect 9: a value's __float__ or __index__ that closes the writer ran while
  record() held the writer's handle, which was then used after it was freed
  (SIGSEGV: the ring was unmapped). Every value is converted first now, and a
  writer closed that way raises "the writer is closed".

Each case runs in a child Python, so that a crash fails the test instead of
ending the run.
"""
import os
import subprocess
import sys
import textwrap

import pytest

SCHEMA = """
content_type = 4663
content_name = "lies"
[[event]]
number = 7
name = "ARRAYS"
fields = [
  { name = "fixed", type = "u64[2]" },
  { name = "price", type = "f64" },
  { name = "count", type = "u32" },
  { name = "items", type = "u64[count]" },
]
"""

PROLOGUE = f"""
import sys
import evring
SCHEMA = {SCHEMA!r}

class Liar:
    \"\"\"len() says one thing, iteration yields another.\"\"\"
    def __init__(self, length, real):
        self.length, self.real = length, real
    def __len__(self):
        return self.length
    def __iter__(self):
        return iter(range(self.real))

writer = evring.create(sys.argv[1], descriptor_shift=8, payload_shift=20, schema=SCHEMA)
"""


def run_child(ring_path, body):
    code = PROLOGUE + textwrap.dedent(body)
    try:
        return subprocess.run([sys.executable, "-c", code, ring_path], env=dict(os.environ), capture_output=True,
                              text=True, timeout=60)
    finally:
        for leftover in (ring_path, ring_path + ".readers"):
            if os.path.exists(leftover):
                os.unlink(leftover)


def check(child, expected):
    assert child.returncode == 0 and child.stdout == expected, \
        f"exit status {child.returncode}\nstdout: {child.stdout}\nstderr: {child.stderr[-3000:]}"


@pytest.mark.parametrize("length, real", [(1, 1000), (1000, 3), (0, 5000)])
def test_a_trailing_array_holds_what_the_object_yields(ring_path, length, real):
    child = run_child(ring_path, f"""
        seqno = writer.record("ARRAYS", items=Liar({length}, {real}))
        (event,) = evring.open(sys.argv[1]).replay("oldest")
        assert event.fields["count"] == {real}, event.fields["count"]
        assert event.fields["items"] == list(range({real})), len(event.fields["items"])
        writer.close()
        print("ok", seqno)
    """)
    check(child, "ok 1\n")


@pytest.mark.parametrize("length, real", [(2, 100_000), (2, 1), (1, 3)])
def test_a_fixed_array_must_yield_exactly_its_size(ring_path, length, real):
    child = run_child(ring_path, f"""
        try:
            writer.record("ARRAYS", fixed=Liar({length}, {real}))
        except evring.Error as e:
            print(e)
        print(writer.record("ARRAYS", fixed=Liar(7, 2)))   # len() is not asked: the 2 it yields fit
    """)
    check(child, f"'fixed' takes a sequence of exactly 2 elements, not {real}\n1\n")


def test_an_object_that_cannot_be_iterated_is_refused_by_name(ring_path):
    child = run_child(ring_path, """
        for fields in ({"items": 5}, {"fixed": "ab"}, {"items": {"a": 1}}):
            try:
                writer.record("ARRAYS", fields)
            except evring.Error as e:
                print(e)
    """)
    check(child, "'items' takes a sequence of elements, not int 5\n"
                 "'fixed' takes a sequence of exactly 2 elements, not str\n"
                 "'items' takes a sequence of elements, not dict\n")


@pytest.mark.parametrize("how", [
    'writer.record("ARRAYS", price=CloseOnFloat())',
    'writer.record("ARRAYS", {"price": CloseOnIndex()})',
    'writer.record("ARRAYS", fixed=[1, 2], flow=(CloseOnIndex(),))',
    'writer.record_raw(7, b"x" * 48, (CloseOnIndex(),))',
    'writer.record(CloseOnIndex(), b"x" * 48)',
    'writer.wants(CloseOnIndex())',
])
def test_a_writer_closed_while_it_encodes_says_so(ring_path, how):
    child = run_child(ring_path, f"""
        class CloseOnFloat:
            def __float__(self):
                writer.close()
                return 1.5

        class CloseOnIndex:
            def __index__(self):
                writer.close()
                return 7

        try:
            {how}
        except evring.Error as e:
            print(e)
    """)
    check(child, "the writer is closed\n")
