#!/usr/bin/env bash
# End-to-end tests of `evring relay`, `evring watch nats://...` and `evring
# mirror` against a real `nats-server -js` on 127.0.0.1 (a port the server
# picks, a temporary store), with the producer example as the ring's writer.
# Needs EVRING_BIN and PRODUCER_BIN; exit 77 (skipped) without nats-server or jq.
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
skip_script_unless "jq is not installed" command -v jq
skip_script_unless "nats-server is not installed (apt-get install nats-server)" command -v nats-server
skip_script_unless "no producer example at $PRODUCER_BIN" test -x "$PRODUCER_BIN"
skip_script_unless "evring built without libnats" "$EVRING_BIN" relay --help

make_work evring-nats-cli
evring() { timeout -k 5 60 "$EVRING_BIN" "$@"; }

start_server() { start_nats_server || { echo "nats-server did not start: $(cat "$WORK/nats-server.log")"; exit 1; }; }
stop_server() { stop_nats_server; }

start_relay() {  # ring stream, then options
    local ring=$1 stream=$2; shift 2
    "$EVRING_BIN" relay "$ring" --to "nats://127.0.0.1:$NATS_PORT" --stream "$stream" "$@" \
        2>>"$WORK/relay-$stream.err" &
    RELAY_PID=$!
    PIDS+=("$RELAY_PID")
}
# The event lines of a jsonl file without what differs between a ring and its copies.
events_of() { jq -c 'select(.seqno != null and .gap == null) | del(.ring, .source, .path)' "$1"; }
# Reads the stream from the oldest event until N events came.
read_stream() { evring watch "nats://127.0.0.1:$NATS_PORT/$1" --from oldest --format jsonl --count "$2"; }
# Waits until stream $1 holds the source's last seqno $2 (via watch --from latest).
wait_stream_at() {
    for _ in $(seq 600); do
        local last
        last=$(timeout -k 5 10 "$EVRING_BIN" watch "nats://127.0.0.1:$NATS_PORT/$1" --from latest --count 1 --format jsonl \
            2>/dev/null | jq -r '.seqno // empty' | tail -1)
        [[ -n $last && $last -ge $2 ]] && return 0
        sleep 0.1
    done
    return 1
}
check_contiguous() {  # file first last: events exactly first..last, in order
    jq -e --argjson f "$2" --argjson l "$3" -s \
        '[.[] | select(.seqno != null and .gap == null)] | length == ($l - $f + 1) and ([.[].seqno] == [range($f; $l + 1)])' \
        "$1" >/dev/null
}

start_server

# Starts a relay of ring $1 into stream $2 while the producer is held (SIGSTOP: the producer of
# start_ready_producer stopped itself before its first event), and lets the producer go once the
# relay is listed as the ring's reader: by then it has chosen where it starts, so however slowly
# it starts (a sanitizer build, a loaded machine) no event is overwritten first.
start_relay_held() {
    local ring=$1 stream=$2
    shift 2
    kill -STOP "$PRODUCER_PID"
    start_relay "$ring" "$stream" "$@"
    wait_readers "$ring" "relay +relay +$RELAY_PID .* alive" || { kill -CONT "$PRODUCER_PID"; return 1; }
    kill -CONT "$PRODUCER_PID"
}

case_relay_watch_and_mirror_carry_every_event_identically() {
    start_producer feed:12:20 --count 3000 --rate 20000 --keep || { fail identical "no ring"; return; }
    start_relay feed FEED
    wait "$PRODUCER_PID"
    wait_stream_at FEED 3000 || { fail identical "stream never reached 3000: $(cat "$WORK/relay-FEED.err")"; return; }
    evring watch feed --from oldest --format jsonl --count 3000 >"$WORK/ring.jsonl" 2>/dev/null
    read_stream FEED 3000 >"$WORK/stream.jsonl" 2>"$WORK/stream.err" ||
        { fail identical "watch nats://: $(cat "$WORK/stream.err")"; return; }
    check_contiguous "$WORK/stream.jsonl" 1 3000 || { fail identical "stream not 1..3000"; return; }
    [[ $(events_of "$WORK/ring.jsonl" | sha256sum) == $(events_of "$WORK/stream.jsonl" | sha256sum) ]] ||
        { fail identical "watch nats:// differs from the ring: $(diff <(events_of "$WORK/ring.jsonl") <(events_of "$WORK/stream.jsonl") | head -3)"; return; }
    timeout -k 5 60 "$EVRING_BIN" mirror "nats://127.0.0.1:$NATS_PORT/FEED" --to mirror1 --count 3000 --keep \
        2>"$WORK/mirror.err" || { fail identical "mirror: $(cat "$WORK/mirror.err")"; return; }
    evring watch mirror1 --from oldest --format jsonl --count 3000 >"$WORK/mirror.jsonl" 2>/dev/null
    [[ $(events_of "$WORK/ring.jsonl" | sha256sum) == $(events_of "$WORK/mirror.jsonl" | sha256sum) ]] ||
        { fail identical "mirror differs: $(diff <(events_of "$WORK/ring.jsonl") <(events_of "$WORK/mirror.jsonl") | head -3)"; return; }
    kill "$RELAY_PID"; wait "$RELAY_PID"
    ok relay_watch_and_mirror_carry_every_event_identically
}

