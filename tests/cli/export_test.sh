#!/usr/bin/env bash
# End-to-end tests of `evring export`: the real snapshots exported to Perfetto
# and Chrome JSON, decoded with protoc against proto/perfetto_trace_subset.proto
# and read with jq (counts, block/txn nesting, counter tracks); a live ring; a
# large recording exported in flat memory; bad inputs. Needs EVRING_BIN,
# PRODUCER_BIN and EVRING_SOURCE_DIR; uses the real snapshots when
# EVRING_CONFORMANCE_DIR names them. Each case prints "ok <name>",
# "skip <name> (<why>)" or "FAIL <name>: <why>"; exits 1 if any case failed.
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
: "${EVRING_SOURCE_DIR:?set EVRING_SOURCE_DIR to the source tree}"
skip_script_unless "jq is not installed (apt-get install jq)" command -v jq
skip_script_unless "protoc is not installed (apt-get install protobuf-compiler)" command -v protoc
PROTO="$EVRING_SOURCE_DIR/proto/perfetto_trace_subset.proto"
CHECK="$EVRING_SOURCE_DIR/tests/cli/export_trace_check.py"

make_work evring-export-test /tmp

evring() { "$EVRING_BIN" "$@"; }

# A number from the export's summary line: "... 12 slices ..." -> field "slices".
summary_number() { grep -o "[0-9]* $2" "$1" | head -1 | cut -d' ' -f1; }

decode() { protoc --proto_path="$(dirname "$PROTO")" --decode=perfetto.protos.Trace "$(basename "$PROTO")" < "$1"; }

# Exports $1 and checks both outputs against the summary and against watch.
check_export() {
    local name=$1 source=$2 outer=$3 inner=$4
    local trace="$WORK/$name.pftrace" json="$WORK/$name.json" err="$WORK/$name.err"
    if ! evring export "$source" --from oldest --perfetto "$trace" --chrome-json "$json" 2>"$err"; then
        fail "$name" "export failed: $(cat "$err")"; return 1
    fi
    local events tracks slices samples packets
    events=$(grep -o 'exported [0-9]* events' "$err" | cut -d' ' -f2)
    tracks=$(summary_number "$err" tracks)
    slices=$(summary_number "$err" 'slices')
    samples=$(summary_number "$err" 'counter samples')
    packets=$(summary_number "$err" packets)
    local watched
    watched=$(evring watch "$source" --from oldest 2>/dev/null | wc -l)
    [[ $events == "$watched" ]] || { fail "$name" "exported $events events, watch printed $watched"; return 1; }
    [[ $packets == $((tracks + events + 2 * slices + samples)) ]] ||
        { fail "$name" "$packets packets is not tracks + events + 2 x slices + samples: $(cat "$err")"; return 1; }
    local verdict
    if ! verdict=$(decode "$trace" | /usr/bin/python3 "$CHECK" --outer "$outer" --inner "$inner"); then
        fail "$name" "decoded trace: $verdict"; return 1
    fi
    local expect="packets=$packets descriptors=$tracks instants=$events begins=$slices ends=$slices counters=$samples counter_tracks=2"
    [[ $verdict == "$expect "* ]] || { fail "$name" "decoded '$verdict', expected '$expect ...'"; return 1; }
    local jq_counts
    jq_counts=$(jq -r '[.traceEvents[] | .ph] | [length, (map(select(. == "i")) | length), (map(select(. == "B")) | length),
                   (map(select(. == "E")) | length), (map(select(. == "C")) | length)] | @tsv' "$json") ||
        { fail "$name" "the Chrome JSON does not parse"; return 1; }
    # Chrome JSON: no metadata event for the two counter tracks.
    local jq_expect
    jq_expect=$(printf '%s\t%s\t%s\t%s\t%s' $((packets - 2)) "$events" "$slices" "$slices" "$samples")
    [[ $jq_counts == "$jq_expect" ]] || { fail "$name" "chrome-json counts '$jq_counts', expected '$jq_expect'"; return 1; }
    echo "   $name: $verdict"
    echo "   $name: $(grep -o 'exported.*' "$err")"
    LAST_VERDICT=$verdict
    return 0
}

