"""Healing in Python (docs/healing.md): a reader opened with heal= and lapped
by the writer reads what it missed from the recording `evring record` wrote
beside it: every event once, in order, none lost, and counters say how many
came from the recording."""
import json
import signal
import subprocess
import time

import pytest

import evring

TOTAL = 600


def recorder_position(evring_bin, ring_path, pid):
    out = subprocess.run([evring_bin, "readers", ring_path, "--json"], capture_output=True, text=True,
                         timeout=30).stdout
    for line in out.splitlines():
        entry = json.loads(line) if line.strip() else {}
        if entry.get("pid") == pid:
            return entry.get("next_seqno") or 0
    return 0


def wait_until(condition, seconds=20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return False


@pytest.mark.parametrize("how", ["found", "named"])
def test_a_lapped_reader_reads_every_event_once(ring_path, evring_bin, tmp_path, how):
    out = tmp_path / "heal.evrec"
    with evring.create(ring_path, descriptor_shift=6, payload_shift=16, keep=True) as writer:
        writer.record(3, (1).to_bytes(8, "little"))
        recorder = subprocess.Popen([evring_bin, "record", ring_path, "-o", str(out), "--from", "oldest"],
                                    stderr=subprocess.PIPE)
        try:
            assert wait_until(lambda: recorder_position(evring_bin, ring_path, recorder.pid) == 2)
            reader = evring.open(ring_path, heal=True if how == "found" else out)
            reader.seek("oldest")
            # The reader sleeps while the writer laps it (64 slots) many times;
            # the recorder is let keep up, 40 events at a time.
            for seqno in range(2, TOTAL + 1):
                writer.record(3, seqno.to_bytes(8, "little"))
                if seqno % 40 == 0:
                    assert wait_until(lambda: recorder_position(evring_bin, ring_path, recorder.pid) == seqno + 1)
            # Read while the recorder runs (--heal finds it in the registry); its file still grows.
            events = []
            for event in reader.follow(start=None, timeout=30):
                events.append(event)
                if event.seqno == TOTAL:
                    break
        except BaseException:
            recorder.kill()
            raise
    recorder.send_signal(signal.SIGINT)   # this process still lives: its ring's writer is not seen to exit
    assert recorder.wait(timeout=30) == 0
    assert [e.seqno for e in events] == list(range(1, TOTAL + 1))
    assert all(e.payload == e.seqno.to_bytes(8, "little") for e in events)
    counters = reader.counters
    assert counters["lost"] == 0 and counters["events"] == TOTAL
    # A lapped reader goes on 4 slots past the ring's oldest (capacity / 16): 60 from the ring.
    assert counters["healed"] == TOTAL - 60


def test_heal_is_refused_for_a_recording(tmp_path, ring_path, evring_bin):
    with evring.create(ring_path, descriptor_shift=6, payload_shift=16, keep=True) as writer:
        writer.record(3, bytes(8))
    out = tmp_path / "r.evrec"
    subprocess.run([evring_bin, "record", ring_path, "-o", str(out), "--from", "oldest", "--no-register"],
                   check=True, capture_output=True, timeout=60)
    with pytest.raises(evring.Error, match="is for live rings and ring sets"):
        evring.open(out, heal=out)
    with pytest.raises(evring.Error, match="heal_wait"):
        evring.open(ring_path, heal=True, heal_wait=float("nan"))
