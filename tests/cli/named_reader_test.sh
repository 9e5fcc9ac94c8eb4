#!/usr/bin/env bash
# Named readers (docs/named-readers.md, issue 31 item 1) end to end: resuming
# where the last run committed, --reset and an explicit --from, SIGKILL then
# a rerun delivering every event once plus exactly the tail it reports (and
# of what the killed run was writing, no more: tests/support/came_again.py), SIGTERM
# committing, a ring re-created by a new writer, and names refused (another
# ring, a damaged position, a name in use). Each case prints "ok <name>",
# "FAIL <name>: <why>" or "skip <name>: <why>".
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
skip_script_unless "jq is not installed (apt-get install jq)" command -v jq
skip_script_unless "no producer example at $PRODUCER_BIN (-Dexamples=false?)" test -x "$PRODUCER_BIN"
make_work evring-named-test
export EVRING_STATE_DIR="$WORK/state"

evring() { timeout -k 5 120 "$EVRING_BIN" "$@"; }
seqnos() { jq -R -r 'fromjson? | .seqno' "$@"; }

case_resumes_after_the_last_commit() {
    "$PRODUCER_BIN" done:16:24 --count 1000 --keep 2>/dev/null || { fail resume "producer failed"; return; }
    evring watch done --name a --from oldest --count 300 --format jsonl >"$WORK/r1" 2>"$WORK/r1.err" ||
        { fail resume "first run: $(cat "$WORK/r1.err")"; return; }
    grep -q "reader 'a': no position yet; starting at --from" "$WORK/r1.err" || { fail resume "$(cat "$WORK/r1.err")"; return; }
    evring watch done --name a --format jsonl >"$WORK/r2" 2>"$WORK/r2.err" ||
        { fail resume "second run: $(cat "$WORK/r2.err")"; return; }
    grep -q "reader 'a' resumes after seqno 300 of ring file '.*done' (committed .*); nothing was written after that commit" \
        "$WORK/r2.err" || { fail resume "notice: $(cat "$WORK/r2.err")"; return; }
    [[ $(seqnos "$WORK/r1" "$WORK/r2" | tr '\n' ' ') == "$(seq 1 1000 | tr '\n' ' ')" ]] ||
        { fail resume "the two runs do not hold 1..1000 once each"; return; }
    # Read to its end: a third run has nothing to show, and says where it is.
    evring watch done --name a --format jsonl >"$WORK/r3" 2>"$WORK/r3.err" ||
        { fail resume "third run: $(cat "$WORK/r3.err")"; return; }
    [[ ! -s $WORK/r3 ]] && grep -q "resumes after seqno 1000" "$WORK/r3.err" ||
        { fail resume "third run printed $(wc -l <"$WORK/r3") events: $(cat "$WORK/r3.err")"; return; }
    local mode; mode=$(stat -c %a "$EVRING_STATE_DIR/a.pos")
    [[ $mode == 600 && $(stat -c %a "$EVRING_STATE_DIR") == 700 ]] || { fail resume "modes $mode"; return; }
    ok resumes_after_the_last_commit
}

case_reset_and_explicit_from_start_over() {
    evring watch done --name a --reset --from oldest --count 5 --format jsonl >"$WORK/s1" 2>"$WORK/s1.err"
    [[ $(seqnos "$WORK/s1" | tr '\n' ' ') == "1 2 3 4 5 " ]] || { fail reset "--reset gave $(seqnos "$WORK/s1")"; return; }
    grep -q "position forgotten (--reset)" "$WORK/s1.err" || { fail reset "$(cat "$WORK/s1.err")"; return; }
    evring watch done --name a --from 10 --count 2 --format jsonl >"$WORK/s2" 2>"$WORK/s2.err"
    [[ $(seqnos "$WORK/s2" | tr '\n' ' ') == "10 11 " ]] || { fail reset "--from 10 gave $(seqnos "$WORK/s2")"; return; }
    grep -q "an explicit --from starts over (the position after seqno 5" "$WORK/s2.err" ||
        { fail reset "$(cat "$WORK/s2.err")"; return; }
    evring watch done --name a --count 1 --format jsonl >"$WORK/s3" 2>/dev/null
    [[ $(seqnos "$WORK/s3") == 12 ]] || { fail reset "after --from 10 --count 2 it resumed at $(seqnos "$WORK/s3")"; return; }
    evring watch done --reset >/dev/null 2>"$WORK/s4.err"; local rc=$?
    [[ $rc == 2 ]] && grep -q -- "--reset goes with --name" "$WORK/s4.err" || { fail reset "--reset alone: exit $rc"; return; }
    ok reset_and_explicit_from_start_over
}

