"""Live rings: following a producer in another process, writing from Python
and reading from the CLI (C++), exact lost counts after lapping."""
import json
import os
import subprocess
import threading
import time

import pytest

import evring
from conftest import TICK_SCHEMA, run_python, tick_payload

PRODUCER = """
import sys, time, evring
path, count = sys.argv[1], int(sys.argv[2])
with evring.create(path, descriptor_shift=12, payload_shift=20) as writer:
    print("ready", flush=True)
    sys.stdin.readline()                      # the reader is attached
    for i in range(1, count + 1):
        writer.record(5, i.to_bytes(8, "little"), flow=(i % 3, 0, 0, i))
        if i % 100 == 0:
            time.sleep(0.001)                 # let the reader catch up and sleep on the doorbell
"""


def test_follow_sees_every_event_of_a_producer_in_another_process_and_ends_when_it_exits(ring_path):
    count = 5000
    producer = run_python(PRODUCER, ring_path, str(count), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert producer.stdout.readline().strip() == "ready"
        reader = evring.open(ring_path)
        assert reader.live
        producer.stdin.write("go\n")
        producer.stdin.flush()
        seen = []
        for event in reader.follow(start="oldest", timeout=30):
            assert event.payload == event.seqno.to_bytes(8, "little")
            assert event.content_ext == (event.seqno % 3, 0, 0, event.seqno)
            seen.append(event.seqno)
        assert seen == list(range(1, count + 1))   # the follow ended because the writer exited
        assert reader.lost == 0 and reader.gaps == 0
        assert producer.wait(timeout=30) == 0
    finally:
        producer.kill()
        producer.wait()


def test_follow_releases_the_gil_while_waiting(ring_path):
    with evring.create(ring_path, descriptor_shift=6, payload_shift=16):
        reader = evring.open(ring_path)
        ticks = 0
        stop = False

        def spin():
            nonlocal ticks
            while not stop:
                ticks += 1
                time.sleep(0.001)

        thread = threading.Thread(target=spin)
        thread.start()
        start = time.monotonic()
        assert list(reader.follow(timeout=0.5)) == []   # nothing comes: ends after 0.5 s idle
        waited = time.monotonic() - start
        stop = True
        thread.join()
        assert 0.45 <= waited < 10
        assert ticks > 10   # the other thread ran while follow waited


def test_events_written_from_python_read_back_by_the_cli_with_the_embedded_schema(ring_path, evring_bin):
    with evring.create(ring_path, descriptor_shift=10, payload_shift=20, schema=TICK_SCHEMA) as writer:
        for i in range(1, 11):
            assert writer.record("TICK", tick_payload(i, -i * 10, b"abc"), flow=(i,)) == i
        writer.record(7, tick_payload(11, 5))
        out = subprocess.run([evring_bin, "watch", ring_path, "--from", "oldest", "--count", "11",
                              "--format", "jsonl"], check=True, capture_output=True, text=True, timeout=60).stdout
        lines = [json.loads(line) for line in out.splitlines()]
        assert [line["seqno"] for line in lines] == list(range(1, 12))
        assert lines[0]["event_type"] == 7 and lines[0]["content_ext"] == [1, 0, 0, 0]
        assert bytes.fromhex(lines[2]["payload"]) == tick_payload(3, -30, b"abc")
        info = subprocess.run([evring_bin, "info", ring_path], check=True, capture_output=True, text=True,
                              timeout=60).stdout
        assert "4660" in info
        # and Python decodes it with the schema the ring carries
        reader = evring.open(ring_path)
        assert reader.schema_origin == "embedded"
        events = list(reader.replay(start="oldest"))
        assert events[2].fields == {"count": 3, "price": -30, "name_length": 3, "name": b"abc"}
        assert events[2].type_name == "TICK"


def test_lost_counts_are_exact_after_the_writer_laps_the_reader(ring_path):
    with evring.create(ring_path, descriptor_shift=6, payload_shift=16) as writer:
        reader = evring.open(ring_path)
        batch_reader = evring.open(ring_path)
        reader.seek("oldest")
        batch_reader.seek("oldest")
        for i in range(1, 1001):
            writer.record(2, i.to_bytes(8, "little"))
        seen = [event.seqno for event in reader.replay(start=None)]
        assert seen == list(range(1001 - len(seen), 1001))
        assert 0 < len(seen) <= 64
        assert reader.lost == 1000 - len(seen) and reader.gaps == 1
        batch = batch_reader.read_batch(2000)
        assert batch.events["seqno"].tolist() == seen
        assert batch.gaps == 1 and batch.skipped == reader.lost
        assert batch_reader.lost == reader.lost and batch_reader.gaps == 1
        # lapped again: a second gap, counted on top
        for i in range(1001, 1201):
            writer.record(2, i.to_bytes(8, "little"))
        more = [event.seqno for event in reader.replay(start=None)]
        assert more[-1] == 1200 and reader.gaps == 2
        assert reader.lost == 1200 - len(seen) - len(more)


def recorder_caught_up(evring_bin, ring_path, pid):
    """Whether `evring readers` lists reader `pid` of the ring with no events left to read."""
    listing = subprocess.run([evring_bin, "readers", ring_path, "--json", "--no-reclaim"],
                             capture_output=True, text=True)
    for line in listing.stdout.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("pid") == pid and entry.get("lag_events") == 0:
            return True
    return False


def test_a_recording_of_a_python_ring_replays_to_its_end(ring_path, evring_bin, tmp_path):
    out = tmp_path / "ticks.evrec"
    with evring.create(ring_path, descriptor_shift=10, payload_shift=20, schema=TICK_SCHEMA) as writer:
        recorder = subprocess.Popen([evring_bin, "record", ring_path, "-o", str(out), "--from", "oldest"],
                                    stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 30
            while not out.exists() and time.monotonic() < deadline:
                time.sleep(0.01)
            for i in range(1, 101):
                writer.record("TICK", tick_payload(i, i))
            # The recorder has read all 100 once its registry entry shows no lag
            # (SIGTERM stops it at once: a fixed pause may end before it read them).
            while not recorder_caught_up(evring_bin, ring_path, recorder.pid) and time.monotonic() < deadline:
                time.sleep(0.01)
        finally:
            recorder.terminate()
            recorder.wait(timeout=30)
    schema = tmp_path / "tick.toml"
    schema.write_text(TICK_SCHEMA)
    reader = evring.open(out, schema=schema)   # decoded with a schema file matching the header's hash
    assert reader.kind == "recording"
    events = list(reader.replay())
    assert [e.seqno for e in events] == list(range(1, 101))
    assert events[-1].fields["count"] == 100 and events[-1].type_name == "TICK"


def test_a_reader_waiting_in_another_thread_cannot_be_closed_under_it(ring_path):
    with evring.create(ring_path, descriptor_shift=6, payload_shift=16):
        reader = evring.open(ring_path)
        waiting = threading.Event()

        def follow():
            waiting.set()
            list(reader.follow(timeout=1.0))

        thread = threading.Thread(target=follow)
        thread.start()
        waiting.wait()
        time.sleep(0.2)   # the follower is asleep on the doorbell, without the GIL
        with pytest.raises(evring.Error, match="another thread"):
            reader.close()
        with pytest.raises(evring.Error, match="another thread"):
            reader.read_batch(10)
        thread.join()
        reader.close()    # and once it returned, closing works
