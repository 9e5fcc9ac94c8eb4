#!/usr/bin/env bash
# Filter expressions beyond watch (docs/cli.md, "Filter expressions"): span
# names compare by label on the real snapshots; `--fields` with [i] into
# trailing arrays; `top --where` on a producer's ring; and, against a real
# `nats-server -js` on 127.0.0.1 (a port it picks, a temporary store),
# `relay --where` and `mirror --where`, and `evring digest` giving the same
# digest for a snapshot, its recording and a ring `evring mirror` filled from
# it through a stream. Needs EVRING_BIN and PRODUCER_BIN; the snapshots when
# EVRING_CONFORMANCE_DIR names them, nats-server and jq for the stream cases
# (else those cases skip). Each case prints "ok <name>" or "FAIL <name>: <why>".
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
skip_script_unless "jq is not installed" command -v jq
make_work evring-where-cli

evring() { timeout -k 5 120 "$EVRING_BIN" "$@"; }
DIR=${EVRING_CONFORMANCE_DIR:-}
have_snapshots() { [[ -n $DIR && -d $DIR ]]; }
have_nats() { command -v nats-server >/dev/null && "$EVRING_BIN" relay --help >/dev/null 2>&1; }

# The event lines of a jsonl file without what differs between a source and its copies.
events_of() { jq -c 'select(.seqno != null and .gap == null) | del(.ring, .source, .path)' "$1"; }
# ... and without the numbering a mirror gives its events itself.
content_of() { jq -c 'select(.seqno != null and .gap == null) | del(.ring, .source, .path, .seqno, .payload_buf_offset)' "$1"; }
digest_of() { evring digest "$@" 2>/dev/null | cut -d' ' -f1; }

case_span_names_compare_by_label() {
    have_snapshots || { skip span_label "EVRING_CONFORMANCE_DIR unset"; return; }
    local f=$DIR/emn-30b-15m.snapshot.zst
    evring watch "$f" --from oldest --flow block=15000005 --format jsonl >"$WORK/flow.jsonl" 2>/dev/null
    evring watch "$f" --from oldest --where 'block == 15000005' --format jsonl >"$WORK/where.jsonl" 2>"$WORK/err" ||
        { fail span_label "block == N: $(cat "$WORK/err")"; return; }
    [[ $(wc -l <"$WORK/where.jsonl") -gt 100 ]] && cmp -s "$WORK/flow.jsonl" "$WORK/where.jsonl" ||
        { fail span_label "block == 15000005 kept $(wc -l <"$WORK/where.jsonl") lines, --flow block= $(wc -l <"$WORK/flow.jsonl")"; return; }
    # Every event kept carries, in its block tag, the seqno of block 15000005's BLOCK_START.
    local opener
    opener=$(evring watch "$f" --from block:15000005 --count 1 --format jsonl 2>/dev/null | jq .seqno)
    jq -e --argjson s "$opener" -s 'all(.[]; .flow.block == $s)' "$WORK/where.jsonl" >/dev/null ||
        { fail span_label "an event of another block was kept"; return; }
    # The raw tag is still there as ext[0]; `in` takes several labels; != the rest.
    evring watch "$f" --from oldest --where "ext[0] == $opener" --format jsonl 2>/dev/null | cmp -s - "$WORK/where.jsonl" ||
        { fail span_label "ext[0] == $opener differs"; return; }
    local both one two all other
    both=$(evring watch "$f" --from oldest --where 'block in {15000005, 15000006}' --format jsonl 2>/dev/null | wc -l)
    two=$(evring watch "$f" --from oldest --where 'block == 15000006' --format jsonl 2>/dev/null | wc -l)
    one=$(wc -l <"$WORK/where.jsonl")
    [[ $both == $((one + two)) && $two -gt 0 ]] || { fail span_label "in {N, M}: $both, not $one + $two"; return; }
    all=$(evring watch "$f" --from oldest --format jsonl 2>/dev/null | wc -l)
    other=$(evring watch "$f" --from oldest --where 'block != 15000005' --format jsonl 2>/dev/null | wc -l)
    [[ $other == $((all - one)) ]] || { fail span_label "!=: $other, not $all - $one"; return; }
    # A label no event carries, and a comparison labels do not take, are refused before reading (exit 2, one line).
    evring watch "$f" --from oldest --where 'block == 12' >/dev/null 2>"$WORK/err"; local rc=$?
    [[ $rc == 2 && $(wc -l <"$WORK/err") == 1 ]] && grep -q "no block 12 in snapshot" "$WORK/err" ||
        { fail span_label "unknown label: exit $rc: $(cat "$WORK/err")"; return; }
    evring watch "$f" --from oldest --where 'block ^= 0x01' >/dev/null 2>"$WORK/err"; rc=$?
    [[ $rc == 2 ]] && grep -q "'block' compares block labels (block_tag.block_number) with ==, !=, in, <, <=, > or >=" "$WORK/err" ||
        { fail span_label "block ^= x: exit $rc: $(cat "$WORK/err")"; return; }
    # Order comparisons read the label as reading goes (docs/cli.md, "Block ranges").
    local above last
    above=$(evring watch "$f" --from oldest --where 'block > 15000029' --format jsonl 2>/dev/null | wc -l)
    last=$(evring watch "$f" --from oldest --where 'block == 15000030' --format jsonl 2>/dev/null | wc -l)
    [[ $above == "$last" && $last -gt 0 ]] || { fail span_label "block > N: $above events, block == N+1: $last"; return; }
    ok span_names_compare_by_label
}

