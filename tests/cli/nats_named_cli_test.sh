#!/usr/bin/env bash
# Named readers of nats:// streams (docs/named-readers.md, "Streams"; issue 31 item 1) end to end
# against a real `nats-server -js` on 127.0.0.1: the position is a JetStream durable consumer
# named after the reader. A relayed ring is read by `watch --name`, killed with SIGKILL halfway,
# run again: the two outputs hold every event once plus exactly the events the second run
# reports as written again; a third run with nothing new prints nothing; --reset starts over;
# names and consumers JetStream or evring refuse; a relayed ring set's stream resumes every
# member after its own event. Exit 77 (skipped) without nats-server or jq.
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
skip_script_unless "jq is not installed" command -v jq
skip_script_unless "nats-server is not installed (apt-get install nats-server)" command -v nats-server
skip_script_unless "no producer example at $PRODUCER_BIN" test -x "$PRODUCER_BIN"
skip_script_unless "evring built without libnats" "$EVRING_BIN" relay --help

make_work evring-nats-named
export EVRING_STATE_DIR="$WORK/state"
evring() { timeout -k 5 60 "$EVRING_BIN" "$@"; }
seqnos() { jq -R -r 'fromjson? | select(.seqno != null and .gap == null) | .seqno' "$@"; }

start_server() { start_nats_server || { echo "nats-server did not start: $(cat "$WORK/nats-server.log")"; exit 1; }; }
stop_server() { stop_nats_server; }
start_server
URL="nats://127.0.0.1:$NATS_PORT"

# The last seqno of the last line of file $1 is at least $2.
reached() { local last; last=$(seqnos "$1" 2>/dev/null | tail -1); [[ -n $last && $last -ge $2 ]]; }

# Relays ring $1 into stream $2 while its producer writes $3 events at $4 a second.
start_relayed_ring() {
    local ring=$1 stream=$2 count=$3 rate=$4
    "$PRODUCER_BIN" "$ring:16:24" --count "$count" --rate "$rate" --keep 2>/dev/null & PIDS+=($!)
    PRODUCER_PID=$!
    poll 1000 0.01 test -e "$EVRING_RING_DIR/$ring" || return 1
    "$EVRING_BIN" relay "$ring" --to "$URL" --stream "$stream" --from oldest 2>>"$WORK/relay-$stream.err" &
    RELAY_PID=$!
    PIDS+=("$RELAY_PID")
}
# The same, and waits until the stream holds every event.
relay_ring() {
    start_relayed_ring "$1" "$2" "$3" 20000 || return 1
    wait "$PRODUCER_PID"
    poll 1500 0.02 stream_has "$2" "$3"
}
# Relays ring $1 into stream $2 once its producer has written all $3 events, and waits until
# the stream holds them: the relay then sends full batches of 64 (a relay keeping up with a
# writer sends what it has, and message boundaries vary), so a test may count on them.
relay_whole_ring() {
    local ring=$1 stream=$2 count=$3
    "$PRODUCER_BIN" "$ring:16:24" --count "$count" --keep 2>/dev/null || return 1
    "$EVRING_BIN" relay "$ring" --to "$URL" --stream "$stream" --from oldest 2>>"$WORK/relay-$stream.err" &
    RELAY_PID=$!
    PIDS+=("$RELAY_PID")
    poll 1500 0.02 stream_has "$stream" "$count"
}
stream_has_set() {
    timeout -k 5 10 "$EVRING_BIN" watch "$URL/$1" --from latest --count 1 --format jsonl 2>/dev/null | seqnos | grep -q .
}
stream_has() {
    local last
    last=$(timeout -k 5 10 "$EVRING_BIN" watch "$URL/$1" --from latest --count 1 --format jsonl 2>/dev/null |
        seqnos | tail -1)
    [[ -n $last && $last -ge $2 ]]
}

