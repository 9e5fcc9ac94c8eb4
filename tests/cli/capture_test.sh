#!/usr/bin/env bash
# Flight-recorder captures (docs/cli.md, "Captures"): `evring record RING
# --trigger EXPR --before D --after D -o DIR` writes one capture per trigger
# holding exactly the ring's events stamped from the trigger's time - before
# to its time + after (checked seqno by seqno against a full recording made
# beside it); triggers inside an open window extend it (one file);
# --max-captures and --cooldown are honoured; a "before" window the ring no
# longer holds is said so, with a gap marker for what was overwritten; a ring
# set is captured; bad options are refused naming the value; the issue's
# acceptance command (type == TRADE && quantity > 990) writes captures that
# `evring watch` reads.
# Each case prints "ok <name>" or "FAIL <name>: <why>"; exits 1 if any failed.
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
skip_script_unless "python3 is not installed" command -v python3
make_work evring-capture

evring() { "$EVRING_BIN" "$@"; }
RATE=2000

# check_window CAPTURE FULL TRIGGER_COUNTER BEFORE_NS AFTER_NS [LAST_TRIGGER_COUNTER]:
# the capture's events are exactly FULL's events stamped within
# [t(first trigger) - BEFORE, t(last trigger) + AFTER]. Prints "ok" or why not.
check_window() {
    python3 - "$@" <<'PY'
import json, sys
cap, full, first, before, after = sys.argv[1:6]
last = sys.argv[6] if len(sys.argv) > 6 else first
events = lambda path: [json.loads(l) for l in open(path) if l.strip()]
F, C = events(full), events(cap)
by_counter = {e["fields"]["counter"]: e for e in F if "fields" in e}
t0 = by_counter[int(first)]["record_epoch_nanos"] - int(before)
t1 = by_counter[int(last)]["record_epoch_nanos"] + int(after)
want = [e["seqno"] for e in F if t0 <= e["record_epoch_nanos"] <= t1]
got = [e["seqno"] for e in C]
if got == want: print("ok")
else: print(f"capture seqnos {got[:3]}..{got[-3:]} ({len(got)}) != ring's {want[:3]}..{want[-3:]} ({len(want)})")
PY
}

# count_files DIR: the capture files in DIR.
count_files() { find "$1" -name 'capture-*.evrec' 2>/dev/null | wc -l; }

# --- one producer, several recorders at once ---
start_ready_producer r --count 4000 --rate $RATE || { echo "FAIL setup: producer"; exit 1; }
RING="$EVRING_RING_DIR/r"
record_bg() {  # NAME ARGS...: evring record r ARGS... in the background, stderr in $WORK/NAME.err
    local name=$1; shift
    "$EVRING_BIN" record r "$@" 2>"$WORK/$name.err" &
    eval "PID_$name=$!"
    PIDS+=($!)
    wait_attached $! "$RING"
}
record_bg full --from oldest -o "$WORK/full.evrec"
record_bg one --trigger 'counter == 3000' --before 500ms --after 250ms -o "$WORK/one"
record_bg overlap --trigger 'counter == 2000 || counter == 2100' --before 200ms --after 400ms -o "$WORK/overlap"
record_bg max --trigger 'counter in {1000, 2000, 3000}' --before 50ms --after 50ms --max-captures 2 -o "$WORK/max"
record_bg cool --trigger 'counter in {1000, 1200, 2000}' --before 20ms --after 20ms --cooldown 300ms -o "$WORK/cool"
record_bg nocool --trigger 'counter in {1000, 1200, 2000}' --before 20ms --after 20ms -o "$WORK/nocool"
record_bg accept --trigger 'type == TRADE && quantity > 990' --before 2s --after 1s -o "$WORK/accept"
release_producer
# Every recorder ends with the producer (its ring's writer exits); --max-captures ends earlier.
for name in full one overlap max cool nocool accept; do
    pid_var=PID_$name
    if poll 3000 0.01 bash -c "! kill -0 ${!pid_var} 2>/dev/null"; then wait "${!pid_var}"; echo $? >"$WORK/$name.rc"
    else echo "FAIL $name: still running"; FAILED=1; fi
