#!/usr/bin/env bash
# End-to-end tests of the evring binary against a live producer, snapshots
# and recordings. Needs EVRING_BIN and PRODUCER_BIN; uses the real snapshots
# when EVRING_CONFORMANCE_DIR names them. Each case prints "ok <name>" or
# "FAIL <name>: <why>"; the script exits 1 if any case failed.
set -u
: "${EVRING_BIN:?set EVRING_BIN to the evring binary}"
: "${PRODUCER_BIN:?set PRODUCER_BIN to the producer example}"
# Exit 77 tells meson the test was skipped.
command -v jq >/dev/null || { echo "skipped: jq is not installed (apt-get install jq)"; exit 77; }
[[ -x $PRODUCER_BIN ]] || { echo "skipped: no producer example at $PRODUCER_BIN (-Dexamples=false?)"; exit 77; }

WORK=$(mktemp -d /dev/shm/evring-cli-test-XXXXXX)
export EVRING_RING_DIR="$WORK/rings"
mkdir -p "$EVRING_RING_DIR"
FAILED=0
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT

ok() { echo "ok $1"; }
fail() { echo "FAIL $1: $2"; FAILED=1; }
evring() { "$EVRING_BIN" "$@"; }

# Starts a producer on ring $1 with the remaining arguments; waits for the ring.
start_producer() {
    local ring=$1; shift
    "$PRODUCER_BIN" "$ring" "$@" 2>"$WORK/producer-$ring.err" &
    PRODUCER_PID=$!
    PIDS+=("$PRODUCER_PID")
    for _ in $(seq 200); do
        evring info "${ring%%:*}" >/dev/null 2>&1 && return 0
        sleep 0.02
    done
    echo "producer did not create $ring"; return 1
}

# Checks that a jsonl file holds seqnos $2..$3 exactly, in order.
check_contiguous() {
    local file=$1 first=$2 last=$3
    jq -e --argjson f "$first" --argjson l "$last" -s \
        'length == ($l - $f + 1) and ([.[].seqno] == [range($f; $l + 1)])' "$file" >/dev/null
}

case_usage_errors_exit_2() {
    evring >/dev/null 2>&1; local a=$?
    evring watch x --from bogus >/dev/null 2>"$WORK/err"; local b=$?
    evring watch x --flow 9=1 >/dev/null 2>&1; local c=$?
    evring watch x --format xml >/dev/null 2>&1; local d=$?
    [[ $a == 2 && $b == 2 && $c == 2 && $d == 2 ]] || { fail usage "exit codes $a $b $c $d"; return; }
    grep -q "bad --from 'bogus'" "$WORK/err" || { fail usage "message: $(cat "$WORK/err")"; return; }
    ok usage_errors_exit_2
}

case_missing_and_invalid_rings_exit_1_naming_the_file() {
    evring info no-such-ring 2>"$WORK/err"; local a=$?
    grep -q "no-such-ring" "$WORK/err" && grep -q "$EVRING_RING_DIR/no-such-ring" "$WORK/err" ||
        { fail missing "message: $(cat "$WORK/err")"; return; }
    head -c 4096 /dev/urandom | tr -dc 'a-z' > "$WORK/notring"
    truncate -s 3M "$WORK/notring"
    evring info "$WORK/notring" 2>"$WORK/err2"; local b=$?
    grep -q "not a RING01" "$WORK/err2" || { fail notring "message: $(cat "$WORK/err2")"; return; }
    [[ $a == 1 && $b == 1 ]] || { fail missing "exit codes $a $b"; return; }
    ok missing_and_invalid_rings_exit_1_naming_the_file
}

case_watch_follows_a_live_producer_until_it_exits() {
    start_producer live1:16:24 --count 20000 --rate 40000 || { fail live "no ring"; return; }
    evring watch live1 --from oldest --format jsonl >"$WORK/live.jsonl" 2>"$WORK/live.err"
    local rc=$?
    wait "$PRODUCER_PID"
    [[ $rc == 0 ]] || { fail live "exit $rc: $(cat "$WORK/live.err")"; return; }
    check_contiguous "$WORK/live.jsonl" 1 20000 || { fail live "not seqnos 1..20000: $(wc -l < "$WORK/live.jsonl") lines"; return; }
    grep -q "writer exited" "$WORK/live.err" || { fail live "no writer-exit notice"; return; }
    ok watch_follows_a_live_producer_until_it_exits
}

