#!/usr/bin/env bash
# `evring relay --assemble` (docs/distributed.md, "Assembled blocks") against a real `nats-server -js`
# on 127.0.0.1 (a port it picks, max_payload 16MB: a block of the real snapshot is up to 9 MB of
# JSON), read back with a plain NATS client (nats_stream_dump.py): one message per finalized
# block, byte for byte the lines `watch --assemble block --stage finalized --format jsonl`
# prints, named block:LABEL:ID:finalized; a relay started again publishes only what the stream
# lacks; evring's readers and a relay of events refuse the stream by name; a block larger than
# the stream accepts is refused naming it and its size. And `evring mirror --assemble`: a ring of
# ASSEMBLED_SPAN events whose json field is each of those lines. Needs EVRING_BIN, jq, python3,
# nats-server and the real snapshots.
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
skip_script_unless "jq is not installed" command -v jq
skip_script_unless "python3 is not installed" command -v python3
skip_script_unless "nats-server is not installed (apt-get install nats-server)" command -v nats-server
skip_script_unless "evring built without libnats" "$EVRING_BIN" relay --help
DIR=${EVRING_CONFORMANCE_DIR:-}
SNAP=${DIR:+$DIR/emn-30b-15m.snapshot.zst}
[[ -n $SNAP && -f $SNAP ]] || { echo "skipped: EVRING_CONFORMANCE_DIR does not name the real snapshots"; FINISHED=1; exit 77; }

make_work evring-nats-assemble
evring() { timeout -k 5 120 "$EVRING_BIN" "$@"; }
client() { timeout -k 5 120 python3 "$(dirname "${BASH_SOURCE[0]}")/nats_stream_dump.py" "$@"; }
printf 'max_payload: 16MB\n' >"$WORK/nats.conf"
start_nats_server -c "$WORK/nats.conf" || { echo "nats-server did not start: $(cat "$WORK/nats-server.log")"; exit 1; }
URL="nats://127.0.0.1:$NATS_PORT"

relay() {  # stream source [options]: relay --assemble block --stage finalized
    local stream=$1 source=$2; shift 2
    evring relay "$source" --to "$URL" --stream "$stream" --assemble block --stage finalized "$@"
}
dump() { client dump "$NATS_PORT" "$1" "$WORK/$1.bodies" "$WORK/$1.meta"; }

evring watch "$SNAP" --from oldest --assemble block --stage finalized --format jsonl >"$WORK/watch.jsonl" 2>/dev/null
BLOCKS=$(wc -l <"$WORK/watch.jsonl")

case_a_message_per_block_as_watch_prints_it() {
    relay ONE "$SNAP" 2>"$WORK/one.err" || { fail messages "relay: $(cat "$WORK/one.err")"; return; }
    dump ONE || { fail messages "reading the stream back"; return; }
    [[ $BLOCKS == 30 && $(wc -l <"$WORK/ONE.meta") == "$BLOCKS" ]] ||
        { fail messages "$(wc -l <"$WORK/ONE.meta") messages, watch printed $BLOCKS lines"; return; }
    cmp -s "$WORK/ONE.bodies" "$WORK/watch.jsonl" || { fail messages "bodies differ from watch's lines"; return; }
    # Each message: subject PREFIX.block.finalized, id block:LABEL:ID(hex, no 0x):finalized from its own body.
    local names
    names=$(jq -r '"block:\(.label):\(.id[2:]):finalized"' "$WORK/watch.jsonl")
    [[ $(jq -r .msg_id "$WORK/ONE.meta") == "$names" ]] || { fail messages "ids: $(head -2 "$WORK/ONE.meta")"; return; }
    [[ $(jq -r .subject "$WORK/ONE.meta" | sort -u) == "evring.ONE.block.finalized" ]] ||
        { fail messages "subjects: $(jq -r .subject "$WORK/ONE.meta" | sort -u)"; return; }
    [[ $(jq -r .description "$WORK/ONE.meta" | sort -u) == "evring relay --assemble: block JSON (docs/distributed.md)" ]] ||
        { fail messages "description: $(head -1 "$WORK/ONE.meta")"; return; }
    grep -q "^evring: published 30 block instances (0 already in the stream skipped, 0 dropped as duplicates; 0 abandoned, 0 broken by a gap); 0 left unfinished$" \
        "$WORK/one.err" || { fail messages "summary: $(cat "$WORK/one.err")"; return; }
    # docs/cli.md: "a block of emn-30b-15m is up to 9.4 MB of JSON"
    local largest
    largest=$(awk '{print length($0)}' "$WORK/watch.jsonl" | sort -n | tail -1)
    ((largest > 9350000 && largest < 9450000)) || { fail messages "the largest block is $largest bytes"; return; }
    ok "a_message_per_block_as_watch_prints_it ($BLOCKS blocks, the largest $largest bytes)"
}