done
evring watch "$WORK/full.evrec" --from oldest --format jsonl >"$WORK/full.jsonl" 2>/dev/null
[[ $(wc -l <"$WORK/full.jsonl") -eq 4000 ]] || fail setup "the full recording holds $(wc -l <"$WORK/full.jsonl") events, not 4000"

# capture_jsonl DIR N: capture N of DIR as jsonl (stdout).
capture_jsonl() { evring watch "$1/capture-$(printf %04d "$2").evrec" --from oldest --format jsonl 2>/dev/null; }

# One trigger: one file with exactly the ring's events of the window.
if [[ $(cat "$WORK/one.rc") == 0 && $(count_files "$WORK/one") == 1 ]]; then
    capture_jsonl "$WORK/one" 1 >"$WORK/one.jsonl"
    r=$(check_window "$WORK/one.jsonl" "$WORK/full.jsonl" 3000 500000000 250000000)
    [[ $r == ok ]] && ok one_trigger_window || fail one_trigger_window "$r"
else
    fail one_trigger_window "exit $(cat "$WORK/one.rc"), $(count_files "$WORK/one") files: $(cat "$WORK/one.err")"
fi
grep -q "holds events from .* before the trigger (0.500 s asked for); the ring held the whole window" "$WORK/one.err" \
    && ok one_trigger_says_held || fail one_trigger_says_held "$(cat "$WORK/one.err")"