# Publishes $2 messages that are not evring's on subject $1 as another client would (the NATS
# protocol over bash's /dev/tcp), and returns once JetStream acknowledged storing each of them.
publish_foreign() {
    local line acks=0
    exec 5<>"/dev/tcp/127.0.0.1/$NATS_PORT" || return 1
    IFS= read -r -t 5 line <&5  # INFO
    { printf 'CONNECT {"verbose":false,"pedantic":false}\r\nSUB _INBOX.foreign 1\r\n'
      for _ in $(seq "$2"); do printf 'PUB %s _INBOX.foreign 13\r\n{"order": 42}\r\n' "$1"; done; } >&5
    while (( acks < $2 )) && IFS= read -r -t 10 line <&5; do
        [[ $line == MSG* ]] && acks=$((acks + 1))
        [[ $line == -ERR* ]] && break
    done
    exec 5>&-
    (( acks == $2 ))
}

case_messages_not_evrings_stop_neither_readers_nor_a_restarted_relay() {
    # No --count: the producer runs until it is stopped, so it is alive when the relay restarts and
    # events always follow the 2 messages published then, however slow the run (with --count 3000 a
    # sanitized run could finish the feed first: the 2 messages then ended the stream, and a reader
    # of 3000 events stopped before them).
    start_ready_producer stray:12:20 --rate 2000 --keep || { fail stray "no ring"; return; }
    start_relay_held stray STRAY || { fail stray "relay not listed: $(cat "$WORK/relay-STRAY.err")"; return; }
    wait_stream_at STRAY 500 || { fail stray "stream never reached 500: $(cat "$WORK/relay-STRAY.err")"; return; }
    publish_foreign evring.STRAY.orders 3 || { fail stray "could not publish into the stream"; return; }
    wait_stream_at STRAY 1000 || { fail stray "stream never reached 1000: $(cat "$WORK/relay-STRAY.err")"; return; }
    # The stream then ends with another client's messages: the relay starts again past them.
    kill -STOP "$PRODUCER_PID"; kill "$RELAY_PID"; wait "$RELAY_PID" 2>/dev/null
    local held total
    held=$(evring info stray --json | jq -r .last_seqno)
    publish_foreign evring.STRAY.orders 2 || { kill -CONT "$PRODUCER_PID"; fail stray "could not publish into the stream"; return; }
    start_relay stray STRAY
    poll 3000 0.01 has_text "$WORK/relay-STRAY.err" "stream 'STRAY' ends with 2 messages that are not evring's; passed over" ||
        { kill -CONT "$PRODUCER_PID"; fail stray "relay not restarted: $(cat "$WORK/relay-STRAY.err")"; return; }
    kill -CONT "$PRODUCER_PID"
    # 500 events past what was written before the restart, then the producer stops and says how many it wrote.
    wait_stream_at STRAY $((held + 500)) || { fail stray "stream never reached $((held + 500)): $(cat "$WORK/relay-STRAY.err")"; return; }
    kill "$PRODUCER_PID"; wait "$PRODUCER_PID"
    total=$(sed -n 's/^producer: wrote \([0-9]*\) events$/\1/p' "$WORK/producer-stray:12:20.err")
    [[ -n $total ]] || { fail stray "the producer did not say what it wrote: $(cat "$WORK/producer-stray:12:20.err")"; return; }
    wait_stream_at STRAY "$total" || { fail stray "stream never reached $total: $(cat "$WORK/relay-STRAY.err")"; return; }
    read_stream STRAY "$total" >"$WORK/stray.jsonl" 2>"$WORK/stray.err" ||
        { fail stray "watch nats://: $(cat "$WORK/stray.err")"; return; }
    check_contiguous "$WORK/stray.jsonl" 1 "$total" || { fail stray "watch: not exactly 1..$total"; return; }
    [[ $(grep -c "holds messages that are not evring's" "$WORK/stray.err") == 1 ]] &&
        grep -q "(5 messages not evring's skipped)" "$WORK/stray.err" ||
        { fail stray "watch did not report them once and count them: $(cat "$WORK/stray.err")"; return; }
    # 65,536 slots: the mirror ring holds every event however many a slow run wrote.
    timeout -k 5 60 "$EVRING_BIN" mirror "nats://127.0.0.1:$NATS_PORT/STRAY" --to stray-mirror:16:24 --count "$total" --keep \
        2>"$WORK/stray-mirror.err" || { fail stray "mirror: $(cat "$WORK/stray-mirror.err")"; return; }
    grep -q "mirrored $total events (5 messages not evring's skipped)" "$WORK/stray-mirror.err" ||
        { fail stray "mirror summary: $(cat "$WORK/stray-mirror.err")"; return; }
    evring watch stray-mirror --from oldest --format jsonl --count "$total" >"$WORK/stray-mirror.jsonl" 2>/dev/null
    check_contiguous "$WORK/stray-mirror.jsonl" 1 "$total" || { fail stray "mirror ring: not exactly 1..$total"; return; }
    kill "$RELAY_PID"; wait "$RELAY_PID" 2>/dev/null
    ok messages_not_evrings_stop_neither_readers_nor_a_restarted_relay
}

