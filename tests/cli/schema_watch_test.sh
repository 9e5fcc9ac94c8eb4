#!/usr/bin/env bash
# End-to-end tests of decoding in the evring CLI (docs/cli.md, "Which schema
# decodes the events"): the real snapshots decode by name with no option, the
# producer's ring through its embedded schema, --schema FILE (and its mismatch
# error), --type and --flow by name, recordings keeping the schema, `schema
# show` on sources, and an untrusted embedded schema ignored with one warning.
# Needs EVRING_BIN, PRODUCER_BIN and SCHEMA_DIR (the repository's schemas/);
# uses the real snapshots when EVRING_CONFORMANCE_DIR names them. Each case
# prints "ok <name>" or "FAIL <name>: <why>"; the script exits 1 if any failed.
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
: "${SCHEMA_DIR:?set SCHEMA_DIR to the repository schemas/ directory}"
skip_script_unless "jq is not installed (apt-get install jq)" command -v jq
skip_script_unless "no producer example at $PRODUCER_BIN" test -x "$PRODUCER_BIN"
make_work evring-schema-watch

evring() { "$EVRING_BIN" "$@"; }

# A finished producer ring of 3000 events that stays (--keep): read to its end.
"$PRODUCER_BIN" feed:16:24 --count 3000 --keep 2>"$WORK/producer.err" ||
    { echo "FAIL setup: producer: $(cat "$WORK/producer.err")"; exit 1; }

