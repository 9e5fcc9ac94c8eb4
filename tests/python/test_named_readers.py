"""Named readers from Python (docs/python.md, "Named readers"): evring.open(named=...)
resumes after the position reader.commit() saved, redelivers at most the uncommitted
tail after a SIGKILL and says how much, with iteration, batches and `async for`.
Positions live in a private EVRING_STATE_DIR of each test."""
import asyncio
import os
import select
import signal
import subprocess
import sys

import pytest

import evring

BOUND = 30  # seconds anything may take on a loaded machine, at most


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    os.chmod(state, 0o700)
    monkeypatch.setenv("EVRING_STATE_DIR", str(state))
    return state


def write(writer, count):
    for i in range(count):
        writer.record(5, i.to_bytes(8, "little"))


def run(ring_path, named, commit_after=None, commit_at_end=True, **options):
    """Reads what is there now; returns (seqnos, reader facts) after closing."""
    seqnos = []
    with evring.open(ring_path, register=False, named=named, **options) as reader:
        for event in reader.replay():
            seqnos.append(event.seqno)
            if len(seqnos) == commit_after:
                reader.commit()
        if commit_at_end:
            reader.commit()
        facts = dict(notices="\n".join(reader.notices), redelivered=reader.redelivered,
                     redelivery=reader.redelivery, committed=reader.committed, named=reader.named)
    return seqnos, facts


def test_a_second_run_resumes_after_the_commit_and_counts_what_comes_again(ring_path):
    with evring.create(ring_path, descriptor_shift=8, payload_shift=16) as writer:
        write(writer, 20)
        seqnos, facts = run(ring_path, "resume", commit_after=8, commit_at_end=False)
        assert seqnos == list(range(1, 21))
        assert "no position yet" in facts["notices"] and facts["named"] == "resume"
        assert facts["committed"] == 8 and facts["redelivered"] == 0
        seqnos, facts = run(ring_path, "resume")
        assert seqnos == list(range(9, 21))
        assert "resumes after seqno 8" in facts["notices"]
        assert facts["redelivered"] == 12 and facts["redelivery"] == (9, 20)
        seqnos, facts = run(ring_path, "resume")
        assert seqnos == [] and facts["committed"] == 20 and facts["redelivery"] is None


def test_a_commit_after_a_batch_covers_the_whole_batch(ring_path):
    with evring.create(ring_path, descriptor_shift=8, payload_shift=16) as writer:
        write(writer, 30)
        with evring.open(ring_path, register=False, named="batch") as reader:
            batch = reader.read_batch(7)
            assert list(batch.events["seqno"]) == list(range(1, 8))
            reader.commit()
            assert reader.committed == 7
        seqnos, _ = run(ring_path, "batch")
        assert seqnos == list(range(8, 31))


def test_follow_and_replay_keep_the_resumed_position_and_refuse_an_explicit_start(ring_path):
    with evring.create(ring_path, descriptor_shift=8, payload_shift=16) as writer:
        write(writer, 10)
        run(ring_path, "follow", commit_after=4, commit_at_end=False)
        with evring.open(ring_path, register=False, named="follow") as reader:
            # follow()'s default start is "latest": a named reader stays where it resumed.
            assert [e.seqno for e in reader.follow(timeout=0.2)] == list(range(5, 11))
            with pytest.raises(evring.Error, match=r"start: reader 'follow' resumes"):
                reader.replay(start="oldest")
            with pytest.raises(evring.Error, match=r"start: reader 'follow' resumes"):
                reader.seek(3)


def test_a_reader_killed_after_a_commit_loses_nothing_and_says_what_comes_again(ring_path, state_dir):
    child = f"""
import sys, time, evring
reader = evring.open({ring_path!r}, register=False, named="kill")
handed = 0
for event in reader.replay():
    handed += 1
    if handed == 10:
        reader.commit()
    if handed == 15:
        break
print("ready", flush=True)
time.sleep(600)
"""
    with evring.create(ring_path, descriptor_shift=8, payload_shift=16) as writer:
        write(writer, 20)
        proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True)
        try:
            assert select.select([proc.stdout], [], [], BOUND)[0], "the child did not get ready in time"
            assert proc.stdout.readline().strip() == "ready"
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(BOUND)
            proc.stdout.close()
        assert proc.returncode == -signal.SIGKILL
        seqnos, facts = run(ring_path, "kill")
        assert seqnos == list(range(11, 21))
        assert facts["redelivered"] == 5 and facts["redelivery"] == (11, 15)
        assert "seqno 11..15" in facts["notices"]


