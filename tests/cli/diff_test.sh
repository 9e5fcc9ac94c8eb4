#!/usr/bin/env bash
# evring diff (docs/cli.md, "evring diff"): a real snapshot and its recording
# (one file, or rotated into two) are equal (exit 0); a copy with one payload byte changed differs (exit 1) at
# that seqno, byte and field; a source that ends early, --max bounding the
# list, --where and --until selecting alike on both sides, sets against a
# member, two snapshots of one live ring; a truncated file, a missing one and
# a bad option give exit 2 with one `evring:` line naming the file or value.
# Needs EVRING_BIN and PRODUCER_BIN; the real snapshots when
# EVRING_CONFORMANCE_DIR names them (else those cases skip).
# Each case prints "ok <name>" or "FAIL <name>: <why>"; exits 1 if any failed.
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
skip_script_unless "python3 is not installed" command -v python3
skip_script_unless "the zstd program is not installed (apt-get install zstd)" command -v zstd
make_work evring-diff

evring() { "$EVRING_BIN" "$@"; }
DIR=${EVRING_CONFORMANCE_DIR:-}
# The smallest real snapshot (one block, 6597 events; 140 MB decompressed).
SNAP=${DIR:+$DIR/emn-1b-15m.snapshot.zst}
have_snapshots() { [[ -n $DIR && -f $SNAP ]]; }
# json FILE EXPR: EXPR over the JSON object in FILE (as `j`), printed (a tuple's items with spaces between).
json() {
    python3 -c 'import json, sys
j = json.load(open(sys.argv[1])); r = eval(sys.argv[2])
print(" ".join(map(str, r)) if isinstance(r, tuple) else r)' "$1" "$2"
}

if have_snapshots; then
    evring record "$SNAP" --from oldest -o "$WORK/snap.evrec" 2>/dev/null || { echo "FAIL setup: record"; exit 1; }
    # One payload byte of seqno 3000 changed (byte 20 of its payload) and one
    # flow tag of seqno 4000, in a snapshot of its own: the ring decompressed, the byte found through the
    # descriptor (docs/format.md: descriptors at 2 MiB, 64 bytes each; the
    # payload buffer after them, at payload_buf_offset mod its size), flipped.
    zstd -q -d -c "$SNAP" > "$WORK/ring" || { echo "FAIL setup: zstd -d"; exit 1; }
    python3 - "$WORK/ring" <<'PY' || { echo "FAIL setup: crafting the changed snapshot"; exit 1; }
import struct, sys
path = sys.argv[1]
d = bytearray(open(path, "rb").read())
capacity, buffer_size = struct.unpack_from("<QQ", d, 40)
slot = 2 * 1024 * 1024 + ((3000 - 1) % capacity) * 64
seqno, size, offset = struct.unpack_from("<Q", d, slot)[0], struct.unpack_from("<I", d, slot + 12)[0], struct.unpack_from("<Q", d, slot + 24)[0]
assert seqno == 3000 and size > 20, (seqno, size)
d[2 * 1024 * 1024 + capacity * 64 + offset % buffer_size + 20] ^= 0xFF
# and seqno 4000's flow tag 1 (content_ext[1], at 40 in the descriptor) raised by one
slot = 2 * 1024 * 1024 + ((4000 - 1) % capacity) * 64
assert struct.unpack_from("<Q", d, slot)[0] == 4000
struct.pack_into("<Q", d, slot + 40, struct.unpack_from("<Q", d, slot + 40)[0] + 1)
open(path, "wb").write(d)
PY
    zstd -q -1 -c "$WORK/ring" > "$WORK/changed.zst" && rm -f "$WORK/ring" || { echo "FAIL setup: zstd"; exit 1; }
fi

