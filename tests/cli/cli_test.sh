#!/usr/bin/env bash
# End-to-end tests of the evring binary against a live producer, snapshots
# and recordings. Needs EVRING_BIN and PRODUCER_BIN; uses the real snapshots
# when EVRING_CONFORMANCE_DIR names them. Each case prints "ok <name>" or
# "FAIL <name>: <why>"; the script exits 1 if any case failed.
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
skip_script_unless "jq is not installed (apt-get install jq)" command -v jq
skip_script_unless "no producer example at $PRODUCER_BIN (-Dexamples=false?)" test -x "$PRODUCER_BIN"
make_work evring-cli-test

evring() { "$EVRING_BIN" "$@"; }

# Starts a producer on ring $1 with the remaining arguments; waits for the ring.
# start_producer, hold_producer and wait_attached are in harness.sh. The cases
# that hold a producer write fewer events than the ring holds (--count below
# the descriptor capacity, --keep), so even a follower that attaches late, or
# after the producer exited, reads every event: nothing depends on how fast
# the machine is.

# Whether ring $1's last seqno is past $2 (for poll).
ring_past() { [[ $(evring info --json "$1" 2>/dev/null | jq -r '.last_seqno // 0') -gt $2 ]]; }

# Waits until file $1 has at least $2 lines.
wait_for_lines() { poll 3000 0.01 has_lines "$1" "$2"; }

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
    # Each refusal is one line, "evring: ", naming the option, the value and the reason.
    local args expect
    while IFS='|' read -r args expect; do
        # shellcheck disable=SC2086
        evring $args >/dev/null 2>"$WORK/err"; local rc=$?
        [[ $rc == 2 ]] || { fail usage "'$args': exit $rc"; return; }
        [[ $(wc -l < "$WORK/err") == 1 ]] || { fail usage "'$args': $(cat "$WORK/err")"; return; }
        grep -q "^evring: .*$expect" "$WORK/err" || { fail usage "'$args': $(cat "$WORK/err")"; return; }
    done <<'CASES'
watch x --count -5|bad --count '-5': a count cannot be negative
watch x --count 18446744073709551616|bad --count '18446744073709551616': too large
record x -o y --count=-1|bad --count '-1'
watch x --from 2026-02-30T00:00:00Z|bad --from '2026-02-30T00:00:00Z': 2026-02 has 28 days
watch x --until 2026-13-01T00:00:00Z|bad --until '2026-13-01T00:00:00Z': there is no month 13
watch x --from 99999999999999999999|bad --from '99999999999999999999': sequence numbers go up to
watch x --format xml|bad --format 'xml': expected one of text, hex, jsonl
snapshot x -o y --level 30|bad --level '30': must be 1 to 19
record x -o y --level 0|bad --level '0': zstd's levels are 1 to 19, and -1 to -7
record x -o y --level -8|bad --level '-8': must be -7 to 19
record x -o y --rotate-size 5Q|bad --rotate-size '5Q'
record x -o y --threads 65|bad --threads '65': must be 1 to 64
record x -o y --io fast|bad --io 'fast': buffered or direct
info x --max-snapshot-size -1M|bad --max-snapshot-size '-1M': a size cannot be negative
watch x --bogus|--bogus
watch|RING is required
CASES
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
    # 20000 events into 65536 slots, over about 2 s.
    start_producer live1:16:24 --count 20000 --rate 10000 --keep || { fail live "no ring"; return; }
    hold_producer
    "$EVRING_BIN" watch live1 --from oldest --format jsonl >"$WORK/live.jsonl" 2>"$WORK/live.err" &
    local watcher=$!
    PIDS+=("$watcher")
    # Listed as a reader, so it saw the writer alive (see follow_name: mapped is not enough).
    wait_readers live1 "watch +watch +$watcher .* alive" || { release_producer; fail live "watch did not attach"; return; }
    release_producer
    wait "$PRODUCER_PID"
    wait "$watcher"; local rc=$?
    rm -f "$EVRING_RING_DIR/live1"
    [[ $rc == 0 ]] || { fail live "exit $rc: $(cat "$WORK/live.err")"; return; }
    check_contiguous "$WORK/live.jsonl" 1 20000 || { fail live "not seqnos 1..20000: $(wc -l < "$WORK/live.jsonl") lines"; return; }
    grep -q "writer exited" "$WORK/live.err" || { fail live "no writer-exit notice: $(cat "$WORK/live.err")"; return; }
    ok watch_follows_a_live_producer_until_it_exits
}

