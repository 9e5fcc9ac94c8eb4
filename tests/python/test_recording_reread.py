"""A recording read twice in one reader (issue 32, defect 16).

After a recording's end, replay("oldest"), seek("oldest") with read_batch, and
positions like "-N" or a seqno gave 0 events, silently. The recording here is
a rotated series (12 files of 4 KiB) made by `evring record`, so the first
read ends in a later file than the one opened.
"""
import os
import subprocess

import pytest

import evring

EVENTS = 300


@pytest.fixture
def recording(ring_path, evring_bin, tmp_path):
    with evring.create(ring_path, descriptor_shift=9, payload_shift=16, keep=True) as writer:
        for i in range(1, EVENTS + 1):
            writer.record(3, i.to_bytes(8, "little") * 8)
    out = tmp_path / "ticks.evrec"
    subprocess.run([evring_bin, "record", ring_path, "-o", str(out), "--from", "oldest", "--rotate-size", "4K",
                    "--no-compress", "--no-register"], check=True, capture_output=True, timeout=60)
    assert len(list(tmp_path.glob("ticks.evrec*"))) > 3
    return out


def seqnos(events):
    return [e.seqno for e in events]


def test_replay_from_the_oldest_again_after_the_end(recording):
    reader = evring.open(recording)
    assert reader.kind == "recording"
    for _ in range(3):
        events = list(reader.replay("oldest"))
        assert seqnos(events) == list(range(1, EVENTS + 1))
        assert all(e.payload == e.seqno.to_bytes(8, "little") * 8 for e in events)
    assert reader.counters["events"] == 3 * EVENTS


def test_every_position_is_reached_again_after_the_end(recording):
    reader = evring.open(recording)
    assert len(list(reader.replay("oldest"))) == EVENTS
    assert seqnos(reader.replay(100)) == list(range(100, EVENTS + 1))
    assert seqnos(reader.replay("-10")) == list(range(EVENTS - 9, EVENTS + 1))
    assert seqnos(reader.replay(5)) == list(range(5, EVENTS + 1))
    assert seqnos(reader.replay("latest")) == [EVENTS]
    assert seqnos(reader.replay("oldest")) == list(range(1, EVENTS + 1))


def test_read_batch_reads_it_again_after_a_seek(recording):
    reader = evring.open(recording)
    for _ in range(3):
        reader.seek("oldest")
        batch = reader.read_batch(10 * EVENTS)
        assert batch.stopped == "end" and list(batch.events["seqno"]) == list(range(1, EVENTS + 1))
        assert batch.payload(EVENTS - 1).tobytes() == EVENTS.to_bytes(8, "little") * 8
    reader.seek(250)
    assert list(reader.read_batch(10 * EVENTS).events["seqno"]) == list(range(250, EVENTS + 1))
