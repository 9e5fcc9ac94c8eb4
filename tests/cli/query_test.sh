#!/usr/bin/env bash
# Finding events (docs/cli.md, "Positions by meaning" and "Filter expressions"):
# `--from block:N` on the real snapshots prints the BLOCK_START of block N for
# every block, `block:latest` the newest, an unknown label is refused by name;
# `--where EXPR` prints exactly what the same predicate applied in Python to
# the unfiltered jsonl keeps. Needs EVRING_BIN and PRODUCER_BIN; the real
# snapshots when EVRING_CONFORMANCE_DIR names them (else those cases skip).
# Each case prints "ok <name>" or "FAIL <name>: <why>"; exits 1 if any failed.
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
skip_script_unless "python3 is not installed" command -v python3
make_work evring-query

evring() { "$EVRING_BIN" "$@"; }
DIR=${EVRING_CONFORMANCE_DIR:-}
have_snapshots() { [[ -n $DIR && -d $DIR ]]; }

case_from_block_prints_each_blocks_start() {
    have_snapshots || { skip from_block "EVRING_CONFORMANCE_DIR unset"; return; }
    local f=$DIR/emn-30b-15m.snapshot.zst
    evring watch "$f" --from oldest --type BLOCK_START --format jsonl 2>/dev/null |
        python3 -c 'import sys, json
for line in sys.stdin:
    e = json.loads(line); print(e["fields"]["block_tag"]["block_number"], e["seqno"])' > "$WORK/blocks"
    [[ $(wc -l < "$WORK/blocks") -ge 30 ]] || { fail from_block "found $(wc -l < "$WORK/blocks") blocks"; return; }
    local n seqno got
    # Every block's label resolves the same way: the first two, the last two and every fifth
    # block between are checked (each check decompresses the whole snapshot again).
    awk 'NR <= 2 || NR % 5 == 0 || NR >= total - 1' total="$(wc -l < "$WORK/blocks")" "$WORK/blocks" > "$WORK/blocks-checked"
    while read -r n seqno; do
        got=$(evring watch "$f" --from "block:$n" --count 1 --format jsonl 2>"$WORK/err") ||
            { fail from_block "block:$n: $(cat "$WORK/err")"; return; }
        python3 -c 'import sys, json
e = json.loads(sys.argv[1])
sys.exit(not (e["type_name"] == "BLOCK_START" and e["seqno"] == int(sys.argv[2]) and
              e["fields"]["block_tag"]["block_number"] == int(sys.argv[3])))' "$got" "$seqno" "$n" ||
            { fail from_block "block:$n gave ${got:0:120}"; return; }
    done < "$WORK/blocks-checked"
    read -r n seqno < <(tail -1 "$WORK/blocks")
    got=$(evring watch "$f" --from block:latest --count 1 --format jsonl 2>/dev/null)
    [[ $got == *"\"seqno\":$seqno,"* ]] || { fail from_block "block:latest gave ${got:0:80}, expected seqno $seqno"; return; }
    evring watch "$f" --from block:12 --count 1 >/dev/null 2>"$WORK/err"; local rc=$?
    [[ $rc == 1 ]] && grep -q "^evring: block:12: no block 12 in snapshot '.*emn-30b-15m.snapshot.zst' (its block labels run from 15000001 to 15000030)$" "$WORK/err" ||
        { fail from_block "unknown label: exit $rc: $(cat "$WORK/err")"; return; }
    # A stage: the BLOCK_FINALIZED of block N.
    evring watch "$f" --from block.finalized:15000009 --count 1 --format jsonl 2>/dev/null |
        python3 -c 'import sys, json
e = json.loads(sys.stdin.readline())
sys.exit(not (e["type_name"] == "BLOCK_FINALIZED" and e["fields"]["block_number"] == 15000009))' ||
        { fail from_block "block.finalized:15000009"; return; }
    # Text lines name the block by its label once its start was printed; --flow block=N means block N.
    evring watch "$f" --from block:15000009 --count 3 2>/dev/null | tail -1 | grep -q ' block=15000009$' ||
        { fail from_block "text label: $(evring watch "$f" --from block:15000009 --count 3 2>&1 | tail -2)"; return; }
    local txns; txns=$(evring watch "$f" --from oldest --flow block=15000009 --type TXN_END --format jsonl 2>/dev/null | wc -l)
    [[ $txns -gt 0 && $txns == $(evring watch "$f" --from oldest --flow 0=41692 --type TXN_END --format jsonl 2>/dev/null | wc -l) ]] ||
        { fail from_block "--flow block=15000009 gave $txns events"; return; }
    evring watch "$f" --from oldest --flow block=12 >/dev/null 2>"$WORK/err"; rc=$?
    [[ $rc == 1 ]] && grep -q "^evring: --flow block=12: no block 12 in snapshot" "$WORK/err" || { fail from_block "--flow block=12: exit $rc: $(cat "$WORK/err")"; return; }
    ok from_block_prints_each_blocks_start
}

