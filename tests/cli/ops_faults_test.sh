#!/usr/bin/env bash
# The operator's view while things go wrong (issue 32; docs/operations.md,
# docs/hugepages.md, docs/cli.md): a stopped reader's loss shows while it is
# being lapped; a removed ring is down in the metrics; gc and ls --all find a
# ring set member's temporary file, rings and sets whose writers were killed
# (and leave kept ones); `evring rm` removes rings and sets but never one a
# live writer holds. Needs EVRING_BIN, PRODUCER_BIN and jq.
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
skip_script_unless "no producer example at $PRODUCER_BIN (-Dexamples=false?)" test -x "$PRODUCER_BIN"
skip_script_unless "jq is not installed (apt-get install jq)" command -v jq
make_work evring-ops-faults-test
KILL_SIGNAL=KILL

evring() { timeout -k 5 30 "$EVRING_BIN" "$@"; }

# Starts the producer with the arguments given; PRODUCER is its pid. Waits
# for ring (or set) $1 (its name) to exist.
start_producer() {
    local name=$1; shift
    "$PRODUCER_BIN" "$@" 2>>"$WORK/producer.err" &
    PRODUCER=$!
    PIDS+=("$PRODUCER")
    poll 500 0.02 test -e "$EVRING_RING_DIR/$name"
}

# The LOST `readers --json` shows for pid $2 of ring $1 (empty when not listed).
lost_of() { evring readers "$1" --json --no-reclaim 2>/dev/null | jq -r "select(.pid == $2) | .$3"; }
lost_above() { local v; v=$(lost_of "$1" "$2" "${4:-lost}"); [[ -n $v && $v -gt $3 ]]; }
# The value of metric sample $2 in a one-shot `metrics $1`.
metric() { evring metrics "$1" 2>/dev/null | grep -F "$2" | awk '{print $2}'; }

test_a_stopped_readers_loss_shows_while_it_is_lapped() {
    # 1024 slots at 5,000 events/s: a stopped reader is lapped within a second.
    start_producer lap lap:10:20 --rate 5000 || { fail lapped "no ring"; return; }
    local producer=$PRODUCER
    "$EVRING_BIN" watch lap >/dev/null 2>&1 &
    local watcher=$!
    PIDS+=("$watcher")
    wait_readers lap "watch +watch +$watcher .* alive" || { fail lapped "watch not registered"; return; }
    kill -STOP "$watcher"
    poll 1000 0.01 lost_above lap "$watcher" 0 || { fail lapped "a stopped, lapped reader shows LOST $(lost_of lap "$watcher" lost)"; return; }
    evring readers lap --json --no-reclaim | jq -e "select(.pid == $watcher) | .lapped and .lost_reported == 0 and .lost == .lag_overwritten" \
        >/dev/null || { fail lapped "--json: $(evring readers lap --json --no-reclaim)"; return; }
    local sample="evring_reader_lost_events_total{ring=\"lap\",reader=\"watch\",kind=\"watch\",pid=\"$watcher\""
    local first; first=$(metric lap "$sample")
    [[ -n $first && $first -gt 0 ]] || { fail lapped "metrics: lost '$first' while the reader is lapped"; return; }
    poll 500 0.01 eval "(( \$(metric lap '$sample') > $first ))" || { fail lapped "metrics: the loss did not grow past $first"; return; }
    # Once it reads again it counts the gap itself: never less than was shown.
    local shown; shown=$(lost_of lap "$watcher" lost)
    kill -CONT "$watcher"
    poll 1000 0.01 lost_above lap "$watcher" 0 lost_reported || { fail lapped "the reader never reported its own loss"; return; }
    local reported; reported=$(lost_of lap "$watcher" lost_reported)
    (( reported >= shown - 1024 )) || { fail lapped "the reader reported $reported, far below the $shown shown while it was stopped"; return; }
    kill "$watcher" "$producer"; wait "$watcher" "$producer" 2>/dev/null
    ok a_stopped_readers_loss_shows_while_it_is_lapped
}