case_fields_index_into_trailing_arrays() {
    have_snapshots || { skip fields_index "EVRING_CONFORMANCE_DIR unset"; return; }
    local f=$DIR/emn-1b-15m.snapshot.zst
    evring watch "$f" --from oldest --type TXN_LOG --format jsonl 2>/dev/null |
        jq -c '{seqno, n: .fields.topic_count, t0: .fields.topics[0], t2: .fields.topics[2]}' >"$WORK/expected"
    evring watch "$f" --from oldest --type TXN_LOG --fields 'seqno,topic_count,topics[0],topics[2]' --format jsonl \
        2>"$WORK/err" | jq -c '{seqno, n: .topic_count, t0: .["topics[0]"], t2: .["topics[2]"]}' >"$WORK/got" ||
        { fail fields_index "$(cat "$WORK/err")"; return; }
    # Past an event's count (topic_count 1 has no topics[2]) the column is null, never other bytes.
    [[ $(wc -l <"$WORK/got") -gt 100 ]] && jq -e -s 'any(.[]; .t2 == null) and any(.[]; .t2 != null)' "$WORK/got" >/dev/null &&
        cmp -s "$WORK/expected" "$WORK/got" ||
        { fail fields_index "differs from the decoded jsonl: $(diff "$WORK/expected" "$WORK/got" | head -3)"; return; }
    evring watch "$f" --from oldest --fields 'topics' >/dev/null 2>"$WORK/err"; local rc=$?
    [[ $rc == 2 ]] && grep -q "'topics' is a variable-length array; name an element: topics\[0\]" "$WORK/err" ||
        { fail fields_index "topics: exit $rc: $(cat "$WORK/err")"; return; }
    evring watch "$f" --from oldest --fields 'topics[99999999999999]' >/dev/null 2>"$WORK/err"; rc=$?
    [[ $rc == 2 ]] || { fail fields_index "a malformed index: exit $rc: $(cat "$WORK/err")"; return; }
    ok fields_index_into_trailing_arrays
}

case_top_where_counts_only_what_it_keeps() {
    test -x "$PRODUCER_BIN" || { skip top_where "no producer"; return; }
    "$PRODUCER_BIN" topw:14:22 --count 60000 --rate 20000 --keep 2>"$WORK/producer.err" &
    local producer=$!
    PIDS+=("$producer")
    poll 1000 0.01 test -e "$EVRING_RING_DIR/topw" || { fail top_where "no ring"; return; }
    evring top topw --interval 1 --count 2 --where 'seqno == 0' >"$WORK/none" 2>"$WORK/err" ||
        { fail top_where "seqno == 0: $(cat "$WORK/err")"; return; }
    evring top topw --interval 1 --count 2 --where 'seqno > 0' >"$WORK/all" 2>"$WORK/err" ||
        { fail top_where "seqno > 0: $(cat "$WORK/err")"; return; }
    grep -q ": 0 ev/s .*(where seqno == 0)$" "$WORK/none" ||
        { fail top_where "a filter keeping nothing: $(cat "$WORK/none")"; return; }
    grep -qE ": [1-9][0-9.]*k? ev/s .*\(where seqno > 0\)$" "$WORK/all" ||
        { fail top_where "a filter keeping everything: $(cat "$WORK/all")"; return; }
    evring top topw --count 1 --where 'seqno ==' >/dev/null 2>"$WORK/err"; local rc=$?
    [[ $rc == 2 && $(wc -l <"$WORK/err") == 1 ]] && grep -q "^evring: bad --where 'seqno ==': at" "$WORK/err" ||
        { fail top_where "a bad expression: exit $rc: $(cat "$WORK/err")"; return; }
    kill "$producer" 2>/dev/null; wait "$producer" 2>/dev/null
    ok top_where_counts_only_what_it_keeps
}