case_sigkill_then_resume_delivers_every_event_and_counts_what_comes_again() {
    # The ring is written while it is read (4 s), so the first run is killed midway.
    start_relayed_ring feed FEED 20000 5000 || { fail sigkill "no ring"; return; }
    poll 1000 0.01 stream_has FEED 1 || { fail sigkill "relay: $(cat "$WORK/relay-FEED.err")"; return; }
    "$EVRING_BIN" watch "$URL/FEED" --name n --from oldest --format jsonl >"$WORK/k1" 2>"$WORK/k1.err" & PIDS+=($!)
    local watcher=$!
    poll 3000 0.01 has_lines "$WORK/k1" 3000 || { fail sigkill "first run printed too little: $(cat "$WORK/k1.err")"; return; }
    kill -KILL "$watcher"; wait "$watcher" 2>/dev/null
    local printed; printed=$(seqnos "$WORK/k1" | wc -l)
    grep -q "reader 'n': no position yet (no durable consumer 'n' of stream 'FEED'" "$WORK/k1.err" ||
        { fail sigkill "first run's notice: $(cat "$WORK/k1.err")"; return; }
    (( printed < 20000 )) || { fail sigkill "the first run read everything before it was stopped"; return; }
    "$EVRING_BIN" watch "$URL/FEED" --name n --format jsonl >"$WORK/k2" 2>"$WORK/k2.err" & PIDS+=($!)
    watcher=$!
    poll 3000 0.01 reached "$WORK/k2" 20000 || { fail sigkill "second run never reached 20000: $(cat "$WORK/k2.err")"; return; }
    kill -TERM "$watcher"; wait "$watcher"
    wait "$PRODUCER_PID"
    grep -qE "reader 'n' resumes after stream sequence [0-9]+ \(seqno [0-9]+\) of stream 'nats://127.0.0.1:$NATS_PORT/FEED'" \
        "$WORK/k2.err" || { fail sigkill "no resume notice: $(cat "$WORK/k2.err")"; return; }
    local again total unique
    again=$(sed -n "s/.*reader 'n': \([0-9]*\) events written again that the previous run had written after its last commit.*/\1/p" "$WORK/k2.err")
    [[ -n $again ]] || again=0
    total=$(seqnos "$WORK/k1" "$WORK/k2" | wc -l)
    unique=$(seqnos "$WORK/k1" "$WORK/k2" | sort -n | uniq | wc -l)
    [[ $unique == 20000 && $(seqnos "$WORK/k1" "$WORK/k2" | sort -n | uniq | sed -n '1p;$p' | tr '\n' ' ') == "1 20000 " ]] ||
        { fail sigkill "$unique distinct events of 1..20000"; return; }
    [[ $((total - unique)) == "$again" ]] ||
        { fail sigkill "$((total - unique)) events twice, the second run reported $again: $(cat "$WORK/k2.err")"; return; }
    seqnos "$WORK/k2" | sort -n -c || { fail sigkill "second run out of order"; return; }
    echo "   (SIGKILL after $printed events: $again delivered again, as reported)"

    # Nothing new: a third run resumes after 20000 and prints nothing (it is stopped once it
    # has subscribed and a bounded time has passed: a stream never ends).
    "$EVRING_BIN" watch "$URL/FEED" --name n --format jsonl >"$WORK/k3" 2>"$WORK/k3.err" & PIDS+=($!)
    watcher=$!
    poll 1000 0.01 has_text "$WORK/k3.err" "resumes after" || { fail sigkill "third run: $(cat "$WORK/k3.err")"; return; }
    poll 100 0.02 has_lines "$WORK/k3" 1
    kill -TERM "$watcher"; wait "$watcher"
    [[ ! -s $WORK/k3 ]] || { fail sigkill "third run printed $(wc -l <"$WORK/k3") lines"; return; }
    grep -q "(seqno 20000) .*nothing was written after that acknowledgement" "$WORK/k3.err" ||
        { fail sigkill "third run's notice: $(cat "$WORK/k3.err")"; return; }
    ok sigkill_then_resume_delivers_every_event_and_counts_what_comes_again
}

