#!/usr/bin/env bash
# `evring metrics --listen` under hostile clients (docs/operations.md, "Serving
# metrics"; tools/evring/ops/metrics_guard.hpp): a client that never stops
# trickling its request head is closed at the request's 5 s bound; 300 slow
# clients (more than the 256-connection cap), reconnecting as soon as they are
# dropped, never keep a scrape from being answered within 4 s (12 ms here
# unloaded; 2.04 s once with the whole suite and a sanitizer build beside it:
# the evicted clients reconnect in a storm); after a flood of
# 2,000 connections none stays open; with 400 connections held open, SIGTERM
# still ends the server within a second. Clients: http_clients.py, 127.0.0.1
# only. Needs EVRING_BIN, PRODUCER_BIN and python3.
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
skip_script_unless "no producer example at $PRODUCER_BIN (-Dexamples=false?)" test -x "$PRODUCER_BIN"
skip_script_unless "python3 is not installed" command -v python3
make_work evring-metrics-server-test
KILL_SIGNAL=KILL
CLIENTS="$(dirname "${BASH_SOURCE[0]}")/http_clients.py"
ulimit -n 4096 2>/dev/null  # 300 slow clients and 400 held connections, in one process each

"$PRODUCER_BIN" feed:12:20 --rate 1000 2>"$WORK/producer.err" &
PIDS+=($!)
poll 300 0.02 "$EVRING_BIN" info feed || { echo "FAIL setup: the producer did not create the ring"; exit 1; }

# Starts a server on a port of its choosing: SERVER and PORT.
start_server() {
    "$EVRING_BIN" metrics feed --listen 127.0.0.1:0 2>"$WORK/serve-$1.err" &
    SERVER=$!
    PIDS+=("$SERVER")
    PORT=""
    local _
    for _ in $(seq 200); do
        PORT=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$WORK/serve-$1.err")
        [[ -n $PORT ]] && return 0
        sleep 0.05
    done
    return 1
}

# Whether the decimal $1 is below $2.
less_than() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 < b + 0) }'; }

# Connections the server holds open (its sockets less the listening one).
open_connections() { echo $(( $(find "/proc/$SERVER/fd" -lname 'socket:*' 2>/dev/null | wc -l) - 1 )); }
none_open() { [[ $(open_connections) -le 0 ]]; }

test_a_trickling_client_is_closed_at_the_request_bound() {
    start_server trickle || { fail trickle "server did not say its port"; return; }
    # One byte every 0.5 s: never idle, so only a bound on the whole request ends it.
    local closed
    closed=$(timeout -k 5 30 python3 "$CLIENTS" trickle "$PORT" 0.5 15)
    kill "$SERVER"; wait "$SERVER" 2>/dev/null
    [[ $closed != open && -n $closed ]] && less_than "$closed" 8 \
        || { fail trickle "a client trickling its request head was closed after '$closed' s (bound 5 s)"; return; }
    echo "a trickling client was closed after $closed s"
    ok a_trickling_client_is_closed_at_the_request_bound
}

test_slow_clients_never_hold_up_a_scrape() {
    start_server slow || { fail slow_clients "server did not say its port"; return; }
    local out scrapes failed slowest
    out=$(timeout -k 5 120 python3 "$CLIENTS" slowloris "$PORT" 300 2 8)
    echo "300 slow clients: $out"
    local connected
    read -r _ scrapes _ failed _ slowest _ _ _ connected <<<"$out"
    kill "$SERVER"; wait "$SERVER" 2>/dev/null
    [[ -n $scrapes ]] && (( connected == 300 && scrapes >= 10 && failed == 0 )) && less_than "$slowest" 4.0 \
        || { fail slow_clients "scrapes among 300 slow clients: $out"; return; }
    ok slow_clients_never_hold_up_a_scrape
}

test_after_a_flood_nothing_stays_open_and_sigterm_is_prompt() {
    start_server flood || { fail flood "server did not say its port"; return; }
    local out
    out=$(timeout -k 5 120 python3 "$CLIENTS" flood "$PORT" 2000)
    echo "flood: $out"
    poll 300 0.01 none_open || { fail flood "$(open_connections) connections still open 3 s after a flood of 2000 closed ones"; return; }
    # Connections held open beyond the cap: SIGTERM must not wait for any of them.
    coproc HOLD { python3 "$CLIENTS" hold "$PORT" 400; }
    local held
    read -r -t 60 held <&"${HOLD[0]}"
    echo "$held"
    local start end
    start=$(date +%s.%N)
    kill -TERM "$SERVER"; wait "$SERVER"
    local rc=$?
    end=$(date +%s.%N)
    exec {HOLD[1]}>&-
    wait "$HOLD_PID" 2>/dev/null
    local took; took=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }')
    echo "SIGTERM with 400 connections held: exit $rc after $took s"
    [[ $rc == 0 ]] && less_than "$took" 1.0 \
        || { fail sigterm "exit $rc after $took s with 400 connections held (documented: 200 ms)"; return; }
    ok after_a_flood_nothing_stays_open_and_sigterm_is_prompt
}

# A huge --listen value is refused with a message that echoes only its start.
test_a_huge_listen_address_is_not_echoed_whole() {
    local host; host=$(head -c 100000 /dev/zero | tr '\0' a)
    timeout -k 5 30 "$EVRING_BIN" metrics feed --listen "$host:1" 2>"$WORK/huge.err"
    local rc=$?
    [[ $rc == 2 && $(wc -c <"$WORK/huge.err") -lt 2000 ]] && grep -q "^evring: bad --listen .*(100002 bytes)" "$WORK/huge.err" \
        || { fail huge_listen "exit $rc, $(wc -c <"$WORK/huge.err") bytes: $(head -c 300 "$WORK/huge.err")"; return; }
    ok a_huge_listen_address_is_not_echoed_whole
}

test_a_huge_listen_address_is_not_echoed_whole
test_a_trickling_client_is_closed_at_the_request_bound
test_slow_clients_never_hold_up_a_scrape
test_after_a_flood_nothing_stays_open_and_sigterm_is_prompt
exit_with_results
