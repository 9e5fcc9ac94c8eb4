#!/usr/bin/env bash
# Named recorders (`evring record --name`, docs/named-readers.md): a run
# resumes after the last event the name's previous run committed, and a
# commit covers only what the recording holds on disk. A recorder killed with
# SIGKILL halfway, then run again into a new file, leaves two recordings that
# hold every event once plus exactly the tail the second run reports as
# written again (and of what it says the killed run was writing, no more:
# tests/support/came_again.py); the same for a ring set, per (member, seqno). Each case
# prints "ok <name>", "FAIL <name>: <why>" or "skip <name>: <why>".
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
skip_script_unless "jq is not installed (apt-get install jq)" command -v jq
skip_script_unless "no producer example at $PRODUCER_BIN (-Dexamples=false?)" test -x "$PRODUCER_BIN"
make_work evring-named-record-test
export EVRING_STATE_DIR="$WORK/state"

evring() { timeout -k 5 120 "$EVRING_BIN" "$@"; }
# "member seqno" per recorded event; a recording cut by a kill reads up to its cut.
pairs() { for f in "$@"; do timeout -k 5 120 "$EVRING_BIN" watch "$f" --from oldest --format jsonl 2>/dev/null; done |
              jq -R -r 'fromjson? | "\(.member // 0) \(.seqno)"'; }

case_resumes_after_the_last_commit() {
    "$PRODUCER_BIN" done:16:24 --count 1000 --keep 2>/dev/null || { fail resume "producer failed"; return; }
    evring record done --name r --from oldest --count 300 -o "$WORK/a.evrec" 2>"$WORK/a.err" ||
        { fail resume "first run: $(cat "$WORK/a.err")"; return; }
    evring record done --name r -o "$WORK/b.evrec" 2>"$WORK/b.err" ||
        { fail resume "second run: $(cat "$WORK/b.err")"; return; }
    grep -q "reader 'r' resumes after seqno 300 of ring file '.*done' (committed .*); nothing was written after that commit" \
        "$WORK/b.err" || { fail resume "notice: $(cat "$WORK/b.err")"; return; }
    [[ $(pairs "$WORK/a.evrec" "$WORK/b.evrec" | cut -d' ' -f2 | tr '\n' ' ') == "$(seq 1 1000 | tr '\n' ' ')" ]] ||
        { fail resume "the two recordings do not hold 1..1000 once each"; return; }
    # Read to its end: a third run records nothing, and says where it resumed.
    evring record done --name r -o "$WORK/c.evrec" 2>"$WORK/c.err" || { fail resume "third run: $(cat "$WORK/c.err")"; return; }
    grep -q "resumes after seqno 1000" "$WORK/c.err" && grep -q "recorded 0 events" "$WORK/c.err" ||
        { fail resume "third run: $(cat "$WORK/c.err")"; return; }
    # A run whose file cannot be created commits nothing: the next run resumes where the last good one ended.
    evring record done --name r --reset --from oldest -o "$WORK/a.evrec" 2>"$WORK/d.err"; local rc=$?
    [[ $rc != 0 ]] && grep -q "a.evrec" "$WORK/d.err" || { fail resume "an existing -o: exit $rc: $(cat "$WORK/d.err")"; return; }
    evring readers --named --json | jq -e -s 'map(select(.name == "r"))[0].last_seqno == 1000' >/dev/null ||
        { fail resume "a refused run moved the position: $(evring readers --named --json)"; return; }
    ok resumes_after_the_last_commit
}