case_reset_and_explicit_from_start_over() {
    # Its counts are of the relay's messages of 64 events: a ring relayed whole.
    relay_whole_ring rfeed RFEED 3000 || { fail reset "relay: $(cat "$WORK/relay-RFEED.err")"; return; }
    # A position to forget: 1..200 read and acknowledged.
    evring watch "$URL/RFEED" --name rn --from oldest --count 200 --format jsonl >/dev/null 2>"$WORK/r0.err" ||
        { fail reset "first run: $(cat "$WORK/r0.err")"; return; }
    evring watch "$URL/RFEED" --name rn --reset --from oldest --count 5 --format jsonl >"$WORK/r1" 2>"$WORK/r1.err"
    [[ $(seqnos "$WORK/r1" | tr '\n' ' ') == "1 2 3 4 5 " ]] || { fail reset "--reset gave $(seqnos "$WORK/r1"): $(cat "$WORK/r1.err")"; return; }
    grep -q "position forgotten (--reset): durable consumer 'rn'" "$WORK/r1.err" || { fail reset "$(cat "$WORK/r1.err")"; return; }
    # --count 5 ended inside the relay's first message (64 events): not acknowledged, so the
    # next run starts at 1 again, and says those 5 come again.
    evring watch "$URL/RFEED" --name rn --count 70 --format jsonl >"$WORK/r2" 2>"$WORK/r2.err"
    [[ $(seqnos "$WORK/r2" | head -1) == 1 && $(seqnos "$WORK/r2" | tail -1) == 70 ]] ||
        { fail reset "resumed at $(seqnos "$WORK/r2" | head -1): $(cat "$WORK/r2.err")"; return; }
    grep -q "reader 'rn': 5 events written again" "$WORK/r2.err" || { fail reset "$(cat "$WORK/r2.err")"; return; }
    # 70 ended in the second message: the first (1..64) was acknowledged.
    evring watch "$URL/RFEED" --name rn --count 1 --format jsonl >"$WORK/r3" 2>"$WORK/r3.err"
    [[ $(seqnos "$WORK/r3") == 65 ]] || { fail reset "after 1..70 it resumed at $(seqnos "$WORK/r3"): $(cat "$WORK/r3.err")"; return; }
    grep -q "resumes after stream sequence [0-9]* (seqno 64)" "$WORK/r3.err" || { fail reset "$(cat "$WORK/r3.err")"; return; }
    evring watch "$URL/RFEED" --name rn --from 1000 --count 2 --format jsonl >"$WORK/r4" 2>"$WORK/r4.err"
    [[ $(seqnos "$WORK/r4" | tr '\n' ' ') == "1000 1001 " ]] || { fail reset "--from 1000 gave $(seqnos "$WORK/r4")"; return; }
    grep -q "an explicit --from starts over: durable consumer 'rn'" "$WORK/r4.err" || { fail reset "$(cat "$WORK/r4.err")"; return; }
    ok reset_and_explicit_from_start_over
}

case_digest_by_name_covers_the_events_since_its_last_run() {
    evring digest "$URL/FEED" --name d --from oldest --count 20000 >"$WORK/d1" 2>"$WORK/d1.err" ||
        { fail digest "$(cat "$WORK/d1.err")"; return; }
    evring digest feed --from oldest --count 20000 >"$WORK/d0" 2>/dev/null
    local a b
    a=$(awk '{print $1; exit}' "$WORK/d1"); b=$(awk '{print $1; exit}' "$WORK/d0")
    [[ -n $a && $a == "$b" ]] || { fail digest "stream digest '$a', ring '$b': $(cat "$WORK/d1" "$WORK/d1.err")"; return; }
    # Everything is digested: a second run covers nothing new (stopped after its resume notice).
    timeout -k 5 60 "$EVRING_BIN" digest "$URL/FEED" --name d --count 1 >"$WORK/d2" 2>"$WORK/d2.err" & PIDS+=($!)
    local digest=$!
    poll 1000 0.01 has_text "$WORK/d2.err" "resumes after stream sequence [0-9]* \\(seqno 20000\\)" ||
        { fail digest "second run: $(cat "$WORK/d2.err")"; return; }
    kill -INT "$digest"; wait "$digest"
    ok digest_by_name_covers_the_events_since_its_last_run
}