def test_a_ring_recreated_at_its_path_is_read_from_its_oldest(ring_path):
    with evring.create(ring_path, descriptor_shift=8, payload_shift=16) as writer:
        write(writer, 10)
        run(ring_path, "instance", commit_after=6, commit_at_end=False)
    with evring.create(ring_path, descriptor_shift=8, payload_shift=16) as writer:
        write(writer, 4)
        seqnos, facts = run(ring_path, "instance")
        assert seqnos == [1, 2, 3, 4]
        assert "new ring instance" in facts["notices"] and "read up to seqno 6" in facts["notices"]


def test_damaged_and_forged_positions_are_refused_by_name_and_reset_starts_over(ring_path, state_dir):
    with evring.create(ring_path, descriptor_shift=8, payload_shift=16) as writer:
        write(writer, 5)
        run(ring_path, "forged")
        position = state_dir / "forged.pos"
        saved = position.read_bytes()
        damaged = bytearray(saved)
        damaged[-10] ^= 0x40
        position.write_bytes(bytes(damaged))
        with pytest.raises(evring.Error, match=r"forged\.pos.*checksum"):
            evring.open(ring_path, register=False, named="forged")
        position.write_bytes(b"not a position")
        with pytest.raises(evring.Error, match=r"forged\.pos"):
            evring.open(ring_path, register=False, named="forged")
        position.write_bytes(saved)
        os.chmod(position, 0o666)
        with pytest.raises(evring.Error, match=r"forged\.pos.*mode"):
            evring.open(ring_path, register=False, named="forged")
        os.chmod(position, 0o600)
        seqnos, facts = run(ring_path, "forged", reset=True)
        assert seqnos == [1, 2, 3, 4, 5] and "position forgotten" in facts["notices"]


def test_async_for_hands_out_events_a_commit_covers(ring_path):
    async def first(count):
        seen = []
        with evring.open(ring_path, register=False, named="aio") as reader:
            async for event in reader:
                seen.append(event.seqno)
                if len(seen) == count:
                    reader.commit()
                    break
        return seen

    with evring.create(ring_path, descriptor_shift=8, payload_shift=16) as writer:
        write(writer, 12)
        assert asyncio.run(asyncio.wait_for(first(5), BOUND)) == [1, 2, 3, 4, 5]
        assert asyncio.run(asyncio.wait_for(first(7), BOUND)) == list(range(6, 13))


def test_bad_arguments_name_themselves(ring_path):
    with evring.create(ring_path, descriptor_shift=8, payload_shift=16) as writer:
        write(writer, 3)
        with pytest.raises(evring.Error, match=r"^named: give a reader name"):
            evring.open(ring_path, named=5)
        with pytest.raises(evring.Error, match=r"^reset: give True or False"):
            evring.open(ring_path, named="x", reset="yes")
        with pytest.raises(evring.Error, match=r"^start: only for a named reader"):
            evring.open(ring_path, start="oldest")
        with pytest.raises(evring.Error, match=r"^start: give"):
            evring.open(ring_path, named="x", start=1.5)
        with pytest.raises(evring.Error, match=r"^named: .*'a/b'"):
            evring.open(ring_path, named="a/b")
        with pytest.raises(evring.Error, match=r"^start: bad position 'nowhere'|^named: .*nowhere"):
            evring.open(ring_path, named="x", start="nowhere")
        with evring.open(ring_path, register=False) as plain:
            assert plain.named is None and plain.redelivered == 0
            with pytest.raises(evring.Error, match=r"commit: not a named reader"):
                plain.commit()
        with evring.open(ring_path, register=False, named="held"):
            with pytest.raises(evring.Error, match=r"reader 'held' is in use"):
                evring.open(ring_path, register=False, named="held")