case_a_snapshot_and_its_recording_are_equal() {
    have_snapshots || { skip equal "EVRING_CONFORMANCE_DIR unset"; return; }
    local out rc
    out=$(evring diff "$SNAP" "$WORK/snap.evrec" 2>&1); rc=$?
    [[ $rc == 0 && $out == "equal: 6597 events"* ]] || { fail equal "exit $rc: $out"; return; }
    evring diff "$WORK/snap.evrec" "$SNAP" --format json > "$WORK/eq.json"; rc=$?
    [[ $rc == 0 && $(json "$WORK/eq.json" 'j["equal"], j["first"], j["a"]["events"], j["b"]["events"]') == "True None 6597 6597" ]] ||
        { fail equal "json exit $rc: $(cat "$WORK/eq.json")"; return; }
    # A recording rotated into two files reads as one series.
    mkdir -p "$WORK/series"
    evring record "$SNAP" --from oldest --rotate-size 1M -o "$WORK/series/r.evrec" 2>/dev/null || { fail equal "record --rotate-size"; return; }
    [[ -f $WORK/series/r.evrec.1 ]] || { fail equal "the recording did not rotate: $(ls "$WORK/series")"; return; }
    out=$(evring diff "$SNAP" "$WORK/series/r.evrec" 2>/dev/null); rc=$?
    [[ $rc == 0 && $out == "equal: 6597 events"* ]] || { fail equal "rotated series: exit $rc: $out"; return; }
    ok a_snapshot_and_its_recording_are_equal
}

case_one_changed_payload_byte_is_named_by_seqno_byte_and_field() {
    have_snapshots || { skip changed "EVRING_CONFORMANCE_DIR unset"; return; }
    local out rc
    out=$(evring diff "$SNAP" "$WORK/changed.zst" 2>&1); rc=$?
    [[ $rc == 1 && $out == "first difference: seqno 3000 ("*"): payload differs at byte 20 (field "* ]] ||
        { fail changed "exit $rc: $out"; return; }
    evring diff "$WORK/snap.evrec" "$WORK/changed.zst" --format json > "$WORK/changed.json"; rc=$?
    [[ $rc == 1 && $(json "$WORK/changed.json" 'j["equal"], j["listed"], j["first"]["seqno"], j["first"]["byte"], j["first"]["differs"], len(j["first"]["field"]) > 0') == "False 2 3000 20 ['payload'] True" ]] ||
        { fail changed "json exit $rc: $(cat "$WORK/changed.json")"; return; }
    [[ $(json "$WORK/changed.json" 'j["differences"][1]["seqno"], j["differences"][1]["differs"], j["differences"][1]["flow_tags"], j["differences"][1]["text"].startswith("flow tag ")') == "4000 ['flow'] [1] True" ]] ||
        { fail changed "the flow tag: $(cat "$WORK/changed.json")"; return; }
    # --where leaving that event's type out (and --until before the flow tag), or --until before it: equal again.
    local type
    type=$(evring watch "$SNAP" --from 3000 --count 1 --format jsonl 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["type_name"])')
    evring diff "$SNAP" "$WORK/changed.zst" --where "type != $type" --until 3999 >/dev/null 2>&1; rc=$?
    [[ $rc == 0 ]] || { fail changed "--where 'type != $type': exit $rc"; return; }
    evring diff "$SNAP" "$WORK/changed.zst" --until 2999 >/dev/null 2>&1; rc=$?
    [[ $rc == 0 ]] || { fail changed "--until 2999: exit $rc"; return; }
    evring diff "$SNAP" "$WORK/changed.zst" --from 3000 --count 1 >/dev/null 2>&1; rc=$?
    [[ $rc == 1 ]] || { fail changed "--from 3000 --count 1: exit $rc"; return; }
    ok one_changed_payload_byte_is_named_by_seqno_byte_and_field
}

# --by block: the differences name their block, and the counts per block say which blocks
# differ (the events outside any block, consensus events, count under null).
case_by_block_names_the_blocks_that_differ() {
    have_snapshots || { skip by_block "EVRING_CONFORMANCE_DIR unset"; return; }
    local out rc
    out=$(evring diff "$WORK/snap.evrec" "$WORK/changed.zst" --by block 2>&1); rc=$?
    [[ $rc == 1 && $out == *"seqno 3000 (TXN_CALL_FRAME) in block 15000001: payload differs at byte 20"* &&
       $out == *"block 15000001: 6595 events in A, 6595 in B, 2 differ"* && $out == *"0 block instances equal"* ]] ||
        { fail by_block "exit $rc: $out"; return; }
    evring diff "$WORK/snap.evrec" "$WORK/changed.zst" --by block --format json >"$WORK/by-block.json"
    local spans; spans=$(json "$WORK/by-block.json" 'j["span"], [(s["label"], s["events_a"], s["differ"]) for s in j["spans"]]')
    [[ $spans == "block [(None, 2, 0), (15000001, 6595, 2)]" ]] || { fail by_block "json: $spans"; return; }
    out=$(evring diff "$SNAP" "$WORK/snap.evrec" --by block 2>&1); rc=$?
    [[ $rc == 0 && $out == *"1 block instances equal"* ]] || { fail by_block "equal: exit $rc: $out"; return; }
    ok by_block_names_the_blocks_that_differ
}