case_no_payload_as_watch_no_payload() {
    evring watch "$SNAP" --from oldest --assemble block --stage finalized --format jsonl --no-payload \
        >"$WORK/watch-nopay.jsonl" 2>/dev/null
    relay NOPAY "$SNAP" --no-payload 2>"$WORK/nopay.err" || { fail no_payload "relay: $(cat "$WORK/nopay.err")"; return; }
    dump NOPAY
    [[ $(wc -l <"$WORK/NOPAY.meta") == 30 ]] && cmp -s "$WORK/NOPAY.bodies" "$WORK/watch-nopay.jsonl" &&
        ! grep -q '"payload":' "$WORK/NOPAY.bodies" || { fail no_payload "bodies differ from watch --no-payload"; return; }
    local largest
    largest=$(awk '{print length($0)}' "$WORK/watch-nopay.jsonl" | sort -n | tail -1)
    ((largest > 5950000 && largest < 6050000)) || { fail no_payload "the largest block is $largest bytes"; return; }
    ok "no_payload_as_watch_no_payload (the largest $largest bytes)"
}

# The first part of the snapshot (to block 15000012's finalization) relayed, then the whole:
# the second relay skips what the stream holds, so the stream ends as one relay of the whole.
case_a_restart_publishes_only_what_the_stream_lacks() {
    # --until SEQNO (record --until block.finalized:N is refused on a snapshot: docs/cli.md says it works)
    local until
    until=$(jq 'select(.label == 15000012) | .stages[] | select(.stage == "finalized") | .seqno' "$WORK/watch.jsonl")
    evring record "$SNAP" --from oldest --until "$until" -o "$WORK/part.evrec" 2>"$WORK/rec.err" ||
        { fail restart "record: $(cat "$WORK/rec.err")"; return; }
    relay TWO "$WORK/part.evrec" 2>"$WORK/two-a.err" || { fail restart "first relay: $(cat "$WORK/two-a.err")"; return; }
    dump TWO
    local first
    first=$(wc -l <"$WORK/TWO.meta")
    [[ $first == 12 ]] || { fail restart "the first part holds $first blocks, not 12"; return; }
    relay TWO "$SNAP" 2>"$WORK/two-b.err" || { fail restart "second relay: $(cat "$WORK/two-b.err")"; return; }
    grep -q "holds block instances up to label 15000012" "$WORK/two-b.err" &&
        grep -q "^evring: published 18 block instances (12 already in the stream skipped, 0 dropped as duplicates;" "$WORK/two-b.err" ||
        { fail restart "second relay said: $(cat "$WORK/two-b.err")"; return; }
    dump TWO
    cmp -s "$WORK/TWO.bodies" "$WORK/watch.jsonl" || { fail restart "the stream is not watch's lines once each"; return; }
    # A third run has nothing left to publish.
    relay TWO "$SNAP" 2>"$WORK/two-c.err"
    grep -q "^evring: published 0 block instances (30 already in the stream skipped" "$WORK/two-c.err" ||
        { fail restart "third relay said: $(cat "$WORK/two-c.err")"; return; }
    ok a_restart_publishes_only_what_the_stream_lacks
}

