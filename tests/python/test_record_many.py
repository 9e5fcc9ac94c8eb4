"""Writer.record_many (docs/python.md, "Many events at once"): a list, a tuple
or a numpy array of events recorded in batches of up to 64 that share one
timestamp; the events read back as record() would have written them, through
a reader and through a recording; with a schema every event is checked before
any is published, and interest skips what nobody wants."""
import os
import subprocess

import numpy as np
import pytest

import evring

from conftest import TICK_SCHEMA, tick_payload

INTEREST_SCHEMA = os.path.join(os.path.dirname(__file__), "..", "schemas", "interest.toml")

# The fixed part of TICK (count u64, price i32, name_length u32), as numpy lays it out.
TICK_DTYPE = np.dtype([("count", "<u8"), ("price", "<i4"), ("name_length", "<u4")])


def replayed(path):
    return [(e.seqno, e.event_type, e.content_ext, e.payload, e.record_epoch_nanos)
            for e in evring.open(path).replay(start="oldest")]


def test_a_list_of_payloads_reads_back_in_order_one_timestamp_per_batch(ring_path):
    payloads = [i.to_bytes(8, "little") * (1 + i % 3) for i in range(100)]
    with evring.create(ring_path, descriptor_shift=10, payload_shift=20) as writer:
        seqnos = writer.record_many(5, payloads, flow=(9, 8))
        assert seqnos.dtype == np.uint64 and seqnos.tolist() == list(range(1, 101))
        events = replayed(ring_path)
        assert [e[0] for e in events] == list(range(1, 101))
        assert all(e[1] == 5 and e[2] == (9, 8, 0, 0) for e in events)
        assert [e[3] for e in events] == payloads
        assert len({e[4] for e in events[:64]}) == 1, "a batch of 64 shares one timestamp"
        assert writer.record_many(5, []).tolist() == []


def test_a_structured_array_is_one_event_per_record_as_record_writes_them(ring_path):
    ticks = np.zeros(70, dtype=TICK_DTYPE)
    ticks["count"] = np.arange(70)
    ticks["price"] = -np.arange(70) * 10
    with evring.create(ring_path, descriptor_shift=10, payload_shift=20, schema=TICK_SCHEMA) as writer:
        assert writer.record_many("TICK", ticks).tolist() == list(range(1, 71))
        for i in range(70):                                     # the same, one by one
            assert writer.record("TICK", tick_payload(i, -i * 10)) == 71 + i
        events = list(evring.open(ring_path).replay(start="oldest"))
        for batched, single in zip(events[:70], events[70:]):
            assert batched.payload == single.payload and batched.event_type == single.event_type
            assert batched.content_ext == single.content_ext and batched.fields == single.fields
        assert events[5].fields == {"count": 5, "price": -50, "name_length": 0, "name": b""}


def test_types_and_flow_tags_may_be_given_per_event(ring_path):
    with evring.create(ring_path, descriptor_shift=10, payload_shift=20, schema=INTEREST_SCHEMA) as writer:
        events = [{"price": 1, "quantity": 2}, {"price": 3}, bytes(16)]   # TRADE: 16 bytes with its padding
        seqnos = writer.record_many(["TRADE", "QUOTE", 2], events, flow=[(1,), (2, 3), (4, 5, 6, 7)])
        assert seqnos.tolist() == [1, 2, 3]
        rows = np.array([[10, 11], [12, 13]], dtype=np.uint64)
        assert writer.record_many(np.array([3, 3]), [bytes(8), bytes(8)], flow=rows).tolist() == [4, 5]
        got = [(e.type_name, e.content_ext) for e in evring.open(ring_path).replay(start="oldest")]
        assert got == [("TRADE", (1, 0, 0, 0)), ("QUOTE", (2, 3, 0, 0)), ("TRADE", (4, 5, 6, 7)),
                       ("QUOTE", (10, 11, 0, 0)), ("QUOTE", (12, 13, 0, 0))]


