#!/usr/bin/env bash
# Nothing lost, nothing hidden, nobody shut out (issue 24, items 1, 3, 4, 13),
# end to end: a rotated recording with a missing or cut middle file, --from on
# a recording, the summary lines after damage and after a failed write, and
# watch/record waiting for a ring that does not exist yet. Each case prints
# "ok <name>", "FAIL <name>: <why>" or "skip <name>: <why>".
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
skip_script_unless "jq is not installed (apt-get install jq)" command -v jq
skip_script_unless "no producer example at $PRODUCER_BIN (-Dexamples=false?)" test -x "$PRODUCER_BIN"
make_work evring-recovery-test

evring() { "$EVRING_BIN" "$@"; }

# A finished ring of 20000 events recorded into a rotated series SERIES
# (about 9 files), once for all cases that need it.
make_series() {
    "$PRODUCER_BIN" series:16:24 --count 20000 --keep 2>/dev/null || return 1
    evring record series --from oldest -o "$WORK/s.evrec" --rotate-size 256K 2>"$WORK/s.record.err" || return 1
    [[ -f "$WORK/s.evrec.5" ]]
}

# How many events one file of a series holds (info reads the file named alone).
events_in() { "$EVRING_BIN" info "$1" 2>/dev/null | awk '$1 == "events" { print $2 }'; }

case_missing_middle_file_hides_nothing_after_it() {
    local dir="$WORK/missing"; mkdir -p "$dir"; cp "$WORK"/s.evrec* "$dir"/
    local lost; lost=$(events_in "$dir/s.evrec.2")
    rm "$dir/s.evrec.2"
    evring watch "$dir/s.evrec" --from oldest --format jsonl >"$dir/out" 2>"$dir/err"; local rc=$?
    [[ $rc == 1 ]] || { fail missing_file "exit $rc: $(cat "$dir/err")"; return; }
    local n; n=$(wc -l <"$dir/out")
    jq -e -s 'map(.seqno) | . == (sort | unique) and (.[-1] == 20000)' "$dir/out" >/dev/null ||
        { fail missing_file "events not once each in order, or not up to 20000"; return; }
    grep -q "going on with '$dir/s.evrec.3'" "$dir/err" || { fail missing_file "no notice: $(cat "$dir/err")"; return; }
    local gap; gap=$(grep -o "lost [0-9]* events (seqno [0-9]*\.\.[0-9]*) with '$dir/s.evrec.2' (missing)" "$dir/err")
    [[ -n $gap ]] || { fail missing_file "no gap line: $(cat "$dir/err")"; return; }
    local gap_count; gap_count=$(sed 's/lost \([0-9]*\) events.*/\1/' <<<"$gap")
    [[ $((n + gap_count)) == 20000 ]] || { fail missing_file "$n events + $gap_count lost != 20000"; return; }
    # The summary counts what the gap line names (it said "at least 0 records lost to damage").
    grep -q "(1 damaged part(s), $gap_count seqnos lost to damage)" "$dir/err" ||
        { fail missing_file "summary: $(tail -2 "$dir/err")"; return; }
    [[ $lost == "$gap_count" ]] || { fail missing_file "file .2 held $lost events, $gap_count reported lost"; return; }
    ok missing_middle_file_hides_nothing_after_it
}

case_cut_middle_file_hides_nothing_after_it() {
    local dir="$WORK/cut"; mkdir -p "$dir"; cp "$WORK"/s.evrec* "$dir"/
    truncate -s $(( $(stat -c %s "$dir/s.evrec.2") / 2 )) "$dir/s.evrec.2"
    evring watch "$dir/s.evrec" --from oldest --format jsonl >"$dir/out" 2>"$dir/err"; local rc=$?
    [[ $rc == 1 ]] || { fail cut_file "exit $rc: $(cat "$dir/err")"; return; }
    # Exactly the events of every file, each once: the cut file's readable part included.
    local f expected=0
    for f in "$dir"/s.evrec "$dir"/s.evrec.*; do expected=$((expected + $(events_in "$f"))); done
    [[ $(wc -l <"$dir/out") == "$expected" ]] || { fail cut_file "$(wc -l <"$dir/out") events, files hold $expected"; return; }
    jq -e -s 'map(.seqno) | . == (sort | unique) and (.[-1] == 20000)' "$dir/out" >/dev/null ||
        { fail cut_file "events not once each in order, or not up to 20000"; return; }
    grep -q "'$dir/s.evrec.2' was cut short; going on with '$dir/s.evrec.3'" "$dir/err" ||
        { fail cut_file "no notice: $(cat "$dir/err")"; return; }
    ok cut_middle_file_hides_nothing_after_it
}