case_watch_stops_cleanly_on_sigint() {
    start_producer live2:16:24 --rate 1000 || { fail sigint "no ring"; return; }
    "$EVRING_BIN" watch live2 >"$WORK/sigint.out" 2>"$WORK/sigint.err" &
    local watcher=$!
    sleep 0.5
    kill -INT "$watcher"; wait "$watcher"; local rc=$?
    kill "$PRODUCER_PID"; wait "$PRODUCER_PID" 2>/dev/null
    [[ $rc == 0 ]] || { fail sigint "exit $rc"; return; }
    grep -q "interrupted" "$WORK/sigint.err" || { fail sigint "no summary: $(cat "$WORK/sigint.err")"; return; }
    [[ $(wc -l < "$WORK/sigint.out") -gt 10 ]] || { fail sigint "too few lines"; return; }
    ok watch_stops_cleanly_on_sigint
}

case_snapshot_of_a_live_ring_replays_what_it_kept() {
    start_producer live3:12:20 --rate 200000 || { fail snapshot "no ring"; return; }
    sleep 0.3
    evring snapshot live3 -o "$WORK/live3.zst" 2>"$WORK/snap.err" || { fail snapshot "$(cat "$WORK/snap.err")"; return; }
    kill "$PRODUCER_PID"; wait "$PRODUCER_PID" 2>/dev/null
    local first last
    first=$(sed -n 's/.*(seqno \([0-9]*\)\.\.\([0-9]*\)).*/\1/p' "$WORK/snap.err")
    last=$(sed -n 's/.*(seqno \([0-9]*\)\.\.\([0-9]*\)).*/\2/p' "$WORK/snap.err")
    evring info --json "$WORK/live3.zst" | jq -e --argjson l "$last" '.last_seqno == $l and .kind == "snapshot"' >/dev/null ||
        { fail snapshot "info disagrees"; return; }
    evring watch "$WORK/live3.zst" --from oldest --format jsonl >"$WORK/snap.jsonl" 2>"$WORK/snapw.err" ||
        { fail snapshot "watch failed"; return; }
    check_contiguous "$WORK/snap.jsonl" "$first" "$last" || { fail snapshot "not seqnos $first..$last"; return; }
    # Payloads in the snapshot are either intact or null (expired), never garbage.
    jq -e -s 'all(.[]; .payload == null or (.payload | length) == 2 * .payload_size)' "$WORK/snap.jsonl" >/dev/null ||
        { fail snapshot "payload sizes"; return; }
    evring snapshot live3 -o "$WORK/live3.zst" 2>/dev/null && { fail snapshot "overwrote without --force"; return; }
    ok snapshot_of_a_live_ring_replays_what_it_kept
}

case_record_keeps_every_event_and_watch_replays_it() {
    start_producer live4:16:24 --count 30000 --rate 60000 || { fail record "no ring"; return; }
    evring record live4 --from oldest -o "$WORK/rec.evrec" 2>"$WORK/rec.err"; local rc=$?
    wait "$PRODUCER_PID"
    [[ $rc == 0 ]] || { fail record "exit $rc: $(cat "$WORK/rec.err")"; return; }
    evring watch "$WORK/rec.evrec" --from oldest --format jsonl >"$WORK/rec.jsonl" 2>/dev/null
    check_contiguous "$WORK/rec.jsonl" 1 30000 || { fail record "replay is not seqnos 1..30000"; return; }
    evring info --json "$WORK/rec.evrec" | jq -e '.events == 30000 and .end == "clean" and .lost_events == 0' >/dev/null ||
        { fail record "info: $(evring info --json "$WORK/rec.evrec")"; return; }
    # The same events as a direct watch of a snapshot would show: compare one payload.
    [[ $(jq -r 'select(.seqno == 1234) | .payload' "$WORK/rec.jsonl") =~ ^[0-9a-f]+$ ]] || { fail record "payload"; return; }
    ok record_keeps_every_event_and_watch_replays_it
}

case_truncated_recording_replays_its_complete_prefix() {
    [[ -f "$WORK/rec.evrec" ]] || { fail truncated "no recording from the previous case"; return; }
    local size; size=$(stat -c %s "$WORK/rec.evrec")
    head -c $((size * 2 / 3)) "$WORK/rec.evrec" > "$WORK/cut.evrec"
    evring watch "$WORK/cut.evrec" --from oldest --format jsonl >"$WORK/cut.jsonl" 2>"$WORK/cut.err"; local rc=$?
    [[ $rc == 0 ]] || { fail truncated "exit $rc: $(cat "$WORK/cut.err")"; return; }
    grep -q "did not finish" "$WORK/cut.err" || { fail truncated "no notice: $(cat "$WORK/cut.err")"; return; }
    local n; n=$(wc -l < "$WORK/cut.jsonl")
    [[ $n -gt 0 && $n -lt 30000 ]] || { fail truncated "$n events"; return; }
    check_contiguous "$WORK/cut.jsonl" 1 "$n" || { fail truncated "prefix not contiguous"; return; }
    ok truncated_recording_replays_its_complete_prefix
}

