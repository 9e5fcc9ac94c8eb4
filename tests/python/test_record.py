"""evring.record and Reader.record (docs/python.md, "Recording"; issue 33
item 3): a source recorded into a file by the library's one record pipeline,
the one `evring record` and the C ABI's evring_source_record run. The file is
read back by `evring watch` and by evring.open; the recorder is listed in the
ring's registry as `record` with its output (so healing readers find it);
Ctrl-C finishes the file before KeyboardInterrupt; refusals name the value."""
import json
import os
import signal
import subprocess
import threading
import time

import pytest

import evring

from conftest import TICK_SCHEMA, tick_payload


def listed(evring_bin, ring_path):
    out = subprocess.run([evring_bin, "readers", ring_path, "--json"], capture_output=True, text=True,
                         timeout=30, check=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def watched(evring_bin, path):
    out = subprocess.run([evring_bin, "watch", path, "--from", "oldest", "--format", "jsonl"], capture_output=True,
                         text=True, timeout=60, check=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def wait_for(condition, seconds=20):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_record_a_live_ring_count_1000_and_watch_it_back(evring_bin, ring_path, tmp_path):
    out = str(tmp_path / "out.evrec")
    with evring.create(ring_path, descriptor_shift=12, payload_shift=20) as writer:
        failures = []

        def write_once_the_recorder_is_listed():
            try:
                wait_for(lambda: any(r["kind"] == "record" and r["detail"] == "-> " + out
                                     for r in listed(evring_bin, ring_path)))
                for i in range(1, 1201):
                    writer.record(3, i.to_bytes(8, "little"))
            except BaseException as e:  # noqa: BLE001 - reported by the test
                failures.append(e)

        thread = threading.Thread(target=write_once_the_recorder_is_listed)
        thread.start()
        totals = evring.record(ring_path, out, count=1000)
        thread.join(timeout=60)
        assert not failures
    assert totals["events"] == 1000 and totals["ended"] == "count"
    assert totals["lost"] == 0 and totals["gaps"] == 0 and totals["files"] == 1 and totals["last_file"] == out
    events = watched(evring_bin, out)
    assert [e["seqno"] for e in events] == list(range(1, 1001))


def test_where_and_until_through_the_schema(ring_path, tmp_path):
    out = str(tmp_path / "ticks.evrec")
    with evring.create(ring_path, descriptor_shift=10, payload_shift=20, schema=TICK_SCHEMA) as writer:
        for i in range(100):
            writer.record("TICK", tick_payload(i, -i))
        totals = evring.record(ring_path, out, start="oldest", where="count >= 50 && count < 90", until=100,
                               compress=False)
    assert totals["events"] == 40 and totals["ended"] == "until"
    events = list(evring.open(out).replay(start="oldest"))
    assert [e.fields["count"] for e in events] == list(range(50, 90))
    assert evring.open(out).schema["content_name"] == "pytest", "the recording carries the ring's schema"


def test_a_reader_records_from_where_it_stands_and_reads_on(ring_path, tmp_path):
    first, again = str(tmp_path / "first.evrec"), str(tmp_path / "again.evrec")
    with evring.create(ring_path, descriptor_shift=10, payload_shift=20) as writer:
        for i in range(1, 301):
            writer.record(3, i.to_bytes(8, "little"))
        with evring.open(ring_path) as reader:
            reader.seek(101)
            totals = reader.record(first, count=100, level=3, threads=2)
            assert totals["events"] == 100
            assert reader.next_seqno == 201
    # A recording recorded again: from its oldest event to its end.
    totals = evring.record(first, again)
    assert totals["ended"] == "end" and totals["events"] == 100
    payloads = [e.payload for e in evring.open(again).replay(start="oldest")]
    assert payloads == [i.to_bytes(8, "little") for i in range(101, 201)]


def test_ctrl_c_finishes_the_file_then_raises(evring_bin, ring_path, tmp_path):
    out = str(tmp_path / "interrupted.evrec")

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        with evring.create(ring_path, descriptor_shift=10, payload_shift=20) as writer:
            writer.record(3, bytes(8))
            # Should Ctrl-C go unseen, seqno 5 ends the recording after 20 s and the test fails.
            fallback = threading.Timer(20, lambda: [writer.record(3, bytes(8)) for _ in range(4)])
            fallback.start()
            signal.setitimer(signal.ITIMER_REAL, 0.3)
            try:
                with pytest.raises(KeyboardInterrupt):
                    evring.record(ring_path, out, start="oldest", until=5)
            finally:
                fallback.cancel()
                fallback.join()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    reader = evring.open(out)
    assert [e.seqno for e in reader.replay(start="oldest")] == [1]
    assert reader.counters["damaged"] == 0
    info = subprocess.run([evring_bin, "info", out], capture_output=True, text=True, timeout=30, check=True).stdout
    assert any(line.split() == ["end", "clean"] for line in info.splitlines()), info


def test_refusals_name_the_value(ring_path, tmp_path):
    out = str(tmp_path / "refused.evrec")
    with evring.create(ring_path, descriptor_shift=10, payload_shift=20) as writer:
        writer.record(3, bytes(8))
        with pytest.raises(evring.Error, match="level 0"):
            evring.record(ring_path, out, level=0, count=1)
        with pytest.raises(evring.Error, match="threads 0"):
            evring.record(ring_path, out, threads=0, count=1)
        with pytest.raises(evring.Error, match="soon"):
            evring.record(ring_path, out, until="soon")
        with pytest.raises(evring.Error, match="start"):
            evring.record(ring_path, out, start=1.5)
        assert not os.path.exists(out)
        open(out, "w").close()
        with pytest.raises(evring.Error, match="refused.evrec"):
            evring.record(ring_path, out, start="oldest", count=1)
        with pytest.raises(evring.Error, match="reader is closed"):
            reader = evring.open(ring_path)
            reader.close()
            reader.record(str(tmp_path / "closed.evrec"))


def test_a_named_reader_records_and_a_second_run_resumes_after_it(ring_path, tmp_path, monkeypatch):
    monkeypatch.setenv("EVRING_STATE_DIR", str(tmp_path / "state"))
    first, second = str(tmp_path / "first.evrec"), str(tmp_path / "second.evrec")
    with evring.create(ring_path, descriptor_shift=10, payload_shift=20) as writer:
        for i in range(1, 201):
            writer.record(3, i.to_bytes(8, "little"))
        with evring.open(ring_path, named="archiver") as reader:
            assert reader.record(first, count=80)["events"] == 80
        with evring.open(ring_path, named="archiver") as reader:   # resumes after what the file holds
            assert reader.record(second, until=200)["events"] == 120
    assert [e.seqno for e in evring.open(first).replay(start="oldest")] == list(range(1, 81))
    assert [e.seqno for e in evring.open(second).replay(start="oldest")] == list(range(81, 201))


def test_a_reader_is_listed_as_the_recorder_while_it_records_then_as_before(evring_bin, ring_path):
    # A short path: the registry's detail holds 80 bytes, and a healer needs the whole path.
    out = f"/tmp/evring-pytest-{os.getpid()}-by-reader.evrec"
    mine = lambda: [r for r in listed(evring_bin, ring_path) if r["pid"] == os.getpid()]  # noqa: E731
    with evring.create(ring_path, descriptor_shift=10, payload_shift=20) as writer:
        with evring.open(ring_path, name="archiver", detail="my detail") as reader:
            assert [(r["kind"], r["detail"]) for r in mine()] == [("python", "my detail")]
            failures = []

            def write_once_listed_as_recorder():
                try:  # healing readers find a recorder by this kind and detail (docs/healing.md)
                    wait_for(lambda: [(r["kind"], r["detail"]) for r in mine()] == [("record", "-> " + out)])
                except BaseException as e:  # noqa: BLE001 - reported by the test
                    failures.append((e, mine()))
                for i in range(1, 11):  # also after a failure: the recording ends at 10 events
                    writer.record(3, i.to_bytes(8, "little"))

            thread = threading.Thread(target=write_once_listed_as_recorder)
            thread.start()
            totals = reader.record(out, count=10)
            thread.join(timeout=60)
            assert not failures and totals["events"] == 10
            assert [(r["kind"], r["name"], r["detail"]) for r in mine()] == [("python", "archiver", "my detail")]
    os.unlink(out)