# Killed (SIGKILL once the stream holds a message, wherever the relay then is: on an idle machine
# it may have finished; the case above resumes at a known block) and started again: every block
# once, in order.
case_killed_and_started_again() {
    # The program itself in the background (not the timeout wrapper), so the kill reaches it.
    "$EVRING_BIN" relay "$SNAP" --to "$URL" --stream THREE --assemble block --stage finalized 2>"$WORK/three-a.err" &
    local pid=$!
    PIDS+=("$pid")
    poll 2000 0.01 stream_has THREE
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    local before
    before=$(client dump "$NATS_PORT" THREE "$WORK/probe.bodies" "$WORK/probe.meta" && wc -l <"$WORK/probe.meta")
    relay THREE "$SNAP" 2>"$WORK/three-b.err" || { fail killed "restart: $(cat "$WORK/three-b.err")"; return; }
    dump THREE
    cmp -s "$WORK/THREE.bodies" "$WORK/watch.jsonl" || { fail killed "the stream is not watch's lines once each"; return; }
    ok "killed_and_started_again (killed at $before blocks; restarted: $(grep -o 'published .*duplicates' "$WORK/three-b.err"))"
}
stream_has() { client dump "$NATS_PORT" "$1" "$WORK/probe.bodies" "$WORK/probe.meta" && [[ -s $WORK/probe.meta ]]; }

case_refused_by_name() {
    local rc
    evring watch "$URL/ONE" --from oldest >/dev/null 2>"$WORK/err"; rc=$?
    [[ $rc != 0 ]] && grep -q "stream 'ONE' carries assembled block JSON (relay --assemble), not events; read it with a NATS client" "$WORK/err" ||
        { fail refused "watch: exit $rc: $(cat "$WORK/err")"; return; }
    evring info "$URL/ONE" >/dev/null 2>"$WORK/err"; rc=$?
    [[ $rc != 0 ]] && grep -q "stream 'ONE' carries assembled block JSON (relay --assemble), not events" "$WORK/err" ||
        { fail refused "info: exit $rc: $(cat "$WORK/err")"; return; }
    evring mirror "$URL/ONE" --to "assembled-mirror-$$" >/dev/null 2>"$WORK/err"; rc=$?
    [[ $rc != 0 ]] && grep -q "stream 'ONE' carries assembled block JSON (relay --assemble), not events" "$WORK/err" ||
        { fail refused "mirror: exit $rc: $(cat "$WORK/err")"; return; }
    evring relay "$SNAP" --to "$URL" --stream ONE >/dev/null 2>"$WORK/err"; rc=$?
    [[ $rc != 0 ]] && grep -q "stream 'ONE' on $URL carries assembled block JSON (relay --assemble), not events: relay events into another stream" "$WORK/err" ||
        { fail refused "relay of events: exit $rc: $(cat "$WORK/err")"; return; }
    evring relay "$DIR/emn-1b-15m.snapshot.zst" --to "$URL" --stream EVENTS >/dev/null 2>&1
    relay EVENTS "$SNAP" >/dev/null 2>"$WORK/err"; rc=$?
    [[ $rc != 0 ]] && grep -q "stream 'EVENTS' on $URL carries events, not assembled JSON: relay --assemble into another stream" "$WORK/err" ||
        { fail refused "--assemble into events: exit $rc: $(cat "$WORK/err")"; return; }
    relay ONE "$SNAP" --batch 8 >/dev/null 2>"$WORK/err"; rc=$?
    [[ $rc == 2 ]] && grep -q "\-\-assemble publishes whole instances; it does not go with --batch" "$WORK/err" ||
        { fail refused "--batch: exit $rc: $(cat "$WORK/err")"; return; }
    evring relay "$SNAP" --to "$URL" --stream ONE --stage finalized >/dev/null 2>"$WORK/err"; rc=$?
    [[ $rc == 2 ]] && grep -q "\-\-stage and --no-payload go with --assemble SPAN" "$WORK/err" ||
        { fail refused "--stage alone: exit $rc: $(cat "$WORK/err")"; return; }
    ok refused_by_name
}

# A stream (marked as relay --assemble's) that takes messages of 1 MiB at most: the first block
# is larger, and the relay says which and how large instead of publishing part of it.
case_a_block_too_large_is_named() {
    client create "$NATS_PORT" SMALL '{"subjects":["evring.SMALL.>"],"description":"evring relay --assemble: block JSON (docs/distributed.md)","max_msg_size":1048576,"storage":"memory","allow_direct":true}' ||
        { fail too_large "creating the stream"; return; }
    local rc first size
    relay SMALL "$SNAP" >/dev/null 2>"$WORK/err"; rc=$?
    first=$(head -1 "$WORK/watch.jsonl" | jq -r '"block:\(.label):\(.id[2:]):finalized"')
    size=$(head -1 "$WORK/watch.jsonl" | tr -d '\n' | wc -c)
    [[ $rc == 1 ]] && grep -qF "$first is $size bytes of JSON; $URL and stream 'SMALL' accept 1048576 at most" "$WORK/err" ||
        { fail too_large "exit $rc: $(cat "$WORK/err")"; return; }
    ok a_block_too_large_is_named
}

