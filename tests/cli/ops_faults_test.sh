#!/usr/bin/env bash
# The operator's view while things go wrong (issue 32; docs/operations.md):
# a stopped reader's loss shows while it is being lapped; a removed ring is
# down in the metrics. Needs EVRING_BIN, PRODUCER_BIN and jq.
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
skip_script_unless "no producer example at $PRODUCER_BIN (-Dexamples=false?)" test -x "$PRODUCER_BIN"
skip_script_unless "jq is not installed (apt-get install jq)" command -v jq
make_work evring-ops-faults-test
KILL_SIGNAL=KILL

evring() { timeout 30 "$EVRING_BIN" "$@"; }

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
    scrape() { exec 3<>"/dev/tcp/127.0.0.1/$port"; printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3; timeout 10 cat <&3; exec 3<&-; }
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

test_a_stopped_readers_loss_shows_while_it_is_lapped
test_a_removed_ring_is_down_in_the_metrics
exit_with_results
