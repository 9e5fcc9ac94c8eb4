#!/usr/bin/env bash
# `evring watch --assemble` (docs/cli.md, "Assembled blocks"): on a real snapshot every finalized
# block comes out once as one JSON object whose transactions are the ones `stats --by block`
# counts and whose events are the ones a scan tags with its block; text is a line per block; what
# it cannot assemble whole is refused by name. Needs EVRING_BIN, PRODUCER_BIN and the snapshots.
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
skip_script_unless "python3 is not installed" command -v python3
make_work evring-assemble

evring() { timeout -k 5 120 "$EVRING_BIN" "$@"; }
DIR=${EVRING_CONFORMANCE_DIR:-}
SNAP=${DIR:+$DIR/emn-30b-15m.snapshot.zst}
[[ -n $SNAP && -f $SNAP ]] || { echo "skipped: EVRING_CONFORMANCE_DIR does not name the real snapshots"; FINISHED=1; exit 77; }

case_finalized_blocks_equal_a_scan_and_stats() {
    evring watch "$SNAP" --from oldest --assemble block --stage finalized --format jsonl --no-payload \
        >"$WORK/blocks.jsonl" 2>"$WORK/blocks.err" || { fail blocks "$(cat "$WORK/blocks.err")"; return; }
    evring stats "$SNAP" --by block --json >"$WORK/stats.json" 2>/dev/null
    evring watch "$SNAP" --from oldest --format jsonl --no-payload >"$WORK/events.jsonl" 2>/dev/null
    local why
    why=$(python3 - "$WORK/blocks.jsonl" "$WORK/stats.json" "$WORK/events.jsonl" <<'PY'
import collections, json, sys
blocks = [json.loads(line) for line in open(sys.argv[1])]
stats = {g["key"]: g for g in json.load(open(sys.argv[2]))["by"]["groups"]}
starts, tagged, finalized = {}, collections.Counter(), set()
for line in open(sys.argv[3]):
    e = json.loads(line)
    if e["type_name"] == "BLOCK_START":
        starts[e["seqno"]] = e["fields"]["block_tag"]["block_number"]
    if e["flow"]["block"] in starts:
        tagged[starts[e["flow"]["block"]]] += 1
    if e["type_name"] == "BLOCK_FINALIZED":
        finalized.add(e["fields"]["block_number"])
want = sorted(n for n in starts.values() if n in finalized)
got = [b["label"] for b in blocks]
if got != want: sys.exit(f"blocks {got}, finalized by the scan {want}")
for b in blocks:
    txns = len(b.get("txn", []))
    if txns != stats[b["label"]]["counts"]["txn"]: sys.exit(f"block {b['label']}: {txns} txn, stats says {stats[b['label']]['counts']['txn']}")
    held = 2 + sum(len(t["events"]) for t in b.get("txn", [])) + len(b["other_events"])
    if not (b["event_count"] == tagged[b["label"]] == held): sys.exit(f"block {b['label']}: {b['event_count']} events, {held} held, the scan tags {tagged[b['label']]}")
    if b["state"] != "complete" or [s["stage"] for s in b["stages"]] != ["ended", "finalized"]: sys.exit(f"block {b['label']}: {b['state']} {b['stages']}")
    if b["begin"]["type_name"] != "BLOCK_START" or b["end"]["type_name"] != "BLOCK_END": sys.exit(f"block {b['label']}: begin/end")
    for t in b.get("txn", []):
        if [e["type_name"] for e in t["events"]].count("TXN_HEADER_START") != 1 or any(e["flow"]["txn"] != t["key"] for e in t["events"]):
            sys.exit(f"block {b['label']}: txn {t['key']} holds another's events")
print(f"{len(blocks)} blocks, {sum(len(b.get('txn', [])) for b in blocks)} transactions")
PY
) || { fail blocks "$why"; return; }
    grep -q "30 finalized instances printed (30 complete at stage finalized, 0 abandoned, 0 broken by a gap)" \
        "$WORK/blocks.err" || { fail blocks "summary: $(cat "$WORK/blocks.err")"; return; }
    ok "finalized_blocks_equal_a_scan_and_stats ($why)"
}

case_text_is_a_line_per_block() {
    evring watch "$SNAP" --from oldest --assemble block >"$WORK/blocks.txt" 2>/dev/null
    [[ $(wc -l <"$WORK/blocks.txt") == 30 ]] &&
        grep -qx "block 15000001 complete: seqno 1..6595, 6595 events, 229 txn; stages ended@6595" "$WORK/blocks.txt" ||
        { fail text "$(head -3 "$WORK/blocks.txt")"; return; }
    ok text_is_a_line_per_block
}

case_refused_by_name() {
    local rc
    evring watch "$SNAP" --from oldest --assemble txn >/dev/null 2>"$WORK/err"; rc=$?
    [[ $rc == 2 ]] && grep -q "bad --assemble: no span 'txn' with a label in schema .* (spans with labels: block)" "$WORK/err" ||
        { fail refused "txn: exit $rc: $(cat "$WORK/err")"; return; }
    evring watch "$SNAP" --from oldest --assemble block --stage final >/dev/null 2>"$WORK/err"; rc=$?
    [[ $rc == 2 ]] && grep -q "span 'block' has no stage 'final' (its stages: ended, finalized, verified)" "$WORK/err" ||
        { fail refused "final: exit $rc: $(cat "$WORK/err")"; return; }
    evring watch "$SNAP" --from oldest --assemble block --where 'type == TXN_LOG' >/dev/null 2>"$WORK/err"; rc=$?
    [[ $rc == 2 ]] && grep -q "does not go with --where" "$WORK/err" || { fail refused "--where: exit $rc: $(cat "$WORK/err")"; return; }
    evring watch "$SNAP" --from oldest --stage finalized >/dev/null 2>"$WORK/err"; rc=$?
    [[ $rc == 2 ]] && grep -q "\-\-stage goes with --assemble SPAN" "$WORK/err" || { fail refused "--stage: exit $rc: $(cat "$WORK/err")"; return; }
    ok refused_by_name
}

case_finalized_blocks_equal_a_scan_and_stats
case_text_is_a_line_per_block
case_refused_by_name
exit_with_results
