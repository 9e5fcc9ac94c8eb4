"""evring.open(wait=...): a consumer started before its producer waits for the
ring to be created, then reads it; without wait, or when time runs out, a
missing ring raises evring.Error."""
import subprocess
import time

import pytest

import evring
from conftest import run_python

PRODUCER = """
import sys, time, evring
path = sys.argv[1]
sys.stdin.readline()
time.sleep(0.3)                               # the reader is waiting by now (either order passes)
with evring.create(path, descriptor_shift=10, payload_shift=16, keep=True) as writer:
    for i in range(1, 101):
        writer.record(5, i.to_bytes(8, "little"))
"""


def test_open_waits_for_a_ring_created_later_and_reads_its_events(ring_path):
    producer = run_python(PRODUCER, ring_path, stdin=subprocess.PIPE, text=True)
    try:
        producer.stdin.write("go\n")              # the ring appears while open() below waits
        producer.stdin.flush()
        reader = evring.open(ring_path, wait=30)
        seqnos = [event.seqno for event in reader.follow(start="oldest", timeout=30)]
        assert seqnos == list(range(1, 101))
        assert producer.wait(timeout=30) == 0
    finally:
        producer.kill()
        producer.wait()


def test_open_without_wait_raises_at_once(ring_path):
    with pytest.raises(evring.Error, match="no ring|No such file"):
        evring.open(ring_path)


def test_open_with_wait_opens_an_existing_ring_at_once(ring_path):
    with evring.create(ring_path, descriptor_shift=6, payload_shift=16):
        assert evring.open(ring_path, wait=0).kind == "ring"


def test_open_raises_when_the_ring_is_not_created_in_time(ring_path):
    started = time.monotonic()
    with pytest.raises(evring.Error, match=r"was not created within 0.3 s"):
        evring.open(ring_path, wait=0.3)
    assert time.monotonic() - started >= 0.3