case_watch_stops_cleanly_on_sigint() {
    start_producer live2:16:24 --rate 1000 || { fail sigint "no ring"; return; }
    "$EVRING_BIN" watch live2 >"$WORK/sigint.out" 2>"$WORK/sigint.err" &
    local watcher=$!
    wait_for_lines "$WORK/sigint.out" 11 || { fail sigint "too few lines"; return; }
    kill -INT "$watcher"; wait "$watcher"; local rc=$?
    kill "$PRODUCER_PID"; wait "$PRODUCER_PID" 2>/dev/null
    [[ $rc == 0 ]] || { fail sigint "exit $rc"; return; }
    grep -q "interrupted" "$WORK/sigint.err" || { fail sigint "no summary: $(cat "$WORK/sigint.err")"; return; }
    ok watch_stops_cleanly_on_sigint
}

case_snapshot_of_a_live_ring_replays_what_it_kept() {
    start_producer live3:12:20 --rate 200000 || { fail snapshot "no ring"; return; }
    # A live ring the writer has lapped twice (4096 slots), still being written.
    poll 1000 0.01 ring_past live3 8192 || { fail snapshot "the producer wrote too little"; return; }
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

# Starts `evring record $1 --from oldest -o $2 [more...]` against the held
# producer (started with --count below the ring's capacity and --keep), lets it
# finish; sets RECORD_RC once the recorder saw the writer exit.
record_live() {
    local ring=$1 out=$2; shift 2
    hold_producer
    "$EVRING_BIN" record "$ring" --from oldest -o "$out" "$@" 2>"$out.err" &
    local recorder=$!
    wait_attached "$recorder" "$EVRING_RING_DIR/$ring" || { RECORD_RC=99; return; }
    release_producer
    wait "$PRODUCER_PID"
    wait "$recorder"; RECORD_RC=$?
    rm -f "$EVRING_RING_DIR/$ring"
}

case_record_keeps_every_event_and_watch_replays_it() {
    start_producer live4:16:24 --count 30000 --rate 15000 --keep || { fail record "no ring"; return; }
    # Blocks compressed on 3 threads at zstd's first fast level, written in order.
    record_live live4 "$WORK/rec.evrec" --threads 3 --level -1
    [[ $RECORD_RC == 0 ]] || { fail record "exit $RECORD_RC: $(cat "$WORK/rec.evrec.err")"; return; }
    evring watch "$WORK/rec.evrec" --from oldest --format jsonl >"$WORK/rec.jsonl" 2>/dev/null
    check_contiguous "$WORK/rec.jsonl" 1 30000 || { fail record "replay is not seqnos 1..30000"; return; }
    evring info --json "$WORK/rec.evrec" | jq -e '.kind == "recording" and .events == 30000 and .end == "clean" and .lost_events == 0' >/dev/null ||
        { fail record "info: $(evring info --json "$WORK/rec.evrec")"; return; }
    [[ $(jq -r 'select(.seqno == 1234) | .payload' "$WORK/rec.jsonl") =~ ^[0-9a-f]+$ ]] || { fail record "payload"; return; }
    ok record_keeps_every_event_and_watch_replays_it
}

# Direct I/O (docs/cli.md, --io): raw blocks, whose sizes are no multiple of
# any alignment, into /var/tmp (a disk's filesystem here, where the worker
# writes around the page cache and holds each block's last part-unit until
# the next block or a flush); every event replays, the end record is clean.
case_record_with_direct_io_replays_every_event() {
    local dir; dir=$(mktemp -d /var/tmp/evring-direct-XXXXXX) || { fail direct_io "no directory in /var/tmp"; return; }
    start_producer live5:16:24 --count 20000 --rate 20000 --keep || { fail direct_io "no ring"; rm -rf "$dir"; return; }
    record_live live5 "$dir/rec.evrec" --no-compress --io direct
    [[ $RECORD_RC == 0 ]] || { fail direct_io "exit $RECORD_RC: $(cat "$dir/rec.evrec.err")"; rm -rf "$dir"; return; }
    evring watch "$dir/rec.evrec" --from oldest --format jsonl >"$WORK/direct.jsonl" 2>/dev/null
    check_contiguous "$WORK/direct.jsonl" 1 20000 || { fail direct_io "replay is not seqnos 1..20000"; rm -rf "$dir"; return; }
    evring info --json "$dir/rec.evrec" | jq -e '.events == 20000 and .end == "clean"' >/dev/null ||
        { fail direct_io "info: $(evring info --json "$dir/rec.evrec")"; rm -rf "$dir"; return; }
    rm -rf "$dir"
    ok record_with_direct_io_replays_every_event
}

case_truncated_recording_replays_its_complete_prefix() {
    [[ -f "$WORK/rec.evrec" ]] || { fail truncated "no recording from the previous case"; return; }
    local size; size=$(stat -c %s "$WORK/rec.evrec")
    head -c $((size * 2 / 3)) "$WORK/rec.evrec" > "$WORK/cut.evrec"
    evring watch "$WORK/cut.evrec" --from oldest --format jsonl >"$WORK/cut.jsonl" 2>"$WORK/cut.err"; local rc=$?
    # Damaged input: everything readable is printed, and the exit code says it was damaged.
    [[ $rc == 1 ]] || { fail truncated "exit $rc: $(cat "$WORK/cut.err")"; return; }
    grep -q "did not finish" "$WORK/cut.err" || { fail truncated "no notice: $(cat "$WORK/cut.err")"; return; }
    grep -q "$WORK/cut.evrec' is damaged" "$WORK/cut.err" || { fail truncated "no damage line: $(cat "$WORK/cut.err")"; return; }
    local n; n=$(wc -l < "$WORK/cut.jsonl")
    local total; total=$(wc -l < "$WORK/rec.jsonl")
    [[ $n -gt 0 && $n -lt $total ]] || { fail truncated "$n of $total events"; return; }
    check_contiguous "$WORK/cut.jsonl" 1 "$n" || { fail truncated "prefix not contiguous"; return; }
    ok truncated_recording_replays_its_complete_prefix
}

case_rotation_splits_a_recording() {
    start_producer live5:16:24 --count 20000 --rate 10000 --keep || { fail rotate "no ring"; return; }
    record_live live5 "$WORK/rot.evrec" --no-compress --rotate-size 256K
    [[ $RECORD_RC == 0 ]] || { fail rotate "exit $RECORD_RC: $(cat "$WORK/rot.evrec.err")"; return; }
    [[ -f "$WORK/rot.evrec.1" ]] || { fail rotate "no second file: $(cat "$WORK/rot.evrec.err")"; return; }
    # Replayed as one stream from the first file: every event of every file, in order.
    evring watch "$WORK/rot.evrec" --from oldest --format jsonl >"$WORK/rot.jsonl" 2>"$WORK/rot.watch.err"
    check_contiguous "$WORK/rot.jsonl" 1 20000 || { fail rotate "series replay is not seqnos 1..20000: $(cat "$WORK/rot.evrec.err")"; return; }
    grep -q "continues in '$WORK/rot.evrec.1'" "$WORK/rot.watch.err" || { fail rotate "no continuation notice"; return; }
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

case_names_are_escaped_and_json_stays_utf8() {
    evring info $'evil\e[31m\nname' 2>"$WORK/esc.err"; local rc=$?
    [[ $rc == 1 ]] || { fail escape "exit $rc"; return; }
    grep -q $'\e' "$WORK/esc.err" && { fail escape "raw escape in: $(cat -v "$WORK/esc.err")"; return; }
    [[ $(wc -l < "$WORK/esc.err") == 1 ]] || { fail escape "not one line: $(cat -v "$WORK/esc.err")"; return; }
    grep -qF 'evil\x1b[31m\x0aname' "$WORK/esc.err" || { fail escape "$(cat -v "$WORK/esc.err")"; return; }
    mkdir -p "$WORK/odd"
    printf 'junk' > "$WORK/odd/"$'bad\xff\e'
    evring ls --dir "$WORK/odd" --json > "$WORK/odd.json" || { fail escape "ls failed"; return; }
    /usr/bin/python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1], encoding="utf-8", errors="strict")]' \
        "$WORK/odd.json" || { fail escape "ls --json is not valid UTF-8 JSON: $(cat -v "$WORK/odd.json")"; return; }
    evring ls --dir "$WORK/odd" | grep -q $'\e' && { fail escape "ls text shows a raw escape"; return; }
    ok names_are_escaped_and_json_stays_utf8
}

