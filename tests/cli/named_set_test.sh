#!/usr/bin/env bash
# Named readers of ring sets (docs/named-readers.md): a position per member.
# A set written by several threads is read in two runs that resume member by
# member (a set snapshot and a rotated set recording too); a run killed with
# SIGKILL halfway, then run again with the same name, delivers every (member,
# seqno) once plus exactly the tail it reports as written again, and beside
# it only events of what it says the killed run was writing (a kill inside a
# write: tests/support/came_again.py). Each case prints "ok <name>",
# "FAIL <name>: <why>" or "skip <name>: <why>".
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
skip_script_unless "jq is not installed (apt-get install jq)" command -v jq
skip_script_unless "no producer example at $PRODUCER_BIN (-Dexamples=false?)" test -x "$PRODUCER_BIN"
make_work evring-named-set-test
export EVRING_STATE_DIR="$WORK/state"

evring() { timeout -k 5 120 "$EVRING_BIN" "$@"; }
# "member seqno" per event.
pairs() { jq -R -r 'fromjson? | "\(.member) \(.seqno)"' "$@"; }

case_set_resumes_member_by_member() {
    local set=nset$$
    "$PRODUCER_BIN" "$set" --threads 3 --count 2000 2>/dev/null || { fail resume "producer failed"; return; }
    evring watch "$set" --name a --from oldest --count 1000 --format jsonl >"$WORK/r1" 2>"$WORK/r1.err" ||
        { fail resume "first run: $(cat "$WORK/r1.err")"; return; }
    evring watch "$set" --name a --format jsonl >"$WORK/r2" 2>"$WORK/r2.err" ||
        { fail resume "second run: $(cat "$WORK/r2.err")"; return; }
    grep -q "reader 'a' resumes ring set '.*' (committed .*): member 0 after seqno [0-9]*, member 1 after seqno [0-9]*, member 2 after seqno [0-9]*; nothing was written after that commit" \
        "$WORK/r2.err" || { fail resume "notice: $(cat "$WORK/r2.err")"; return; }
    local total unique
    total=$(pairs "$WORK/r1" "$WORK/r2" | wc -l)
    unique=$(pairs "$WORK/r1" "$WORK/r2" | sort -u | wc -l)
    [[ $total == 6000 && $unique == 6000 ]] || { fail resume "$total events, $unique distinct, of 6000"; return; }
    evring watch "$set" --name a --format jsonl >"$WORK/r3" 2>"$WORK/r3.err" ||
        { fail resume "third run: $(cat "$WORK/r3.err")"; return; }
    [[ ! -s $WORK/r3 ]] || { fail resume "third run printed $(wc -l <"$WORK/r3") events"; return; }
    evring readers --named --json >"$WORK/l1" 2>"$WORK/l1.err"
    jq -e -s 'map(select(.name == "a"))[0] | .member_last_seqno == [2000, 2000, 2000] and .lag == 0' \
        "$WORK/l1" >/dev/null || { fail resume "readers --named: $(cat "$WORK/l1")"; return; }
    # An explicit --from that consumes nothing keeps the position, as on a ring.
    evring watch "$set" --name a --from @4000000000 --format jsonl >"$WORK/r4" 2>/dev/null
    evring watch "$set" --name a --format jsonl >"$WORK/r5" 2>"$WORK/r5.err"
    [[ ! -s $WORK/r5 ]] || { fail resume "after an empty --from run: $(wc -l <"$WORK/r5") events again"; return; }
    ok set_resumes_member_by_member
}

