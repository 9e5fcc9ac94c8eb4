#!/usr/bin/env bash
# Healing (docs/healing.md) end to end: a watch SIGSTOPped while the producer
# laps it many times, with `evring record` writing beside it, reads every
# event once and in order, and says how many came from the recording; with
# the recording named (--heal-from) and found (--heal); refusals by name.
# Needs EVRING_BIN and PRODUCER_BIN. Each case prints "ok <name>",
# "skip <name>: <why>" or "FAIL <name>: <why>"; exits 1 if any failed.
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
skip_script_unless "no producer example at $PRODUCER_BIN (-Dexamples=false?)" test -x "$PRODUCER_BIN"
skip_script_unless "jq is not installed (apt-get install jq)" command -v jq
make_work evring-healing-test
export EVRING_STATE_DIR="$WORK/state"

evring() { timeout -k 5 60 "$EVRING_BIN" "$@"; }

# The ring's newest seqno (0 before the first event).
last_seqno() { evring info "$1" --json 2>/dev/null | jq -r '.last_seqno // 0'; }
reached() { [[ $(last_seqno "$1") -ge $2 ]]; }

# Every line of jsonl file $1 an event, seqnos in order, each once, and with
# the $3 seqnos lost in reported gaps, all $2 of them.
each_once() {
    local got
    got=$(jq -r .seqno "$1" | awk -v n="$2" -v lost="$3" '$1 <= prev { print "line " NR " has seqno " $1 " after " prev; exit }
        { prev = $1 } END { if (NR + lost != n) print NR " events and " lost " lost, not " n }')
    [[ -z $got ]] || { echo "$got"; return 1; }
}

# lapped_watch NAME RING SHAPE TOTAL HEAL_OPTION...: a producer of TOTAL events (held), a
# recorder of RING, and a watch with the heal options, stopped (SIGSTOP) once listed; sets
# PRODUCER, RECORDER and WATCHER. A --heal-from option gets the recorder's file, which is in
# $OUT_DIR when set, else in $WORK.
lapped_watch() {
    local name=$1 ring=$2 shape=$3 total=$4 out="${OUT_DIR:-$WORK}/$1.evrec"
    shift 4
    start_ready_producer "$ring:$shape" --count "$total" --rate 20000 --keep || { fail "$name" "no producer"; return 1; }
    PRODUCER=$PRODUCER_PID
    "$EVRING_BIN" record "$ring" --from oldest -o "$out" 2>"$WORK/$name-record.err" &
    RECORDER=$!
    PIDS+=("$RECORDER")
    wait_readers "$ring" "record +record +$RECORDER .* alive" || { fail "$name" "the recorder is not listed"; return 1; }
    local heal=("$@")
    [[ ${heal[0]} == --heal-from ]] && heal=(--heal-from "$out")
    "$EVRING_BIN" watch "$ring" --from oldest --format jsonl --no-payload "${heal[@]}" \
        >"$WORK/$name.jsonl" 2>"$WORK/$name.err" &
    WATCHER=$!
    PIDS+=("$WATCHER")
    wait_readers "$ring" "watch +watch +$WATCHER .* alive" || { fail "$name" "the watch is not listed"; return 1; }
    kill -STOP "$WATCHER"
}

# healed_all NAME TOTAL MORE_THAN: the watch printed every event once, in order, but for
# what the recorder lost too (it can be lapped on a loaded machine: 4096 slots are 200 ms of
# this writer), each gap saying so; more than MORE_THAN came from the recording.
healed_all() {
    local name=$1 total=$2 more_than=$3 bad lost healed
    lost=$(sed -nE "s/^evring: $total events printed .* ([0-9]+) lost in [0-9]+ gaps.*/\1/p" "$WORK/$name.err")
    [[ -n $lost ]] || { fail "$name" "summary: $(tail -1 "$WORK/$name.err")"; return 1; }
    bad=$(each_once "$WORK/$name.jsonl" "$total" "$lost") || { fail "$name" "$bad; $(tail -3 "$WORK/$name.err" | tr '\n' ' ')"; return 1; }
    if grep -E '^evring: lost [0-9]+ events' "$WORK/$name.err" | grep -vq "so did the recorder"; then
        fail "$name" "a gap the recording held: $(grep -E '^evring: lost|not healing' "$WORK/$name.err" | head -3 | tr '\n' ' ')"
        return 1
    fi
    healed=$(sed -nE 's/.*\(([0-9]+) of the events read from the recording.*/\1/p' "$WORK/$name.err")
    [[ -n $healed && $healed -gt $more_than ]] || { fail "$name" "healed '$healed': $(cat "$WORK/$name.err")"; return 1; }
    HEALED_SAID="$healed of $total from the recording; $lost lost with the recorder"
}

# heal_case NAME HEAL_OPTION...: a watch stopped while the writer laps it (a 4096-slot ring,
# 60000 events) beside a recorder, then let go.
heal_case() {
    local name=$1 ring=heal-$1 total=60000
    shift
    lapped_watch "$name" "$ring" 12:20 "$total" "$@" || return
    release_producer
    # Lapped many times over (4096 slots) before it reads again.
    poll 3000 0.01 reached "$ring" 30000 || { fail "$name" "the producer did not reach 30000"; return; }
    # Lapped and stopped, it is listed as healing: what was overwritten ahead of it is not lost.
    local entry
    entry=$(evring readers "$ring" --json 2>&1 | jq -c "select(.pid == $WATCHER)")
    [[ $(jq -r '[.heals, .lapped, .lost] | @csv' <<<"$entry") == 'true,true,0' ]] ||
        { kill -CONT "$WATCHER"; fail "$name" "listed as $entry"; return; }
    kill -CONT "$WATCHER"
    wait "$PRODUCER"
    # The writer has exited: the watch ends at the ring's newest event.
    poll 3000 0.01 test ! -e "/proc/$WATCHER" || { fail "$name" "the watch did not end: $(tail -2 "$WORK/$name.err")"; return; }
    wait "$WATCHER" || { fail "$name" "watch exit $?: $(tail -3 "$WORK/$name.err")"; return; }
    kill -INT "$RECORDER" 2>/dev/null; wait "$RECORDER"
    healed_all "$name" "$total" 4096 && ok "$name ($HEALED_SAID)"
}

test_named_recording() { heal_case heal_from --heal-from; }
test_found_recording() { heal_case heal_found --heal; }
# A named reader heals by default (docs/named-readers.md): no --heal, the recorder is found.
test_named_reader_heals_by_default() { heal_case heal_named --name bill; }

# --heal with a recording whose path is longer than the reader registry keeps of it (79
# characters of "-> PATH"): the watch finds it whole among the recorder's open files
# (lib/registry/recorder_output.hpp); before, it looked for the cut path and healed nothing.
test_found_recording_with_a_long_path() {
    local OUT_DIR="$WORK/a-folder-whose-name-makes-the-recording-path-longer-than-the-registry-keeps"
    mkdir -p "$OUT_DIR"
    local out="$OUT_DIR/heal_long.evrec"
    (( ${#out} > 76 )) || { fail found_recording_with_a_long_path "the path $out fits the registry"; return; }
    heal_case heal_long --heal
}

# --heal after the recorder has exited: the reader read the registry when it started, and the
# recording, remembered, heals its lap though no recorder runs any more (before, the recorder's
# freed slot left the gap standing: CI under ASan, where the writer finished before the lap).
test_found_recording_after_the_recorder_exited() {
    local name=heal_gone total=40000
    lapped_watch "$name" heal-gone 14:22 "$total" --heal || return
    release_producer; wait "$PRODUCER"
    wait "$RECORDER" || { fail "$name" "record exit $?: $(cat "$WORK/$name-record.err")"; return; }
    kill -CONT "$WATCHER"
    wait "$WATCHER" || { fail "$name" "watch exit $?: $(tail -3 "$WORK/$name.err")"; return; }
    healed_all "$name" "$total" 0 && ok "found_recording_after_the_recorder_exited ($HEALED_SAID)"
}

# A set started at MEMBER:SEQNO its member's ring has overwritten: with healing, that member
# reads from SEQNO, the overwritten part from the set's recording (before, it moved to the
# member's oldest event, and the healer never saw the gap).
test_set_member_start_overwritten() {
    local set=hset total=3000
    start_ready_producer "$set:8:20" --threads 2 --count "$total" --rate 3000 --keep || { fail set_start "no producer"; return; }
    local producer=$PRODUCER_PID
    "$EVRING_BIN" record "$set" --from oldest -o "$WORK/hset.evrec" 2>"$WORK/hset-record.err" &
    local recorder=$!
    PIDS+=("$recorder")
    wait_readers "$set" "record +record +$recorder .* alive" || { fail set_start "the recorder is not listed"; return; }
    release_producer; wait "$producer"
    wait "$recorder" || { fail set_start "record exit $?: $(cat "$WORK/hset-record.err")"; return; }
    evring watch "$set" --from 0:1 --heal-from "$WORK/hset.evrec" --format jsonl --no-payload \
        >"$WORK/hset.jsonl" 2>"$WORK/hset.err" || { fail set_start "watch: $(cat "$WORK/hset.err")"; return; }
    jq -c 'select(.member == 0 and .seqno != null and .gap == null)' "$WORK/hset.jsonl" >"$WORK/hset.m0"
    local bad
    bad=$(each_once "$WORK/hset.m0" "$total" 0) || { fail set_start "member 0: $bad; $(cat "$WORK/hset.err")"; return; }
    grep -q "seqno 1 is no longer in ring file .*: those up to the oldest are read from the recording (healing)" \
        "$WORK/hset.err" || { fail set_start "notice: $(cat "$WORK/hset.err")"; return; }
    ok "set_member_start_overwritten (member 0: 1..$total)"
}

# A recording of another ring is refused by name, and the lapped gap stands.
test_another_rings_recording() {
    start_ready_producer other:6:16 --count 10 --keep || { fail other_ring "no producer"; return; }
    release_producer; wait "$PRODUCER_PID"
    evring record other --from oldest -o "$WORK/other.evrec" 2>/dev/null || { fail other_ring "record other"; return; }
    start_ready_producer lapped:6:16 --count 500 --keep || { fail other_ring "no producer"; return; }
    local producer=$PRODUCER_PID
    "$EVRING_BIN" watch lapped --from oldest --heal-from "$WORK/other.evrec" >/dev/null 2>"$WORK/other.err" &
    local watcher=$!
    PIDS+=("$watcher")
    wait_readers lapped "watch +watch +$watcher .* alive" || { fail other_ring "the watch is not listed"; return; }
    kill -STOP "$watcher"
    release_producer; wait "$producer"   # lapped while stopped
    kill -CONT "$watcher"
    wait "$watcher"
    grep -qE "not healing lapped gaps from recording '.*other.evrec': it recorded ring instance [0-9a-f]{16}, and this is" \
        "$WORK/other.err" || { fail other_ring "no refusal: $(cat "$WORK/other.err")"; return; }
    # 500 events in 64 slots: a lapped reader goes on 4 slots past the oldest (capacity / 16).
    grep -qE "^evring: 60 events printed .* 440 lost in 1 gaps" "$WORK/other.err" ||
        { fail other_ring "summary: $(tail -1 "$WORK/other.err")"; return; }
    ok another_rings_recording_refused_by_name
}

test_refusals() {
    evring watch "$WORK/other.evrec" --heal-from "$WORK/other.evrec" >/dev/null 2>"$WORK/refused.err"
    local code=$?
    [[ $code -ne 0 ]] && grep -q "is for live rings and ring sets; '.*other.evrec' is a recording" "$WORK/refused.err" ||
        { fail refusals "a recording healed (exit $code): $(cat "$WORK/refused.err")"; return; }
    evring watch lapped --heal --heal-from x >/dev/null 2>"$WORK/refused.err"
    [[ $? -eq 2 ]] && grep -q "give one" "$WORK/refused.err" || { fail refusals "--heal with --heal-from"; return; }
    evring watch lapped --heal --heal-wait 3 >/dev/null 2>"$WORK/refused.err"
    [[ $? -eq 2 ]] && grep -q "bad --heal-wait '3'" "$WORK/refused.err" || { fail refusals "--heal-wait 3: $(cat "$WORK/refused.err")"; return; }
    evring watch lapped --heal-wait 1s >/dev/null 2>"$WORK/refused.err"
    [[ $? -eq 2 ]] && grep -q "goes with --heal" "$WORK/refused.err" || { fail refusals "--heal-wait alone"; return; }
    evring watch lapped --no-heal >/dev/null 2>"$WORK/refused.err"
    [[ $? -eq 2 ]] && grep -q "no-heal goes with --name" "$WORK/refused.err" || { fail refusals "--no-heal alone"; return; }
    evring watch lapped --name x --no-heal --heal >/dev/null 2>"$WORK/refused.err"
    [[ $? -eq 2 ]] && grep -q "no-heal goes with none of" "$WORK/refused.err" || { fail refusals "--no-heal --heal"; return; }
    ok refusals_name_the_option
}

# digest and stats heal too: the kept ring of the heal_from case, read from seqno 1 (long
# overwritten), gives the recording's digest, as if the ring had held every event.
test_digest_and_stats() {
    local ring=heal-heal_from rec=$WORK/heal_from.evrec
    [[ -e $rec ]] || { fail digest_and_stats "no recording from the heal_from case"; return; }
    local want got plain events
    want=$(evring digest "$rec" --json 2>/dev/null | jq -r '[.digest, .events] | @csv')
    got=$(evring digest "$ring" --from 1 --heal-from "$rec" --json 2>"$WORK/digest.err" | jq -r '[.digest, .events] | @csv')
    plain=$(evring digest "$ring" --from 1 --json 2>/dev/null | jq -r '[.digest, .events] | @csv')
    [[ -n $want && $got == "$want" && $plain != "$want" ]] ||
        { fail digest_and_stats "digest healed $got, recording $want, unhealed $plain: $(cat "$WORK/digest.err")"; return; }
    events=$(evring stats "$ring" --from 1 --heal-from "$rec" --json 2>/dev/null | jq -r .events)
    [[ $events == "$(cut -d, -f2 <<<"$want")" ]] ||
        { fail digest_and_stats "stats counted $events events, the recording holds $want"; return; }
    ok "digest_and_stats_heal ($events events)"
}

# record --from N, N long overwritten: the recording starts with a gap marker for N up to the
# oldest event it holds, as for any lap (before, it held no word of them).
test_record_from_overwritten() {
    local ring=heal-heal_from oldest lost
    evring record "$ring" --from 5 -o "$WORK/from5.evrec" 2>"$WORK/from5.err" ||
        { fail record_from_overwritten "exit $?: $(cat "$WORK/from5.err")"; return; }
    oldest=$(evring info "$WORK/from5.evrec" --json 2>/dev/null | jq -r .first_seqno)
    lost=$(evring info "$WORK/from5.evrec" --json 2>/dev/null | jq -r '[.gaps, .lost_events] | @csv')
    [[ $oldest -gt 5 && $lost == "1,$((oldest - 5))" ]] ||
        { fail record_from_overwritten "first seqno $oldest, gaps,lost $lost: $(cat "$WORK/from5.err")"; return; }
    ok "record_from_overwritten (seqno 5..$((oldest - 1)) a gap)"
}

test_named_recording
test_record_from_overwritten
test_digest_and_stats
test_found_recording
test_named_reader_heals_by_default
test_found_recording_with_a_long_path
test_found_recording_after_the_recorder_exited
test_set_member_start_overwritten
test_another_rings_recording
test_refusals
exit_with_results