case_names_and_consumers_refused_clearly() {
    evring watch "$URL/FEED" --name a.b --count 1 >/dev/null 2>"$WORK/e1.err"; local rc=$?
    [[ $rc != 0 ]] && grep -q "reader 'a.b' cannot name a JetStream durable consumer on stream 'FEED'" "$WORK/e1.err" ||
        { fail refused "a.b: exit $rc: $(cat "$WORK/e1.err")"; return; }
    # A consumer of another client under the name: left alone, refused.
    { exec 5<>"/dev/tcp/127.0.0.1/$NATS_PORT"; IFS= read -r -t 5 _ <&5
      local body='{"stream_name":"FEED","config":{"durable_name":"other","ack_policy":"explicit","deliver_policy":"all"}}'
      printf 'CONNECT {"verbose":false}\r\nSUB _INBOX.c 1\r\nPUB $JS.API.CONSUMER.DURABLE.CREATE.FEED.other _INBOX.c %d\r\n%s\r\n' \
          "${#body}" "$body" >&5
      local line; while IFS= read -r -t 10 line <&5; do [[ $line == MSG* ]] && break; done; exec 5>&-; }
    evring watch "$URL/FEED" --name other --count 1 >/dev/null 2>"$WORK/e2.err"; rc=$?
    [[ $rc != 0 ]] && grep -q "stream 'FEED' on .* has a consumer 'other' that evring did not make" "$WORK/e2.err" ||
        { fail refused "other: exit $rc: $(cat "$WORK/e2.err")"; return; }
    # A name in use by a running process is refused (the lock, as for rings).
    "$EVRING_BIN" watch "$URL/FEED" --name busy --format jsonl >/dev/null 2>"$WORK/e3.err" & PIDS+=($!)
    local holder=$!
    poll 1000 0.01 has_text "$WORK/e3.err" "no position yet" || { fail refused "busy: $(cat "$WORK/e3.err")"; return; }
    evring watch "$URL/FEED" --name busy --count 1 >/dev/null 2>"$WORK/e4.err"; rc=$?
    kill -TERM "$holder"; wait "$holder"
    [[ $rc != 0 ]] && grep -q "reader 'busy' is in use by another process" "$WORK/e4.err" ||
        { fail refused "busy: exit $rc: $(cat "$WORK/e4.err")"; return; }
    # A name holding a ring's position is not taken over by a stream.
    evring watch feed --name ringname --from oldest --count 3 >/dev/null 2>&1
    evring watch "$URL/FEED" --name ringname --count 1 >/dev/null 2>"$WORK/e5.err"; rc=$?
    [[ $rc != 0 ]] && grep -q "reader 'ringname' reads ring file '.*feed', not stream" "$WORK/e5.err" ||
        { fail refused "ringname: exit $rc: $(cat "$WORK/e5.err")"; return; }
    ok names_and_consumers_refused_clearly
}

case_stream_deleted_under_the_durable_starts_over_saying_so() {
    evring watch "$URL/FEED" --name gone --from oldest --count 100 --format jsonl >/dev/null 2>&1
    kill "$RELAY_PID" 2>/dev/null; wait "$RELAY_PID" 2>/dev/null
    { exec 5<>"/dev/tcp/127.0.0.1/$NATS_PORT"; IFS= read -r -t 5 _ <&5
      printf 'CONNECT {"verbose":false}\r\nSUB _INBOX.d 1\r\nPUB $JS.API.STREAM.DELETE.FEED _INBOX.d 0\r\n\r\n' >&5
      local line; while IFS= read -r -t 10 line <&5; do [[ $line == MSG* ]] && break; done; exec 5>&-; }
    relay_ring feed2 FEED 500 || { fail deleted "relay: $(cat "$WORK/relay-FEED.err")"; return; }
    evring watch "$URL/FEED" --name gone --from oldest --count 500 --format jsonl >"$WORK/g1" 2>"$WORK/g1.err"
    [[ $(seqnos "$WORK/g1" | wc -l) == 500 ]] && grep -q "no position yet (no durable consumer 'gone'" "$WORK/g1.err" ||
        { fail deleted "$(cat "$WORK/g1.err")"; return; }
    kill "$RELAY_PID"; wait "$RELAY_PID" 2>/dev/null
    ok stream_deleted_under_the_durable_starts_over_saying_so
}