case_a_source_that_ends_early_and_max_bounding_the_list() {
    have_snapshots || { skip ends_early "EVRING_CONFORMANCE_DIR unset"; return; }
    local out rc
    evring record "$SNAP" --from oldest --until 6500 -o "$WORK/short.evrec" 2>/dev/null || { fail ends_early "record --until"; return; }
    out=$(evring diff "$SNAP" "$WORK/short.evrec" 2>&1); rc=$?
    [[ $rc == 1 && $out == "first difference: seqno 6501: only in A "* ]] || { fail ends_early "exit $rc: $out"; return; }
    out=$(evring diff "$WORK/short.evrec" "$SNAP" 2>&1); rc=$?
    [[ $rc == 1 && $out == "first difference: seqno 6501: only in B "* ]] || { fail ends_early "B: exit $rc: $out"; return; }
    # 97 events differ: --max 3 lists 3 and says there are more; the default lists 10; 0 only the first.
    evring diff "$SNAP" "$WORK/short.evrec" --max 3 --format json > "$WORK/max.json"
    [[ $(json "$WORK/max.json" 'j["listed"], len(j["differences"]), j["more"], [d["seqno"] for d in j["differences"]]') == "3 3 True [6501, 6502, 6503]" ]] ||
        { fail ends_early "--max 3: $(cat "$WORK/max.json")"; return; }
    evring diff "$SNAP" "$WORK/short.evrec" --format json > "$WORK/max.json"
    [[ $(json "$WORK/max.json" 'j["listed"], j["more"]') == "10 True" ]] || { fail ends_early "default: $(cat "$WORK/max.json")"; return; }
    evring diff "$SNAP" "$WORK/short.evrec" --max 0 --format json > "$WORK/max.json"; rc=$?
    [[ $rc == 1 && $(json "$WORK/max.json" 'j["listed"], j["first"]["seqno"]') == "0 6501" ]] ||
        { fail ends_early "--max 0: exit $rc $(cat "$WORK/max.json")"; return; }
    evring diff "$SNAP" "$WORK/short.evrec" --max 200 --format json > "$WORK/max.json"
    [[ $(json "$WORK/max.json" 'j["listed"], j["more"], j["a"]["events"], j["b"]["events"]') == "97 False 6597 6500" ]] ||
        { fail ends_early "--max 200: $(cat "$WORK/max.json")"; return; }
    out=$(evring diff "$SNAP" "$WORK/short.evrec" --until 6500 2>&1); rc=$?
    [[ $rc == 0 ]] || { fail ends_early "--until 6500: exit $rc: $out"; return; }
    ok a_source_that_ends_early_and_max_bounding_the_list
}

case_damaged_missing_and_bad_options_are_exit_2() {
    local out rc
    out=$(evring diff "$WORK/nothing-here.zst" "$WORK/nothing-here.zst" 2>&1); rc=$?
    [[ $rc == 2 && $out == "evring: "*"nothing-here.zst"* && $(wc -l <<<"$out") == 1 ]] || { fail exit_2 "missing: exit $rc: $out"; return; }
    out=$(evring diff a b --by '' 2>&1); rc=$?
    [[ $rc == 2 && $out == "evring: "*"--by"* ]] || { fail exit_2 "--by '': exit $rc: $out"; return; }
    out=$(evring diff a b --max many 2>&1); rc=$?
    [[ $rc == 2 && $out == "evring: "*"--max"* ]] || { fail exit_2 "--max many: exit $rc: $out"; return; }
    have_snapshots || { skip exit_2_damaged "EVRING_CONFORMANCE_DIR unset"; ok damaged_missing_and_bad_options_are_exit_2; return; }
    out=$(evring diff "$SNAP" "$WORK/snap.evrec" --by nosuch 2>&1); rc=$?
    [[ $rc == 2 && $out == "evring: bad --by 'nosuch': give seqno, member or a span with a label (block)" ]] ||
        { fail exit_2 "--by nosuch: exit $rc: $out"; return; }
    # A snapshot cut short: refused on opening, naming it.
    head -c 100000 "$SNAP" > "$WORK/cut.zst"
    out=$(evring diff "$WORK/cut.zst" "$WORK/snap.evrec" 2>&1 >/dev/null); rc=$?
    [[ $rc == 2 && $out == "evring: "*"cut.zst"*"truncated"* && $(wc -l <<<"$out") == 1 ]] || { fail exit_2 "cut snapshot: exit $rc: $out"; return; }
    # A recording cut short: read up to the cut, said to be damaged, exit 2.
    head -c 100000 "$WORK/snap.evrec" > "$WORK/cut.evrec"
    out=$(evring diff "$SNAP" "$WORK/cut.evrec" 2>&1 >/dev/null); rc=$?
    [[ $rc == 2 && $out == *"evring: "*"cut.evrec"*"damaged"* ]] || { fail exit_2 "cut recording: exit $rc: $out"; return; }
    ok damaged_missing_and_bad_options_are_exit_2
}