case_sigkill_loses_nothing_and_counts_what_comes_again() {
    "$PRODUCER_BIN" live:18:26 --count 200000 --rate 50000 2>/dev/null & PIDS+=($!)
    local producer=$!
    poll 500 0.01 test -e "$EVRING_RING_DIR/live" || { fail sigkill "no ring"; return; }
    "$EVRING_BIN" record live --name k --from oldest -o "$WORK/k1.evrec" 2>"$WORK/k1.err" & PIDS+=($!)
    local recorder=$!
    # Killed once it has committed and written a good part of the ring.
    poll 1000 0.01 test -s "$EVRING_STATE_DIR/k.pos" || { fail sigkill "no commit: $(cat "$WORK/k1.err")"; return; }
    poll 600 0.05 recorded_at_least "$WORK/k1.evrec" 60000 || { fail sigkill "the first run recorded too little"; return; }
    kill -KILL "$recorder"; wait "$recorder" 2>/dev/null
    evring record live --name k -o "$WORK/k2.evrec" 2>"$WORK/k2.err" || { fail sigkill "second run: $(cat "$WORK/k2.err")"; return; }
    wait "$producer"
    grep -q "reader 'k' resumes after seqno [0-9]*" "$WORK/k2.err" || { fail sigkill "no resume notice: $(cat "$WORK/k2.err")"; return; }
    local unique
    pairs "$WORK/k1.evrec" "$WORK/k2.evrec" >"$WORK/k.pairs"
    unique=$(sort -u "$WORK/k.pairs" | wc -l)
    [[ $unique == 200000 ]] || { fail sigkill "$unique distinct events of 200000: $(cat "$WORK/k2.err")"; return; }
    local said
    said=$(python3 "$(dirname "${BASH_SOURCE[0]}")/../support/came_again.py" "$WORK/k2.err" "$WORK/k.pairs") ||
        { fail sigkill "$said: $(cat "$WORK/k2.err")"; return; }
    echo "   (SIGKILL: $said)"
    ok sigkill_loses_nothing_and_counts_what_comes_again
}

# The events a recording being written holds so far (its complete blocks).
recorded_at_least() {
    local n; n=$(timeout -k 5 60 "$EVRING_BIN" info "$1" --json 2>/dev/null | jq -r '.events // 0' 2>/dev/null)
    [[ ${n:-0} -ge $2 ]]
}

case_set_sigkill_loses_nothing_and_counts_what_comes_again() {
    local set=rset$$
    "$PRODUCER_BIN" "$set" --threads 3 --count 40000 --rate 20000 2>/dev/null & PIDS+=($!)
    local producer=$!
    poll 500 0.01 test -e "$EVRING_RING_DIR/$set" || { fail set_sigkill "no set"; return; }
    "$EVRING_BIN" record "$set" --name s --from oldest -o "$WORK/s1.evrec" 2>"$WORK/s1.err" & PIDS+=($!)
    local recorder=$!
    poll 1000 0.01 test -s "$EVRING_STATE_DIR/s.pos" || { fail set_sigkill "no commit: $(cat "$WORK/s1.err")"; return; }
    poll 600 0.05 recorded_at_least "$WORK/s1.evrec" 40000 || { fail set_sigkill "the first run recorded too little"; return; }
    kill -KILL "$recorder"; wait "$recorder" 2>/dev/null
    evring record "$set" --name s -o "$WORK/s2.evrec" 2>"$WORK/s2.err" ||
        { fail set_sigkill "second run: $(cat "$WORK/s2.err")"; return; }
    wait "$producer"
    grep -q "reader 's' resumes ring set" "$WORK/s2.err" || { fail set_sigkill "no resume notice: $(cat "$WORK/s2.err")"; return; }
    local unique
    pairs "$WORK/s1.evrec" "$WORK/s2.evrec" >"$WORK/s.pairs"
    unique=$(sort -u "$WORK/s.pairs" | wc -l)
    [[ $unique == 120000 ]] || { fail set_sigkill "$unique distinct (member, seqno) of 120000: $(cat "$WORK/s2.err")"; return; }
    local said
    said=$(python3 "$(dirname "${BASH_SOURCE[0]}")/../support/came_again.py" "$WORK/s2.err" "$WORK/s.pairs") ||
        { fail set_sigkill "$said: $(cat "$WORK/s2.err")"; return; }
    echo "   (SIGKILL on a set: $said)"
    ok set_sigkill_loses_nothing_and_counts_what_comes_again
}

case_refusals() {
    evring record done --name t --trigger 'seqno == 5' -o "$WORK/caps" 2>"$WORK/t.err"; local rc=$?
    [[ $rc == 2 ]] && grep -q -- "--name and --trigger do not go together" "$WORK/t.err" ||
        { fail refusals "--name with --trigger: exit $rc: $(cat "$WORK/t.err")"; return; }
    evring record done --name 'a/b' -o "$WORK/x.evrec" 2>"$WORK/x.err"; rc=$?
    [[ $rc == 2 && ! -e $WORK/x.evrec ]] || { fail refusals "a bad name: exit $rc: $(cat "$WORK/x.err")"; return; }
    ok refusals
}

case_resumes_after_the_last_commit
case_sigkill_loses_nothing_and_counts_what_comes_again
case_set_sigkill_loses_nothing_and_counts_what_comes_again
case_refusals
exit_with_results
