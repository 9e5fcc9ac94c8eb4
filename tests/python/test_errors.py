"""Bad input raises evring.Error with a message naming the value and the reason."""
import os

import pytest

import evring
from conftest import TICK_SCHEMA


def test_a_missing_source_names_the_file():
    with pytest.raises(evring.Error, match="evring-pytest-no-such-ring"):
        evring.open("/dev/shm/evring-pytest-no-such-ring")


def test_a_file_that_is_no_ring_says_why(tmp_path):
    junk = tmp_path / "junk"
    junk.write_bytes(b"not a ring at all" * 1000)
    with pytest.raises(evring.Error, match="junk"):
        evring.open(junk)


def test_a_directory_is_refused(tmp_path):
    with pytest.raises(evring.Error, match=str(tmp_path)):
        evring.open(tmp_path)


def test_bad_sizes_are_refused_with_the_field(ring_path):
    with pytest.raises(evring.Error, match="shift"):
        evring.create(ring_path, descriptor_shift=3)
    with pytest.raises(evring.Error, match="shift"):
        evring.create(ring_path, payload_shift=99)


def test_a_bad_schema_points_at_the_line(ring_path):
    with pytest.raises(evring.Error, match=r":\d+:\d+:"):
        evring.create(ring_path, schema=TICK_SCHEMA.replace('"u64"', '"u9"'))
    with pytest.raises(evring.Error, match="content type"):
        evring.create(ring_path, schema=TICK_SCHEMA, content_type=5)


def test_a_schema_file_that_does_not_describe_the_ring_is_refused(ring_path, tmp_path):
    schema = tmp_path / "tick.toml"
    schema.write_text(TICK_SCHEMA)
    with evring.create(ring_path, descriptor_shift=6, payload_shift=16):
        with pytest.raises(evring.Error, match="does not describe"):
            evring.open(ring_path, schema=schema)


def test_bad_writes_are_refused(ring_path):
    with evring.create(ring_path, descriptor_shift=6, payload_shift=16) as writer:
        with pytest.raises(evring.Error, match="larger than"):
            writer.record(3, bytes(writer.max_payload + 1))
        with pytest.raises(evring.Error, match="at most 4"):
            writer.record(3, b"x", flow=(1, 2, 3, 4, 5))
        with pytest.raises(evring.Error, match="no schema"):
            writer.record("TICK", b"x")
        with pytest.raises(evring.Error, match="65535"):
            writer.record(70000, b"x")
        reader = evring.open(ring_path)
        events = list(reader.replay(start="oldest"))
        assert [e.event_type for e in events] == [1]   # the oversized payload became a RECORD_ERROR
    with pytest.raises(evring.Error, match="closed"):
        writer.record(3, b"x")


def test_bad_positions_and_timeouts_are_refused(ring_path):
    with evring.create(ring_path, descriptor_shift=6, payload_shift=16):
        reader = evring.open(ring_path)
        with pytest.raises(evring.Error, match="sometime"):
            reader.replay(start="sometime")
        with pytest.raises(evring.Error, match="timeout"):
            reader.follow(timeout=-1)
        reader.close()
        with pytest.raises(evring.Error, match="closed"):
            reader.replay()


def test_events_that_do_not_decode_say_why(ring_path):
    with evring.create(ring_path, descriptor_shift=6, payload_shift=16, schema=TICK_SCHEMA) as writer:
        writer.record_raw(7, b"short")   # the unchecked path: record() refuses both
        writer.record_raw(9, b"")
        first, second = evring.open(ring_path).replay(start="oldest")
        assert first.fields is None and "size" in first.decode_error
        assert second.fields is None and second.type_name is None and "9" in second.decode_error