case_two_snapshots_of_a_live_ring_are_equal() {
    "$PRODUCER_BIN" difffeed:12:20 --count 2000 --keep 2>"$WORK/producer.err" || { fail live "producer: $(cat "$WORK/producer.err")"; return; }
    evring snapshot difffeed -o "$WORK/live1.zst" 2>/dev/null && evring snapshot difffeed -o "$WORK/live2.zst" 2>/dev/null ||
        { fail live "snapshot"; return; }
    local out rc
    out=$(evring diff "$WORK/live1.zst" "$WORK/live2.zst" 2>&1); rc=$?
    [[ $rc == 0 && $out == "equal: 2000 events"* ]] || { fail live "snapshots: exit $rc: $out"; return; }
    out=$(evring diff difffeed "$WORK/live1.zst" 2>&1); rc=$?
    [[ $rc == 0 ]] || { fail live "ring and its snapshot: exit $rc: $out"; return; }
    # Another run of the producer writes the same events at other times.
    "$PRODUCER_BIN" difffeed2:12:20 --count 2000 --keep 2>/dev/null || { fail live "producer 2"; return; }
    out=$(evring diff difffeed difffeed2 --max 1 2>&1); rc=$?
    [[ $rc == 1 && $out == *"record_epoch_nanos"* ]] || { fail live "another run: exit $rc: $out"; return; }
    ok two_snapshots_of_a_live_ring_are_equal
}

case_a_set_against_its_snapshot_and_against_one_member() {
    local set=diffset$$ out rc
    "$PRODUCER_BIN" "$set" --threads 2 --count 3000 2>"$WORK/producer.err" || { fail set "producer: $(cat "$WORK/producer.err")"; return; }
    evring snapshot "$set" -o "$WORK/set.zst" 2>/dev/null || { fail set "snapshot"; return; }
    out=$(evring diff "$set" "$WORK/set.zst" --by member 2>&1); rc=$?
    [[ $rc == 0 && $out == *"member 0: "*"member 1: "* ]] || { fail set "set and its snapshot: exit $rc: $out"; return; }
    # Member 0's ring alone: member 1's events are only in the set.
    evring diff "$set" "$EVRING_RING_DIR/$set/m0" --by member --max 2 --format json > "$WORK/set.json"; rc=$?
    [[ $rc == 1 ]] || { fail set "set and one member: exit $rc: $(cat "$WORK/set.json")"; return; }
    [[ $(json "$WORK/set.json" '[(m["member"], m["events_a"] > 0, m["events_b"] == (m["events_a"] if m["member"] == 0 else 0), m["differ"] == (0 if m["member"] == 0 else m["events_a"])) for m in j["members"]], j["first"]["differs"], j["first"]["member"], j["listed"]') == "[(0, True, True, True), (1, True, True, True)] ['only_in_a'] 1 2" ]] ||
        { fail set "members: $(cat "$WORK/set.json")"; return; }
    ok a_set_against_its_snapshot_and_against_one_member
}

case_a_snapshot_and_its_recording_are_equal
case_by_block_names_the_blocks_that_differ
case_one_changed_payload_byte_is_named_by_seqno_byte_and_field
case_a_source_that_ends_early_and_max_bounding_the_list
case_damaged_missing_and_bad_options_are_exit_2
case_two_snapshots_of_a_live_ring_are_equal
case_a_set_against_its_snapshot_and_against_one_member
exit_with_results