test_a_removed_ring_is_down_in_the_metrics() {
    start_producer up up:10:16 --rate 100 || { fail up "no ring"; return; }
    "$EVRING_BIN" metrics up --listen 127.0.0.1:0 2>"$WORK/up-serve.err" &
    local server=$!
    PIDS+=("$server")
    local port
    poll 200 0.05 grep -q "serving metrics" "$WORK/up-serve.err"
    port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$WORK/up-serve.err")
    [[ -n $port ]] || { fail up "server did not say its port"; return; }
    scrape() { exec 3<>"/dev/tcp/127.0.0.1/$port"; printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3; timeout -k 5 10 cat <&3; exec 3<&-; }
    scrape | grep -q '^evring_up{ring="up"} 1' || { fail up "not up while the writer runs"; return; }
    kill -TERM "$PRODUCER"; wait "$PRODUCER" 2>/dev/null   # a clean exit removes the ring
    [[ -e $EVRING_RING_DIR/up ]] && { fail up "the producer left its ring"; return; }
    poll 100 0.05 eval "scrape | grep -q '^evring_up{ring=\"up\"} 0'" || { fail up "evring_up stays 1 after the ring was removed"; return; }
    scrape | grep -q '^evring_events_total{ring="up"}' && { fail up "a removed ring's samples are still shown"; return; }
    start_producer up up:10:16 --rate 100 || { fail up "no second ring"; return; }
    poll 100 0.05 eval "scrape | grep -q '^evring_up{ring=\"up\"} 1'" || { fail up "not up again once a new ring is at the name"; return; }
    kill "$PRODUCER" "$server"; wait "$PRODUCER" "$server" 2>/dev/null
    ok a_removed_ring_is_down_in_the_metrics
}

test_gc_finds_what_killed_writers_left_in_rings_and_sets() {
    local dir="$EVRING_RING_DIR"
    # A ring whose writer was killed, and one kept on purpose.
    start_producer dead dead:10:16 --rate 100 || { fail gc "no ring"; return; }
    # The ring file exists before its writer is recorded in it: killed sooner, nothing says a
    # writer was there, and the ring is no debris (ls shows it alive once it is recorded).
    poll 500 0.01 eval "'$EVRING_BIN' ls | grep -qE '^dead .* yes\$'" || { fail gc "the writer never showed in ls"; return; }
    kill -9 "$PRODUCER"; wait "$PRODUCER" 2>/dev/null
    "$PRODUCER_BIN" kept:10:16 --count 10 --keep 2>/dev/null || { fail gc "no kept ring"; return; }
    # A ring set member's temporary file: its writer stopped (test hook) once the file has its full size.
    EVRING_TEST_STOP_AFTER_ALLOCATE=1 "$PRODUCER_BIN" tset:10:16 --threads 2 2>/dev/null &
    local stopped=$!
    PIDS+=("$stopped")
    poll 500 0.01 grep -q '^State:.*stopped' "/proc/$stopped/status" || { fail gc "the set writer never stopped"; return; }
    kill -9 "$stopped"; wait "$stopped" 2>/dev/null
    [[ -f $dir/tset/m0.$stopped || -f $dir/tset/m1.$stopped ]] || { fail gc "no member temporary file: $(ls -A "$dir/tset")"; return; }
    # Another writer of that set still lives (it holds the manifest shared, as set writers do):
    # the member's temporary file is debris of its own, the set is not.
    local held_manifest
    exec {held_manifest}<"$dir/tset/manifest"
    flock -s "$held_manifest" || { fail gc "could not lock the manifest as a set writer does"; return; }
    # A ring set whose writer was killed.
    start_producer dset dset:10:16 --threads 2 --rate 100 || { fail gc "no set"; return; }
    poll 500 0.01 test -e "$dir/dset/m1" || { fail gc "the set has no second member"; return; }
    kill -9 "$PRODUCER"; wait "$PRODUCER" 2>/dev/null

    evring ls --all >"$WORK/ls-all.txt"
    grep -qE "^dead +dead-ring .*writers were killed" "$WORK/ls-all.txt" &&
        grep -qE "^tset/m[01]\.$stopped +temp-ring .*left by pid $stopped" "$WORK/ls-all.txt" &&
        grep -qE "^dset +dead-set " "$WORK/ls-all.txt" || { fail ls_all "$(cat "$WORK/ls-all.txt")"; return; }
    grep -qE "^kept " <(sed -n '/^# debris/,$p' "$WORK/ls-all.txt") && { fail ls_all "a kept ring listed as debris"; return; }
    evring gc --json | jq -e -s 'map(.debris) | sort == ["dead-ring", "dead-set", "temp-ring"]' >/dev/null ||
        { fail gc "gc --json: $(evring gc --json)"; return; }
    evring gc --delete >"$WORK/gc.txt" || { fail gc "gc --delete exit $?: $(cat "$WORK/gc.txt")"; return; }
    grep -q "^removed 3 files" "$WORK/gc.txt" || { fail gc "$(cat "$WORK/gc.txt")"; return; }
    [[ ! -e $dir/dead && ! -e $dir/dset && -e $dir/kept && -e $dir/tset/manifest ]] &&
        ! ls "$dir/tset" | grep -q '\.' || { fail gc "left: $(ls -AR "$dir")"; return; }
    evring gc | grep -q "^0 files of debris" || { fail gc "debris after --delete: $(evring gc)"; return; }
    # Its last writer gone, a set with no member ring is debris too (nothing in it to read).
    exec {held_manifest}<&-
    evring gc --json | jq -e 'select(.path | endswith("/tset")) | .debris == "dead-set"' >/dev/null ||
        { fail gc "the memberless set with no writer: $(evring gc --json)"; return; }
    evring gc --delete >/dev/null && [[ ! -e $dir/tset ]] || { fail gc "tset left: $(ls -A "$dir")"; return; }
    evring rm kept >/dev/null || { fail gc "rm kept"; return; }
    ok gc_finds_what_killed_writers_left_in_rings_and_sets
}