# top SET --where: the filter is applied to each member of a ring set (a line per member, each
# with the filter, and the total); a bad expression is refused once, before any refresh.
case_top_where_applies_to_each_member_of_a_set() {
    test -x "$PRODUCER_BIN" || { skip top_where_set "no producer"; return; }
    local set=topws$$
    "$PRODUCER_BIN" "$set" --threads 2 --count 1000000 --rate 20000 2>"$WORK/producer.err" &
    local producer=$!
    PIDS+=("$producer")
    poll 1000 0.01 test -e "$EVRING_RING_DIR/$set/m1" || { fail top_where_set "no set"; return; }
    evring top "$set" --interval 1 --count 2 --where 'seqno == 0' >"$WORK/set-none" 2>"$WORK/err" ||
        { fail top_where_set "seqno == 0: $(cat "$WORK/err")"; return; }
    evring top "$set" --interval 1 --count 2 --where 'seqno > 0' >"$WORK/set-all" 2>"$WORK/err" ||
        { fail top_where_set "seqno > 0: $(cat "$WORK/err")"; return; }
    grep -q " $set member 0: 0 ev/s .*(where seqno == 0)$" "$WORK/set-none" &&
        grep -q " $set member 1: 0 ev/s .*(where seqno == 0)$" "$WORK/set-none" &&
        grep -q " $set total: 0 ev/s" "$WORK/set-none" ||
        { fail top_where_set "a filter keeping nothing: $(cat "$WORK/set-none")"; return; }
    grep -qE " $set member 1: [1-9][0-9.]*k? ev/s .*\(where seqno > 0\)$" "$WORK/set-all" &&
        grep -qE " $set total: [1-9][0-9.]*k? ev/s" "$WORK/set-all" ||
        { fail top_where_set "a filter keeping everything: $(cat "$WORK/set-all")"; return; }
    evring top "$set" --count 1 --where 'seqno ==' >/dev/null 2>"$WORK/err"; local rc=$?
    [[ $rc == 2 && $(wc -l <"$WORK/err") == 1 ]] && grep -q "bad --where 'seqno ==': at" "$WORK/err" ||
        { fail top_where_set "a bad expression: exit $rc: $(cat "$WORK/err")"; return; }
    kill "$producer" 2>/dev/null; wait "$producer" 2>/dev/null
    rm -rf "${EVRING_RING_DIR:?}/$set"
    ok top_where_applies_to_each_member_of_a_set
}