case_snapshot_never_overwrites_the_ring_it_copies() {
    start_producer self:12:20 --rate 1000 || { fail self "no ring"; return; }
    local ring="$EVRING_RING_DIR/self"
    ln -s "$ring" "$WORK/self-link"
    local target rc
    for target in "$ring" "$WORK/self-link"; do
        evring snapshot self -o "$target" --force 2>"$WORK/self.err"; rc=$?
        [[ $rc == 1 ]] || { fail self "-o $target: exit $rc"; return; }
        grep -q "refusing to write the snapshot over the ring file it copies" "$WORK/self.err" ||
            { fail self "$(cat "$WORK/self.err")"; return; }
    done
    (cd "$EVRING_RING_DIR" && "$EVRING_BIN" snapshot "$ring" -o self --force 2>"$WORK/self.err"); rc=$?
    [[ $rc == 1 ]] || { fail self "pure name: exit $rc"; return; }
    evring info self >/dev/null || { fail self "the ring was damaged"; return; }
    kill "$PRODUCER_PID"; wait "$PRODUCER_PID" 2>/dev/null
    ok snapshot_never_overwrites_the_ring_it_copies
}

case_snapshot_removes_its_temporary_file_when_interrupted() {
    start_producer big:16:28 --count 6000000 --keep || { fail interrupt "no ring"; return; }
    wait "$PRODUCER_PID"
    local sig rc
    for sig in INT TERM; do
        "$EVRING_BIN" snapshot big -o "$WORK/big.zst" --level 19 2>"$WORK/big.err" &
        local snapper=$!
        poll 500 0.01 compgen -G "$WORK/big.zst.tmp*"
        kill -"$sig" "$snapper"; wait "$snapper"; rc=$?
        if [[ $rc == 0 ]]; then
            echo "skip snapshot_removes_its_temporary_file_when_interrupted (SIG$sig: finished before the signal)"
            rm -f "$WORK/big.zst"; continue
        fi
        [[ $rc == 1 ]] || { fail interrupt "SIG$sig: exit $rc"; break; }
        grep -q "interrupted: '$WORK/big.zst' was not written" "$WORK/big.err" ||
            { fail interrupt "SIG$sig: $(cat "$WORK/big.err")"; break; }
        ls "$WORK"/big.zst* >/dev/null 2>&1 && { fail interrupt "SIG$sig left: $(ls "$WORK"/big.zst*)"; break; }
        ok "snapshot_removes_its_temporary_file_on_SIG$sig"
    done
    rm -f "$EVRING_RING_DIR/big"
}