only_plain_in() { [[ -z $(ls -A "$1" | grep -v '^plain$') ]]; }

test_rm_removes_rings_and_sets_but_never_a_live_writers() {
    local dir="$EVRING_RING_DIR"
    start_producer live live:10:16 --rate 100 || { fail rm "no ring"; return; }
    local producer=$PRODUCER
    evring rm live 2>"$WORK/rm-live.err"; local rc=$?
    [[ $rc == 1 && -e $dir/live ]] && grep -q "^evring: ring '.*live' is in use by a live writer (pid $producer): not removed" \
        "$WORK/rm-live.err" || { fail rm_live "exit $rc: $(cat "$WORK/rm-live.err")"; return; }
    start_producer lset lset:10:16 --threads 2 --rate 100 || { fail rm "no set"; return; }
    local set_writer=$PRODUCER
    evring rm lset 2>"$WORK/rm-lset.err"; rc=$?
    [[ $rc == 1 && -e $dir/lset/manifest ]] && grep -q "ring set '.*lset' has a live writer (pid $set_writer)" "$WORK/rm-lset.err" ||
        { fail rm_live_set "exit $rc: $(cat "$WORK/rm-lset.err")"; return; }
    # With a registered reader: the ring goes, its registry when the reader leaves.
    "$PRODUCER_BIN" gone:10:16 --count 10 --keep 2>/dev/null || { fail rm "no kept ring"; return; }
    kill -9 "$producer" "$set_writer"; wait "$producer" "$set_writer" 2>/dev/null
    printf 'not a ring\n' >"$dir/plain"
    evring rm live lset gone plain nothing >"$WORK/rm.out" 2>"$WORK/rm.err"; rc=$?
    [[ $rc == 1 ]] && grep -qx "removed live" "$WORK/rm.out" && grep -qx "removed lset" "$WORK/rm.out" &&
        grep -qx "removed gone" "$WORK/rm.out" && grep -q "^evring: '.*plain' is not an event ring" "$WORK/rm.err" &&
        grep -q "^evring: no ring 'nothing'" "$WORK/rm.err" ||
        { fail rm "exit $rc: $(cat "$WORK/rm.out" "$WORK/rm.err")"; return; }
    [[ ! -e $dir/live && ! -e $dir/lset && ! -e $dir/gone && -e $dir/plain ]] || { fail rm "left: $(ls -A "$dir")"; return; }
    # Nothing else stays. (One run under load failed here with only 'plain' listed by the time the
    # message was made: whatever was there went by itself. Named now, and waited out for 2 s.)
    local first_look; first_look=$(ls -A "$dir" | grep -v '^plain$')
    poll 100 0.02 only_plain_in "$dir" ||
        { fail rm "debris left: $(ls -A "$dir") (at first: ${first_look:-nothing else})"; return; }
    [[ -z $first_look ]] || echo "# rm: '$first_look' was there at first, and went by itself" >&2
    rm -f "$dir/plain"
    ok rm_removes_rings_and_sets_but_never_a_live_writers
}

# A 100 KB --keywords list is refused with a message that echoes only its start.
test_a_huge_keyword_list_is_not_echoed_whole() {
    "$PRODUCER_BIN" kw:10:16 --count 5 --keep 2>/dev/null || { fail keywords "no ring"; return; }
    local list; list=$(head -c 100000 /dev/zero | tr '\0' k)
    evring watch kw --keywords "$list" --count 1 >/dev/null 2>"$WORK/kw.err"
    local rc=$?
    [[ $rc != 0 && $(wc -c <"$WORK/kw.err") -lt 2000 ]] && grep -q "^evring: bad --keywords 'k*\.\.\.(100000 bytes)'" "$WORK/kw.err" \
        || { fail keywords "exit $rc, $(wc -c <"$WORK/kw.err") bytes: $(head -c 300 "$WORK/kw.err")"; return; }
    evring rm kw >/dev/null
    ok a_huge_keyword_list_is_not_echoed_whole
}

test_a_stopped_readers_loss_shows_while_it_is_lapped
test_a_removed_ring_is_down_in_the_metrics
test_a_huge_keyword_list_is_not_echoed_whole
test_gc_finds_what_killed_writers_left_in_rings_and_sets
test_rm_removes_rings_and_sets_but_never_a_live_writers
exit_with_results
