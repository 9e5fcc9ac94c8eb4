"""Reader.blocks: whole span instances (a Monad block with its transactions
and stages), the same the CLI's `watch --assemble` prints."""
import collections
import os

import pytest

import evring


def test_finalized_blocks_hold_what_a_scan_finds(snapshot_dir):
    path = os.path.join(snapshot_dir, "emn-30b-15m.snapshot.zst")
    with evring.open(path) as reader:
        starts, tagged, txns, finalized = {}, collections.Counter(), collections.defaultdict(set), set()
        for e in reader.replay(start="oldest"):
            if e.type_name == "BLOCK_START":
                starts[e.seqno] = e.fields["block_tag"]["block_number"]
            block = starts.get(e.content_ext[0])
            if block is not None:
                tagged[block] += 1
                if e.type_name == "TXN_HEADER_START":
                    txns[block].add(e.content_ext[1])
            if e.type_name == "BLOCK_FINALIZED":
                finalized.add(e.fields["block_number"])
        it = reader.blocks(stage="finalized")
        blocks = list(it)
    assert [b["label"] for b in blocks] == sorted(n for n in starts.values() if n in finalized)
    assert it.counts == {"handed_out": 30, "abandoned": 0, "broken": 0, "unfinished": 0, "unassembled": 0}
    for b in blocks:
        assert b["state"] == "complete" and b["span"] == "block"
        assert [s[0] for s in b["stages"]] == ["ended", "finalized"]
        assert len(b["events"]) == tagged[b["label"]]
        assert b["events"][0].type_name == "BLOCK_START" and b["events"][-1].type_name == "BLOCK_END"
        assert set(b["nested"].get("txn", {})) == txns[b["label"]]
        assert all(e.content_ext[1] == key for key, events in b["nested"].get("txn", {}).items() for e in events)


def test_refused_with_the_reason(snapshot_dir):
    with evring.open(os.path.join(snapshot_dir, "emn-1b-15m.snapshot.zst")) as reader:
        with pytest.raises(evring.Error, match="no span 'txn' with a label"):
            reader.blocks(span="txn")
        with pytest.raises(evring.Error, match="has no stage 'final'"):
            reader.blocks(stage="final")
        reader.set_where("type == TXN_LOG")
        with pytest.raises(evring.Error, match="set_where would leave events out"):
            reader.blocks()