case_from_on_a_recording_behaves_as_on_a_snapshot() {
    local rec="$WORK/s.evrec"
    evring watch "$rec" --from 25000 >/dev/null 2>"$WORK/past.err"; local rc=$?
    [[ $rc == 1 ]] || { fail from_recording "past the newest: exit $rc"; return; }
    grep -q "seqno 25000 is beyond the newest event (20000) of recording '$rec'" "$WORK/past.err" ||
        { fail from_recording "past the newest: $(cat "$WORK/past.err")"; return; }
    # A recording that starts at seqno 15001: --from 5 starts there and says so.
    evring record series --from 15001 -o "$WORK/late.evrec" 2>/dev/null || { fail from_recording "record --from"; return; }
    evring watch "$WORK/late.evrec" --from 5 --count 1 --format jsonl >"$WORK/early.out" 2>"$WORK/early.err"
    [[ $(jq .seqno "$WORK/early.out") == 15001 ]] || { fail from_recording "started at $(cat "$WORK/early.out")"; return; }
    grep -q "seqno 5 is not in recording '$WORK/late.evrec'; starting at the oldest, 15001" "$WORK/early.err" ||
        { fail from_recording "no notice: $(cat "$WORK/early.err")"; return; }
    # -N past the oldest event: all of them, and one line saying so (a series
    # counted by a pass, one file by its index); -N within it says nothing.
    local pos file held oldest
    for pos in "$rec -25000 20000 1" "$WORK/late.evrec -6000 5000 15001" "$rec -3000 3000 -"; do
        read -r file pos held oldest <<<"$pos"
        evring watch "$file" --from "$pos" --format jsonl >"$WORK/back.out" 2>"$WORK/back.err" ||
            { fail from_recording "--from $pos: $(cat "$WORK/back.err")"; return; }
        [[ $(wc -l <"$WORK/back.out") == "$held" && $(jq -s '.[-1].seqno' "$WORK/back.out") == 20000 ]] ||
            { fail from_recording "--from $pos on $file: $(wc -l <"$WORK/back.out") events"; return; }
        if [[ $oldest == - ]]; then
            grep -q "is more than" "$WORK/back.err" && { fail from_recording "--from $pos: $(cat "$WORK/back.err")"; return; }
            continue
        fi
        [[ $(grep -c -e "${pos} is more than the $held events of recording '$file'; starting at the oldest, $oldest$" \
            "$WORK/back.err") == 1 ]] || { fail from_recording "--from $pos on $file: $(cat "$WORK/back.err")"; return; }
    done
    ok from_on_a_recording_behaves_as_on_a_snapshot
}

case_record_that_cannot_write_prints_its_summary() {
    # A file size limit (RLIMIT_FSIZE) stands in for a full disk: write(2)
    # fails with EFBIG instead of ENOSPC, through the same path. SIGXFSZ is
    # ignored so the write fails instead of killing the recorder.
    ( trap '' XFSZ; ulimit -f 1024; exec "$EVRING_BIN" record series --from oldest --no-compress \
        -o "$WORK/full.evrec" ) 2>"$WORK/full.err"; local rc=$?
    [[ $rc == 1 ]] || { fail full_disk "exit $rc: $(cat "$WORK/full.err")"; return; }
    grep -q "^evring: took [0-9]* events, .*writing the recording failed" "$WORK/full.err" ||
        { fail full_disk "no summary: $(cat "$WORK/full.err")"; return; }
    grep -qi "file too large" "$WORK/full.err" || { fail full_disk "no error: $(cat "$WORK/full.err")"; return; }
    # What was written before the error replays.
    evring watch "$WORK/full.evrec" --from oldest --format jsonl 2>/dev/null | jq -e -s 'length > 0' >/dev/null ||
        { fail full_disk "nothing readable in the cut recording"; return; }
    ok record_that_cannot_write_prints_its_summary
}

# Starts COMMAND... in the background with stderr to $WORK/$1.err; waits
# until it says it is waiting for the ring.
start_waiting() {
    local name=$1; shift
    "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
    WAITER=$!
    PIDS+=("$WAITER")
    poll 500 0.02 grep -q "waiting for ring" "$WORK/$name.err"
}

case_watch_and_record_wait_for_a_ring_to_be_created() {
    start_waiting follow "$EVRING_BIN" watch later --follow-name --from oldest --format jsonl ||
        { fail wait_for_ring "watch --follow-name did not wait: $(cat "$WORK/follow.err")"; return; }
    local follower=$WAITER
    start_waiting waitrec "$EVRING_BIN" record later --wait --from oldest -o "$WORK/later.evrec" ||
        { fail wait_for_ring "record --wait did not wait: $(cat "$WORK/waitrec.err")"; return; }
    local recorder=$WAITER
    kill -0 "$follower" && kill -0 "$recorder" || { fail wait_for_ring "a waiter exited"; return; }
    "$PRODUCER_BIN" later:16:24 --count 500 --rate 5000 --keep 2>/dev/null
    wait "$recorder"; local rc=$?
    [[ $rc == 0 ]] || { fail wait_for_ring "record exit $rc: $(cat "$WORK/waitrec.err")"; return; }
    poll 500 0.02 has_lines "$WORK/follow.out" 500 || { fail wait_for_ring "watch printed $(wc -l <"$WORK/follow.out")"; return; }
    kill -TERM "$follower"; wait "$follower"
    rm -f "$EVRING_RING_DIR/later"
    jq -e -s 'map(.seqno) == [range(1; 501)]' "$WORK/follow.out" >/dev/null || { fail wait_for_ring "watch events"; return; }
    evring watch "$WORK/later.evrec" --from oldest --format jsonl 2>/dev/null | jq -e -s 'map(.seqno) == [range(1; 501)]' >/dev/null ||
        { fail wait_for_ring "recorded events"; return; }
    # Without --wait a missing ring is still an error at once; interrupted while waiting is exit 0.
    evring record nothing -o "$WORK/nothing.evrec" 2>/dev/null && { fail wait_for_ring "record of a missing ring"; return; }
    start_waiting stopped "$EVRING_BIN" watch nothing --wait || { fail wait_for_ring "watch --wait"; return; }
    kill -INT "$WAITER"; wait "$WAITER"; rc=$?
    [[ $rc == 0 ]] || { fail wait_for_ring "interrupted wait: exit $rc"; return; }
    ok watch_and_record_wait_for_a_ring_to_be_created
}

if make_series; then
    case_missing_middle_file_hides_nothing_after_it
    case_cut_middle_file_hides_nothing_after_it
    case_from_on_a_recording_behaves_as_on_a_snapshot
    case_record_that_cannot_write_prints_its_summary
else
    fail series "could not record the series: $(cat "$WORK/s.record.err" 2>/dev/null)"
fi
case_watch_and_record_wait_for_a_ring_to_be_created
exit_with_results
