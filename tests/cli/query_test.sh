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
    while read -r n seqno; do
        got=$(evring watch "$f" --from "block:$n" --count 1 --format jsonl 2>"$WORK/err") ||
            { fail from_block "block:$n: $(cat "$WORK/err")"; return; }
        python3 -c 'import sys, json
e = json.loads(sys.argv[1])
sys.exit(not (e["type_name"] == "BLOCK_START" and e["seqno"] == int(sys.argv[2]) and
              e["fields"]["block_tag"]["block_number"] == int(sys.argv[3])))' "$got" "$seqno" "$n" ||
            { fail from_block "block:$n gave ${got:0:120}"; return; }
    done < "$WORK/blocks"
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
    ok from_block_prints_each_blocks_start
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

for c in $(declare -F | awk '{print $3}' | grep '^case_'); do "$c"; done
exit_with_results