# mirror --assemble: one ASSEMBLED_SPAN event per block in a ring that embeds evring_assembled;
# `watch RING --format jsonl` gives each block's object back in fields.json, byte for byte.
case_mirror_writes_a_json_event_per_block() {
    evring mirror "$SNAP" --to "blocks-$$" --keep --assemble block --stage finalized 2>"$WORK/mirror.err" ||
        { fail mirror "mirror: $(cat "$WORK/mirror.err")"; return; }
    grep -q "^evring: mirrored 30 block instances (0 abandoned, 0 broken by a gap); 0 left unfinished$" "$WORK/mirror.err" ||
        { fail mirror "summary: $(cat "$WORK/mirror.err")"; return; }
    evring watch "blocks-$$" --from oldest --format jsonl >"$WORK/mirror.jsonl" 2>"$WORK/mirror-watch.err"
    jq -j '.fields.json + "\n"' "$WORK/mirror.jsonl" >"$WORK/mirror.bodies"
    cmp -s "$WORK/mirror.bodies" "$WORK/watch.jsonl" || { fail mirror "fields.json differ from watch's lines"; return; }
    [[ $(jq -r '"\(.type_name) \(.event_type) \(.fields.label) \(.fields.json_length)"' "$WORK/mirror.jsonl" | head -1) == \
        "ASSEMBLED_SPAN 2 15000001 $(head -1 "$WORK/watch.jsonl" | tr -d '\n' | wc -c)" ]] ||
        { fail mirror "first event: $(head -c 300 "$WORK/mirror.jsonl")"; return; }
    evring info "blocks-$$" --json 2>/dev/null | jq -e '.content_type == 16723' >/dev/null ||
        { fail mirror "content type: $(evring info "blocks-$$" 2>&1 | head -5)"; return; }
    evring watch "blocks-$$" --from oldest --where 'label == 15000002' 2>/dev/null | grep -q '^.* seq=2 ASSEMBLED_SPAN label=15000002 json_length=' ||
        { fail mirror "text: $(evring watch "blocks-$$" --from oldest --count 1 2>&1 | cut -c1-200)"; return; }
    rm -f "$EVRING_RING_DIR/blocks-$$"
    # A ring whose payloads are too small (4 MiB buffer) for the first block: named, with its size.
    local rc first size
    evring mirror "$SNAP" --to "small-$$:15:22" --assemble block --stage finalized >/dev/null 2>"$WORK/err"; rc=$?
    first=$(head -1 "$WORK/watch.jsonl" | jq -r '"block:\(.label):\(.id[2:]):finalized"')
    size=$(head -1 "$WORK/watch.jsonl" | tr -d '\n' | wc -c)
    [[ $rc == 1 ]] && grep -qF "$first is $size bytes of JSON; the mirror ring takes payloads of 3932160 bytes at most: give --to NAME:DESC_SHIFT:PAYLOAD_SHIFT with a larger PAYLOAD_SHIFT" "$WORK/err" ||
        { fail mirror "too large: exit $rc: $(cat "$WORK/err")"; return; }
    evring mirror "$SNAP" --to "x-$$" --assemble block --count 5 >/dev/null 2>"$WORK/err"; rc=$?
    [[ $rc == 2 ]] && grep -q "\-\-assemble writes whole instances; it does not go with --count" "$WORK/err" ||
        { fail mirror "--count: exit $rc: $(cat "$WORK/err")"; return; }
    ok mirror_writes_a_json_event_per_block
}

case_a_message_per_block_as_watch_prints_it
case_mirror_writes_a_json_event_per_block
case_no_payload_as_watch_no_payload
case_a_restart_publishes_only_what_the_stream_lacks
case_killed_and_started_again
case_refused_by_name
case_a_block_too_large_is_named
exit_with_results