case_rotation_splits_a_recording() {
    start_producer live5:16:24 --count 20000 --rate 100000 || { fail rotate "no ring"; return; }
    evring record live5 --from oldest --no-compress --rotate-size 256K -o "$WORK/rot.evrec" 2>"$WORK/rot.err"
    wait "$PRODUCER_PID"
    [[ -f "$WORK/rot.evrec.1" ]] || { fail rotate "no second file: $(cat "$WORK/rot.err")"; return; }
    local total=0 f
    for f in "$WORK"/rot.evrec*; do
        total=$((total + $(evring watch "$f" --from oldest --format jsonl 2>/dev/null | wc -l)))
    done
    [[ $total == 20000 ]] || { fail rotate "$total events across files"; return; }
    evring info "$WORK/rot.evrec" | grep -q "continued in $WORK/rot.evrec.1" || { fail rotate "info"; return; }
    ok rotation_splits_a_recording
}

case_filters_and_positions_on_a_snapshot() {
    local snap="$WORK/live3.zst"
    [[ -f $snap ]] || { fail filters "no snapshot from an earlier case"; return; }
    evring watch "$snap" --from oldest --type 2 --format jsonl 2>/dev/null | jq -e -s 'length > 0 and all(.[]; .event_type == 2)' >/dev/null ||
        { fail filters "--type"; return; }
    evring watch "$snap" --from oldest --flow 1=2 --format jsonl 2>/dev/null | jq -e -s 'length > 0 and all(.[]; .content_ext[1] == 2)' >/dev/null ||
        { fail filters "--flow"; return; }
    evring watch "$snap" --from -5 --format jsonl 2>/dev/null | jq -e -s 'length == 5' >/dev/null || { fail filters "-N"; return; }
    local mid ts
    mid=$(jq -s '.[(length / 2 | floor)].seqno' "$WORK/snap.jsonl")
    # Not through jq: it reads numbers as doubles and would round the nanoseconds.
    ts=$(sed -n "s/^{\"seqno\":$mid,.*\"record_epoch_nanos\":\([0-9]*\),.*/\1/p" "$WORK/snap.jsonl")
    local at="@${ts:0:${#ts}-9}.${ts: -9}"
    local got; got=$(evring watch "$snap" --from "$at" --count 1 --format jsonl 2>/dev/null | jq .seqno)
    [[ -n $got && $got -le $mid ]] || { fail filters "--from $at gave seqno '$got', expected <= $mid"; return; }
    local n; n=$(evring watch "$snap" --from oldest --until "$mid" 2>/dev/null | wc -l)
    local first; first=$(jq -s '.[0].seqno' "$WORK/snap.jsonl")
    [[ $n == $((mid - first + 1)) ]] || { fail filters "--until gave $n lines"; return; }
    ok filters_and_positions_on_a_snapshot
}

case_snapshot_size_limit_names_file_and_sizes() {
    local snap="$WORK/live3.zst"
    evring info --max-snapshot-size 1M "$snap" 2>"$WORK/lim.err"; local rc=$?
    [[ $rc == 1 ]] && grep -q "$snap" "$WORK/lim.err" && grep -q "limit of 1048576 bytes" "$WORK/lim.err" ||
        { fail limit "exit $rc: $(cat "$WORK/lim.err")"; return; }
    ok snapshot_size_limit_names_file_and_sizes
}

case_real_snapshots_read_completely() {
    local dir=${EVRING_CONFORMANCE_DIR:-}
    if [[ -z $dir || ! -d $dir ]]; then echo "skip real_snapshots_read_completely (EVRING_CONFORMANCE_DIR unset)"; return; fi
    local f
    for f in "$dir"/*.zst; do
        local last; last=$(evring info --json "$f" | jq .last_seqno)
        evring watch "$f" --from oldest --format jsonl 2>/dev/null > "$WORK/real.jsonl"
        check_contiguous "$WORK/real.jsonl" 1 "$last" || { fail real "$f: not seqnos 1..$last"; return; }
        jq -e -s 'all(.[]; (.payload | length) == 2 * .payload_size)' "$WORK/real.jsonl" >/dev/null || { fail real "$f payloads"; return; }
    done
    ok real_snapshots_read_completely
}

case_usage_errors_exit_2
case_missing_and_invalid_rings_exit_1_naming_the_file
case_watch_follows_a_live_producer_until_it_exits
case_watch_stops_cleanly_on_sigint
case_snapshot_of_a_live_ring_replays_what_it_kept
case_record_keeps_every_event_and_watch_replays_it
case_truncated_recording_replays_its_complete_prefix
case_rotation_splits_a_recording
case_filters_and_positions_on_a_snapshot
case_snapshot_size_limit_names_file_and_sizes
case_real_snapshots_read_completely
exit $FAILED