# Block ranges (docs/cli.md, "Block ranges"): --until block:N ends at the
# block's BLOCK_END, with the consensus events between blocks (no block tag);
# the block column is the block number in csv, jsonl and text, even when the
# filter hides BLOCK_START (flow.block is the raw tag); --where ranges of
# labels stop reading once the range has passed; an empty csv has its header.
case_block_ranges() {
    have_snapshots || { skip block_ranges "EVRING_CONFORMANCE_DIR unset"; return; }
    local f=$DIR/emn-30b-15m.snapshot.zst
    # The acceptance command of issue 34: the same events as the seqnos of
    # block 15000009's BLOCK_START to block 15000010's BLOCK_END.
    evring watch "$f" --from block:15000009 --until block:15000010 --format csv --fields block,txn,type \
        >"$WORK/range.csv" 2>"$WORK/err" || { fail block_ranges "acceptance: $(cat "$WORK/err")"; return; }
    evring watch "$f" --from 41692 --until 52936 --format csv --fields type >"$WORK/seqnos.csv" 2>/dev/null
    python3 - "$WORK/range.csv" "$WORK/seqnos.csv" <<'PY' || { fail block_ranges "acceptance output: $(head -3 "$WORK/range.csv")"; return; }
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
types = [r[0] for r in csv.reader(open(sys.argv[2]))]
assert rows[0] == ["block", "txn", "type"], rows[0]
assert [r[2] for r in rows[1:]] == types[1:], "not the events of seqnos 41692..52936"
assert rows[1] == ["15000009", "0", "BLOCK_START"] and rows[-1] == ["15000010", "0", "BLOCK_END"], (rows[1], rows[-1])
assert {r[0] for r in rows[1:]} == {"15000009", "15000010", ""}
assert [r[2] for r in rows[1:] if r[0] == ""] == ["BLOCK_QC", "BLOCK_FINALIZED", "BLOCK_VERIFIED"]
PY
    grep -q "11245 events printed.*reached --until$" "$WORK/err" || { fail block_ranges "summary: $(cat "$WORK/err")"; return; }
    # A range in --where from the oldest event: the same tagged events, and
    # reading stops at block 15000011's BLOCK_START (seqno 52940), not at the end.
    evring watch "$f" --from oldest --where 'block >= 15000009 && block <= 15000010' --format csv --fields block,txn,type \
        >"$WORK/where.csv" 2>"$WORK/err" || { fail block_ranges "where range: $(cat "$WORK/err")"; return; }
    [[ $(grep -v '^,' "$WORK/range.csv") == "$(cat "$WORK/where.csv")" ]] || { fail block_ranges "--where range differs from --until"; return; }
    grep -q "(52940 read).*the --where range of span labels has passed$" "$WORK/err" ||
        { fail block_ranges "where range did not stop: $(cat "$WORK/err")"; return; }
    # block == N stops too; block < N keeps the blocks below; labels read when
    # --type hides BLOCK_START, in jsonl and text, with the raw tag as flow.block.
    evring watch "$f" --from oldest --where 'block == 15000010' --format csv --fields seqno >/dev/null 2>"$WORK/err"
    grep -q "(5[0-9]* read).*the --where range of span labels has passed$" "$WORK/err" ||
        { fail block_ranges "block == N did not stop: $(cat "$WORK/err")"; return; }
    local got
    got=$(evring watch "$f" --from oldest --where 'block < 15000003' --type TXN_END --format jsonl --fields block,flow.block,txn 2>/dev/null | sed -n '1p;$p' | tr '\n' ' ')
    [[ $got == '{"block":15000001,"flow.block":1,"txn":1} {"block":15000002,"flow.block":6599,"txn":'*'} ' ]] ||
        { fail block_ranges "block < N in jsonl: $got"; return; }
    got=$(evring watch "$f" --from block:15000010 --type TXN_END --count 1 --fields block,txn 2>/dev/null)
    [[ $got == "block=15000010 txn=1" ]] || { fail block_ranges "text column: $got"; return; }
    # An empty csv result is its header line.
    got=$(evring watch "$f" --from block:15000030 --type BLOCK_START --where 'type == BLOCK_END' --format csv --fields seqno,block 2>/dev/null)
    [[ $got == "seqno,block" ]] || { fail block_ranges "empty csv: '$got'"; return; }
    # A stop no event can make is refused, naming it (exit 2).
    local rc
    evring watch "$f" --from oldest --until block:12 >/dev/null 2>"$WORK/err"; rc=$?
    [[ $rc == 2 ]] && grep -q "^evring: --until block:12: no block 12 in snapshot" "$WORK/err" ||
        { fail block_ranges "--until block:12: exit $rc: $(cat "$WORK/err")"; return; }
    evring watch "$f" --from block:15000011 --until block:15000010 >/dev/null 2>"$WORK/err"; rc=$?
    [[ $rc == 2 ]] && grep -q "ends before --from block:15000011 starts" "$WORK/err" ||
        { fail block_ranges "--until before --from: exit $rc: $(cat "$WORK/err")"; return; }
    ok block_ranges
}