case_sigkill_loses_nothing_and_counts_what_comes_again() {
    "$PRODUCER_BIN" live:18:26 --count 200000 --rate 50000 2>/dev/null & PIDS+=($!)
    local producer=$!
    poll 500 0.01 test -e "$EVRING_RING_DIR/live" || { fail sigkill "no ring"; return; }
    "$EVRING_BIN" watch live --name k --from oldest --format jsonl >"$WORK/k1" 2>"$WORK/k1.err" & PIDS+=($!)
    local watcher=$!
    poll 1000 0.01 has_lines "$WORK/k1" 20000 || { fail sigkill "the first run printed too little"; return; }
    kill -KILL "$watcher"; wait "$watcher" 2>/dev/null
    evring watch live --name k --format jsonl >"$WORK/k2" 2>"$WORK/k2.err" ||
        { fail sigkill "second run: $(cat "$WORK/k2.err")"; return; }
    wait "$producer"
    grep -q "reader 'k' resumes after seqno [0-9]*" "$WORK/k2.err" || { fail sigkill "no resume notice: $(cat "$WORK/k2.err")"; return; }
    local unique
    seqnos "$WORK/k1" "$WORK/k2" | sed 's/^/0 /' >"$WORK/k.pairs"
    unique=$(sort -u "$WORK/k.pairs" | wc -l)
    [[ $unique == 200000 ]] || { fail sigkill "$unique distinct events of 200000"; return; }
    seqnos "$WORK/k2" | sort -n -c || { fail sigkill "second run out of order"; return; }
    local said
    said=$(python3 "$(dirname "${BASH_SOURCE[0]}")/../support/came_again.py" "$WORK/k2.err" "$WORK/k.pairs") ||
        { fail sigkill "$said: $(cat "$WORK/k2.err")"; return; }
    echo "   (SIGKILL: $said)"
    ok sigkill_loses_nothing_and_counts_what_comes_again
}

case_sigterm_commits_everything_written() {
    "$PRODUCER_BIN" term:16:24 --rate 1000 2>/dev/null & PIDS+=($!)
    local producer=$!
    poll 500 0.01 test -e "$EVRING_RING_DIR/term" || { fail sigterm "no ring"; return; }
    "$EVRING_BIN" watch term --name t --from oldest --format jsonl >"$WORK/t1" 2>"$WORK/t1.err" & PIDS+=($!)
    local watcher=$!
    poll 1000 0.01 has_lines "$WORK/t1" 50 || { fail sigterm "the first run printed too little"; return; }
    kill -TERM "$watcher"; wait "$watcher"
    evring watch term --name t --count 5 --format jsonl >"$WORK/t2" 2>"$WORK/t2.err"
    kill -TERM "$producer"; wait "$producer" 2>/dev/null
    local last first; last=$(seqnos "$WORK/t1" | tail -1); first=$(seqnos "$WORK/t2" | head -1)
    [[ $first == $((last + 1)) ]] || { fail sigterm "first run ended at $last, second began at $first"; return; }
    grep -q "resumes after seqno $last .*nothing was written after that commit" "$WORK/t2.err" ||
        { fail sigterm "$(cat "$WORK/t2.err")"; return; }
    ok sigterm_commits_everything_written
}