case_watch_follow_name_continues_on_a_new_ring() {
    # Both writers write fewer events than the 4096 slots: nothing can be lapped.
    start_producer fn:12:20 --count 2000 --rate 5000 --keep || { fail follow_name "no ring"; return; }
    hold_producer
    "$EVRING_BIN" watch fn --from oldest --follow-name --format jsonl >"$WORK/fn.jsonl" 2>"$WORK/fn.err" &
    local watcher=$!
    PIDS+=("$watcher")  # stopped at exit when a check below fails before it is
    # Listed as the ring's reader: the watcher has opened the ring and seen its writer alive.
    # Having the file mapped is not enough: a watcher slower than the producer's 0.4 s (ASan
    # on a loaded machine) then opened a ring whose writer had exited, read it as a finished
    # ring, said no "writer exited" and only "waiting for a new ring" (CI, last stop).
    wait_readers fn "watch +watch +$watcher .* alive" || { release_producer; fail follow_name "watch did not attach"; return; }
    release_producer
    wait "$PRODUCER_PID"
    wait_for_lines "$WORK/fn.jsonl" 2000 || { fail follow_name "watch read $(wc -l < "$WORK/fn.jsonl") of 2000"; return; }
    # The watcher says the writer exited once it looks (a doorbell timeout
    # later): removing the file before that leaves it only "waiting for a new
    # ring", with no word of the exit.
    wait_for_text "$WORK/fn.err" "writer exited" || { fail follow_name "no 'writer exited' notice: $(cat "$WORK/fn.err")"; return; }
    rm -f "$EVRING_RING_DIR/fn"   # the first writer's file goes, as a writer without --keep removes it
    "$PRODUCER_BIN" fn:12:20 --count 500 --keep 2>/dev/null || { fail follow_name "second producer"; return; }
    wait_for_lines "$WORK/fn.jsonl" 2500 || { fail follow_name "the new ring was not followed: $(cat "$WORK/fn.err")"; return; }
    kill -INT "$watcher"; wait "$watcher"; local rc=$?
    rm -f "$EVRING_RING_DIR/fn"
    [[ $rc == 0 ]] || { fail follow_name "exit $rc"; return; }
    head -n 2000 "$WORK/fn.jsonl" > "$WORK/fn1.jsonl"
    tail -n +2001 "$WORK/fn.jsonl" > "$WORK/fn2.jsonl"
    check_contiguous "$WORK/fn1.jsonl" 1 2000 && check_contiguous "$WORK/fn2.jsonl" 1 500 ||
        { fail follow_name "not 1..2000 then 1..500"; return; }
    grep -q "writer exited" "$WORK/fn.err" && grep -q "a new writer created ring 'fn'" "$WORK/fn.err" ||
        { fail follow_name "notices: $(cat "$WORK/fn.err")"; return; }
    ok watch_follow_name_continues_on_a_new_ring
}