case_from_block_on_a_recording() {
    have_snapshots || { skip from_block_recording "EVRING_CONFORMANCE_DIR unset"; return; }
    local f=$DIR/emn-30b-15m.snapshot.zst
    evring record "$f" --from oldest --count 60000 -o "$WORK/r.evrec" 2>"$WORK/err" || { fail from_block_recording "$(cat "$WORK/err")"; return; }
    local a b
    a=$(evring watch "$f" --from block:15000005 --count 3 --format jsonl 2>/dev/null)
    b=$(evring watch "$WORK/r.evrec" --from block:15000005 --count 3 --format jsonl 2>/dev/null)
    [[ -n $a && $a == "$b" ]] || { fail from_block_recording "recording and snapshot differ"; return; }
    ok from_block_on_a_recording
}

# record takes the range as watch does (one read pipeline, lib/read/reading.hpp):
# --from block:N --until block:M records exactly the events watch prints for it.
case_record_takes_a_block_range() {
    have_snapshots || { skip record_block_range "EVRING_CONFORMANCE_DIR unset"; return; }
    local f=$DIR/emn-30b-15m.snapshot.zst
    evring record "$f" --from block:15000009 --until block:15000010 -o "$WORK/range.evrec" 2>"$WORK/err" ||
        { fail record_block_range "$(cat "$WORK/err")"; return; }
    local a b
    a=$(evring watch "$f" --from block:15000009 --until block:15000010 --format jsonl --fields seqno,type,block 2>/dev/null)
    b=$(evring watch "$WORK/range.evrec" --from oldest --format jsonl --fields seqno,type,block 2>/dev/null)
    [[ -n $a && $a == "$b" ]] || { fail record_block_range "recording and watch differ ($(wc -l <<<"$a") vs $(wc -l <<<"$b") lines)"; return; }
    ok record_takes_a_block_range
}