# A set snapshot's members are never re-opened (their serials stay 0): each
# member's instance must still be kept, or the second run reads all again.
case_set_snapshot_resumes_member_by_member() {
    local set=sset$$
    "$PRODUCER_BIN" "$set" --threads 2 --count 500 2>/dev/null || { fail snapshot "producer failed"; return; }
    evring snapshot "$set" -o "$WORK/s.snap" >/dev/null 2>&1 || { fail snapshot "snapshot failed"; return; }
    evring watch "$WORK/s.snap" --name sn --from oldest --count 300 --format jsonl >"$WORK/n1" 2>/dev/null
    evring watch "$WORK/s.snap" --name sn --format jsonl >"$WORK/n2" 2>"$WORK/n2.err" ||
        { fail snapshot "second run: $(cat "$WORK/n2.err")"; return; }
    local total unique
    total=$(pairs "$WORK/n1" "$WORK/n2" | wc -l)
    unique=$(pairs "$WORK/n1" "$WORK/n2" | sort -u | wc -l)
    [[ $total == 1000 && $unique == 1000 ]] ||
        { fail snapshot "$total events, $unique distinct, of 1000: $(cat "$WORK/n2.err")"; return; }
    ok set_snapshot_resumes_member_by_member
}

# A first run of a one-member set that waits before its first event: the
# commit check compares with a position that has no member instances yet.
case_set_first_run_idle_before_any_event() {
    local set=iset$$
    # 20 s of events: both runs find the writer alive however slowly they start (under ASan,
    # a 2 s producer could exit before the first run saw 3 events). Stopped below.
    "$PRODUCER_BIN" "$set" --threads 1 --count 400 --rate 20 2>/dev/null & PIDS+=($!)
    local producer=$!
    poll 500 0.01 test -e "$EVRING_RING_DIR/$set/manifest" || { fail idle "no set"; return; }
    evring watch "$set" --name one --from latest --count 3 --format jsonl >"$WORK/i1" 2>"$WORK/i1.err"; local rc=$?
    [[ $rc == 0 && $(pairs "$WORK/i1" | wc -l) == 3 ]] || { fail idle "exit $rc: $(cat "$WORK/i1.err")"; return; }
    evring watch "$set" --name one --count 1 --format jsonl >"$WORK/i2" 2>"$WORK/i2.err"
    [[ $(pairs "$WORK/i2") == "0 $(( $(pairs "$WORK/i1" | tail -1 | cut -d' ' -f2) + 1 ))" ]] ||
        { fail idle "second run: $(cat "$WORK/i2" "$WORK/i2.err")"; return; }
    kill "$producer" 2>/dev/null; wait "$producer" 2>/dev/null
    ok set_first_run_idle_before_any_event
}

case_set_recording_resumes_member_by_member() {
    local set=rset$$
    "$PRODUCER_BIN" "$set" --threads 3 --count 2000 2>/dev/null || { fail recording "producer failed"; return; }
    # Small files: the runs resume across a rotated series.
    evring record "$set" --from oldest --rotate-size 64K -o "$WORK/set.evrec" 2>"$WORK/rec.err" ||
        { fail recording "record: $(cat "$WORK/rec.err")"; return; }
    [[ -e $WORK/set.evrec.2 ]] || { fail recording "the recording did not rotate: $(cat "$WORK/rec.err")"; return; }
    evring watch "$WORK/set.evrec" --name ra --from oldest --count 2500 --format jsonl >"$WORK/e1" 2>"$WORK/e1.err" ||
        { fail recording "first run: $(cat "$WORK/e1.err")"; return; }
    evring watch "$WORK/set.evrec" --name ra --format jsonl >"$WORK/e2" 2>"$WORK/e2.err" ||
        { fail recording "second run: $(cat "$WORK/e2.err")"; return; }
    grep -q "reader 'ra' resumes ring set recording '.*set.evrec' (committed .*): member [0-9] after seqno [0-9]*.*; nothing was written after that commit" \
        "$WORK/e2.err" || { fail recording "notice: $(cat "$WORK/e2.err")"; return; }
    local total unique
    total=$(pairs "$WORK/e1" "$WORK/e2" | wc -l)
    unique=$(pairs "$WORK/e1" "$WORK/e2" | sort -u | wc -l)
    [[ $total == 6000 && $unique == 6000 ]] || { fail recording "$total events, $unique distinct, of 6000"; return; }
    # The second run is the rest of the merged stream, in its order.
    diff <(evring watch "$WORK/set.evrec" --from oldest --format jsonl 2>/dev/null | pairs | tail -n 3500) <(pairs "$WORK/e2") \
        >/dev/null || { fail recording "the second run is not the stream's last 3500 events"; return; }
    evring watch "$WORK/set.evrec" --name ra --format jsonl >"$WORK/e3" 2>"$WORK/e3.err" ||
        { fail recording "third run: $(cat "$WORK/e3.err")"; return; }
    [[ ! -s $WORK/e3 ]] || { fail recording "third run printed $(wc -l <"$WORK/e3") events"; return; }
    ok set_recording_resumes_member_by_member
}