case_relay_killed_and_restarted_duplicates_and_misses_nothing() {
    # 10,000 events a second: the ring holds 1.6 s of them, so a relay slowed by a sanitizer or a
    # loaded machine is not lapped while it runs.
    start_ready_producer kill1:14:22 --count 40000 --rate 10000 --keep || { fail kill "no ring"; return; }
    # Each relay is killed mid-stream; the producer waits while none runs.
    # Mid-stream: once the stream holds part of the events (the relay's
    # progress, not a time, which a loaded machine stretches).
    start_relay_held kill1 KILL1 || { fail kill "relay not listed: $(cat "$WORK/relay-KILL1.err")"; return; }
    wait_stream_at KILL1 5000 || { fail kill "stream never reached 5000: $(cat "$WORK/relay-KILL1.err")"; return; }
    kill -STOP "$PRODUCER_PID"; kill -KILL "$RELAY_PID"; wait "$RELAY_PID" 2>/dev/null
    start_relay_held kill1 KILL1 || { fail kill "relay not listed: $(cat "$WORK/relay-KILL1.err")"; return; }
    wait_stream_at KILL1 15000 || { fail kill "stream never reached 15000: $(cat "$WORK/relay-KILL1.err")"; return; }
    kill -STOP "$PRODUCER_PID"; kill -KILL "$RELAY_PID"; wait "$RELAY_PID" 2>/dev/null
    start_relay_held kill1 KILL1 || { fail kill "relay not listed: $(cat "$WORK/relay-KILL1.err")"; return; }
    wait "$PRODUCER_PID"
    wait_stream_at KILL1 40000 || { fail kill "stream never reached 40000: $(cat "$WORK/relay-KILL1.err")"; return; }
    read_stream KILL1 40000 >"$WORK/kill.jsonl" 2>/dev/null
    check_contiguous "$WORK/kill.jsonl" 1 40000 || { fail kill "not exactly 1..40000 once each"; return; }
    grep -q "resuming" "$WORK/relay-KILL1.err" || { fail kill "no resume: $(cat "$WORK/relay-KILL1.err")"; return; }
    kill "$RELAY_PID"; wait "$RELAY_PID"
    ok relay_killed_and_restarted_duplicates_and_misses_nothing
}

case_server_restarted_mid_stream_loses_nothing() {
    start_ready_producer srv1:14:22 --count 30000 --rate 10000 --keep || { fail server "no ring"; return; }
    start_relay_held srv1 SRV1 || { fail server "relay not listed: $(cat "$WORK/relay-SRV1.err")"; return; }
    wait_stream_at SRV1 5000 || { fail server "stream never reached 5000: $(cat "$WORK/relay-SRV1.err")"; return; }
    # The writer waits while the server is away: the ring (1.6 s of events) must not lap the relay
    # however long the server's restart and the relay's back-off take on a loaded machine.
    kill -STOP "$PRODUCER_PID"
    local written; written=$(evring info srv1 --json | jq -r .last_seqno)
    stop_server
    sleep 0.5   # the outage: the relay must ride out half a second without a server
    start_server
    wait_stream_at SRV1 "$written" || { fail server "stream never caught up with $written: $(cat "$WORK/relay-SRV1.err")"; return; }
    kill -CONT "$PRODUCER_PID"
    wait "$PRODUCER_PID"
    wait_stream_at SRV1 30000 || { fail server "stream never reached 30000: $(cat "$WORK/relay-SRV1.err")"; return; }
    read_stream SRV1 30000 >"$WORK/srv.jsonl" 2>/dev/null
    check_contiguous "$WORK/srv.jsonl" 1 30000 || { fail server "not exactly 1..30000 once each"; return; }
    kill "$RELAY_PID"; wait "$RELAY_PID"
    ok server_restarted_mid_stream_loses_nothing
}

