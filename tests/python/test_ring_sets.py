"""Ring sets from Python (docs/ring-sets.md, docs/python.md): evring.open(SET)
iterates the members merged in time order, and read_batch carries the member
column into numpy and DataFrames. The set is written by examples/producer
(PRODUCER_BIN), three threads of 200 events each."""
import os
import shutil
import subprocess

import numpy
import pytest

import evring

THREADS, PER_THREAD = 3, 200


@pytest.fixture(scope="module")
def ring_set():
    producer = os.environ.get("PRODUCER_BIN")
    if not producer or not os.access(producer, os.X_OK):
        pytest.skip("PRODUCER_BIN is not set (run through meson test)")
    path = f"/dev/shm/evring-pytest-{os.getpid()}-set"   # tmpfs: small members
    try:
        subprocess.run([producer, f"{path}:10:16", "--threads", str(THREADS), "--count", str(PER_THREAD)],
                       check=True, capture_output=True, timeout=60)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def test_a_set_iterates_merged_with_each_events_member(ring_set):
    with evring.open(ring_set) as reader:
        assert reader.kind == "ring-set" and reader.member_ids
        assert reader.registered   # in every member's registry
        events = list(reader.replay(start="oldest"))
        counters = reader.counters
    assert len(events) == THREADS * PER_THREAD
    assert counters["events"] == len(events) and counters["lost"] == 0 and counters["late_events"] == 0
    times = [e.record_epoch_nanos for e in events]
    assert times == sorted(times)
    for member in range(THREADS):
        assert [e.seqno for e in events if e.member == member] == list(range(1, PER_THREAD + 1))


def test_a_batch_of_a_set_has_the_member_column(ring_set):
    with evring.open(ring_set) as reader:
        reader.seek("oldest")
        batch = reader.read_batch(10_000)
        assert isinstance(batch, evring.Batch) and batch.events.dtype == evring.DESCRIPTOR_DTYPE
        assert len(batch) == THREADS * PER_THREAD and batch.stopped == "end"
        assert batch.members.dtype == numpy.uint32 and len(batch.members) == len(batch)
        assert numpy.all(numpy.diff(batch.events["record_epoch_nanos"].astype(numpy.int64)) >= 0)
        for member in range(THREADS):
            seqnos = batch.events["seqno"][batch.members == member]
            assert list(seqnos) == list(range(1, PER_THREAD + 1))
        assert len(batch.payload(0)) == batch.events["payload_size"][0]
        replayed = [(e.member, e.seqno) for e in reader.replay(start="oldest")]
    assert replayed == list(zip(batch.members.tolist(), batch.events["seqno"].tolist()))


def test_a_batch_of_a_set_has_every_events_payload(ring_set):
    # Read in runs without the GIL, one buffer handed to numpy: the payloads
    # must still be each event's own, in order.
    with evring.open(ring_set) as reader:
        replayed = [(e.member, e.seqno, e.payload) for e in reader.replay(start="oldest")]
        reader.seek("oldest")
        batch = reader.read_batch(250)  # not a multiple of the runs: a second batch continues
        rest = reader.read_batch(10_000)
    assert len(batch) == 250 and len(rest) == len(replayed) - 250
    got = [(int(m), int(s), bytes(batch.payload(i))) for i, (m, s) in enumerate(zip(batch.members, batch.events["seqno"]))]
    got += [(int(m), int(s), bytes(rest.payload(i))) for i, (m, s) in enumerate(zip(rest.members, rest.events["seqno"]))]
    assert got == replayed
    assert all(p for _, _, p in got)


def test_a_dataframe_of_a_set_has_a_member_column(ring_set):
    pandas = pytest.importorskip("pandas")
    with evring.open(ring_set) as reader:
        reader.seek("oldest")
        frame = reader.read_batch(10_000).to_dataframe()
    assert list(frame.columns[:3]) == ["seqno", "member", "event_type"]
    assert isinstance(frame, pandas.DataFrame)
    assert sorted(frame["member"].unique().tolist()) == list(range(THREADS))
    assert (frame.groupby("member")["seqno"].max() == PER_THREAD).all()


def test_a_batch_of_a_ring_has_zero_members_and_no_member_column(ring_path):
    with evring.create(ring_path, descriptor_shift=6, payload_shift=16) as writer:
        for i in range(5):
            writer.record_raw(3, bytes(8))
        with evring.open(ring_path) as reader:
            assert not reader.member_ids
            reader.seek("oldest")
            batch = reader.read_batch(100)
            assert batch.members.tolist() == [0] * 5
            assert evring.Batch is type(batch)
            pandas = pytest.importorskip("pandas")
            assert "member" not in batch.to_dataframe().columns and pandas


def test_a_named_reader_of_a_set_resumes_each_member_after_its_own_last_event(ring_set, tmp_path, monkeypatch):
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    monkeypatch.setenv("EVRING_STATE_DIR", str(state))
    seen = []
    with evring.open(ring_set, register=False, named="set-reader", start="oldest") as reader:
        for event in reader.replay():
            seen.append((event.member, event.seqno))
            if len(seen) == 250:
                break
        reader.commit()
    with evring.open(ring_set, register=False, named="set-reader") as reader:
        assert "resumes" in "\n".join(reader.notices)
        batch = reader.read_batch(10_000)
        seen += list(zip(batch.members.tolist(), batch.events["seqno"].tolist()))
        reader.commit()
    assert sorted(seen) == [(m, s) for m in range(THREADS) for s in range(1, PER_THREAD + 1)]
    with evring.open(ring_set, register=False, named="set-reader") as reader:
        assert list(reader.replay()) == []   # everything committed: nothing comes again