case_real_snapshots_show_blocks_containing_transactions() {
    local dir=${EVRING_CONFORMANCE_DIR:-}
    if [[ -z $dir || ! -d $dir ]]; then
        echo "skip real_snapshots_show_blocks_containing_transactions (EVRING_CONFORMANCE_DIR unset)"; return
    fi
    local snap all_ok=1
    for snap in "$dir"/*.snapshot.zst; do
        local name
        name=$(basename "$snap" .snapshot.zst)
        check_export "$name" "$snap" block txn || { all_ok=0; continue; }
        local blocks nested
        blocks=$(grep -o 'blocks=[0-9]*' <<<"$LAST_VERDICT" | cut -d= -f2)
        nested=$(grep -o 'txns_nested=[0-9]*' <<<"$LAST_VERDICT" | cut -d= -f2)
        if (( blocks < 1 || nested < 1 )); then fail "$name" "no blocks or no nested transactions: $LAST_VERDICT"; all_ok=0; fi
    done
    (( all_ok )) && ok real_snapshots_show_blocks_containing_transactions
}

case_live_ring_is_exported_up_to_its_newest_event() {
    "$PRODUCER_BIN" export-live --count 3000 --keep >/dev/null 2>"$WORK/producer.err" ||
        { fail live_ring "producer failed: $(cat "$WORK/producer.err")"; return; }
    check_export live export-live block txn >/dev/null || return
    local err="$WORK/live.err"
    grep -q 'exported 3000 events' "$err" || { fail live_ring "$(cat "$err")"; return; }
    # Names come from the ring's embedded schema; a track per flow tag value works too.
    decode "$WORK/live.pftrace" | grep -q 'name: "QUOTE"' || { fail live_ring "no QUOTE events by name"; return; }
    evring export export-live --from oldest --track-by flow:symbol --perfetto "$WORK/flow.pftrace" 2>"$WORK/flow.err" ||
        { fail live_ring "--track-by flow:symbol: $(cat "$WORK/flow.err")"; return; }
    decode "$WORK/flow.pftrace" | grep -q 'name: "symbol [0-9]*"' || { fail live_ring "no per-symbol tracks"; return; }
    ok live_ring_is_exported_up_to_its_newest_event
}

# --flow NAME=VALUE by the ring's schema (demo.toml: symbol is content_ext[0]),
# the same events as --flow 0=VALUE and as watch --flow NAME=VALUE (one resolver).
case_flow_by_name_is_flow_by_index() {
    [[ -e $EVRING_RING_DIR/export-live ]] || { fail flow_by_name "no export-live ring (live_ring failed)"; return; }
    local by_name by_index watched
    evring export export-live --from oldest --flow symbol=1 --perfetto "$WORK/flow-name.pftrace" 2>"$WORK/flow-name.err" ||
        { fail flow_by_name "--flow symbol=1: $(cat "$WORK/flow-name.err")"; return; }
    evring export export-live --from oldest --flow 0=1 --perfetto "$WORK/flow-index.pftrace" 2>"$WORK/flow-index.err" ||
        { fail flow_by_name "--flow 0=1: $(cat "$WORK/flow-index.err")"; return; }
    by_name=$(grep -o 'exported [0-9]* events' "$WORK/flow-name.err" | cut -d' ' -f2)
    by_index=$(grep -o 'exported [0-9]* events' "$WORK/flow-index.err" | cut -d' ' -f2)
    watched=$(evring watch export-live --from oldest --flow symbol=1 2>/dev/null | wc -l)
    [[ -n $by_name ]] && (( by_name > 0 && by_name < 3000 )) && [[ $by_name == "$by_index" && $by_name == "$watched" ]] ||
        { fail flow_by_name "symbol=1 exported ${by_name:-?}, 0=1 exported ${by_index:-?}, watch printed $watched"; return; }
    expect_one_line flow_by_name 2 evring export export-live --perfetto "$WORK/a" --flow nosuch=1 || return
    grep -q "not a flow tag of schema demo" "$WORK/err" || { fail flow_by_name "$(cat "$WORK/err")"; return; }
    echo "   --flow symbol=1: $by_name of 3000 events"
    ok flow_by_name_is_flow_by_index
}

# Max RSS in KiB of an export of $1 with further arguments.
export_rss() {
    local source=$1; shift
    # Under ASan freed blocks wait in a quarantine of up to 256 MiB, which would count as growth.
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1:thread_local_quarantine_size_kb=64" \
    /usr/bin/time -f '%M' -o "$WORK/rss" "$EVRING_BIN" export "$source" --from oldest --perfetto "$WORK/rss.pftrace" \
        --chrome-json "$WORK/rss.json" "$@" 2>"$WORK/rss.err" >/dev/null || return 1
    cat "$WORK/rss"
}

case_large_recording_exports_in_flat_memory() {
    [[ -x /usr/bin/time ]] || { echo "skip large_recording_exports_in_flat_memory (no /usr/bin/time)"; return; }
    "$PRODUCER_BIN" export-big:19:26 --count 400000 --keep >/dev/null 2>&1 || { fail flat_memory "producer failed"; return; }
    evring record export-big --from oldest -o "$WORK/big.evrec" 2>/dev/null ||
        { fail flat_memory "record failed"; return; }
    local small large
    small=$(export_rss "$WORK/big.evrec" --count 2000) || { fail flat_memory "small export failed"; return; }
    large=$(export_rss "$WORK/big.evrec") || { fail flat_memory "large export failed"; return; }
    grep -q 'exported 400000 events' "$WORK/rss.err" || { fail flat_memory "$(cat "$WORK/rss.err")"; return; }
    local bytes
    bytes=$(stat -c %s "$WORK/rss.pftrace")
    # 200 times the events, a trace of tens of MiB: memory may grow by buffers, not by events.
    if (( large > small + 16384 )); then
        fail flat_memory "max RSS ${large} KiB for 400000 events vs ${small} KiB for 2000"; return
    fi
    echo "   max RSS ${small} KiB (2000 events), ${large} KiB (400000 events, perfetto $bytes bytes)"
    ok large_recording_exports_in_flat_memory
}

# $1: case; the command must exit $2 with exactly one line on stderr starting "evring: ".
expect_one_line() {
    local name=$1 code=$2; shift 2
    "$@" >"$WORK/out" 2>"$WORK/err"
    local rc=$?
    if [[ $rc != "$code" ]]; then fail "$name" "exit $rc, expected $code: $(cat "$WORK/err")"; return 1; fi
    if [[ $(wc -l < "$WORK/err") != 1 ]] || ! grep -q '^evring: ' "$WORK/err"; then
        fail "$name" "stderr is not one evring: line: $(cat "$WORK/err")"; return 1
    fi
    return 0
}

case_bad_inputs_get_one_line_errors() {
    "$PRODUCER_BIN" export-bad --count 10 --keep >/dev/null 2>&1 || { fail bad_inputs "producer failed"; return; }
    local ring="$EVRING_RING_DIR/export-bad"
    expect_one_line missing_source 1 evring export no-such-ring --perfetto "$WORK/x.pftrace" || return
    grep -q 'no-such-ring' "$WORK/err" || { fail bad_inputs "missing source not named: $(cat "$WORK/err")"; return; }
    [[ ! -e $WORK/x.pftrace ]] || { fail bad_inputs "an output was created for a missing source"; return; }
    expect_one_line unwritable_output 1 evring export export-bad --perfetto "$WORK/no/such/dir/x.pftrace" || return
    grep -q 'no/such/dir/x.pftrace' "$WORK/err" || { fail bad_inputs "output not named: $(cat "$WORK/err")"; return; }
    expect_one_line second_output_unwritable 1 evring export export-bad --perfetto "$WORK/y.pftrace" \
        --chrome-json /proc/version || return
    [[ ! -e $WORK/y.pftrace ]] || { fail bad_inputs "the first output was left behind"; return; }
    local before
    before=$(sha256sum < "$ring")
    expect_one_line output_over_source 1 evring export export-bad --perfetto "$ring" || return
    [[ $(sha256sum < "$ring") == "$before" ]] || { fail bad_inputs "the ring was overwritten"; return; }
    expect_one_line no_output 2 evring export export-bad || return
    expect_one_line same_output_twice 2 evring export export-bad --perfetto "$WORK/a" --chrome-json "$WORK/a" || return
    expect_one_line bad_track_by 2 evring export export-bad --perfetto "$WORK/a" --track-by flow:nope || return
    expect_one_line bad_type 2 evring export export-bad --perfetto "$WORK/a" --type NOPE || return
    expect_one_line bad_rate_interval 2 evring export export-bad --perfetto "$WORK/a" --rate-interval 5 || return
    expect_one_line bad_from 2 evring export export-bad --perfetto "$WORK/a" --from yesterday || return
    ok bad_inputs_get_one_line_errors
}

case_real_snapshots_show_blocks_containing_transactions
case_live_ring_is_exported_up_to_its_newest_event
case_flow_by_name_is_flow_by_index
case_large_recording_exports_in_flat_memory
case_bad_inputs_get_one_line_errors
exit_with_results