case_paused_relay_lapped_publishes_one_exact_gap() {
    # 256 descriptors: the writer laps a relay held with SIGSTOP. 1,000 events a second: the ring
    # holds a quarter of a second, so a relay that runs (slowed by a sanitizer, on a loaded
    # machine) is not lapped before it is held, which would make a second gap.
    start_ready_producer lap2:8:20 --count 5000 --rate 1000 --keep || { fail lap "no ring"; return; }
    start_relay_held lap2 LAP2 || { fail lap "relay not listed: $(cat "$WORK/relay-LAP2.err")"; return; }
    wait_stream_at LAP2 300 || { fail lap "relay never started: $(cat "$WORK/relay-LAP2.err")"; return; }
    kill -STOP "$RELAY_PID"
    wait "$PRODUCER_PID"
    kill -CONT "$RELAY_PID"
    wait_stream_at LAP2 5000 || { fail lap "no 5000: $(cat "$WORK/relay-LAP2.err")"; return; }
    timeout -k 5 30 "$EVRING_BIN" watch "nats://127.0.0.1:$NATS_PORT/LAP2" --from oldest --format jsonl --until 5000 \
        >"$WORK/lap.jsonl" 2>"$WORK/lap.err"
    local gaps
    gaps=$(grep -c 'overwritten before the relay read them' "$WORK/relay-LAP2.err")
    [[ $gaps == 1 ]] || { fail lap "$gaps gap lines in the relay's log: $(cat "$WORK/relay-LAP2.err")"; return; }
    # Every seqno from the stream's first to 5000 is an event or inside the one gap, exactly once.
    {
        local range first last events start
        # The relay started at the ring's oldest event when it attached: the stream's first.
        start=$(jq -s '[.[] | select(.seqno != null and .gap == null) | .seqno] | first' "$WORK/lap.jsonl")
        range=$(grep -o 'seqno [0-9]*\.\.[0-9]* overwritten' "$WORK/relay-LAP2.err" | grep -o '[0-9]*\.\.[0-9]*')
        first=${range%%..*}; last=${range##*..}
        events=$(jq -s '[.[] | select(.seqno != null and .gap == null) | .seqno] | length' "$WORK/lap.jsonl")
        [[ $((events + last - first + 1)) == $((5000 - start + 1)) ]] ||
            { fail lap "events $events + gap $range != 5000 ($(head -3 "$WORK/lap.err"))"; return; }
        jq -e -s --argjson s "$start" --argjson f "$first" --argjson l "$last" \
            '[.[] | select(.seqno != null and .gap == null) | .seqno] == ([range($s; $f)] + [range($l + 1; 5001)])' \
            "$WORK/lap.jsonl" >/dev/null || { fail lap "events around the gap $range are not exact"; return; }
    }
    kill "$RELAY_PID"; wait "$RELAY_PID"
    ok paused_relay_lapped_publishes_one_exact_gap
}

# The same lapped relay with --heal beside `evring record` (docs/healing.md): what the writer
# overwrote ahead of it comes from the recording, so the stream holds 1..5000, no gap.
case_paused_relay_lapped_heals_from_the_recording() {
    start_ready_producer heal2:8:20 --count 5000 --rate 1000 --keep || { fail relay_heal "no ring"; return; }
    "$EVRING_BIN" record heal2 --from oldest -o "$WORK/heal2.evrec" 2>"$WORK/heal2-record.err" &
    local recorder=$!
    PIDS+=("$recorder")
    wait_readers heal2 "record +record +$recorder .* alive" || { fail relay_heal "the recorder is not listed"; return; }
    start_relay_held heal2 HEAL2 --heal || { fail relay_heal "relay not listed: $(cat "$WORK/relay-HEAL2.err")"; return; }
    wait_stream_at HEAL2 300 || { fail relay_heal "relay never started: $(cat "$WORK/relay-HEAL2.err")"; return; }
    kill -STOP "$RELAY_PID"
    wait "$PRODUCER_PID"
    kill -CONT "$RELAY_PID"
    wait_stream_at HEAL2 5000 || { fail relay_heal "no 5000: $(cat "$WORK/relay-HEAL2.err")"; return; }
    kill "$RELAY_PID"; wait "$RELAY_PID"
    kill -INT "$recorder" 2>/dev/null; wait "$recorder"
    evring watch "nats://127.0.0.1:$NATS_PORT/HEAL2" --from oldest --format jsonl --until 5000 >"$WORK/heal2.jsonl" 2>/dev/null
    check_contiguous "$WORK/heal2.jsonl" 1 5000 ||
        { fail relay_heal "the stream is not 1..5000: $(grep -E 'lost|heal' "$WORK/relay-HEAL2.err" | head -3)"; return; }
    grep -qE "relayed 5000 events and 0 gap messages .* \([0-9]+ of the events read from the recording: the relay was lapped\)" \
        "$WORK/relay-HEAL2.err" || { fail relay_heal "summary: $(tail -2 "$WORK/relay-HEAL2.err")"; return; }
    ok paused_relay_lapped_heals_from_the_recording
}

case_relay_wait_relays_a_ring_created_after_it_started() {
    start_relay late LATE --wait
    wait_for_text "$WORK/relay-LATE.err" "waiting for ring 'late' to be created" ||
        { fail relay_wait "no waiting notice: $(cat "$WORK/relay-LATE.err")"; return; }
    start_producer late:12:20 --count 500 --rate 5000 --keep || { fail relay_wait "no ring"; return; }
    wait "$PRODUCER_PID"
    wait_stream_at LATE 500 || { fail relay_wait "stream never reached 500: $(cat "$WORK/relay-LATE.err")"; return; }
    read_stream LATE 500 >"$WORK/late.jsonl" 2>/dev/null
    check_contiguous "$WORK/late.jsonl" 1 500 || { fail relay_wait "stream not 1..500"; return; }
    kill "$RELAY_PID"; wait "$RELAY_PID"
    ok relay_wait_relays_a_ring_created_after_it_started
}

# Once the stream is open the relay says, in one line, what an acknowledged event is still
# exposed to (docs/distributed.md, "What 'nothing lost' holds under"); --server-syncs, the
# operator's word that the server syncs every write, silences it for file storage.
case_relay_says_what_an_acknowledged_event_is_exposed_to() {
    start_producer dur:10:20 --count 50 --keep || { fail durability "no ring"; return; }
    wait "$PRODUCER_PID"
    # "$EVRING_BIN", not the evring function: a function in the background is a subshell, and
    # killing it would leave its relay running until the function's 60 s timeout.
    "$EVRING_BIN" relay dur --to "nats://127.0.0.1:$NATS_PORT" --stream DUR --from oldest --no-register 2>"$WORK/dur.err" &
    local relay=$!
    PIDS+=("$relay")
    wait_stream_at DUR 50 || { fail durability "stream never reached 50: $(cat "$WORK/dur.err")"; return; }
    kill "$relay"; wait "$relay" 2>/dev/null
    [[ $(grep -c "^evring: stream 'DUR': nats-server acknowledges a message before it syncs it to disk" "$WORK/dur.err") == 1 ]] &&
        grep -q "sync_interval: always" "$WORK/dur.err" || { fail durability "no warning, or not once: $(cat "$WORK/dur.err")"; return; }
    "$EVRING_BIN" relay dur --to "nats://127.0.0.1:$NATS_PORT" --stream DUR2 --from oldest --no-register --server-syncs \
        2>"$WORK/dur2.err" &
    relay=$!
    PIDS+=("$relay")
    wait_stream_at DUR2 50 || { fail durability "stream DUR2 never reached 50: $(cat "$WORK/dur2.err")"; return; }
    kill "$relay"; wait "$relay" 2>/dev/null
    grep -q "syncs it to disk" "$WORK/dur2.err" && { fail durability "--server-syncs still warns: $(cat "$WORK/dur2.err")"; return; }
    ok relay_says_what_an_acknowledged_event_is_exposed_to
}

case_bad_input_is_refused_clearly() {
    start_producer bad1:10:20 --count 10 --keep || { fail bad "no ring"; return; }
    wait "$PRODUCER_PID"
    # Nothing listens on port 1.
    evring relay bad1 --to nats://127.0.0.1:1 --stream B 2>"$WORK/e1"; local a=$?
    [[ $a == 1 ]] && grep -q "^evring: .*127.0.0.1:1" "$WORK/e1" || { fail bad "unreachable: exit $a $(cat "$WORK/e1")"; return; }
    evring relay bad1 --to http://x --stream B 2>"$WORK/e2"; local b=$?
    [[ $b == 2 ]] && grep -q "^evring: bad --to" "$WORK/e2" || { fail bad "url: exit $b $(cat "$WORK/e2")"; return; }
    evring relay bad1 --to "nats://127.0.0.1:$NATS_PORT" --stream 'a.b' 2>"$WORK/e3"; local c=$?
    [[ $c == 2 ]] || { fail bad "stream name: exit $c $(cat "$WORK/e3")"; return; }
    evring watch "nats://127.0.0.1:$NATS_PORT" --count 1 2>"$WORK/e4"; local d=$?
    [[ $d == 1 ]] && grep -q "names no stream" "$WORK/e4" || { fail bad "no stream: exit $d $(cat "$WORK/e4")"; return; }
    evring watch "nats://127.0.0.1:$NATS_PORT/NOSUCH" --count 1 2>"$WORK/e5"; local e=$?
    [[ $e == 1 ]] && grep -q "NOSUCH" "$WORK/e5" || { fail bad "missing stream: exit $e $(cat "$WORK/e5")"; return; }
    # A stream holding another ring's events (FEED carries 'feed').
    evring relay bad1 --to "nats://127.0.0.1:$NATS_PORT" --stream FEED --subject evring.FEED 2>"$WORK/e6"; local f=$?
    [[ $f == 1 ]] && grep -qi "another ring\|other ring\|feed" "$WORK/e6" || { fail bad "other ring: exit $f $(cat "$WORK/e6")"; return; }
    evring relay bad1 --to "nats://127.0.0.1:$NATS_PORT" --stream R9 --replicas 9 2>"$WORK/e7"; local g=$?
    [[ $g == 2 ]] && grep -q "^evring: bad --replicas '9'" "$WORK/e7" || { fail bad "replicas: exit $g $(cat "$WORK/e7")"; return; }
    # Three replicas on a server that is not in a cluster: the server's refusal, in one line.
    evring relay bad1 --to "nats://127.0.0.1:$NATS_PORT" --stream R3 --replicas 3 2>"$WORK/e8"; local h=$?
    [[ $h == 1 && $(wc -l <"$WORK/e8") == 1 ]] && grep -q "^evring: creating stream 'R3'.*replicas" "$WORK/e8" ||
        { fail bad "replicas on one server: exit $h $(cat "$WORK/e8")"; return; }
    evring relay bad1 --to "nats://127.0.0.1:$NATS_PORT,,x" --stream B 2>"$WORK/e9"; local i=$?
    [[ $i == 2 ]] && grep -q "an empty server in the list" "$WORK/e9" || { fail bad "list: exit $i $(cat "$WORK/e9")"; return; }
    ok bad_input_is_refused_clearly
}

case_relay_and_mirror_are_registered_readers_while_they_run() {
    start_producer seen:12:20 --rate 2000 --keep || { fail registered "no ring"; return; }
    local producer=$PRODUCER_PID
    start_relay seen SEEN
    local relay=$RELAY_PID
    wait_readers seen "relay +relay +$relay .* alive .*-> .*127.0.0.1:$NATS_PORT.* SEEN" ||
        { fail registered "relay $relay not listed: $(evring readers seen 2>&1)"; return; }
    evring readers seen --json | jq -e "select(.pid == $relay) | .kind == \"relay\" and .lag_events != null" \
        >/dev/null || { fail registered "--json lacks the relay"; return; }
    # mirror reads any source through open_source; from a live ring it is that ring's reader.
    "$EVRING_BIN" mirror seen --to seencopy 2>"$WORK/mirror-seen.err" &
    local mirror=$!
    PIDS+=("$mirror")
    wait_readers seen "mirror +mirror +$mirror .* alive" ||
        { fail registered "mirror $mirror not listed: $(cat "$WORK/mirror-seen.err")"; return; }
    # --no-register: relaying, yet not listed.
    start_relay seen SEENQUIET --no-register
    local quiet=$RELAY_PID
    wait_stream_at SEENQUIET 1 || { fail registered "quiet relay relayed nothing"; return; }
    evring readers seen --no-reclaim | grep -q " $quiet " && { fail registered "relay --no-register is listed"; return; }
    kill "$relay" "$mirror" "$quiet"; wait "$relay" "$mirror" "$quiet" 2>/dev/null
    local after; after=$(evring readers seen --no-reclaim)
    grep -qE " ($relay|$mirror) " <<<"$after" && { fail registered "left entries after a clean exit: $after"; return; }
    grep -q "mirroring .* into ring file" "$WORK/mirror-seen.err" || { fail registered "mirror: $(cat "$WORK/mirror-seen.err")"; return; }
    kill "$producer"; wait "$producer" 2>/dev/null
    ok relay_and_mirror_are_registered_readers_while_they_run
}

case_watch_nats_decodes_the_relayed_schema_by_name() {
    # The producer's ring embeds schemas/demo.toml; the relay publishes it to the stream.
    start_producer typed:12:20 --count 2000 --rate 20000 --keep || { fail decoded "no ring"; return; }
    start_relay typed TYPED
    wait "$PRODUCER_PID"
    wait_stream_at TYPED 2000 || { fail decoded "stream never reached 2000: $(cat "$WORK/relay-TYPED.err")"; return; }
    read_stream TYPED 2000 >"$WORK/typed.jsonl" 2>"$WORK/typed.err" || { fail decoded "watch: $(cat "$WORK/typed.err")"; return; }
    jq -e -s 'length == 2000 and all(.[]; (.type_name == "QUOTE" or .type_name == "TRADE")
              and (.fields.counter | type) == "number" and .fields.counter == .seqno - 1
              and (.fields.name | IN("ACME", "GLOBEX", "INITECH", "UMBRELLA")) and (has("decode_error") | not))' \
        "$WORK/typed.jsonl" >/dev/null || { fail decoded "fields by name: $(head -1 "$WORK/typed.jsonl")"; return; }
    # The stream's fields equal the ring's own decoding, event for event.
    evring watch typed --from oldest --format jsonl --count 2000 2>/dev/null |
        jq -c '{seqno, type_name, fields}' >"$WORK/typed-ring.fields"
    jq -c '{seqno, type_name, fields}' "$WORK/typed.jsonl" >"$WORK/typed-stream.fields"
    cmp -s "$WORK/typed-ring.fields" "$WORK/typed-stream.fields" ||
        { fail decoded "stream fields differ from the ring's: $(diff "$WORK/typed-ring.fields" "$WORK/typed-stream.fields" | head -3)"; return; }
    # Text names the type and its fields too.
    timeout -k 5 30 "$EVRING_BIN" watch "nats://127.0.0.1:$NATS_PORT/TYPED" --from oldest --count 1 2>/dev/null |
        grep -Eq '^[0-9T:.-]+Z seq=1 (QUOTE|TRADE) counter=0 price=[0-9]+ ' ||
        { fail decoded "text: $(timeout -k 5 30 "$EVRING_BIN" watch "nats://127.0.0.1:$NATS_PORT/TYPED" --from oldest --count 1 2>&1)"; return; }
    kill "$RELAY_PID"; wait "$RELAY_PID"
    ok watch_nats_decodes_the_relayed_schema_by_name
}

# --type NAME on a nats:// source: by the schema's name, only that type, every one of it. One
# message per event (--batch 1) lets the server filter by subject; batches are filtered by the reader.
case_watch_nats_type_name_prints_only_that_type() {
    start_producer only:12:20 --count 2000 --rate 20000 --keep || { fail type_filter "no ring"; return; }
    start_relay only ONLY1 --batch 1
    local relay1=$RELAY_PID
    start_relay only ONLYB
    local relayb=$RELAY_PID
    wait "$PRODUCER_PID"
    evring watch only --from oldest --format jsonl --count 2000 >"$WORK/only-ring.jsonl" 2>/dev/null
    local trades expected
    trades=$(jq -s '[.[] | select(.type_name == "TRADE")] | length' "$WORK/only-ring.jsonl")
    [[ $trades -gt 0 && $trades -lt 2000 ]] || { fail type_filter "the ring holds $trades TRADE events of 2000"; return; }
    expected=$(jq -c 'select(.type_name == "TRADE") | {seqno, type_name, fields}' "$WORK/only-ring.jsonl")
    for stream in ONLY1 ONLYB; do
        wait_stream_at "$stream" 2000 || { fail type_filter "$stream never reached 2000"; return; }
        timeout -k 5 30 "$EVRING_BIN" watch "nats://127.0.0.1:$NATS_PORT/$stream" --from oldest --format jsonl --type TRADE \
            --count "$trades" >"$WORK/only-$stream.jsonl" 2>"$WORK/only-$stream.err" ||
            { fail type_filter "$stream: $(cat "$WORK/only-$stream.err")"; return; }
        jq -e -s --argjson n "$trades" '[.[] | select(.seqno != null and .gap == null)] | length == $n and
               all(.[]; .type_name == "TRADE")' "$WORK/only-$stream.jsonl" >/dev/null ||
            { fail type_filter "$stream: not exactly the $trades TRADE events: $(head -2 "$WORK/only-$stream.jsonl")"; return; }
        [[ $(jq -c 'select(.seqno != null and .gap == null) | {seqno, type_name, fields}' "$WORK/only-$stream.jsonl") == "$expected" ]] ||
            { fail type_filter "$stream: TRADE events differ from the ring's"; return; }
    done
    timeout -k 5 30 "$EVRING_BIN" watch "nats://127.0.0.1:$NATS_PORT/ONLY1" --from oldest --type NO_SUCH_TYPE --count 1 \
        2>"$WORK/only-bad.err"; local rc=$?
    [[ $rc == 2 || $rc == 1 ]] && grep -q "^evring: .*NO_SUCH_TYPE" "$WORK/only-bad.err" ||
        { fail type_filter "unknown type name: exit $rc $(cat "$WORK/only-bad.err")"; return; }
    # relay resolves --type and --flow names by the ring's schema, as watch does.
    timeout -k 5 30 "$EVRING_BIN" relay only --to "nats://127.0.0.1:$NATS_PORT/ONLYX" --type NO_SUCH_TYPE 2>"$WORK/relay-bad.err"
    rc=$?
    [[ $rc == 2 ]] && grep -q "^evring: bad --type 'NO_SUCH_TYPE': not an event type of schema demo" "$WORK/relay-bad.err" ||
        { fail type_filter "relay --type NO_SUCH_TYPE: exit $rc $(cat "$WORK/relay-bad.err")"; return; }
    timeout -k 5 30 "$EVRING_BIN" relay only --to "nats://127.0.0.1:$NATS_PORT/ONLYX" --flow nosuch=1 2>"$WORK/relay-bad.err"
    rc=$?
    [[ $rc == 2 ]] && grep -q "^evring: bad --flow 'nosuch=1': not a flow tag of schema demo" "$WORK/relay-bad.err" ||
        { fail type_filter "relay --flow nosuch=1: exit $rc $(cat "$WORK/relay-bad.err")"; return; }
    kill "$relay1" "$relayb"; wait "$relay1" "$relayb" 2>/dev/null
    ok watch_nats_type_name_prints_only_that_type
}

# A writer restarting under the relayed name: the new instance is relayed from
# its seqno 1 (regression, found by scripts/soak: it was announced from where
# the relay first looked, and the events before that were in neither the
# stream nor a gap).
case_writer_restarted_under_a_relay_is_relayed_from_its_first_event() {
    start_producer renew:14:22 --count 2000 --rate 20000 --keep || { fail renew "no ring"; return; }
    start_relay renew RENEW
    wait "$PRODUCER_PID"
    wait_stream_at RENEW 2000 || { fail renew "stream never reached 2000: $(cat "$WORK/relay-RENEW.err")"; return; }
    start_producer renew:14:22 --count 3000 --rate 20000 --keep || { fail renew "no second ring"; return; }
    wait "$PRODUCER_PID"
    read_stream RENEW 5000 >"$WORK/renew.jsonl" 2>"$WORK/renew.err"
    jq -e -s '[.[] | select(.seqno != null and .gap == null) | .seqno] | .[2000:] == [range(1; 3001)]' \
        "$WORK/renew.jsonl" >/dev/null || { fail renew "the new instance is not 1..3000: $(cat "$WORK/renew.err")"; return; }
    kill "$RELAY_PID"; wait "$RELAY_PID"
    ok writer_restarted_under_a_relay_is_relayed_from_its_first_event
}

# A ring set relayed (docs/distributed.md, "Ring sets"): read back merged with
# every event's member, the same events as watching the set itself, and
# mirrored into one ring whose stderr lines name the members.
case_relayed_set_is_read_back_merged_with_its_members() {
    "$PRODUCER_BIN" fleet:12:20 --threads 2 --count 2000 --keep 2>"$WORK/producer-fleet.err" ||
        { fail set "producer: $(cat "$WORK/producer-fleet.err")"; return; }
    # A set's relay follows its name, as a ring's does: once the set is read
    # to its end (its writer exited) it waits for a new set under the name.
    start_relay fleet FLEET
    poll 1000 0.02 grep -q "waiting for a new ring set named 'fleet'" "$WORK/relay-FLEET.err" ||
        { fail set "relay: $(cat "$WORK/relay-FLEET.err")"; return; }
    kill "$RELAY_PID"; wait "$RELAY_PID"
    evring watch fleet --from oldest --format jsonl >"$WORK/set.jsonl" 2>/dev/null
    read_stream FLEET 4000 >"$WORK/set-stream.jsonl" 2>"$WORK/set-stream.err" ||
        { fail set "watch nats://: $(cat "$WORK/set-stream.err")"; return; }
    jq -e -s '[.[] | select(.seqno != null and .gap == null)] as $e | ($e | length) == 4000 and
              ([$e[] | select(.member == 0)] | length) == 2000 and ([$e[] | select(.member == 1)] | length) == 2000 and
              ([$e[].record_epoch_nanos] | . == sort)' "$WORK/set-stream.jsonl" >/dev/null ||
        { fail set "not 2 x 2000 events with members in time order: $(head -2 "$WORK/set-stream.jsonl")"; return; }
    [[ $(events_of "$WORK/set.jsonl" | sha256sum) == $(events_of "$WORK/set-stream.jsonl" | sha256sum) ]] ||
        { fail set "watch nats:// differs from watching the set: $(diff <(events_of "$WORK/set.jsonl") <(events_of "$WORK/set-stream.jsonl") | head -3)"; return; }
    # --from MEMBER:SEQNO on the stream starts where it does on the set itself.
    evring watch fleet --from 1:1500 --count 5 --format jsonl >"$WORK/set-from.jsonl" 2>/dev/null
    evring watch "nats://127.0.0.1:$NATS_PORT/FLEET" --from 1:1500 --count 5 --format jsonl \
        >"$WORK/set-stream-from.jsonl" 2>"$WORK/set-stream-from.err"
    # Member 1 starts at 1500 and nothing earlier comes first (an event of member 0 stamped the
    # same nanosecond may: ties are merged member 0 first, and a slowed run makes them likelier).
    jq -e -s '([.[] | select(.member == 1)][0]) as $f | $f.seqno == 1500 and
              all(.[]; .record_epoch_nanos >= $f.record_epoch_nanos)' "$WORK/set-stream-from.jsonl" >/dev/null &&
        [[ "$(events_of "$WORK/set-from.jsonl")" == "$(events_of "$WORK/set-stream-from.jsonl")" ]] ||
        { fail set "--from 1:1500 on the stream differs from on the set: $(diff <(events_of "$WORK/set-from.jsonl") <(events_of "$WORK/set-stream-from.jsonl")) $(cat "$WORK/set-stream-from.err")"; return; }
    evring watch "nats://127.0.0.1:$NATS_PORT/FLEET" --from 1500 --count 1 >/dev/null 2>"$WORK/set-plain.err"
    grep -q "MEMBER:SEQNO" "$WORK/set-plain.err" ||
        { fail set "a plain seqno on a set's stream: $(cat "$WORK/set-plain.err")"; return; }
    timeout -k 5 60 "$EVRING_BIN" mirror "nats://127.0.0.1:$NATS_PORT/FLEET" --to fleetcopy --count 4000 --keep \
        2>"$WORK/set-mirror.err" || { fail set "mirror: $(cat "$WORK/set-mirror.err")"; return; }
    grep -q "comes from a ring set: the mirror holds its merged events without their member ids" \
        "$WORK/set-mirror.err" || { fail set "the mirror does not say it drops member ids: $(head -3 "$WORK/set-mirror.err")"; return; }
    [[ $(evring watch fleetcopy --from oldest --format jsonl 2>/dev/null | jq -c 'select(.seqno != null and .gap == null)' | wc -l) == 4000 ]] ||
        { fail set "the mirror does not hold 4000 events"; return; }
    ok relayed_set_is_read_back_merged_with_its_members
}

# A set its writer removes (a clean close) and a new set under the name
# (docs/ring-sets.md): the relay waits for it, as for a ring, and announces
# it; what the new set's members overwrote before the relay opened them is a
# gap of each member, read back naming the member.
case_relay_follows_a_set_re_created_under_its_name() {
    # The producer stops itself once its set is made, and goes on once the relay
    # has both members mapped: however slowly the relay starts, it reads the
    # first set before that set's clean close removes it.
    start_ready_producer reset:10:20 --threads 2 --count 500 --rate 2000 --remove || { fail reset_set "no set"; return; }
    local producer=$PRODUCER_PID
    start_relay reset RESET
    wait_attached "$RELAY_PID" "$EVRING_RING_DIR/reset/m0" && wait_attached "$RELAY_PID" "$EVRING_RING_DIR/reset/m1" ||
        { release_producer; fail reset_set "the relay did not open the set: $(cat "$WORK/relay-RESET.err")"; return; }
    release_producer
    wait "$producer"
    poll 1000 0.01 grep -q "waiting for a new ring set named 'reset'" "$WORK/relay-RESET.err" ||
        { fail reset_set "the relay does not wait for a new set: $(head -c 2000 "$WORK/relay-RESET.err")"; return; }
    # Kept, and 3000 events a member into 1024 slots while the relay is held
    # (SIGSTOP), so that it opens the set once they are written.
    kill -STOP "$RELAY_PID"
    "$PRODUCER_BIN" reset:10:20 --threads 2 --count 3000 2>"$WORK/producer-reset2.err" ||
        { kill -CONT "$RELAY_PID"; fail reset_set "second producer: $(cat "$WORK/producer-reset2.err")"; return; }
    kill -CONT "$RELAY_PID"
    read_stream RESET $((1000 + 2 * 1024)) >"$WORK/reset.jsonl" 2>"$WORK/reset.err" ||
        { fail reset_set "watch nats://: $(cat "$WORK/reset.err")"; return; }
    jq -e -s '[.[] | select(.seqno != null and .gap == null)] as $e |
              ([$e[:1000][] | .member] | map(select(. == 0)) | length) == 500 and
              ([$e[1000:][] | select(.member == 0) | .seqno] == [range(1977; 3001)]) and
              ([$e[1000:][] | select(.member == 1) | .seqno] == [range(1977; 3001)])' "$WORK/reset.jsonl" >/dev/null ||
        { fail reset_set "not the first set's 1000 events then each member's last 1024: $(head -c 1000 "$WORK/reset.err")"; return; }
    for m in 0 1; do
        grep -q "1976 events of the new ring (member $m seqno 1..1976) were overwritten before it could be opened" \
            "$WORK/reset.err" || { fail reset_set "no gap naming member $m: $(cat "$WORK/reset.err")"; return; }
    done
    kill "$RELAY_PID"; wait "$RELAY_PID"
    rm -rf "${EVRING_RING_DIR:?}/reset"
    ok relay_follows_a_set_re_created_under_its_name
}

case_relay_watch_and_mirror_carry_every_event_identically
case_messages_not_evrings_stop_neither_readers_nor_a_restarted_relay
case_relay_and_mirror_are_registered_readers_while_they_run
case_watch_nats_decodes_the_relayed_schema_by_name
case_watch_nats_type_name_prints_only_that_type
case_relay_killed_and_restarted_duplicates_and_misses_nothing
case_server_restarted_mid_stream_loses_nothing
case_paused_relay_lapped_publishes_one_exact_gap
case_paused_relay_lapped_heals_from_the_recording
case_writer_restarted_under_a_relay_is_relayed_from_its_first_event
case_relay_wait_relays_a_ring_created_after_it_started
case_relayed_set_is_read_back_merged_with_its_members
case_relay_says_what_an_acknowledged_event_is_exposed_to
case_relay_follows_a_set_re_created_under_its_name
case_bad_input_is_refused_clearly
exit_with_results