case_server_restarted_under_a_named_reader_loses_nothing() {
    # The durable consumer is created again after the outage, after its ack floor: what the
    # server had sent when it went away is neither lost nor printed twice.
    start_relayed_ring out OUT 20000 4000 || { fail outage "no ring"; return; }
    poll 1000 0.01 stream_has OUT 1 || { fail outage "relay: $(cat "$WORK/relay-OUT.err")"; return; }
    "$EVRING_BIN" watch "$URL/OUT" --name o --from oldest --format jsonl >"$WORK/o1" 2>"$WORK/o1.err" & PIDS+=($!)
    local watcher=$!
    poll 3000 0.01 has_lines "$WORK/o1" 2000 || { fail outage "too little before the outage: $(cat "$WORK/o1.err")"; return; }
    stop_server
    start_server
    poll 6000 0.01 reached "$WORK/o1" 20000 || { fail outage "never reached 20000 after the outage: $(cat "$WORK/o1.err")"; return; }
    kill -TERM "$watcher"; wait "$watcher"
    wait "$PRODUCER_PID"
    kill "$RELAY_PID"; wait "$RELAY_PID" 2>/dev/null
    [[ $(seqnos "$WORK/o1" | wc -l) == 20000 && $(seqnos "$WORK/o1" | sort -n -u | wc -l) == 20000 ]] ||
        { fail outage "$(seqnos "$WORK/o1" | wc -l) events, $(seqnos "$WORK/o1" | sort -n -u | wc -l) distinct: $(cat "$WORK/o1.err")"; return; }
    grep -q "durable consumer 'o' of stream 'OUT' created again after stream sequence [0-9]*" "$WORK/o1.err" ||
        { fail outage "no notice of the consumer created again: $(cat "$WORK/o1.err")"; return; }
    ok server_restarted_under_a_named_reader_loses_nothing
}

# The C ABI reads a stream by name: a run commits after event 100 and the next resumes at the
# ack floor's next message; and one process closes named readers with messages still flowing and
# opens the next, again and again (this once aborted inside libnats 3.4: a subscription destroyed
# while its reader thread held a message for it; Connection::Impl::settle_unsubscribed).
case_c_abi_named_readers_of_a_stream() {
    local lib=${EVRING_LIB_DIR:-}/libevring.so out
    [[ -f $lib ]] || { skip c_abi "no libevring.so"; return; }
    [[ ${EVRING_SANITIZE:-none} == none ]] || { skip c_abi "a sanitized libevring.so does not load into Python"; return; }
    relay_whole_ring cfeed CFEED 3000 || { fail c_abi "relay: $(cat "$WORK/relay-CFEED.err")"; return; }
    cat >"$WORK/named_c.py" <<'PY'
import sys
import c_abi
lib = c_abi.load(sys.argv[1])
first = [seqno for _, seqno in c_abi.read_named(lib, sys.argv[2], "c", 100)]
again = [seqno for _, seqno in c_abi.read_named(lib, sys.argv[2], "c", 1)]
for round in range(8):  # closed while the stream still delivers: the next open must not crash
    c_abi.read_named(lib, sys.argv[2], "x%d" % round, 500)
print(first[0], first[-1], again[0])
PY
    out=$(PYTHONPATH=$(dirname "${BASH_SOURCE[0]}") PYTHONDONTWRITEBYTECODE=1 timeout -k 5 60 python3 "$WORK/named_c.py" "$lib" "$URL/CFEED" 2>&1)
    # 100 ended inside the relay's second message (65..128): the ack floor is 64.
    [[ $out == "1 100 65" ]] || { fail c_abi "first run's first and last, second run's first: $out"; return; }
    ok c_abi_named_readers_of_a_stream
}

