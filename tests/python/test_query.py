"""Finding events from Python: span positions (start="block:N") and
Reader.set_where, on the real snapshots (skipped without them)."""
import os

import pytest

import evring


def test_block_positions_and_where_filters(snapshot_dir):
    reader = evring.open(os.path.join(snapshot_dir, "emn-30b-15m.snapshot.zst"))
    first = next(reader.replay(start="block:15000009"))
    assert first.type_name == "BLOCK_START" and first.fields["block_tag"]["block_number"] == 15000009
    with pytest.raises(evring.Error, match="no block 12 in snapshot"):
        reader.seek("block:12")
    with pytest.raises(evring.Error, match="nearest: TXN_HEADER_START"):
        reader.set_where("type == TXN_HEADR_START")
    reader.set_where("type == TXN_HEADER_START && txn_header.gas_limit > 1000000")
    kept = list(reader.replay(start="oldest"))
    with pytest.raises(evring.Error, match="a where filter is set"):
        reader.read_batch(10)
    reader.set_where(None)
    expected = [e.seqno for e in reader.replay(start="oldest")
                if e.type_name == "TXN_HEADER_START" and e.fields["txn_header"]["gas_limit"] > 1000000]
    assert kept and [e.seqno for e in kept] == expected