case_real_snapshots_decode_every_event_by_name() {
    local dir=${EVRING_CONFORMANCE_DIR:-}
    if [[ -z $dir || ! -d $dir ]]; then echo "skip real_snapshots_decode_every_event_by_name (EVRING_CONFORMANCE_DIR unset)"; return; fi
    local f
    for f in "$dir"/*.zst; do
        local last; last=$(evring info --json "$f" | jq .last_seqno)
        evring watch "$f" --from oldest --format jsonl 2>"$WORK/real.err" > "$WORK/real.jsonl" || { fail real "$f: $(cat "$WORK/real.err")"; return; }
        [[ $(wc -l < "$WORK/real.jsonl") == "$last" ]] || { fail real "$f: $(wc -l < "$WORK/real.jsonl") lines, expected $last"; return; }
        # Every event by name, with fields, and none with a decode error.
        local bad; bad=$(jq -c 'select(.type_name == null or .fields == null or has("decode_error"))' "$WORK/real.jsonl" | wc -l)
        [[ $bad == 0 ]] || { fail real "$f: $bad events not decoded: $(jq -c 'select(has("decode_error")) | .decode_error' "$WORK/real.jsonl" | head -3)"; return; }
        evring watch "$f" --from oldest 2>/dev/null | grep -c 'decode_error\| type=' > "$WORK/real.count"
        [[ $(cat "$WORK/real.count") == 0 ]] || { fail real "$f: text lines without a name"; return; }
    done
    # Spot checks, values read by hand from the raw bytes (docs/schema.md, built-in schemas).
    local s="$dir/emn-1b-15m.snapshot.zst"
    evring watch "$s" --from oldest --count 1 --format jsonl 2>/dev/null | jq -e '
        .type_name == "BLOCK_START" and .fields.block_tag.block_number == 15000001 and
        .fields.eth_block_input.gas_limit == 30000000 and
        .fields.eth_block_input.beneficiary == "0x1ad91ee08f21be3de0ba2ba6918e714da6b45836"' >/dev/null ||
        { fail real "emn-1b-15m seqno 1 BLOCK_START fields"; return; }
    evring watch "$s" --from 691 --count 1 --format jsonl 2>/dev/null | jq -e '
        .type_name == "TXN_EVM_OUTPUT" and .fields.receipt.gas_used == 30300' >/dev/null ||
        { fail real "emn-1b-15m seqno 691 gas used"; return; }
    evring watch "$s" --from 7 --count 1 --format jsonl 2>/dev/null | jq -e '
        .fields.txn_header.txn_type == "EIP1559" and .fields.sender == "0x21fa2eac56b620e49ff722211dfe0f1e5d612c5e"' >/dev/null ||
        { fail real "emn-1b-15m seqno 7 transaction header"; return; }
    evring watch "$dir/mdn-500b-genesis.snapshot.zst" --from oldest --count 1 --format jsonl 2>/dev/null | jq -e '
        .type_name == "BLOCK_START" and .fields.block_tag.block_number == 1 and .fields.chain_id == "0x4eaf"' >/dev/null ||
        { fail real "mdn-500b-genesis seqno 1"; return; }
    evring watch "$s" --from oldest --count 1 2>/dev/null | grep -q ' seq=1 BLOCK_START block_tag.id=0x.* block_tag.block_number=15000001 ' ||
        { fail real "text line of seqno 1"; return; }
    evring info "$s" | grep -q '^schema  *monad_exec, 24 event types, from built-in schema monad-exec-v1$' ||
        { fail real "info: $(evring info "$s" | grep schema)"; return; }
    ok real_snapshots_decode_every_event_by_name
}

case_producer_ring_decodes_through_its_embedded_schema() {
    evring watch feed --from oldest --format jsonl >"$WORK/feed.jsonl" 2>"$WORK/feed.err" || { fail embedded "$(cat "$WORK/feed.err")"; return; }
    jq -e -s 'length == 3000 and all(.[]; (.type_name == "QUOTE" or .type_name == "TRADE")
              and (.fields.name | IN("ACME", "GLOBEX", "INITECH", "UMBRELLA"))
              and (.payload | length) == 2 * .payload_size)' "$WORK/feed.jsonl" >/dev/null ||
        { fail embedded "fields: $(head -1 "$WORK/feed.jsonl")"; return; }
    # Text: TYPE_NAME field=value after the time and seqno, flow tags by name.
    evring watch feed --from oldest --count 1 2>/dev/null |
        grep -Eq '^[0-9T:.-]+Z seq=1 (QUOTE|TRADE) counter=0 price=[0-9]+ quantity=[0-9]+ checksum=[0-9]+ name="[A-Z]+" ext.symbol=[1-4] ext.venue=[1-3]$' ||
        { fail embedded "text: $(evring watch feed --from oldest --count 1 2>&1)"; return; }
    evring info --json feed | jq -e '.kind == "ring" and .schema_origin == "embedded" and .schema_name == "demo"' >/dev/null ||
        { fail embedded "info: $(evring info --json feed)"; return; }
    evring schema show feed --json | jq -e '.origin == "embedded" and .content_name == "demo" and (.events | length) == 3' >/dev/null ||
        { fail embedded "schema show --json"; return; }
    evring schema show feed | head -1 | grep -q "^in use: embedded in ring file '$EVRING_RING_DIR/feed'" ||
        { fail embedded "schema show: $(evring schema show feed | head -1)"; return; }
    ok producer_ring_decodes_through_its_embedded_schema
}

case_schema_file_mismatch_names_both_hashes() {
    local dir=${EVRING_CONFORMANCE_DIR:-}
    local own; own=$(evring info --json feed | jq -r .schema_hash)
    evring watch feed --schema "$SCHEMA_DIR/monad-exec-v1.toml" --from oldest >/dev/null 2>"$WORK/mm.err"; local rc=$?
    [[ $rc == 1 && $(wc -l < "$WORK/mm.err") == 1 ]] || { fail mismatch "exit $rc: $(cat "$WORK/mm.err")"; return; }
    grep -q "^evring: schema file '.*monad-exec-v1.toml' does not describe ring file '.*feed'.*8933f907c432c98ac0c8db62f9aa164c0c3f1672f41290e4ea3408df6c6723f3.*$own" "$WORK/mm.err" ||
        { fail mismatch "message: $(cat "$WORK/mm.err")"; return; }
    evring info feed --schema "$SCHEMA_DIR/monad-exec-v1.toml" >/dev/null 2>&1 && { fail mismatch "info accepted it"; return; }
    if [[ -n $dir && -d $dir ]]; then
        # A file that describes a snapshot without an embedded schema wins over the built-in one.
        evring info --json "$dir/emn-30b-15m.snapshot.zst" --schema "$SCHEMA_DIR/monad-exec-v1.toml" |
            jq -e '.schema_origin == "file"' >/dev/null || { fail mismatch "matching file not used"; return; }
        evring watch "$dir/emn-30b-15m.snapshot.zst" --schema "$SCHEMA_DIR/monad-exec-v1.toml" --from oldest --count 1 2>/dev/null |
            grep -q ' seq=1 BLOCK_START ' || { fail mismatch "matching file does not decode"; return; }
    fi
    ok schema_file_mismatch_names_both_hashes
}

case_type_and_flow_accept_schema_names() {
    evring watch feed --from oldest --type TRADE --flow symbol=2 --format jsonl 2>/dev/null |
        jq -e -s 'length > 0 and all(.[]; .event_type == 3 and .type_name == "TRADE" and .content_ext[0] == 2)' >/dev/null ||
        { fail names "--type TRADE --flow symbol=2"; return; }
    # Numbers still work, and any case of a name.
    local a b
    a=$(evring watch feed --from oldest --type 3 --flow 0=2 --format jsonl 2>/dev/null | wc -l)
    b=$(evring watch feed --from oldest --type trade --flow symbol=2 --format jsonl 2>/dev/null | wc -l)
    [[ $a -gt 0 && $a == "$b" ]] || { fail names "numbers gave $a, names $b"; return; }
    local args expect
    while IFS='|' read -r args expect; do
        # shellcheck disable=SC2086
        evring watch feed --from oldest $args >/dev/null 2>"$WORK/err"; local rc=$?
        [[ $rc == 2 && $(wc -l < "$WORK/err") == 1 ]] || { fail names "'$args': exit $rc: $(cat "$WORK/err")"; return; }
        grep -q "^evring: $expect" "$WORK/err" || { fail names "'$args': $(cat "$WORK/err")"; return; }
    done <<'CASES'
--type FOO|bad --type 'FOO': not an event type of schema demo; expected a number (0-65535) or one of RECORD_ERROR, QUOTE, TRADE
--flow sym=1|bad --flow 'sym=1': not a flow tag of schema demo; expected INDEX=VALUE or NAME=VALUE with NAME one of symbol, venue
--flow symbol=x|bad --flow 'symbol=x'
--type 70000|bad --type '70000'
CASES
    local dir=${EVRING_CONFORMANCE_DIR:-}
    if [[ -n $dir && -d $dir ]]; then
        evring watch "$dir/emn-1b-15m.snapshot.zst" --from oldest --type TXN_HEADER_START --flow txn=4 --format jsonl 2>/dev/null |
            jq -e -s 'length == 1 and .[0].seqno == 7 and .[0].content_ext[1] == 4' >/dev/null ||
            { fail names "snapshot --type TXN_HEADER_START --flow txn=4"; return; }
    fi
    ok type_and_flow_accept_schema_names
}

case_recording_keeps_the_schema() {
    evring record feed --from oldest -o "$WORK/feed.evrec" 2>"$WORK/rec.err" || { fail recording "$(cat "$WORK/rec.err")"; return; }
    evring info --json "$WORK/feed.evrec" | jq -e '.schema_origin == "recording" and .schema_name == "demo" and .schema_bytes > 0' >/dev/null ||
        { fail recording "info: $(evring info --json "$WORK/feed.evrec")"; return; }
    evring watch "$WORK/feed.evrec" --from oldest --format jsonl 2>/dev/null > "$WORK/rec.jsonl"
    # The recording decodes exactly like its ring.
    cmp -s "$WORK/rec.jsonl" "$WORK/feed.jsonl" || { fail recording "replay differs from the ring's decoding"; return; }
    evring schema show "$WORK/feed.evrec" --json | jq -e '.origin == "recording"' >/dev/null || { fail recording "schema show"; return; }
    ok recording_keeps_the_schema
}

case_untrusted_embedded_schema_is_ignored_with_one_warning() {
    # A copy of the ring whose header hash no longer matches its embedded schema.
    cp "$EVRING_RING_DIR/feed" "$WORK/forged"
    printf '\xff\xff\xff\xff' | dd of="$WORK/forged" bs=1 seek=8 conv=notrunc status=none
    evring watch "$WORK/forged" --from oldest --count 2 --format jsonl >"$WORK/forged.jsonl" 2>"$WORK/forged.err"; local rc=$?
    [[ $rc == 0 ]] || { fail untrusted "exit $rc: $(cat "$WORK/forged.err")"; return; }
    [[ $(grep -vc "events printed" "$WORK/forged.err") == 1 ]] || { fail untrusted "not one warning: $(cat "$WORK/forged.err")"; return; }
    jq -e -s 'length == 2 and all(.[]; has("type_name") | not)' "$WORK/forged.jsonl" >/dev/null ||
        { fail untrusted "decoded with an untrusted schema: $(head -1 "$WORK/forged.jsonl")"; return; }
    evring watch "$WORK/forged" --from oldest --count 1 2>/dev/null | grep -q ' seq=1 type=[23] size=' || { fail untrusted "raw text"; return; }
    evring schema show "$WORK/forged" >/dev/null 2>"$WORK/show.err"; rc=$?
    [[ $rc == 1 ]] && grep -q "carries no schema" "$WORK/show.err" || { fail untrusted "schema show: exit $rc: $(cat "$WORK/show.err")"; return; }
    ok untrusted_embedded_schema_is_ignored_with_one_warning
}

case_consumer_example_decodes_both_ways() {
    local consumer_bin; consumer_bin="$(dirname "$PRODUCER_BIN")/consumer"
    [[ -x $consumer_bin ]] || { echo "skip consumer_example_decodes_both_ways (no consumer example)"; return; }
    "$consumer_bin" feed --from oldest --trades-only --count 3 --print 3 > "$WORK/c1.out" 2>&1 || { fail consumer "$(cat "$WORK/c1.out")"; return; }
    "$consumer_bin" feed --from oldest --trades-only --count 3 --print 3 --generic > "$WORK/c2.out" 2>&1 || { fail consumer "$(cat "$WORK/c2.out")"; return; }
    [[ $(grep -Ec '^[0-9]+ TRADE [A-Z]+ [0-9]+ @ [0-9.]+ \(venue [1-3]\)$' "$WORK/c1.out") == 3 ]] || { fail consumer "generated: $(cat "$WORK/c1.out")"; return; }
    [[ $(grep -Ec '^[0-9]+ TRADE counter=[0-9]+ price=[0-9]+ quantity=[0-9]+ checksum=[0-9]+ name="[A-Z]+"$' "$WORK/c2.out") == 3 ]] ||
        { fail consumer "generic: $(cat "$WORK/c2.out")"; return; }
    # The same events, by seqno, both ways.
    [[ $(cut -d' ' -f1 "$WORK/c1.out" | head -3) == $(cut -d' ' -f1 "$WORK/c2.out" | head -3) ]] || { fail consumer "different events"; return; }
    ok consumer_example_decodes_both_ways
}

case_real_snapshots_decode_every_event_by_name
case_consumer_example_decodes_both_ways
case_producer_ring_decodes_through_its_embedded_schema
case_schema_file_mismatch_names_both_hashes
case_type_and_flow_accept_schema_names
case_recording_keeps_the_schema
case_untrusted_embedded_schema_is_ignored_with_one_warning
exit_with_results