case_consumer_is_idle_when_no_events_come() {
    local consumer_bin; consumer_bin="$(dirname "$PRODUCER_BIN")/consumer"
    [[ -x $consumer_bin ]] || { echo "skip consumer_is_idle_when_no_events_come (no consumer example)"; return; }
    # A writer that stays alive and writes nothing: held still once its ring exists.
    start_producer idle:12:20 --rate 1 || { fail idle "no ring"; return; }
    hold_producer
    "$consumer_bin" idle >/dev/null 2>&1 &
    local consumer=$!
    wait_attached "$consumer" "$EVRING_RING_DIR/idle" || { fail idle "consumer did not attach"; return; }
    # The writer is alive but writes nothing: CPU time (utime + stime, in
    # clock ticks) over 3 seconds must stay near zero.
    local before after
    before=$(awk '{print $14 + $15}' "/proc/$consumer/stat")
    sleep 3
    after=$(awk '{print $14 + $15}' "/proc/$consumer/stat")
    kill -INT "$consumer"; wait "$consumer" 2>/dev/null
    kill -KILL "$PRODUCER_PID"; wait "$PRODUCER_PID" 2>/dev/null; rm -f "$EVRING_RING_DIR/idle"
    local used=$((after - before)) hz; hz=$(getconf CLK_TCK)
    echo "consumer CPU time while idle: $used ticks of 1/$hz s over 3 s"
    [[ $used -le $((hz / 10)) ]] || { fail idle "$used ticks over 3 s: it spins"; return; }
    ok consumer_is_idle_when_no_events_come
}

case_usage_errors_exit_2
case_missing_and_invalid_rings_exit_1_naming_the_file
case_watch_follows_a_live_producer_until_it_exits
case_watch_stops_cleanly_on_sigint
case_snapshot_of_a_live_ring_replays_what_it_kept
case_record_keeps_every_event_and_watch_replays_it
case_record_with_direct_io_replays_every_event
case_truncated_recording_replays_its_complete_prefix
case_rotation_splits_a_recording
case_filters_and_positions_on_a_snapshot
case_snapshot_size_limit_names_file_and_sizes
case_real_snapshots_read_completely
case_names_are_escaped_and_json_stays_utf8
case_snapshot_never_overwrites_the_ring_it_copies
case_snapshot_removes_its_temporary_file_when_interrupted
case_watch_follow_name_continues_on_a_new_ring
case_consumer_is_idle_when_no_events_come
exit_with_results