# digest takes the selection the other commands take: --where digests what a recording made with
# the same --where holds, and --member of a set what that member's ring holds alone.
case_digest_selects_like_the_other_commands() {
    test -x "$PRODUCER_BIN" || { skip digest_select "no producer"; return; }
    local set=dsel$$ whole one alone kept rec rc
    "$PRODUCER_BIN" "$set" --threads 2 --count 3000 2>"$WORK/producer.err" || { fail digest_select "producer"; return; }
    whole=$(digest_of "$set"); one=$(digest_of "$set" --member 1); alone=$(digest_of "$EVRING_RING_DIR/$set/m1")
    [[ -n $one && $one == "$alone" && $one != "$whole" ]] ||
        { fail digest_select "--member 1: $one, the member's ring $alone, the set $whole"; return; }
    evring record "$EVRING_RING_DIR/$set/m0" --from oldest --where 'type == TRADE && quantity > 500' \
        -o "$WORK/trades.evrec" 2>/dev/null || { fail digest_select "record --where"; return; }
    kept=$(digest_of "$EVRING_RING_DIR/$set/m0" --where 'type == TRADE && quantity > 500')
    rec=$(digest_of "$WORK/trades.evrec")
    [[ -n $kept && $kept == "$rec" ]] || { fail digest_select "--where: $kept, its recording $rec"; return; }
    evring digest "$EVRING_RING_DIR/$set/m0" --member 0 >/dev/null 2>"$WORK/err"; rc=$?
    [[ $rc == 2 ]] && grep -q "^evring: --member picks members of a ring set" "$WORK/err" ||
        { fail digest_select "--member of a ring: exit $rc: $(cat "$WORK/err")"; return; }
    evring digest "$set" --where 'quantity >' >/dev/null 2>"$WORK/err"; rc=$?
    [[ $rc == 2 ]] && grep -q "^evring: bad --where 'quantity >': at" "$WORK/err" ||
        { fail digest_select "a bad --where: exit $rc: $(cat "$WORK/err")"; return; }
    rm -rf "${EVRING_RING_DIR:?}/$set"
    ok digest_selects_like_the_other_commands
}

# Relays a snapshot ($1) into stream $2 with the relay's other options after.
relay_snapshot() {
    local f=$1 stream=$2; shift 2
    evring relay "$f" --to "nats://127.0.0.1:$NATS_PORT" --stream "$stream" --no-register "$@" 2>>"$WORK/relay-$stream.err"
}

case_relay_and_mirror_where_keep_what_watch_keeps() {
    have_snapshots || { skip relay_mirror_where "EVRING_CONFORMANCE_DIR unset"; return; }
    [[ -n $NATS_PORT ]] || { skip relay_mirror_where "no nats-server"; return; }
    local f=$DIR/emn-1b-15m.snapshot.zst expr='type == TXN_LOG && topics[0] ^= 0xddf252ad || type == BLOCK_START'
    evring watch "$f" --from oldest --where "$expr" --format jsonl >"$WORK/kept.jsonl" 2>/dev/null
    local n
    n=$(events_of "$WORK/kept.jsonl" | wc -l)
    [[ $n -gt 10 ]] || { fail relay_mirror_where "watch kept only $n"; return; }
    relay_snapshot "$f" KEPT --where "$expr" || { fail relay_mirror_where "relay: $(cat "$WORK/relay-KEPT.err")"; return; }
    evring watch "nats://127.0.0.1:$NATS_PORT/KEPT" --from oldest --count "$n" --format jsonl >"$WORK/stream.jsonl" 2>"$WORK/err" ||
        { fail relay_mirror_where "watch the stream: $(cat "$WORK/err")"; return; }
    [[ $(events_of "$WORK/kept.jsonl" | sha256sum) == $(events_of "$WORK/stream.jsonl" | sha256sum) ]] ||
        { fail relay_mirror_where "relay --where differs: $(diff <(events_of "$WORK/kept.jsonl") <(events_of "$WORK/stream.jsonl") | head -3)"; return; }
    # Filtered: readers of the stream count no loss between the kept events.
    grep -q "lost\|gap" <(jq -c 'select(.gap != null)' "$WORK/stream.jsonl") &&
        { fail relay_mirror_where "the filtered stream reads as gaps"; return; }
    # mirror --where from the whole stream keeps the same events (numbered afresh).
    relay_snapshot "$f" WHOLE || { fail relay_mirror_where "relay: $(cat "$WORK/relay-WHOLE.err")"; return; }
    evring mirror "nats://127.0.0.1:$NATS_PORT/WHOLE" --to "wmirror$$" --where "$expr" --count "$n" --keep --no-register \
        2>"$WORK/mirror.err" || { fail relay_mirror_where "mirror --where: $(cat "$WORK/mirror.err")"; return; }
    evring watch "wmirror$$" --from oldest --format jsonl >"$WORK/mirror.jsonl" 2>/dev/null
    rm -f "$EVRING_RING_DIR/wmirror$$"
    [[ $(content_of "$WORK/kept.jsonl" | sha256sum) == $(content_of "$WORK/mirror.jsonl" | sha256sum) ]] ||
        { fail relay_mirror_where "mirror --where differs: $(diff <(content_of "$WORK/kept.jsonl") <(content_of "$WORK/mirror.jsonl") | head -3)"; return; }
    ok relay_and_mirror_where_keep_what_watch_keeps
}

