#!/usr/bin/env bash
# `evring stats --by` (docs/cli.md, "evring stats", "Figures by group"): every figure of
# `--by block --field`, `--by FIELD` and `--by type --csv` on a real snapshot equals a Python
# computation over `watch --format jsonl` (labels from BLOCK_START, stage events by the block
# number in their payload, nearest-rank quantiles); a signed field and a text key on a demo ring;
# an empty CSV is its header; keys and fields it cannot figure are refused by name. Needs
# EVRING_BIN and PRODUCER_BIN; the real snapshots when EVRING_CONFORMANCE_DIR names them.
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
skip_script_unless "python3 is not installed" command -v python3
make_work evring-stats-by

evring() { timeout -k 5 120 "$EVRING_BIN" "$@"; }
DIR=${EVRING_CONFORMANCE_DIR:-}
have_snapshots() { [[ -n $DIR && -d $DIR ]]; }

# The Python side: groups of the jsonl events on stdin, as `stats --by` defines them.
cat >"$WORK/groups.py" <<'PY'
import collections, json, sys

def rank(values, p):  # nearest rank
    values = sorted(values)
    return values[max(1, (p * len(values) + 99) // 100) - 1]

def spread(values):
    return {"p50": rank(values, 50), "p99": rank(values, 99), "max": max(values)}

by, field = sys.argv[1], sys.argv[2]
starts, groups, unkeyed = {}, collections.OrderedDict(), []
stages = {"BLOCK_FINALIZED": "finalized", "BLOCK_VERIFIED": "verified"}
for line in sys.stdin:
    e = json.loads(line)
    key = None
    if by == "block":
        tag = e["flow"].get("block", 0)
        if e["type_name"] == "BLOCK_START":
            starts[e["seqno"]] = e["fields"]["block_tag"]["block_number"]
        if tag in starts:
            key = starts[tag]
        elif e["type_name"] in stages:
            key = e["fields"]["block_number"]
    else:
        node = e["fields"]
        for step in by.split("."):
            node = node.get(step) if isinstance(node, dict) else None
        key = node
    (unkeyed if key is None else groups.setdefault(key, [])).append(e)

def value(e):
    node = e["fields"]
    for step in field.split("."):
        node = node.get(step) if isinstance(node, dict) else None
    return node

def figures(events):
    g = {"events": len(events), "bytes": sum(e["payload_size"] for e in events)}
    if by == "block":
        t = {e["type_name"]: e["record_epoch_nanos"] for e in reversed(events)}  # the first of each type
        end = [e["record_epoch_nanos"] for e in events if e["type_name"] in ("BLOCK_END", "BLOCK_REJECT")]
        g["duration_nanos"] = end[-1] - t["BLOCK_START"] if "BLOCK_START" in t and end else None
        g["counts"] = {"txn": sum(e["type_name"] == "TXN_HEADER_START" for e in events)}
        for name in stages.values():
            g["counts"][name] = sum(stages.get(e["type_name"]) == name for e in events)
    values = [value(e) for e in events if value(e) is not None]
    g["field"] = {"count": len(values)}
    if values:
        g["field"].update(sum=sum(values), **spread(values))
    return g

want = {"groups": {str(k): figures(v) for k, v in groups.items()},
        "unkeyed": figures(unkeyed) if unkeyed else None}
keyed = list(want["groups"].values())
want["over"] = {"events": spread([g["events"] for g in keyed])}
if by == "block":
    want["over"]["duration"] = spread([g["duration_nanos"] for g in keyed if g["duration_nanos"] is not None])
    want["over"]["txn"] = spread([g["counts"]["txn"] for g in keyed])
json.dump(want, sys.stdout)
PY

# The evring side, in the same shape.
cat >"$WORK/compare.py" <<'PY'
import json, sys
want = json.load(open(sys.argv[1]))
s = json.load(open(sys.argv[2]))["by"]
field = sys.argv[3]
def shape(g):
    out = {"events": g["events"], "bytes": g["bytes"], "field": g["fields"][field]}
    if "duration_nanos" in g:
        out["duration_nanos"] = g["duration_nanos"]
        out["counts"] = g["counts"]
    return out
got = {"groups": {str(g["key"]): shape(g) for g in s["groups"]},
       "unkeyed": shape(s["unkeyed"]) if s["unkeyed"] else None,
       "over": {k: {q: v[q] for q in ("p50", "p99", "max")} for k, v in s["over_groups"].items()
                if k in want["over"]}}
if got != want:
    for part in ("groups", "unkeyed", "over"):
        if got[part] != want[part]:
            g, w = got[part], want[part]
            if isinstance(g, dict) and isinstance(w, dict):
                for key in sorted(set(g) | set(w)):
                    if g.get(key) != w.get(key):
                        print(f"{part} {key}: evring {g.get(key)}, python {w.get(key)}"); break
            else:
                print(f"{part}: evring {g}, python {w}")
            break
    sys.exit(1)
print(f"{len(got['groups'])} groups")
PY

case_by_block_equals_a_scan_of_the_events() {
    have_snapshots || { skip by_block "EVRING_CONFORMANCE_DIR unset"; return; }
    local f=$DIR/emn-30b-15m.snapshot.zst why
    evring watch "$f" --from oldest --format jsonl 2>/dev/null >"$WORK/30b.jsonl"
    evring stats "$f" --by block --field txn_header.gas_limit --json >"$WORK/by-block.json" 2>"$WORK/err" ||
        { fail by_block "$(cat "$WORK/err")"; return; }
    python3 "$WORK/groups.py" block txn_header.gas_limit <"$WORK/30b.jsonl" >"$WORK/want-block.json"
    why=$(python3 "$WORK/compare.py" "$WORK/want-block.json" "$WORK/by-block.json" txn_header.gas_limit) ||
        { fail by_block "$why"; return; }
    # The text table has a row per block and the figures over them.
    evring stats "$f" --by block >"$WORK/by-block.txt" 2>&1
    grep -qE '^15000009 ' "$WORK/by-block.txt" && grep -qE '^over [0-9]+ block groups +p50 +p99 +max' "$WORK/by-block.txt" ||
        { fail by_block "text: $(head -5 "$WORK/by-block.txt")"; return; }
    ok "by_block_equals_a_scan_of_the_events ($why)"
}

case_by_field_equals_a_scan_of_the_events() {
    have_snapshots || { skip by_field "EVRING_CONFORMANCE_DIR unset"; return; }
    local f=$DIR/emn-30b-15m.snapshot.zst why
    [[ -s $WORK/30b.jsonl ]] || evring watch "$f" --from oldest --format jsonl 2>/dev/null >"$WORK/30b.jsonl"
    evring stats "$f" --by txn_header.to --field txn_header.nonce --json >"$WORK/by-to.json" 2>"$WORK/err" ||
        { fail by_field "$(cat "$WORK/err")"; return; }
    python3 "$WORK/groups.py" txn_header.to txn_header.nonce <"$WORK/30b.jsonl" >"$WORK/want-to.json"
    why=$(python3 "$WORK/compare.py" "$WORK/want-to.json" "$WORK/by-to.json" txn_header.nonce) ||
        { fail by_field "$why"; return; }
    ok "by_field_equals_a_scan_of_the_events ($why)"
}

case_by_type_as_csv_and_an_empty_csv() {
    have_snapshots || { skip by_type_csv "EVRING_CONFORMANCE_DIR unset"; return; }
    local f=$DIR/emn-1b-15m.snapshot.zst
    evring stats "$f" --csv >"$WORK/types.csv" 2>"$WORK/err" || { fail by_type_csv "$(cat "$WORK/err")"; return; }
    evring stats "$f" --json >"$WORK/types.json"
    python3 - "$WORK/types.csv" "$WORK/types.json" <<'PY' || { fail by_type_csv "$(cat "$WORK/types.csv" | head -3)"; return; }
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
want = {t["name"]: (t["events"], t["bytes"]) for t in json.load(open(sys.argv[2]))["types"]}
got = {r["type"]: (int(r["events"]), int(r["bytes"])) for r in rows}
sys.exit(got != want)
PY
    evring stats "$f" --where 'type == BLOCK_REJECT' --csv >"$WORK/empty.csv" 2>"$WORK/err"
    [[ $(cat "$WORK/empty.csv") == "type,events,bytes,first_nanos,last_nanos" ]] ||
        { fail by_type_csv "empty: $(cat "$WORK/empty.csv" "$WORK/err")"; return; }
    ok by_type_as_csv_and_an_empty_csv
}

case_a_signed_field_by_a_text_key_on_a_ring() {
    "$PRODUCER_BIN" statsfeed:16:24 --count 3000 --keep 2>"$WORK/producer.err" ||
        { fail demo "producer: $(cat "$WORK/producer.err")"; return; }
    evring watch statsfeed --from oldest --format jsonl 2>/dev/null >"$WORK/demo.jsonl"
    evring stats statsfeed --by name --field price --json >"$WORK/by-name.json" 2>"$WORK/err" ||
        { fail demo "$(cat "$WORK/err")"; return; }
    python3 "$WORK/groups.py" name price <"$WORK/demo.jsonl" >"$WORK/want-name.json"
    local why
    why=$(python3 "$WORK/compare.py" "$WORK/want-name.json" "$WORK/by-name.json" price) || { fail demo "$why"; return; }
    ok "a_signed_field_by_a_text_key_on_a_ring ($why)"
}

case_refused_by_name() {
    have_snapshots || { skip refused "EVRING_CONFORMANCE_DIR unset"; return; }
    local f=$DIR/emn-1b-15m.snapshot.zst rc
    evring stats "$f" --by nosuch >/dev/null 2>"$WORK/err"; rc=$?
    [[ $rc == 2 ]] && grep -q "bad --by 'nosuch': no event of schema .* has a field 'nosuch'" "$WORK/err" ||
        { fail refused "--by nosuch: exit $rc: $(cat "$WORK/err")"; return; }
    evring stats "$f" --by block --field txn_header.value >/dev/null 2>"$WORK/err"; rc=$?
    [[ $rc == 2 ]] && grep -q "bad --field 'txn_header.value': 'txn_header.value' is a 256-bit number" "$WORK/err" ||
        { fail refused "--field value: exit $rc: $(cat "$WORK/err")"; return; }
    evring stats "$f" --field txn_header.nonce >/dev/null 2>"$WORK/err"; rc=$?
    [[ $rc == 2 ]] && grep -q "give --by too" "$WORK/err" || { fail refused "--field alone: exit $rc: $(cat "$WORK/err")"; return; }
    ok refused_by_name
}

case_by_block_equals_a_scan_of_the_events
case_by_field_equals_a_scan_of_the_events
case_by_type_as_csv_and_an_empty_csv
case_a_signed_field_by_a_text_key_on_a_ring
case_refused_by_name
exit_with_results
