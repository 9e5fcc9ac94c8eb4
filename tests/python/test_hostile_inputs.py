"""Hostile inputs cost bounded memory and never block (issue 24, items 5, 7 and 8).

Each memory bound is checked in a child process under RLIMIT_AS, so a
regression fails with MemoryError in the child instead of taking the machine.
"""
import os
import subprocess
import sys
import textwrap

import pytest

import evring
from conftest import TICK_SCHEMA, tick_payload

ROOT = os.path.dirname(os.path.abspath(__file__))


def amplifying_schema(depth=30, name_length=120):
    """30 nested one-byte structs with 120-character names, used as a trailing
    array: each payload byte decodes to thousands of characters (or 30 dicts)."""
    parts = ['content_type = 4661\ncontent_name = "amp"\n']
    for level in range(depth):
        inner = "u8" if level == 0 else f"s{level - 1}"
        name = "f" * (name_length - 4) + f"{level:04d}"
        parts.append(f'[struct.s{level}]\nfields = [ {{ name = "{name}", type = "{inner}" }} ]\n')
    parts.append(f'[[event]]\nnumber = 9\nname = "BIG"\nfields = [\n'
                 f'  {{ name = "count", type = "u32" }},\n  {{ name = "items", type = "s{depth - 1}[count]" }},\n]\n')
    return "\n".join(parts)


def big_event(count):
    return count.to_bytes(4, "little") + bytes(count)


def run_limited(code, limit_bytes, *args):
    """Runs `code` in a child Python whose address space is capped at
    `limit_bytes` more than it uses once evring and numpy are imported."""
    prologue = textwrap.dedent(f"""
        import resource, sys
        import evring, numpy
        with open("/proc/self/statm") as f:
            used = int(f.read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (used + {limit_bytes}, resource.RLIM_INFINITY))
    """)
    return subprocess.run([sys.executable, "-c", prologue + textwrap.dedent(code), *args],
                          env=dict(os.environ), capture_output=True, text=True, timeout=120)


def test_fields_of_an_amplifying_event_are_bounded_and_marked(ring_path):
    with evring.create(ring_path, descriptor_shift=6, payload_shift=22, schema=amplifying_schema(),
                       keep=True) as writer:
        writer.record(9, big_event(1_000_000))
        writer.record(9, big_event(3))
    # Unbounded, the first event's fields are 30 million dicts: MemoryError at once under this limit.
    child = run_limited("""
        reader = evring.open(sys.argv[1])
        reader.seek("oldest")
        big, small = list(reader.follow(start=None, timeout=0))
        fields = big.fields
        assert fields["(truncated)"] is True, sorted(fields)
        assert 0 < len(fields["items"]) < 1_000_000
        assert "(truncated)" not in small.fields and len(small.fields["items"]) == 3
        print("ok", len(fields["items"]))
    """, 512 << 20, ring_path)
    assert child.returncode == 0 and child.stdout.startswith("ok"), child.stdout + child.stderr


def test_an_ordinary_event_is_never_marked(ring_path):
    with evring.create(ring_path, descriptor_shift=6, payload_shift=22, schema=TICK_SCHEMA) as writer:
        writer.record(7, tick_payload(1, 2, b"x" * 100_000))   # 100 kB of bytes: one value, not cut
        reader = evring.open(ring_path)
        reader.seek("oldest")
        (event,) = list(reader.follow(start=None, timeout=0))
        assert event.fields["name"] == b"x" * 100_000 and "(truncated)" not in event.fields


def test_read_batch_allocates_what_it_returns_not_what_it_may(ring_path):
    with evring.create(ring_path, descriptor_shift=10, payload_shift=20, keep=True) as writer:
        for i in range(1000):
            writer.record(7, b"e" * (i % 9))
    # 10**8 events would be 6.4 GB of descriptors up front.
    child = run_limited("""
        reader = evring.open(sys.argv[1])
        reader.seek("oldest")
        batch = reader.read_batch(10**8)
        assert len(batch.events) == 1000 and batch.stopped == "end", (len(batch.events), batch.stopped)
        assert list(batch.events["seqno"][:3]) == [1, 2, 3] and batch.payload(999).tobytes() == b"e" * (999 % 9)
        batch = reader.read_batch(10**8, payloads=False)
        assert len(batch.events) == 0
        print("ok")
    """, 256 << 20, ring_path)
    assert child.returncode == 0 and child.stdout.startswith("ok"), child.stdout + child.stderr


def test_read_batch_grows_past_its_first_room(ring_path):
    # More events than the first allocation (65,536) in one batch: the array grows.
    with evring.create(ring_path, descriptor_shift=18, payload_shift=22) as writer:
        for i in range(70_000):
            writer.record(7, i.to_bytes(8, "little"))
        reader = evring.open(ring_path)
        reader.seek("oldest")
        batch = reader.read_batch(100_000)
        assert len(batch.events) == 70_000
        assert batch.events["seqno"][-1] == 70_000 and batch.payload(69_999).tobytes() == (69_999).to_bytes(8, "little")


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "schema.fifo"
    os.mkfifo(path)
    return path


def test_a_fifo_as_a_schema_is_refused_by_name(ring_path, fifo):
    # Each call would block forever in open(2) or read(2) if the FIFO were opened plainly.
    with evring.create(ring_path, descriptor_shift=10, payload_shift=20, schema=TICK_SCHEMA) as writer:
        writer.record(7, tick_payload(1, 2))
        with pytest.raises(evring.Error, match=r"schema\.fifo' is a FIFO, not a regular file"):
            evring.open(ring_path, schema=fifo)
    with pytest.raises(evring.Error, match=r"schema\.fifo' is a FIFO, not a regular file"):
        evring.create(ring_path, descriptor_shift=10, payload_shift=20, schema=str(fifo))