case_digest_is_the_same_for_a_snapshot_its_recording_and_its_mirror() {
    have_snapshots || { skip digest_mirror "EVRING_CONFORMANCE_DIR unset"; return; }
    [[ -n $NATS_PORT ]] || { skip digest_mirror "no nats-server"; return; }
    local f=$DIR/emn-1b-15m.snapshot.zst n
    n=$(evring digest "$f" --json 2>/dev/null | jq .events)
    evring record "$f" --from oldest -o "$WORK/snap.evrec" 2>/dev/null || { fail digest_mirror "record"; return; }
    relay_snapshot "$f" DIGEST || { fail digest_mirror "relay: $(cat "$WORK/relay-DIGEST.err")"; return; }
    evring mirror "nats://127.0.0.1:$NATS_PORT/DIGEST" --to "dmirror$$" --count "$n" --keep --no-register 2>"$WORK/mirror.err" ||
        { fail digest_mirror "mirror: $(cat "$WORK/mirror.err")"; return; }
    local snap rec mirror stream whole
    # As they are, with no option: the snapshot starts at seqno 1 and has no gap, and its writer
    # aligned payloads to 16 bytes as the mirror's does, so the mirror's seqnos and payload offsets
    # are the snapshot's (docs/cli.md, "evring digest").
    snap=$(digest_of "$f"); rec=$(digest_of "$WORK/snap.evrec"); mirror=$(digest_of "dmirror$$")
    stream=$(evring digest "nats://127.0.0.1:$NATS_PORT/DIGEST" --count "$n" 2>/dev/null | cut -d' ' -f1)
    [[ -n $snap && $snap == "$rec" && $snap == "$mirror" && $snap == "$stream" ]] ||
        { fail digest_mirror "snapshot $snap, recording $rec, mirror $mirror, stream $stream"; return; }
    # --where digests the same part of each (the transaction headers here).
    snap=$(digest_of "$f" --where 'type == TXN_HEADER_START'); mirror=$(digest_of "dmirror$$" --where 'type == TXN_HEADER_START')
    [[ -n $snap && $snap == "$mirror" && $snap != $(digest_of "$f") ]] ||
        { fail digest_mirror "--where: snapshot $snap, mirror $mirror"; return; }
    # With the blanks (for sources that do not start at 1, or another payload alignment).
    snap=$(digest_of "$f" --blank-seqno --blank-offset)
    rec=$(digest_of "$WORK/snap.evrec" --blank-seqno --blank-offset)
    mirror=$(digest_of "dmirror$$" --blank-seqno --blank-offset)
    stream=$(evring digest "nats://127.0.0.1:$NATS_PORT/DIGEST" --count "$n" --blank-seqno --blank-offset 2>/dev/null | cut -d' ' -f1)
    # Without --count a stream is digested up to its newest event when the digest started.
    whole=$(digest_of "nats://127.0.0.1:$NATS_PORT/DIGEST" --blank-seqno --blank-offset)
    rm -f "$EVRING_RING_DIR/dmirror$$"
    [[ -n $snap && $snap == "$rec" && $snap == "$mirror" && $snap == "$stream" && $snap == "$whole" ]] ||
        { fail digest_mirror "--blank-seqno --blank-offset: snapshot $snap, recording $rec, mirror $mirror, stream $stream ($whole)"; return; }
    [[ $(digest_of "$f") != "$snap" ]] || { fail digest_mirror "the blanks changed nothing"; return; }
    ok digest_is_the_same_for_a_snapshot_its_recording_and_its_mirror
}

if have_nats && start_nats_server; then :; else NATS_PORT=; fi
case_span_names_compare_by_label
case_fields_index_into_trailing_arrays
case_top_where_counts_only_what_it_keeps
case_top_where_applies_to_each_member_of_a_set
case_digest_selects_like_the_other_commands
case_relay_and_mirror_where_keep_what_watch_keeps
case_digest_is_the_same_for_a_snapshot_its_recording_and_its_mirror
exit_with_results