case_new_ring_instance_starts_at_its_oldest() {
    "$PRODUCER_BIN" again:16:24 --count 100 --keep 2>/dev/null
    evring watch again --name n --from oldest --format jsonl >/dev/null 2>&1
    evring watch again --name m --from oldest --count 30 --format jsonl >/dev/null 2>&1
    evring rm again >/dev/null 2>&1 || rm -f "$EVRING_RING_DIR/again"
    "$PRODUCER_BIN" again:16:24 --count 50 --keep 2>/dev/null
    evring watch again --name n --format jsonl >"$WORK/n2" 2>"$WORK/n2.err" || { fail new_instance "$(cat "$WORK/n2.err")"; return; }
    [[ $(seqnos "$WORK/n2" | tr '\n' ' ') == "$(seq 1 50 | tr '\n' ' ')" ]] || { fail new_instance "got $(wc -l <"$WORK/n2") events"; return; }
    grep -q "is a new ring instance; starting at its oldest event. The instance read before was read to its end (seqno 100)" \
        "$WORK/n2.err" || { fail new_instance "$(cat "$WORK/n2.err")"; return; }
    evring watch again --name m --format jsonl >/dev/null 2>"$WORK/m2.err"
    grep -q "The instance read before was read up to seqno 30; how many events it held after that is not known" \
        "$WORK/m2.err" || { fail new_instance "$(cat "$WORK/m2.err")"; return; }
    ok new_ring_instance_starts_at_its_oldest
}

case_refused_names() {
    evring watch again --name a >/dev/null 2>"$WORK/x1.err"; local rc=$?
    [[ $rc == 2 ]] && grep -q "reader 'a' reads ring file '.*done', not ring file '.*again'" "$WORK/x1.err" ||
        { fail refused "another ring: exit $rc: $(cat "$WORK/x1.err")"; return; }
    cp "$EVRING_STATE_DIR/n.pos" "$EVRING_STATE_DIR/bad.pos"
    printf 'x' | dd of="$EVRING_STATE_DIR/bad.pos" bs=1 seek=30 conv=notrunc 2>/dev/null
    evring watch again --name bad >/dev/null 2>"$WORK/x2.err"; rc=$?
    [[ $rc == 1 ]] && grep -q "named reader position '$EVRING_STATE_DIR/bad.pos' is damaged" "$WORK/x2.err" ||
        { fail refused "damaged: exit $rc: $(cat "$WORK/x2.err")"; return; }
    # --reset replaces a refused position (damaged, or open to others) instead of stopping at it.
    evring watch again --name bad --reset --from oldest --count 1 --format jsonl >"$WORK/x4" 2>"$WORK/x4.err"; rc=$?
    [[ $rc == 0 && $(seqnos "$WORK/x4") == 1 ]] &&
        grep -q "reader 'bad': its position was refused (.*bad.pos' is damaged.*); --reset removed it" "$WORK/x4.err" ||
        { fail refused "--reset on a damaged position: exit $rc: $(cat "$WORK/x4.err")"; return; }
    chmod 0666 "$EVRING_STATE_DIR/bad.pos"
    evring watch again --name bad --count 1 >/dev/null 2>"$WORK/x5.err"; rc=$?
    [[ $rc == 1 ]] || { fail refused "a position open to others: exit $rc: $(cat "$WORK/x5.err")"; return; }
    evring watch again --name bad --reset --from oldest --count 1 --format jsonl >"$WORK/x6" 2>"$WORK/x6.err"; rc=$?
    [[ $rc == 0 && $(seqnos "$WORK/x6") == 1 && $(stat -c %a "$EVRING_STATE_DIR/bad.pos") == 600 ]] ||
        { fail refused "--reset on a position open to others: exit $rc: $(cat "$WORK/x6.err")"; return; }
    evring watch again --name 'a/b' >/dev/null 2>"$WORK/x3.err"; rc=$?
    [[ $rc == 2 ]] && grep -q "bad reader name 'a/b'" "$WORK/x3.err" || { fail refused "bad name: exit $rc"; return; }
    "$PRODUCER_BIN" busy:16:24 --rate 100 2>/dev/null & PIDS+=($!)
    poll 500 0.01 test -e "$EVRING_RING_DIR/busy" || { fail refused "no ring"; return; }
    "$EVRING_BIN" watch busy --name u --from oldest >/dev/null 2>"$WORK/u1.err" & PIDS+=($!)
    poll 1000 0.01 has_text "$WORK/u1.err" "no position yet" || { fail refused "first reader did not start"; return; }
    evring watch busy --name u >/dev/null 2>"$WORK/u2.err"; rc=$?
    [[ $rc == 1 ]] && grep -q "reader 'u' is in use by another process" "$WORK/u2.err" ||
        { fail refused "in use: exit $rc: $(cat "$WORK/u2.err")"; return; }
    ok refused_names
}