case_set_sigkill_loses_nothing_and_counts_what_comes_again() {
    local set=kset$$
    "$PRODUCER_BIN" "$set" --threads 4 --count 50000 --rate 25000 2>/dev/null & PIDS+=($!)
    local producer=$!
    poll 500 0.01 test -e "$EVRING_RING_DIR/$set" || { fail sigkill "no set"; return; }
    "$EVRING_BIN" watch "$set" --name k --from oldest --format jsonl >"$WORK/k1" 2>"$WORK/k1.err" & PIDS+=($!)
    local watcher=$!
    poll 1500 0.01 has_lines "$WORK/k1" 60000 || { fail sigkill "the first run printed too little"; return; }
    kill -KILL "$watcher"; wait "$watcher" 2>/dev/null
    evring watch "$set" --name k --format jsonl >"$WORK/k2" 2>"$WORK/k2.err" ||
        { fail sigkill "second run: $(cat "$WORK/k2.err")"; return; }
    wait "$producer"
    grep -q "reader 'k' resumes ring set" "$WORK/k2.err" || { fail sigkill "no resume notice: $(cat "$WORK/k2.err")"; return; }
    local unique
    pairs "$WORK/k1" "$WORK/k2" >"$WORK/k.pairs"
    unique=$(sort -u "$WORK/k.pairs" | wc -l)
    [[ $unique == 200000 ]] || { fail sigkill "$unique distinct (member, seqno) of 200000"; return; }
    local said
    said=$(python3 "$(dirname "${BASH_SOURCE[0]}")/../support/came_again.py" "$WORK/k2.err" "$WORK/k.pairs") ||
        { fail sigkill "$said: $(cat "$WORK/k2.err")"; return; }
    echo "   (SIGKILL on a set: $said)"
    ok set_sigkill_loses_nothing_and_counts_what_comes_again
}

# The C ABI's named reader of a set (evring_source_resume_named, through ctypes): a run commits
# after 500 events, the next resumes member by member and reads the other 1500, none twice.
case_set_through_the_c_abi() {
    local lib=${EVRING_LIB_DIR:-}/libevring.so set=cset$$ out
    [[ -f $lib ]] || { skip c_abi "no libevring.so"; return; }
    [[ ${EVRING_SANITIZE:-none} == none ]] || { skip c_abi "a sanitized libevring.so does not load into Python"; return; }
    "$PRODUCER_BIN" "$set" --threads 2 --count 1000 2>/dev/null || { fail c_abi "producer failed"; return; }
    cat >"$WORK/set_c.py" <<'PY'
import sys
import c_abi
lib = c_abi.load(sys.argv[1])
first = c_abi.read_named(lib, sys.argv[2], "cs", 500, stop_when_idle=True)
second = c_abi.read_named(lib, sys.argv[2], "cs", 10000, stop_when_idle=True)
print(len(first), len(second), len(set(first) | set(second)), sorted({m for m, _ in first + second}))
PY
    out=$(PYTHONPATH=$(dirname "${BASH_SOURCE[0]}") PYTHONDONTWRITEBYTECODE=1 timeout -k 5 60 python3 "$WORK/set_c.py" "$lib" "$EVRING_RING_DIR/$set" 2>&1)
    [[ $out == "500 1500 2000 [0, 1]" ]] || { fail c_abi "first, second, distinct, members: $out"; return; }
    ok set_through_the_c_abi
}

case_set_resumes_member_by_member
case_set_through_the_c_abi
case_set_snapshot_resumes_member_by_member
case_set_first_run_idle_before_any_event
case_set_recording_resumes_member_by_member
case_set_sigkill_loses_nothing_and_counts_what_comes_again
exit_with_results