def test_with_a_schema_a_refused_event_publishes_nothing(ring_path):
    with evring.create(ring_path, descriptor_shift=10, payload_shift=20, schema=TICK_SCHEMA) as writer:
        with pytest.raises(evring.Error, match=r"event 2 of the batch: TICK \(event type 7\): a payload of 5 bytes"):
            writer.record_many("TICK", [tick_payload(1, 1), tick_payload(2, 2), b"short"])
        with pytest.raises(evring.Error, match=r"event type 9 is not in schema"):
            writer.record_many(9, [b""])
        assert writer.record("TICK", tick_payload(3, 3)) == 1, "nothing was published before"


def test_events_nobody_wants_are_skipped_with_seqno_zero(ring_path):
    with evring.create(ring_path, descriptor_shift=10, payload_shift=20, schema=INTEREST_SCHEMA) as writer:
        with evring.open(ring_path, keywords=["quotes"], level=5):
            seqnos = writer.record_many(["TRADE", "QUOTE", "TRADE", "QUOTE"],
                                        [bytes(16), bytes(8), bytes(16), bytes(8)])
            assert seqnos.tolist() == [0, 1, 0, 2]


def test_a_payload_too_large_is_a_record_error_in_its_place(ring_path):
    with evring.create(ring_path, descriptor_shift=10, payload_shift=12) as writer:   # at most 3840 bytes
        with pytest.raises(evring.Error, match=r"event 1 of the batch: a payload of 5000 bytes is larger"):
            writer.record_many(4, [b"a" * 8, b"b" * 5000, b"c" * 8])
        events = [(e.seqno, e.event_type) for e in evring.open(ring_path).replay(start="oldest")]
        assert events == [(1, 4), (2, 1), (3, 4)], "RECORD_ERROR (type 1) in the oversized event's place"


def test_what_is_not_a_list_of_events_is_refused(ring_path):
    with evring.create(ring_path, descriptor_shift=10, payload_shift=20) as writer:
        with pytest.raises(evring.Error, match="a list or tuple of payloads, or a numpy array"):
            writer.record_many(1, b"bytes are one payload, not a list of them")
        with pytest.raises(evring.Error, match="2 event types for 3 events"):
            writer.record_many([1, 2], [b"", b"", b""])
        with pytest.raises(evring.Error, match="2 flow rows for 3 events"):
            writer.record_many(1, [b"", b"", b""], flow=[(1,), (2,)])
        with pytest.raises(evring.Error, match="not C-contiguous"):
            writer.record_many(1, np.zeros((4, 16), dtype=np.uint8)[:, ::2])
        with pytest.raises(evring.Error, match="neither a bytes-like payload nor a dict"):
            writer.record_many(1, [b"", 5])
        with pytest.raises(evring.Error, match="at most 4"):
            writer.record_many(1, [b""], flow=(1, 2, 3, 4, 5))
        assert writer.record(1, b"") == 1, "nothing was published before"


def test_event_types_follow_the_rule_record_follows(ring_path):
    # One rule for a type in record and record_many (python/src/arguments.hpp):
    # a bool is not a type, a numpy integer is, and the same errors are given.
    with evring.create(ring_path, descriptor_shift=10, payload_shift=20) as writer:
        for call in (lambda t: writer.record(t, b""), lambda t: writer.record_many(t, [b""])):
            with pytest.raises(evring.Error, match="give a number"):
                call(True)
            with pytest.raises(evring.Error, match="give a number"):
                call(2.5)
            with pytest.raises(evring.Error, match="given by name, but the ring has no schema"):
                call("TICK")
        assert writer.record_many(np.uint16(3), [b""]) == [1]
        assert [e.event_type for e in evring.open(ring_path).replay(start="oldest")] == [3]


def test_a_recording_of_batched_events_replays_them_identically(ring_path, evring_bin, tmp_path):
    out = tmp_path / "batched.evrec"
    ticks = np.zeros(300, dtype=TICK_DTYPE)
    ticks["count"] = np.arange(300)
    with evring.create(ring_path, descriptor_shift=10, payload_shift=20, schema=TICK_SCHEMA) as writer:
        writer.record_many("TICK", ticks, flow=(1, 2))
        writer.record_many("TICK", [tick_payload(i, i, b"x" * i) for i in range(40)])
        subprocess.run([evring_bin, "record", ring_path, "-o", str(out), "--from", "oldest", "--count", "340"],
                       check=True, capture_output=True, timeout=60)
        assert replayed(out) == replayed(ring_path)