# A relayed ring set's stream by name: a position per member, as for a set itself. Killed with
# SIGKILL halfway and run again, the two outputs hold every event of both members once, plus
# exactly the (member, seqno) pairs the second run reports as written again; a third run resumes
# each member after its last event and prints nothing.
pairs() { jq -R -r 'fromjson? | select(.seqno != null and .gap == null) | "\(.member) \(.seqno)"' "$@"; }
both_reached() { [[ $(seqnos "$1" 2>/dev/null | grep -cx "$2") -ge 2 ]]; }
case_ring_set_stream_resumes_every_member_after_its_own_event() {
    "$PRODUCER_BIN" sfleet:14:22 --threads 2 --count 10000 --rate 2500 --keep 2>/dev/null & PIDS+=($!)
    local producer=$! watcher printed again total unique m
    poll 1000 0.01 test -e "$EVRING_RING_DIR/sfleet" || { fail set_stream "no ring set"; return; }
    "$EVRING_BIN" relay sfleet --to "$URL" --stream SFLEET --from oldest 2>>"$WORK/relay-SFLEET.err" & PIDS+=($!)
    local relay=$!
    poll 1000 0.01 stream_has_set SFLEET || { fail set_stream "relay: $(cat "$WORK/relay-SFLEET.err")"; return; }
    "$EVRING_BIN" watch "$URL/SFLEET" --name s --from oldest --format jsonl >"$WORK/s1" 2>"$WORK/s1.err" & PIDS+=($!)
    watcher=$!
    poll 3000 0.01 has_lines "$WORK/s1" 3000 || { fail set_stream "first run printed too little: $(cat "$WORK/s1.err")"; return; }
    kill -KILL "$watcher"; wait "$watcher" 2>/dev/null
    printed=$(pairs "$WORK/s1" | wc -l)
    (( printed < 20000 )) || { fail set_stream "the first run read everything before it was stopped"; return; }
    "$EVRING_BIN" watch "$URL/SFLEET" --name s --format jsonl >"$WORK/s2" 2>"$WORK/s2.err" & PIDS+=($!)
    watcher=$!
    poll 3000 0.01 both_reached "$WORK/s2" 10000 || { fail set_stream "second run never reached 10000 of both: $(cat "$WORK/s2.err")"; return; }
    kill -TERM "$watcher"; wait "$watcher"
    wait "$producer"
    grep -qE "reader 's' resumes ring set stream 'nats://127.0.0.1:$NATS_PORT/SFLEET' after stream sequence [0-9]+ .*: member 0 after seqno [0-9]+, member 1 after seqno [0-9]+;" \
        "$WORK/s2.err" || { fail set_stream "no resume notice per member: $(cat "$WORK/s2.err")"; return; }
    again=$(sed -n "s/.*reader 's': \([0-9]*\) events written again that the previous run had written after its last commit.*/\1/p" "$WORK/s2.err")
    [[ -n $again ]] || again=0
    total=$(pairs "$WORK/s1" "$WORK/s2" | wc -l)
    unique=$(pairs "$WORK/s1" "$WORK/s2" | sort -u | wc -l)
    [[ $unique == 20000 && $(pairs "$WORK/s1" "$WORK/s2" | awk '$2 >= 1 && $2 <= 10000 && ($1 == 0 || $1 == 1)' | sort -u | wc -l) == 20000 ]] ||
        { fail set_stream "$unique distinct (member, seqno) pairs, not 2 x 1..10000"; return; }
    [[ $((total - unique)) == "$again" ]] ||
        { fail set_stream "$((total - unique)) events twice, the second run reported $again: $(cat "$WORK/s2.err")"; return; }
    for m in 0 1; do
        pairs "$WORK/s2" | awk -v m=$m '$1 == m {print $2}' | sort -n -c || { fail set_stream "member $m out of order"; return; }
    done
    echo "   (SIGKILL after $printed events: $again delivered again, as reported)"
    "$EVRING_BIN" watch "$URL/SFLEET" --name s --format jsonl >"$WORK/s3" 2>"$WORK/s3.err" & PIDS+=($!)
    watcher=$!
    poll 1000 0.01 has_text "$WORK/s3.err" "resumes ring set stream" || { fail set_stream "third run: $(cat "$WORK/s3.err")"; return; }
    poll 100 0.02 has_lines "$WORK/s3" 1
    kill -TERM "$watcher"; wait "$watcher"
    kill "$relay"; wait "$relay" 2>/dev/null
    [[ ! -s $WORK/s3 ]] || { fail set_stream "third run printed $(wc -l <"$WORK/s3") lines"; return; }
    grep -q "member 0 after seqno 10000, member 1 after seqno 10000; nothing was written after that acknowledgement" \
        "$WORK/s3.err" || { fail set_stream "third run's notice: $(cat "$WORK/s3.err")"; return; }
    ok ring_set_stream_resumes_every_member_after_its_own_event
}

case_sigkill_then_resume_delivers_every_event_and_counts_what_comes_again
case_c_abi_named_readers_of_a_stream
case_server_restarted_under_a_named_reader_loses_nothing
case_reset_and_explicit_from_start_over
case_digest_by_name_covers_the_events_since_its_last_run
case_names_and_consumers_refused_clearly
case_stream_deleted_under_the_durable_starts_over_saying_so
case_ring_set_stream_resumes_every_member_after_its_own_event
exit_with_results