# An indexed recording (docs/recording-format.md, "Indexes"): --from block:N and
# --from SEQNO start at the same event as a scan of it, without a notice; an
# index that lies is not trusted (the same event, and one notice saying so).
case_indexed_recording_starts_where_a_scan_does() {
    have_snapshots || { skip indexed_recording "EVRING_CONFORMANCE_DIR unset"; return; }
    local f=$DIR/emn-30b-15m.snapshot.zst r=$WORK/indexed.evrec
    evring record "$f" --from oldest -o "$r" 2>"$WORK/err" || { fail indexed_recording "$(cat "$WORK/err")"; return; }
    local n pos want got all
    # One scan of the whole recording; what each position should give is picked from it
    # (the first BLOCK_START of block N, the first event at or past seqno P, the last N).
    evring watch "$r" --from oldest --format jsonl >"$WORK/all.jsonl" 2>/dev/null
    all=$(<"$WORK/all.jsonl")
    scan_first() {  # python predicate over e: the first line of the scan it holds for
        python3 -c 'import json, sys
pred = eval("lambda e: " + sys.argv[1])
for line in open(sys.argv[2]):
    if pred(json.loads(line)): print(line, end=""); break' "$1" "$WORK/all.jsonl"
    }
    for n in 15000001 15000017 15000030; do
        want=$(scan_first "e['type_name'] == 'BLOCK_START' and e['fields']['block_tag']['block_number'] == $n")
        got=$(evring watch "$r" --from "block:$n" --count 1 --format jsonl 2>"$WORK/err")
        [[ -n $want && $got == "$want" ]] || { fail indexed_recording "block:$n gave ${got:0:100}, a scan ${want:0:100}"; return; }
        grep -q "from the start" "$WORK/err" && { fail indexed_recording "block:$n: $(cat "$WORK/err")"; return; }
    done
    for pos in 1 41692 98453 136891; do
        want=$(scan_first "e['seqno'] >= $pos")
        got=$(evring watch "$r" --from "$pos" --count 1 --format jsonl 2>"$WORK/err")
        [[ -n $want && $got == "$want" ]] || { fail indexed_recording "--from $pos gave ${got:0:100}, a scan ${want:0:100}"; return; }
        grep -q "from the start" "$WORK/err" && { fail indexed_recording "--from $pos: $(cat "$WORK/err")"; return; }
    done
    # latest, -N and -5s: the index's last blocks, the same events as the end of a scan.
    for pos in latest -1 -3 -2000; do
        n=${pos#-}; [[ $pos == latest ]] && n=1
        want=$(tail -n "$n" <<<"$all")
        got=$(evring watch "$r" --from "$pos" --format jsonl 2>"$WORK/err")
        [[ -n $want && $got == "$want" ]] || { fail indexed_recording "--from $pos gave $(wc -l <<<"$got") lines, not the last $n"; return; }
        grep -q "from the start" "$WORK/err" && { fail indexed_recording "--from $pos: $(cat "$WORK/err")"; return; }
    done
    got=$(evring watch "$r" --from -1ms --format jsonl 2>"$WORK/err" | head -1)
    [[ -n $got ]] && ! grep -q "from the start" "$WORK/err" || { fail indexed_recording "--from -1ms: ${got:0:100} $(cat "$WORK/err")"; return; }
    # A damaged index block (the one the end block names): the same event, said once.
    python3 - "$r" <<'PY'
import struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
end = len(data) - 144                              # the end block (raw, 144 bytes)
index = struct.unpack_from("<Q", data, end + 64 + 8)[0]  # its IndexRef record's offset
data[index + 64 + 40] ^= 0x10                     # inside the index block's stored bytes
open(sys.argv[1], "wb").write(data)
PY
    want=$(scan_first "e['seqno'] >= 98453")
    got=$(evring watch "$r" --from 98453 --count 1 --format jsonl 2>"$WORK/err")
    [[ $got == "$want" ]] || { fail indexed_recording "lying index: --from 98453 gave ${got:0:100}"; return; }
    [[ $(grep -c "the index is not trusted" "$WORK/err") == 1 ]] || { fail indexed_recording "lying index: $(cat "$WORK/err")"; return; }
    got=$(evring watch "$r" --from block:15000017 --count 1 --format jsonl 2>"$WORK/err")
    [[ $got == *'"block_number":15000017'* ]] || { fail indexed_recording "lying index: block:15000017 gave ${got:0:100}"; return; }
    [[ $(grep -c "not trusted" "$WORK/err") == 1 ]] || { fail indexed_recording "lying index, block: $(cat "$WORK/err")"; return; }
    ok indexed_recording_starts_where_a_scan_does
}

# watch --follow reads a recording while `evring record` writes it, and ends
# with its end record; --follow on anything but a recording is refused.
case_watch_follow_reads_a_recording_as_it_is_written() {
    [[ -x ${PRODUCER_BIN:-} ]] || { skip watch_follow "no producer at ${PRODUCER_BIN:-}"; return; }
    local ring=qfollow r=$WORK/follow.evrec
    "$PRODUCER_BIN" "$ring:14:22" --count 6000 --rate 3000 --keep >/dev/null 2>"$WORK/producer.err" & PIDS+=($!)
    poll 200 0.02 evring info "$ring" >/dev/null || { fail watch_follow "no ring: $(cat "$WORK/producer.err")"; return; }
    evring record "$ring" -o "$r" --no-register 2>"$WORK/record.err" & PIDS+=($!)
    poll 200 0.02 test -s "$r" || { fail watch_follow "no recording: $(cat "$WORK/record.err")"; return; }
    local got
    got=$(timeout -k 5 60 "$EVRING_BIN" watch "$r" --follow --from oldest --format jsonl 2>"$WORK/err" | wc -l)
    local all; all=$(evring watch "$r" --from oldest --format jsonl 2>/dev/null | wc -l)
    [[ $got -gt 0 && $got == "$all" ]] && grep -q "end of the recording$" "$WORK/err" ||
        { fail watch_follow "followed $got of $all events: $(tail -2 "$WORK/err")"; return; }
    evring watch "$ring" --follow >/dev/null 2>"$WORK/err"; local rc=$?
    [[ $rc == 2 ]] && grep -q -- "--follow reads a recording as it is written; '$ring' is a ring file" "$WORK/err" ||
        { fail watch_follow "--follow on a ring: exit $rc: $(cat "$WORK/err")"; return; }
    ok watch_follow_reads_a_recording_as_it_is_written
}

# Each line: an expression, then (after ' ### ') the same predicate in Python over the decoded
# event `e` (f = its fields, x = its flow tags). A field an event lacks makes a comparison false.
WHERE_CASES=$(cat <<'CASES'
type == TXN_HEADER_START && txn_header.gas_limit > 1000000 ### e["type_name"] == "TXN_HEADER_START" and f["txn_header"]["gas_limit"] > 1000000
type == TXN_LOG && topics[0] ^= 0xddf252ad ### e["type_name"] == "TXN_LOG" and len(f["topics"]) > 0 and f["topics"][0].startswith("0xddf252ad")
txn_header.txn_type == EIP1559 and not txn_header.gas_limit < 100000 ### "txn_header" in f and f["txn_header"]["txn_type"] == "EIP1559" and not f["txn_header"]["gas_limit"] < 100000
txn in {1, 2, 3} || type in {BLOCK_START, BLOCK_END} ### x[1] in (1, 2, 3) or e["type_name"] in ("BLOCK_START", "BLOCK_END")
receipt.status == false && type == TXN_EVM_OUTPUT ### e["type_name"] == "TXN_EVM_OUTPUT" and f["receipt"]["status"] is False
!(txn == 0) && payload_size >= 100 && type != STORAGE_ACCESS ### x[1] != 0 and e["payload_size"] >= 100 and e["type_name"] != "STORAGE_ACCESS"
value > 0 || opcode == DELEGATECALL ### ("value" in f and isinstance(f["value"], str) and int(f["value"], 16) > 0) or f.get("opcode") == "DELEGATECALL"
caller == 0x6d72dc1b254fb818a1382a05212466b83424e469 or address ^= 0x4f81 ### f.get("caller") == "0x6d72dc1b254fb818a1382a05212466b83424e469" or (isinstance(f.get("address"), str) and f["address"].startswith("0x4f81"))
evmc_status != 0 && depth >= 1 ### "evmc_status" in f and f["evmc_status"] != 0 and f["depth"] >= 1
seqno >= 100 && seqno < 200 && !(type == TXN_LOG) ### 100 <= e["seqno"] < 200 and e["type_name"] != "TXN_LOG"
CASES
)

case_where_keeps_what_python_keeps() {
    have_snapshots || { skip where "EVRING_CONFORMANCE_DIR unset"; return; }
    local f=$DIR/emn-1b-15m.snapshot.zst
    evring watch "$f" --from oldest --format jsonl > "$WORK/all.jsonl" 2>/dev/null || { fail where "unfiltered watch"; return; }
    local line expr pred n=0
    while IFS= read -r line; do
        expr=${line%% ### *}
        pred=${line#* ### }
        evring watch "$f" --from oldest --where "$expr" --format jsonl > "$WORK/kept.jsonl" 2>"$WORK/err" ||
            { fail where "'$expr': $(cat "$WORK/err")"; return; }
        python3 - "$WORK/all.jsonl" "$WORK/kept.jsonl" "$pred" <<'PY' || { fail where "'$expr' differs from Python: $(cat "$WORK/kept.jsonl.why")"; return; }
import json, sys
def keep(e, pred):
    f, x = e.get("fields", {}), e["content_ext"]
    try:
        return bool(eval(pred, {}, {"e": e, "f": f, "x": x}))
    except (KeyError, IndexError, TypeError):
        return False
with open(sys.argv[1]) as a: expected = [l for l in a if keep(json.loads(l), sys.argv[3])]
with open(sys.argv[2]) as b: got = b.readlines()
if got != expected or not expected:
    open(sys.argv[2] + ".why", "w").write(f"evring kept {len(got)}, Python {len(expected)}")
    sys.exit(1)
PY
        n=$((n + 1))
    done <<< "$WHERE_CASES"
    ok "where_keeps_what_python_keeps ($n expressions)"
}

case_where_refuses_bad_expressions_by_position() {
    local f=${DIR:+$DIR/emn-1b-15m.snapshot.zst}
    [[ -n $f ]] || { skip where_errors "EVRING_CONFORMANCE_DIR unset"; return; }
    local args expect
    while IFS='|' read -r args expect; do
        evring watch "$f" --from oldest --where "$args" >/dev/null 2>"$WORK/err"; local rc=$?
        [[ $rc == 2 && $(wc -l < "$WORK/err") == 1 ]] || { fail where_errors "'$args': exit $rc: $(cat "$WORK/err")"; return; }
        grep -qF "$expect" "$WORK/err" || { fail where_errors "'$args': $(cat "$WORK/err")"; return; }
    done <<'CASES'
txn_header.gaz_limit > 1|at 1: no event of schema monad_exec has a field 'txn_header.gaz_limit'; nearest: txn_header.gas_limit
type == TXN_HEADR_START|at 9: 'TXN_HEADR_START' is not an event type of schema monad_exec; nearest: TXN_HEADER_START
sender < 0x01|'sender' is a byte array: compare it with ==, !=, in or ^=
txn_header.txn_type == EIP1560|'EIP1560' is not a value of 'txn_header.txn_type'; nearest: EIP1559
gas_used > "x"|it cannot equal text
(type == 1|expected ')' but found 'the end'
type = 1|at 6: unexpected character '='
block_tag > 1|'block_tag' is a struct; name one of its fields: id, block_number
CASES
    # Hostile: deep nesting and a long expression (100 KB: the kernel limits one argument to
    # 128 KiB; compile_where_test gives the parser 1 MB) are refused, quickly, without a crash.
    local deep; deep=$(printf '(%.0s' $(seq 1 10000))
    evring watch "$f" --from oldest --where "$deep" >/dev/null 2>"$WORK/err"
    grep -q "nested more than 64 deep" "$WORK/err" || { fail where_errors "deep: $(cat "$WORK/err")"; return; }
    local big; big=$(head -c 100000 /dev/zero | tr '\0' 'a')
    evring watch "$f" --from oldest --where "$big" >/dev/null 2>"$WORK/err"
    grep -q "an expression is at most 65536 bytes; this one is 100000" "$WORK/err" || { fail where_errors "1 MB: $(cut -c1-200 "$WORK/err")"; return; }
    ok where_refuses_bad_expressions_by_position
}

case_stats_counts_events_by_type_exactly() {
    have_snapshots || { skip stats "EVRING_CONFORMANCE_DIR unset"; return; }
    local f
    for f in "$DIR/emn-1b-15m.snapshot.zst" "$DIR/emn-30b-15m.snapshot.zst"; do
        evring stats "$f" --json > "$WORK/stats.json" 2>"$WORK/err" || { fail stats "$f: $(cat "$WORK/err")"; return; }
        evring watch "$f" --from oldest --format jsonl 2>/dev/null | python3 -c '
import collections, json, sys
types, size, n = collections.Counter(), collections.Counter(), 0
first = last = None
for line in sys.stdin:
    e = json.loads(line); n += 1
    types[e["type_name"]] += 1; size[e["type_name"]] += e["payload_size"]
    first = e["seqno"] if first is None else first; last = e["seqno"]
s = json.load(open(sys.argv[1]))
got = {t["name"]: (t["events"], t["bytes"]) for t in s["types"]}
want = {k: (types[k], size[k]) for k in types}
if got != want or s["events"] != n or s["first_seqno"] != first or s["last_seqno"] != last or s["gaps"] != 0:
    print(f"stats {s['events']} events {got}, python {n} {want}"); sys.exit(1)
block = [x for x in s["spans"] if x["name"] == "block"][0]
if block["opened"] != types["BLOCK_START"]: print("block spans", block); sys.exit(1)
' "$WORK/stats.json" > "$WORK/why" || { fail stats "$f: $(cat "$WORK/why")"; return; }
    done
    # With --where: the count of what the expression keeps.
    evring stats "$DIR/emn-1b-15m.snapshot.zst" --where 'type == TXN_LOG && topics[0] ^= 0xddf252ad' --json |
        python3 -c 'import json, sys; s = json.load(sys.stdin); sys.exit(not (s["events"] > 0 and [t["name"] for t in s["types"]] == ["TXN_LOG"]))' ||
        { fail stats "--where"; return; }
    ok stats_counts_events_by_type_exactly
}

case_digest_is_the_same_for_a_ring_its_snapshot_and_its_recording() {
    "$PRODUCER_BIN" digestfeed:16:24 --count 3000 --keep 2>"$WORK/producer.err" ||
        { fail digest "producer: $(cat "$WORK/producer.err")"; return; }
    evring snapshot digestfeed -o "$WORK/feed.zst" 2>/dev/null || { fail digest "snapshot"; return; }
    evring record digestfeed --from oldest -o "$WORK/feed.evrec" 2>/dev/null || { fail digest "record"; return; }
    local ring snap rec
    ring=$(evring digest digestfeed --json | python3 -c 'import json, sys; s = json.load(sys.stdin); print(s["digest"], s["events"])')
    snap=$(evring digest "$WORK/feed.zst" --json | python3 -c 'import json, sys; s = json.load(sys.stdin); print(s["digest"], s["events"])')
    rec=$(evring digest "$WORK/feed.evrec" --json | python3 -c 'import json, sys; s = json.load(sys.stdin); print(s["digest"], s["events"])')
    [[ $ring == *" 3000" && $ring == "$snap" && $ring == "$rec" ]] || { fail digest "ring $ring, snapshot $snap, recording $rec"; return; }
    # The blanking options change it; a different start changes it.
    local blank other
    blank=$(evring digest digestfeed --blank-time --blank-offset --blank-flow all | cut -d' ' -f1)
    other=$(evring digest digestfeed --from 2 | cut -d' ' -f1)
    [[ $blank != "${ring%% *}" && $other != "${ring%% *}" && $blank != "$other" ]] || { fail digest "blanking or --from made no difference"; return; }
    if have_snapshots; then
        local f=$DIR/emn-1b-15m.snapshot.zst
        evring record "$f" --from oldest -o "$WORK/real.evrec" 2>/dev/null || { fail digest "record real"; return; }
        [[ $(evring digest "$f" | cut -d' ' -f1) == $(evring digest "$WORK/real.evrec" | cut -d' ' -f1) ]] ||
            { fail digest "real snapshot and its recording differ"; return; }
    fi
    ok digest_is_the_same_for_a_ring_its_snapshot_and_its_recording
}

case_jsonl_time_is_the_exact_instant_as_a_string() {
    "$PRODUCER_BIN" timefeed:12:20 --count 50 --keep 2>/dev/null || { fail time "producer"; return; }
    evring watch timefeed --from oldest --format jsonl 2>/dev/null | python3 -c '
import datetime, json, sys
n = 0
for line in sys.stdin:
    e = json.loads(line); n += 1
    whole, frac = e["time"].rstrip("Z").split(".")
    t = datetime.datetime.strptime(whole, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    if int(t.timestamp()) * 10**9 + int(frac) != e["record_epoch_nanos"]: sys.exit(f"{e}")
sys.exit(0 if n == 50 else f"{n} events")' || { fail time "time and record_epoch_nanos differ"; return; }
    # Flow tags by name, and --no-payload drops the hex (the fields carry the payload).
    evring watch timefeed --from oldest --count 5 --format jsonl --no-payload 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    e = json.loads(line)
    if "payload" in e or e["flow"] != {"symbol": e["content_ext"][0], "venue": e["content_ext"][1]} or "fields" not in e:
        sys.exit(f"{e}")' || { fail time "flow by name or --no-payload"; return; }
    ok jsonl_time_is_the_exact_instant_as_a_string
}

case_fields_choose_columns_in_text_jsonl_and_csv() {
    have_snapshots || { skip fields "EVRING_CONFORMANCE_DIR unset"; return; }
    local f=$DIR/emn-1b-15m.snapshot.zst
    evring watch "$f" --from oldest --format jsonl 2>/dev/null > "$WORK/full.jsonl"
    evring watch "$f" --from oldest --format csv --fields seqno,type,txn,txn_header.gas_limit,sender 2>/dev/null > "$WORK/cols.csv"
    evring watch "$f" --from oldest --format jsonl --fields seqno,type,txn_header.gas_limit 2>/dev/null > "$WORK/cols.jsonl"
    python3 - "$WORK/full.jsonl" "$WORK/cols.csv" "$WORK/cols.jsonl" <<'PY' || { fail fields "$(cat "$WORK/cols.why" 2>/dev/null)"; return; }
import csv, json, sys
full = [json.loads(l) for l in open(sys.argv[1])]
rows = list(csv.DictReader(open(sys.argv[2])))
cols = [json.loads(l) for l in open(sys.argv[3])]
assert len(rows) == len(full) == len(cols)
for e, r, c in zip(full, rows, cols):
    gas = e.get("fields", {}).get("txn_header", {}).get("gas_limit")
    assert r["seqno"] == str(e["seqno"]) and r["type"] == e["type_name"] and r["txn"] == str(e["content_ext"][1])
    assert r["txn_header.gas_limit"] == ("" if gas is None else str(gas)), (r, e["seqno"])
    assert r["sender"] == e.get("fields", {}).get("sender", "") if e["type_name"] == "TXN_HEADER_START" else r["sender"] == ""
    assert c == {"seqno": e["seqno"], "type": e["type_name"], "txn_header.gas_limit": gas}, c
PY
    evring watch "$f" --from 7 --count 1 --fields seqno,type,txn_header.gas_limit 2>/dev/null |
        grep -qx 'seqno=7 type=TXN_HEADER_START txn_header.gas_limit=46122' || { fail fields "text"; return; }
    evring watch "$f" --fields seqno,nope >/dev/null 2>"$WORK/err"; local rc=$?
    [[ $rc == 2 ]] && grep -q "bad --fields 'seqno,nope': no event of schema monad_exec has a field 'nope'" "$WORK/err" ||
        { fail fields "unknown column: exit $rc: $(cat "$WORK/err")"; return; }
    ok fields_choose_columns_in_text_jsonl_and_csv
}

for c in $(declare -F | awk '{print $3}' | grep '^case_'); do "$c"; done
exit_with_results
