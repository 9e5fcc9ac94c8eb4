"""The Python reader in the ring's reader registry (docs/operations.md): a
reader of a live ring is listed by `evring readers` while it is open, with
its position, and not after it closed; register=False stays out of it."""
import json
import os
import subprocess

import pytest

import evring


def listed(evring_bin, ring_path):
    out = subprocess.run([evring_bin, "readers", ring_path, "--json"], capture_output=True, text=True,
                         timeout=30, check=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


@pytest.fixture
def live_ring(ring_path):
    with evring.create(ring_path, descriptor_shift=8, payload_shift=16) as writer:
        yield ring_path, writer
    if os.path.exists(ring_path + ".readers"):
        os.unlink(ring_path + ".readers")


def test_a_reader_of_a_live_ring_is_listed_while_open_and_not_after_close(evring_bin, live_ring):
    ring_path, writer = live_ring
    for i in range(10):
        writer.record(3, bytes(8))
    reader = evring.open(ring_path, name="pytest-reader", detail="registry test")
    assert reader.registered
    mine = [r for r in listed(evring_bin, ring_path) if r["pid"] == os.getpid()]
    assert len(mine) == 1
    assert mine[0]["kind"] == "python" and mine[0]["name"] == "pytest-reader"
    assert mine[0]["detail"] == "registry test" and mine[0]["liveness"] == "alive"
    # Reading moves the published position: all ten read, then idle publishes it.
    assert [e.seqno for e in reader.replay(start="oldest")] == list(range(1, 11))
    mine = [r for r in listed(evring_bin, ring_path) if r["pid"] == os.getpid()]
    assert mine[0]["next_seqno"] == 11 and mine[0]["lag_events"] == 0
    reader.close()
    assert [r for r in listed(evring_bin, ring_path) if r["pid"] == os.getpid()] == []


def test_a_batch_reader_publishes_its_position(evring_bin, live_ring):
    ring_path, writer = live_ring
    for i in range(20):
        writer.record(3, bytes(4))
    with evring.open(ring_path) as reader:
        reader.seek("oldest")
        assert len(reader.read_batch(100)) == 20
        mine = [r for r in listed(evring_bin, ring_path) if r["pid"] == os.getpid()]
        assert mine[0]["kind"] == "python" and mine[0]["next_seqno"] == 21


def test_register_false_stays_out_of_the_registry(evring_bin, live_ring):
    ring_path, writer = live_ring
    writer.record(3, bytes(8))
    with evring.open(ring_path, register=False) as reader:
        assert not reader.registered
        assert [e.seqno for e in reader.replay(start="oldest")] == [1]
        assert [r for r in listed(evring_bin, ring_path) if r["pid"] == os.getpid()] == []


def test_snapshots_and_recordings_are_not_registered(evring_bin, live_ring, tmp_path):
    ring_path, writer = live_ring
    writer.record(3, bytes(8))
    snapshot = tmp_path / "ring.snap.zst"
    subprocess.run([evring_bin, "snapshot", ring_path, "-o", str(snapshot)], check=True, timeout=30,
                   capture_output=True)
    with evring.open(snapshot) as reader:
        assert not reader.registered