case_digest_stats_and_readers_listing() {
    "$PRODUCER_BIN" dg:16:24 --count 500 --keep 2>/dev/null
    evring digest dg --name d --count 100 >"$WORK/d1" 2>/dev/null
    evring digest dg --name d >"$WORK/d2" 2>"$WORK/d2.err"
    grep -q " 100 events" "$WORK/d1" && grep -q " 400 events" "$WORK/d2" ||
        { fail digest "runs covered $(cat "$WORK/d1" "$WORK/d2")"; return; }
    "$PRODUCER_BIN" dg2:16:24 --count 40 --keep 2>/dev/null
    evring stats dg2 --name s --from oldest --count 10 --json >/dev/null 2>&1
    evring readers --named --json >"$WORK/l1" 2>"$WORK/l1.err"
    jq -e -s 'map(select(.name == "d"))[0] | .last_seqno == 500 and .lag == 0 and .instance_ended' "$WORK/l1" >/dev/null &&
        jq -e -s 'map(select(.name == "s"))[0] | .last_seqno == 10 and .lag == 30 and .ring_state == "present"' \
            "$WORK/l1" >/dev/null || { fail readers "$(cat "$WORK/l1")"; return; }
    evring readers dg2 --named >"$WORK/l2"
    grep -qE "^s +10 +30 " "$WORK/l2" && ! grep -q "^d " "$WORK/l2" || { fail readers "$(cat "$WORK/l2")"; return; }
    evring rm dg2 >/dev/null 2>&1 || rm -f "$EVRING_RING_DIR/dg2"
    evring readers --named --json | jq -e -s 'map(select(.name == "s"))[0].ring_state == "gone"' >/dev/null ||
        { fail readers "a removed ring is not listed as gone"; return; }
    ok digest_stats_and_readers_listing
}

case_recording_resumes_and_ends_cleanly() {
    evring record done --from oldest -o "$WORK/done.evrec" >/dev/null 2>&1 || { fail recording "record failed"; return; }
    evring watch "$WORK/done.evrec" --name rec --from oldest --count 10 --format jsonl >"$WORK/e1" 2>/dev/null
    evring watch "$WORK/done.evrec" --name rec --format jsonl >"$WORK/e2" 2>"$WORK/e2.err" ||
        { fail recording "second run: $(cat "$WORK/e2.err")"; return; }
    [[ $(seqnos "$WORK/e1" "$WORK/e2" | tr '\n' ' ') == "$(seq 1 1000 | tr '\n' ' ')" ]] ||
        { fail recording "the two runs do not hold 1..1000 once each"; return; }
    # Read to its end: resuming past its last event is its end, not an error.
    evring watch "$WORK/done.evrec" --name rec --format jsonl >"$WORK/e3" 2>"$WORK/e3.err" ||
        { fail recording "third run: $(cat "$WORK/e3.err")"; return; }
    [[ ! -s $WORK/e3 ]] || { fail recording "third run printed $(wc -l <"$WORK/e3") events"; return; }
    ok recording_resumes_and_ends_cleanly
}

case_resumes_after_the_last_commit
case_reset_and_explicit_from_start_over
case_recording_resumes_and_ends_cleanly
case_sigkill_loses_nothing_and_counts_what_comes_again
case_sigterm_commits_everything_written
case_new_ring_instance_starts_at_its_oldest
case_refused_names
case_digest_stats_and_readers_listing
exit_with_results
