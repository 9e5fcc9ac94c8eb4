#!/usr/bin/env bash
# Named readers in operations (docs/named-readers.md, "Operations"): `evring
# metrics` exports each named reader's position, lag and last commit (checked
# by promtool when installed), and `evring gc --delete` never removes a named
# reader's state: positions live in the state directory, which gc does not
# touch. Each case prints "ok <name>", "FAIL <name>: <why>" or "skip <name>: <why>".
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
skip_script_unless "no producer example at $PRODUCER_BIN (-Dexamples=false?)" test -x "$PRODUCER_BIN"
make_work evring-named-metrics-test
export EVRING_STATE_DIR="$WORK/state"

evring() { timeout -k 5 60 "$EVRING_BIN" "$@"; }

case_metrics_export_named_readers() {
    "$PRODUCER_BIN" kept:12:20 --count 100 --keep 2>/dev/null || { fail metrics "producer failed"; return; }
    evring watch kept --name m --from oldest --count 40 >/dev/null 2>"$WORK/w.err" ||
        { fail metrics "watch: $(cat "$WORK/w.err")"; return; }
    evring metrics kept >"$WORK/metrics.txt" 2>"$WORK/metrics.err" ||
        { fail metrics "metrics: $(cat "$WORK/metrics.err")"; return; }
    local want
    for want in '^evring_named_reader_position\{ring="kept",named_reader="m"\} 40$' \
        '^evring_named_reader_lag_events\{ring="kept",named_reader="m"\} 60$' \
        '^# TYPE evring_named_reader_last_commit_timestamp_seconds gauge$' \
        '^evring_named_reader_last_commit_timestamp_seconds\{ring="kept",named_reader="m"\} [0-9][0-9.e+]*$'; do
        grep -qE "$want" "$WORK/metrics.txt" || { fail metrics "no line matching $want"; return; }
    done
    # The commit time is the position file's, within the last 10 minutes.
    local committed now
    committed=$(grep -E '^evring_named_reader_last_commit_timestamp_seconds' "$WORK/metrics.txt" | awk '{printf "%d", $2}')
    now=$(date +%s)
    (( committed <= now && committed > now - 600 )) || { fail metrics "commit time $committed, now $now"; return; }
    ok metrics_export_named_readers
    if command -v promtool >/dev/null; then
        promtool check metrics <"$WORK/metrics.txt" >"$WORK/promtool.out" 2>&1 &&
            ok metrics_named_promtool || fail metrics_named_promtool "$(head -3 "$WORK/promtool.out")"
    else
        skip metrics_named_promtool "promtool is not installed (apt-get install prometheus)"
    fi
}

# A new ring instance at the name: the position (of the old instance) is
# exported, its lag is not (the reader starts the new instance at its oldest).
case_new_instance_has_no_lag() {
    evring rm kept >/dev/null 2>&1 || rm -f "$EVRING_RING_DIR/kept"
    "$PRODUCER_BIN" kept:12:20 --count 10 --keep 2>/dev/null || { fail new_instance "producer failed"; return; }
    evring metrics kept >"$WORK/m2.txt" 2>/dev/null || { fail new_instance "metrics failed"; return; }
    grep -qE '^evring_named_reader_position\{ring="kept",named_reader="m"\} 40$' "$WORK/m2.txt" ||
        { fail new_instance "no position"; return; }
    grep -q '^evring_named_reader_lag_events' "$WORK/m2.txt" && { fail new_instance "a lag for another instance"; return; }
    ok new_instance_has_no_lag
}

case_gc_leaves_named_state() {
    evring gc --delete >"$WORK/gc.out" 2>&1 || { fail gc "gc: $(cat "$WORK/gc.out")"; return; }
    [[ -f $EVRING_STATE_DIR/m.pos && -f $EVRING_STATE_DIR/m.lock ]] || { fail gc "the position or lock is gone"; return; }
    [[ -e $EVRING_RING_DIR/kept ]] || { fail gc "gc removed the kept ring (not debris)"; return; }
    evring readers --named >"$WORK/readers.out" 2>&1 || { fail gc "readers: $(cat "$WORK/readers.out")"; return; }
    grep -qE '^m +40 ' "$WORK/readers.out" || { fail gc "readers --named: $(cat "$WORK/readers.out")"; return; }
    ok gc_leaves_named_state
}

case_metrics_export_named_readers
case_new_instance_has_no_lag
case_gc_leaves_named_state
exit_with_results
