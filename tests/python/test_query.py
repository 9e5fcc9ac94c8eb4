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


def test_where_compares_a_span_tag_by_its_label(snapshot_dir):
    """`block == N` keeps block N's events, as the CLI's --where does: setting
    the filter does not move the reader, and it keeps exactly what the raw tag
    test `ext[0] == OPENER` keeps."""
    reader = evring.open(os.path.join(snapshot_dir, "emn-30b-15m.snapshot.zst"))
    opener = next(reader.replay(start="block:15000005"))
    reader.set_where("block == 15000005")
    by_label = list(reader.replay(start=None))
    assert by_label and by_label[0].seqno == opener.seqno + 1
    assert all(e.content_ext[0] == opener.seqno for e in by_label)
    reader.set_where(f"ext[0] == {opener.seqno}")
    by_tag = [e.seqno for e in reader.replay(start="oldest")]
    assert by_tag == [opener.seqno] + [e.seqno for e in by_label]
    reader.set_where("block in {15000005, 15000006}")
    both = list(reader.replay(start="oldest"))
    assert len(both) > len(by_tag) and {e.content_ext[0] for e in both} == {opener.seqno, both[-1].content_ext[0]}
    with pytest.raises(evring.Error, match="no block 12"):
        reader.set_where("block == 12")
