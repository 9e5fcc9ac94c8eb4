"""Batch.to_dataframe: a batch as a pandas DataFrame in one call, with flat
columns, type names and flow tags by name (pandas is optional)."""
import os

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


def test_fields_become_columns_with_nullable_dtypes(ring_path):
    with evring.create(ring_path, descriptor_shift=6, payload_shift=16, schema=TICK_SCHEMA) as writer:
        writer.record("TICK", tick_payload(1, -5, b"ab"), flow=(1,))
        writer.record("TICK", tick_payload(2**64 - 1, 7), flow=(2,))
        writer.record_raw(9, b"")               # a type the schema does not name: no fields
        reader = evring.open(ring_path)
        reader.seek("oldest")
        batch = reader.read_batch(100)
        frame = batch.to_dataframe(fields=True)
        assert list(frame.columns)[-4:] == ["count", "price", "name_length", "name"]
        assert str(frame["count"].dtype) == "UInt64"    # 2^64 - 1 stays exact
        assert list(frame["count"][:2]) == [1, 2**64 - 1] and frame["count"].isna()[2]
        assert str(frame["price"].dtype) == "Int64"
        assert list(frame["price"][:2]) == [-5, 7]
        assert list(frame["name"][:2]) == ["0x6162", "0x"] and frame["name"].isna()[2]
        raw = batch.to_dataframe(fields=True, bytes="bytes")
        assert list(raw["name"][:2]) == [b"ab", b""]
        with pytest.raises(evring.Error, match='bytes is "hex" or "bytes"'):
            batch.to_dataframe(fields=True, bytes="base64")
        reader.seek("oldest")
        bare = reader.read_batch(10, payloads=False)
        with pytest.raises(evring.Error, match="read without payloads"):
            bare.to_dataframe(fields=True)


def test_fields_of_a_real_snapshot_equal_the_decoded_events(snapshot_dir):
    """Nested structs flattened as a.b, enums as names, arrays as lists: the
    frame's values are each event's fields, as Event.fields gives them."""
    path = os.path.join(snapshot_dir, "emn-1b-15m.snapshot.zst")
    with evring.open(path) as reader:
        reader.seek("oldest")
        frame = reader.read_batch(10_000).to_dataframe(fields=True, bytes="bytes")
        events = list(reader.replay(start="oldest"))
    assert len(frame) == len(events) == 6597
    headers = frame[frame["type_name"] == "TXN_HEADER_START"]
    assert str(frame["txn_header.gas_limit"].dtype) == "Int64"   # every value fits: UInt64 only past 2^63
    first = next(e for e in events if e.type_name == "TXN_HEADER_START")
    row = headers.iloc[0]
    assert row["txn_header.gas_limit"] == first.fields["txn_header"]["gas_limit"]
    assert row["txn_header.txn_type"] == first.fields["txn_header"]["txn_type"]  # an enum: its name
    assert row["sender"] == first.fields["sender"]
    logs = frame[frame["type_name"] == "TXN_LOG"]
    log = next(e for e in events if e.type_name == "TXN_LOG")
    assert list(logs.iloc[0]["topics"]) == log.fields["topics"]              # an array: one column of lists
    for e, (_, r) in zip(events[:300], frame.iloc[:300].iterrows()):
        flat = {}
        def walk(d, prefix=""):
            for k, v in d.items():
                walk(v, prefix + k + ".") if isinstance(v, dict) else flat.__setitem__(prefix + k, v)
        walk(e.fields or {})
        for k, v in flat.items():
            assert (r[k] == v) if not isinstance(v, list) else (list(r[k]) == v), (e.seqno, k)
