"""Writes checked against the ring's schema (docs/python.md, "Writing"):
Writer.record refuses an unknown type or a payload size the layout rules out;
Writer.record_raw does not, unless the writer was created with check_raw."""
import pytest

import evring

from conftest import TICK_SCHEMA, tick_payload


def test_record_refuses_a_size_the_layout_rules_out(ring_path):
    with evring.create(ring_path, descriptor_shift=6, payload_shift=16, schema=TICK_SCHEMA) as writer:
        with pytest.raises(evring.Error, match=r"TICK \(event type 7\): a payload of 5 bytes, but its layout is "
                                               r"a 16-byte fixed part, then name\[name_length\]"):
            writer.record("TICK", b"short")
        with pytest.raises(evring.Error, match=r"counts say 19 bytes"):
            writer.record("TICK", tick_payload(1, 2, b"abc") + b"!")
        with pytest.raises(evring.Error, match=r"event type 9 is not in schema 'pytest' \(its types: 1 RECORD_ERROR, 7 TICK\)"):
            writer.record(9, b"")
        assert writer.record("TICK", tick_payload(1, 2, b"abc")) == 1
        assert writer.record_raw(7, b"short") == 2                 # the raw path is unchecked
        events = list(evring.open(ring_path).replay(start="oldest"))
        assert [e.seqno for e in events] == [1, 2]


def test_check_raw_checks_the_raw_path_too(ring_path):
    with evring.create(ring_path, descriptor_shift=6, payload_shift=16, schema=TICK_SCHEMA,
                       check_raw=True) as writer:
        with pytest.raises(evring.Error, match="5 bytes"):
            writer.record_raw(7, b"short")
        assert writer.record_raw(7, tick_payload(1, 2)) == 1


def test_without_a_schema_any_bytes_go(ring_path):
    with evring.create(ring_path, descriptor_shift=6, payload_shift=16) as writer:
        assert writer.record(9, b"x") == 1