# The file itself says which window it is of (info): the trigger's time, the 500 ms asked for, and
# how much of it the file holds (from its first event to the trigger).
r=$(evring info "$WORK/one/capture-0001.evrec" --json 2>&1 | python3 -c '
import json, sys
i = json.loads(sys.stdin.read())
full = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
cap = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
t = [e for e in full if e["fields"]["counter"] == 3000][0]["record_epoch_nanos"]
ok = (i.get("capture_trigger_nanos") == t and i.get("capture_before_nanos") == 500000000
      and i.get("capture_held_nanos") == t - cap[0]["record_epoch_nanos"] <= 500000000)
print("ok" if ok else {k: i.get(k) for k in ("capture_trigger_nanos", "capture_before_nanos", "capture_held_nanos")},
      t, t - cap[0]["record_epoch_nanos"])
' "$WORK/full.jsonl" "$WORK/one.jsonl")
[[ $r == "ok "* ]] && evring info "$WORK/one/capture-0001.evrec" | grep -qE "^capture +trigger at .*; asked for 0\.500 s before it; holds events from 0\.[0-9]+ s before it$" \
    && ok capture_file_says_its_window || fail capture_file_says_its_window "$r; $(evring info "$WORK/one/capture-0001.evrec" | grep '^capture ')"

# Overlapping triggers: one file from the first trigger's start to the last one's end.
if [[ $(count_files "$WORK/overlap") == 1 ]] && grep -q "(2 trigger(s))" "$WORK/overlap.err"; then
    capture_jsonl "$WORK/overlap" 1 >"$WORK/overlap.jsonl"
    r=$(check_window "$WORK/overlap.jsonl" "$WORK/full.jsonl" 2000 200000000 400000000 2100)
    [[ $r == ok ]] && ok overlap_extends || fail overlap_extends "$r"
else
    fail overlap_extends "$(count_files "$WORK/overlap") files: $(cat "$WORK/overlap.err")"
fi

# --max-captures 2: two files, and the recorder stopped by itself.
if [[ $(count_files "$WORK/max") == 2 && $(cat "$WORK/max.rc") == 0 ]]; then
    capture_jsonl "$WORK/max" 2 >"$WORK/max2.jsonl"
    r=$(check_window "$WORK/max2.jsonl" "$WORK/full.jsonl" 2000 50000000 50000000)
    [[ $r == ok ]] && ok max_captures || fail max_captures "$r"
else
    fail max_captures "exit $(cat "$WORK/max.rc"), $(count_files "$WORK/max") files: $(cat "$WORK/max.err")"
fi

# --cooldown 300ms: the trigger 100 ms after the first window is not captured; without it, it is.
if [[ $(count_files "$WORK/cool") == 2 && $(count_files "$WORK/nocool") == 3 ]] &&
    grep -q "1 trigger(s) not captured" "$WORK/cool.err"; then
    capture_jsonl "$WORK/cool" 2 >"$WORK/cool2.jsonl"
    r=$(check_window "$WORK/cool2.jsonl" "$WORK/full.jsonl" 2000 20000000 20000000)
    [[ $r == ok ]] && ok cooldown || fail cooldown "$r"
else
    fail cooldown "$(count_files "$WORK/cool") files with, $(count_files "$WORK/nocool") without: $(cat "$WORK/cool.err")"
fi

# The issue's acceptance: a capture per trigger, each readable by watch and holding a trigger.
n=$(count_files "$WORK/accept")
bad=0
for f in "$WORK"/accept/capture-*.evrec; do
    [[ -e $f ]] || continue
    evring watch "$f" --from oldest --where 'type == TRADE && quantity > 990' --format jsonl 2>/dev/null | grep -q '"TRADE"' || bad=1
done
if [[ $n -ge 1 && $bad == 0 && $(cat "$WORK/accept.rc") == 0 ]]; then ok acceptance_trade_trigger
else fail acceptance_trade_trigger "$n files, unreadable or without a trigger: $bad; $(cat "$WORK/accept.err")"; fi

# --- a "before" window longer than the ring holds (256 descriptors: 128 ms at 2000/s); the
# recorder watched from the start, so it knows the window began near seqno 900 ---
start_ready_producer small:8:20 --count 2000 --rate $RATE || { echo "FAIL setup: small producer"; exit 1; }
"$EVRING_BIN" record small --from oldest -o "$WORK/small-full.evrec" 2>/dev/null &
small_full=$!
PIDS+=($small_full)
wait_attached $small_full "$EVRING_RING_DIR/small"
"$EVRING_BIN" record small --trigger 'counter == 1900' --before 500ms --after 50ms -o "$WORK/small" 2>"$WORK/small.err" &
small_pid=$!
PIDS+=($small_pid)
wait_attached $small_pid "$EVRING_RING_DIR/small"
release_producer
poll 3000 0.01 bash -c "! kill -0 $small_pid 2>/dev/null"
wait $small_pid
small_rc=$?
wait $small_full
# The gap runs from at most the window's first seqno (the first event a full recording of the ring
# has stamped at or after the trigger's time - 500 ms; 901 at an exact 2000/s), and not much less
# (the recorder looks every 10 ms: 20 events), to the event before the capture's first one.
start=$(evring watch "$WORK/small-full.evrec" --from oldest --format jsonl 2>/dev/null | python3 -c '
import json, sys
E = [json.loads(l) for l in sys.stdin if l.strip()]
t = [e for e in E if e["fields"]["counter"] == 1900][0]["record_epoch_nanos"] - 500000000
print([e["seqno"] for e in E if e["record_epoch_nanos"] >= t][0])')
gap=$(grep -oE "seqnos [0-9]+\.\.[0-9]+, recorded as a gap" "$WORK/small.err" | grep -oE "[0-9]+" | tr '\n' ' ')
read -r gap_first gap_last <<<"$gap"
first=$(capture_jsonl "$WORK/small" 1 | head -1 | python3 -c 'import json, sys; print(json.loads(sys.stdin.read())["seqno"])')
if [[ $small_rc == 0 && $(count_files "$WORK/small") == 1 && -n ${gap_first:-} ]] &&
    ((gap_first <= start && gap_first > start - 200 && gap_last + 1 == first)) &&
    evring info "$WORK/small/capture-0001.evrec" 2>&1 | grep -qE "gaps +1 \($((gap_last - gap_first + 1)) events lost\)" &&
    evring info "$WORK/small/capture-0001.evrec" 2>&1 | grep -qE "^capture .* before it; the ring had overwritten seqno $gap_first\.\.$gap_last$"; then
    ok before_window_overwritten
else
    fail before_window_overwritten "exit $small_rc, gap ${gap:-none}, window start $start, first $first: $(cat "$WORK/small.err"); info: $(evring info "$WORK/small/capture-0001.evrec" 2>&1 | grep gaps)"
fi

# --- a ring set: two members, one capture holding both ---
start_ready_producer set --threads 2 --count 2000 --rate 1000 || { echo "FAIL setup: set producer"; exit 1; }
"$EVRING_BIN" record set --trigger 'counter == 1000' --before 300ms --after 100ms --max-captures 1 -o "$WORK/set" \
    2>"$WORK/set.err" &
set_pid=$!
PIDS+=($set_pid)
wait_attached $set_pid "$EVRING_RING_DIR/set"
release_producer
poll 3000 0.01 bash -c "! kill -0 $set_pid 2>/dev/null"
wait $set_pid
set_rc=$?
members=$(capture_jsonl "$WORK/set" 1 | python3 -c '
import json, sys
print(sorted({json.loads(l).get("member") for l in sys.stdin if l.strip()}))')
[[ $set_rc == 0 && $members == "[0, 1]" ]] && ok ring_set \
    || fail ring_set "exit $set_rc, members $members: $(cat "$WORK/set.err")"

# --- a ring set whose members no longer hold the window's start (256 descriptors each: 256 ms at
# 1000/s per member, 500 ms asked for): each member's overwritten part is said and recorded as a gap
# of that member ---
start_ready_producer smallset:8:20 --threads 2 --count 1500 --rate 1000 || { echo "FAIL setup: small set producer"; exit 1; }
"$EVRING_BIN" record smallset --trigger 'counter == 1200' --before 500ms --after 20ms --max-captures 1 \
    -o "$WORK/smallset" 2>"$WORK/smallset.err" &
smallset_pid=$!
PIDS+=($smallset_pid)
wait_attached $smallset_pid "$EVRING_RING_DIR/smallset"
release_producer
poll 3000 0.01 bash -c "! kill -0 $smallset_pid 2>/dev/null"
wait $smallset_pid
smallset_rc=$?
info=$(evring info "$WORK/smallset/capture-0001.evrec" 2>&1)
gap_members=$(evring watch "$WORK/smallset/capture-0001.evrec" --from oldest --format jsonl 2>&1 >/dev/null |
    grep -oE "member [01] seqno [0-9]+\.\.[0-9]+" | sort -u | wc -l)
if [[ $smallset_rc == 0 ]] && grep -q "member 0's ring had overwritten the events before seqno" "$WORK/smallset.err" &&
    grep -q "member 1's ring had overwritten the events before seqno" "$WORK/smallset.err" &&
    grep -qE "^gaps +2 " <<<"$info" &&
    grep -qE "^capture .*; the ring had overwritten member [01] seqno [0-9]+\.\.[0-9]+, member [01] seqno [0-9]+\.\.[0-9]+$" <<<"$info"; then
    ok ring_set_members_overwritten
else
    fail ring_set_members_overwritten "exit $smallset_rc, $gap_members member gaps: $(cat "$WORK/smallset.err"); $(grep -E '^(gaps|capture)' <<<"$info")"
fi

# --- bad options: exit 2, one line naming the value and the reason ---
touch "$WORK/a-file"
refused() {  # NAME PATTERN ARGS...
    local name=$1 pattern=$2; shift 2
    local out rc
    out=$(evring record "$@" 2>&1); rc=$?
    [[ $rc == 2 ]] && grep -qE -- "$pattern" <<<"$out" && ok "refuses_$name" || fail "refuses_$name" "exit $rc: $out"
}
refused before_without_trigger "--before '2s' goes with --trigger" r --before 2s -o "$WORK/x"
refused negative_before "bad --before '-2s': a duration cannot be negative" r --trigger 'counter == 1' --before -2s -o "$WORK/x"
refused bad_after "bad --after '5 parsecs'" r --trigger 'counter == 1' --after '5 parsecs' -o "$WORK/x"
refused zero_max "bad --max-captures '0'" r --trigger 'counter == 1' --max-captures 0 -o "$WORK/x"
refused dir_is_a_file "-o '.*a-file'.*not a directory" r --trigger 'counter == 1' -o "$WORK/a-file"
refused where_and_trigger "--where and --trigger do not go together" r --trigger 'counter == 1' --where 'counter == 2' -o "$WORK/x"
# A trigger that does not compile (needs a ring with a schema to compile against).
start_producer bad --rate 100 || { echo "FAIL setup: producer for the bad trigger"; exit 1; }
refused bad_trigger "bad --trigger .*countr" bad --trigger 'countr == 1' -o "$WORK/x"
[[ ! -e $WORK/x ]] && ok refusals_write_nothing || fail refusals_write_nothing "$WORK/x was created"

exit_with_results
