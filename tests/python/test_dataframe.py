"""Batch.to_dataframe: a batch as a pandas DataFrame in one call, with flat
columns, type names and flow tags by name (pandas is optional)."""
import pytest

import evring

from conftest import TICK_SCHEMA, tick_payload

pandas = pytest.importorskip("pandas")


def test_a_batch_becomes_a_flat_dataframe_with_names(ring_path):
    with evring.create(ring_path, descriptor_shift=6, payload_shift=16, schema=TICK_SCHEMA) as writer:
        for i in range(1, 6):
            writer.record("TICK", tick_payload(i, i), flow=(100 + i,))
        writer.record_raw(9, b"")               # a type the schema does not name
        reader = evring.open(ring_path)
        reader.seek("oldest")
        frame = reader.read_batch(100).to_dataframe()
        assert list(frame.columns) == ["seqno", "event_type", "type_name", "payload_size", "record_epoch_nanos",
                                       "payload_buf_offset", "instrument", "content_ext1", "content_ext2",
                                       "content_ext3", "payload_state"]
        assert list(frame["seqno"]) == [1, 2, 3, 4, 5, 6]
        assert list(frame["type_name"]) == ["TICK"] * 5 + [None]
        assert list(frame["instrument"][:5]) == [101, 102, 103, 104, 105]
        assert frame["payload_size"][0] == 16
