#!/bin/bash
# Ring sets end to end (docs/ring-sets.md), the acceptance of issue 20 at a
# smaller count: `producer NAME --threads 4 --count N` writes a set of 4
# members; `evring watch NAME --from oldest --format jsonl` prints all 4*N
# events, each with a `member` key, in non-decreasing record_epoch_nanos, with
# no gap; the same for `evring record` of the set replayed with watch, and for
# evring.open(NAME) in Python (when the package of this build loads).
# Then the set everywhere a ring goes: `snapshot SET` (one file that watch,
# digest, stats, info, snapshot and Python read as the set; a cut one refused),
# `export SET` (a track per member), `metrics`/`top`/`readers`/`info SET` (per
# member, promtool-checked) and `watch --follow-name SET` (a re-created set).
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
skip_script_unless "python3 is not installed" command -v python3
make_work evring-ring-set-test

COUNT=20000
SET=set$$
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

# Checks jsonl on stdin: every event has a member in 0..3, N per member,
# non-decreasing times. Prints "ok" or what is wrong.
check_jsonl() {
    "$PY" -c '
import collections, json, sys
count = int(sys.argv[1])
per = collections.Counter()
last = 0
for n, line in enumerate(sys.stdin):
    e = json.loads(line)
    if "member" not in e: sys.exit("line %d has no member key" % (n + 1))
    if e["record_epoch_nanos"] < last: sys.exit("line %d goes back in time" % (n + 1))
    last = e["record_epoch_nanos"]
    per[e["member"]] += 1
want = {m: count for m in range(4)}
if dict(per) != want: sys.exit("per member %s, expected %s" % (dict(per), want))
print("ok")
' "$COUNT"
}

if "$PRODUCER_BIN" "$SET" --threads 4 --count "$COUNT" 2>"$WORK/producer.err"; then
    ok producer_writes_a_set_of_four_members
else
    fail producer_writes_a_set_of_four_members "$(cat "$WORK/producer.err")"
fi

out=$("$EVRING_BIN" watch "$SET" --from oldest --format jsonl 2>"$WORK/watch.err" | check_jsonl 2>&1)
if [ "$out" = ok ] && grep -q " 0 lost in 0 gaps" "$WORK/watch.err"; then
    ok watch_prints_every_event_merged_with_its_member
else
    fail watch_prints_every_event_merged_with_its_member "$out $(cat "$WORK/watch.err")"
fi

lines=$("$EVRING_BIN" watch "$SET" --from oldest --format jsonl --member 2 2>/dev/null | wc -l)
if [ "$lines" -eq "$COUNT" ]; then ok watch_member_filter_keeps_one_member
else fail watch_member_filter_keeps_one_member "$lines lines, expected $COUNT"; fi

# --count counts the kept member's events only (the follow loop filters members,
# so the other members' events, merged before them, do not use up the count).
members=$("$EVRING_BIN" watch "$SET" --from oldest --format jsonl --member 2 --count 5 2>/dev/null |
          grep -o '"member":[0-9]*' | sort | uniq -c | tr -s ' ')
if [ "$members" = ' 5 "member":2' ]; then ok member_filter_with_count_gives_that_members_events
else fail member_filter_with_count_gives_that_members_events "got: $members"; fi

if "$EVRING_BIN" record "$SET" --output "$WORK/set.evrec" --from oldest 2>"$WORK/record.err"; then
    out=$("$EVRING_BIN" watch "$WORK/set.evrec" --from oldest --format jsonl 2>"$WORK/replay.err" | check_jsonl 2>&1)
    if [ "$out" = ok ]; then ok record_of_the_set_replays_merged_with_members
    else fail record_of_the_set_replays_merged_with_members "$out"; fi
else
    fail record_of_the_set_replays_merged_with_members "$(cat "$WORK/record.err")"
fi

"$EVRING_BIN" watch "$SET" --from 5 >/dev/null 2>"$WORK/seqno.err"
if grep -q "MEMBER:SEQNO" "$WORK/seqno.err"; then ok a_plain_seqno_on_a_set_is_refused_by_name
else fail a_plain_seqno_on_a_set_is_refused_by_name "$(cat "$WORK/seqno.err")"; fi

first=$("$EVRING_BIN" watch "$SET" --from 3:100 --count 1 --format jsonl 2>/dev/null)
case "$first" in
    *'"seqno":100,"member":3,'*) ok from_member_seqno_starts_at_that_members_event ;;
    *) fail from_member_seqno_starts_at_that_members_event "got: $first" ;;
esac

# snapshot SET: one file; watch, digest, stats and info read it as the set.
if "$EVRING_BIN" snapshot "$SET" -o "$WORK/set.zst" 2>"$WORK/snap.err"; then
    out=$("$EVRING_BIN" watch "$WORK/set.zst" --from oldest --format jsonl 2>"$WORK/snapwatch.err" | check_jsonl 2>&1)
    live=$("$EVRING_BIN" digest "$SET" 2>&1)
    frozen=$("$EVRING_BIN" digest "$WORK/set.zst" 2>&1)
    if [ "$out" = ok ] && [ "$live" = "$frozen" ] && [ -n "$live" ]; then ok snapshot_of_the_set_reads_as_the_set
    else fail snapshot_of_the_set_reads_as_the_set "$out; digest live '$live' snapshot '$frozen' $(cat "$WORK/snap.err")"; fi
else
    fail snapshot_of_the_set_reads_as_the_set "$(cat "$WORK/snap.err")"
fi
info=$("$EVRING_BIN" info "$WORK/set.zst" --json 2>&1)
stats=$("$EVRING_BIN" stats "$WORK/set.zst" 2>&1)
case "$info|$stats" in
    *'"kind":"ring-set-snapshot"'*'"member":3'*"$((4 * COUNT)) events"*) ok info_and_stats_describe_a_set_snapshot ;;
    *) fail info_and_stats_describe_a_set_snapshot "$info $stats" ;;
esac
# A snapshot of the snapshot holds the same events.
if "$EVRING_BIN" snapshot "$WORK/set.zst" -o "$WORK/again.zst" 2>/dev/null &&
    [ "$("$EVRING_BIN" digest "$WORK/again.zst" 2>&1)" = "$frozen" ]; then ok a_set_snapshot_snapshots_to_the_same_events
else fail a_set_snapshot_snapshots_to_the_same_events "$("$EVRING_BIN" digest "$WORK/again.zst" 2>&1)"; fi
# A snapshot follows no name: refused by name, exit 2.
"$EVRING_BIN" watch "$WORK/set.zst" --follow-name >/dev/null 2>"$WORK/fnsnap.err"; rc=$?
if [ "$rc" = 2 ] && grep -q "is a ring set snapshot" "$WORK/fnsnap.err"; then ok follow_name_refuses_a_set_snapshot
else fail follow_name_refuses_a_set_snapshot "exit $rc: $(cat "$WORK/fnsnap.err")"; fi
# Cut short: exit 1, one line naming the file.
head -c 5000 "$WORK/set.zst" > "$WORK/cut.zst"
"$EVRING_BIN" watch "$WORK/cut.zst" --from oldest >/dev/null 2>"$WORK/cut.err"; rc=$?
if [ "$rc" = 1 ] && [ "$(wc -l < "$WORK/cut.err")" = 1 ] && grep -q "cut.zst" "$WORK/cut.err"; then
    ok a_cut_set_snapshot_is_refused_in_one_line
else
    fail a_cut_set_snapshot_is_refused_in_one_line "exit $rc: $(cat "$WORK/cut.err")"
fi

# export SET: a track per member (a group "member N" holding that member's
# event tracks), in Chrome JSON and Perfetto; every event on its member's.
if "$EVRING_BIN" export "$SET" --chrome-json "$WORK/set.json" --perfetto "$WORK/set.pftrace" 2>"$WORK/export.err"; then
    out=$("$PY" -c '
import collections, json, sys
count = int(sys.argv[2])
events = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e["name"] == "thread_name"}
groups = sorted(n for n in names.values() if n.startswith("member ") and n.count(" ") == 1)
if groups != ["member 0", "member 1", "member 2", "member 3"]: sys.exit("member tracks: %s" % groups)
per = collections.Counter(names[e["tid"]].split(" ")[1] for e in events if e.get("ph") == "i")
if dict(per) != {str(m): count for m in range(4)}: sys.exit("instants per member %s" % dict(per))
print("ok")
' "$WORK/set.json" "$COUNT" 2>&1)
    if [ "$out" = ok ] && [ -s "$WORK/set.pftrace" ] && grep -q " 0 lost" "$WORK/export.err"; then
        ok export_gives_a_track_per_member
    else
        fail export_gives_a_track_per_member "$out $(cat "$WORK/export.err")"
    fi
else
    fail export_gives_a_track_per_member "$(cat "$WORK/export.err")"
fi

# top, metrics and readers SET: a row or series per member, plus the set's
# totals, while two writer threads publish.
LIVE=live$$
"$PRODUCER_BIN" "$LIVE" --threads 2 --count 1000000 --rate 500 2>/dev/null &
producer=$!
PIDS+=("$producer")
if poll 500 0.01 test -e "$EVRING_RING_DIR/$LIVE/m1"; then
    # A reader of member 1 alone registers in that member's registry; a
    # merged reader of the set in every member's.
    "$EVRING_BIN" watch "$EVRING_RING_DIR/$LIVE/m1" >/dev/null 2>&1 &
    PIDS+=("$!")
    "$EVRING_BIN" watch "$LIVE" >/dev/null 2>&1 &
    PIDS+=("$!")
    # m1's file exists before the set lists it: wait for metrics to see the member.
    metrics_of_both() {
        "$EVRING_BIN" metrics "$LIVE" >"$WORK/metrics.txt" 2>"$WORK/metrics.err" &&
            grep -qx "evring_up{ring=\"$LIVE\",member=\"1\"} 1" "$WORK/metrics.txt"
    }
    poll 500 0.02 metrics_of_both
    "$EVRING_BIN" metrics "$LIVE" >"$WORK/metrics.txt" 2>"$WORK/metrics.err"; rc=$?
    if [ "$rc" = 0 ] && grep -qx "evring_up{ring=\"$LIVE\",member=\"0\"} 1" "$WORK/metrics.txt" &&
        grep -qx "evring_up{ring=\"$LIVE\",member=\"1\"} 1" "$WORK/metrics.txt" &&
        grep -qx "evring_set_members{ring=\"$LIVE\"} 2" "$WORK/metrics.txt" &&
        grep -qx "evring_writer_alive{ring=\"$LIVE\",member=\"1\"} 1" "$WORK/metrics.txt"; then
        ok metrics_gives_a_series_per_member_and_the_sets_totals
    else
        fail metrics_gives_a_series_per_member_and_the_sets_totals "exit $rc: $(grep -v '^#' "$WORK/metrics.txt" | head -5) $(cat "$WORK/metrics.err")"
    fi
    if command -v promtool >/dev/null; then
        promtool check metrics <"$WORK/metrics.txt" >"$WORK/promtool.out" 2>&1 &&
            ok set_metrics_pass_promtool || fail set_metrics_pass_promtool "$(head -3 "$WORK/promtool.out")"
    else
        skip set_metrics_pass_promtool "promtool is not installed (apt-get install prometheus)"
    fi
    "$EVRING_BIN" top "$LIVE" --count 2 --interval 1 >"$WORK/top.txt" 2>"$WORK/top.err"; rc=$?
    if [ "$rc" = 0 ] && grep -q "^.* $LIVE member 0: [0-9.k]* ev/s .*writer alive" "$WORK/top.txt" &&
        grep -q "^.* $LIVE member 1: " "$WORK/top.txt" && grep -Eq " $LIVE total: [1-9][0-9.k]* ev/s" "$WORK/top.txt"; then
        ok top_shows_a_line_per_member_and_the_total
    else
        fail top_shows_a_line_per_member_and_the_total "exit $rc: $(cat "$WORK/top.txt" "$WORK/top.err")"
    fi
    if poll 300 0.02 sh -c "'$EVRING_BIN' readers '$LIVE' --no-reclaim | grep -q 'total: 3 readers'"; then
        table=$("$EVRING_BIN" readers "$LIVE" 2>&1)
        json=$("$EVRING_BIN" readers "$LIVE" --json 2>&1 | grep -c '"member":0,')
        case "$json|$table" in
            "1|"*"member 0: registry"*"member 1: registry"*"total: 3 readers registered in 2 members"*)
                ok readers_lists_each_members_registry_with_the_merged_reader_in_each ;;
            *) fail readers_lists_each_members_registry "$json $table" ;;
        esac
        # info SET: a readers line per member (1 in member 0, 2 in member 1).
        info=$("$EVRING_BIN" info "$LIVE" 2>&1)
        info_json=$("$EVRING_BIN" info "$LIVE" --json 2>&1)
        case "$info|$info_json" in
            *"member 0 readers"*"1 registered: 1 alive"*"member 1 readers"*"2 registered: 2 alive"*"|"*'"member":0,'*'"readers":"1 registered'*'"member":1,'*'"readers":"2 registered'*)
                ok info_shows_each_members_readers ;;
            *) fail info_shows_each_members_readers "$info $info_json" ;;
        esac
    else
        fail readers_lists_each_members_registry "not 3 readers: $("$EVRING_BIN" readers "$LIVE" 2>&1)"
    fi
else
    fail metrics_gives_a_series_per_member_and_the_sets_totals "the producer made no set"
fi
kill "$producer" 2>/dev/null; wait "$producer" 2>/dev/null
rm -rf "${EVRING_RING_DIR:?}/$LIVE"

# watch --follow-name SET: the set removed and re-created under its name is
# followed from the new set's oldest events.
FN=fn$$
if "$PRODUCER_BIN" "$FN" --threads 2 --count 1000 2>/dev/null; then
    "$EVRING_BIN" watch "$FN" --from oldest --follow-name --format jsonl >"$WORK/fn.jsonl" 2>"$WORK/fn.err" &
    watcher=$!
    PIDS+=("$watcher")
    if poll 3000 0.01 has_lines "$WORK/fn.jsonl" 2000 && poll 3000 0.01 grep -q "waiting for a new ring set" "$WORK/fn.err"; then
        rm -rf "${EVRING_RING_DIR:?}/$FN"
        "$PRODUCER_BIN" "$FN" --threads 3 --count 300 2>/dev/null
        if poll 3000 0.01 has_lines "$WORK/fn.jsonl" 2900; then
            kill -INT "$watcher"; wait "$watcher"; rc=$?
            second=$(tail -n +2001 "$WORK/fn.jsonl" | "$PY" -c '
import collections, json, sys
per = collections.Counter(json.loads(l)["member"] for l in sys.stdin)
print(sorted(per.items()))')
            if [ "$rc" = 0 ] && [ "$(wc -l < "$WORK/fn.jsonl")" = 2900 ] &&
                [ "$second" = "[(0, 300), (1, 300), (2, 300)]" ] &&
                grep -q "a new writer created ring set '$FN'" "$WORK/fn.err"; then
                ok watch_follow_name_follows_a_set_re_created_under_its_name
            else
                fail watch_follow_name_follows_a_set_re_created_under_its_name "exit $rc, second set $second: $(cat "$WORK/fn.err")"
            fi
        else
            fail watch_follow_name_follows_a_set_re_created_under_its_name "the new set was not followed: $(cat "$WORK/fn.err")"
        fi
    else
        fail watch_follow_name_follows_a_set_re_created_under_its_name "the first set was not read to its end: $(cat "$WORK/fn.err")"
    fi
else
    fail watch_follow_name_follows_a_set_re_created_under_its_name "producer"
fi
rm -rf "${EVRING_RING_DIR:?}/$FN"

if [ -n "${EVRING_PYTHONPATH:-}" ] && PYTHONPATH="$EVRING_PYTHONPATH" "$PY" -c 'import evring' 2>/dev/null; then
    out=$(PYTHONPATH="$EVRING_PYTHONPATH" "$PY" -c '
import json, sys, evring
for e in evring.open(sys.argv[1]).replay("oldest"):
    print(json.dumps({"member": e.member, "record_epoch_nanos": e.record_epoch_nanos}))
' "$SET" | check_jsonl 2>&1)
    if [ "$out" = ok ]; then ok python_open_iterates_the_set_merged
    else fail python_open_iterates_the_set_merged "$out"; fi
    out=$(PYTHONPATH="$EVRING_PYTHONPATH" "$PY" -c '
import json, sys, evring
for e in evring.open(sys.argv[1]).replay("oldest"):
    print(json.dumps({"member": e.member, "record_epoch_nanos": e.record_epoch_nanos}))
' "$WORK/set.zst" | check_jsonl 2>&1)
    if [ "$out" = ok ]; then ok python_open_iterates_a_set_snapshot_merged
    else fail python_open_iterates_a_set_snapshot_merged "$out"; fi
else
    skip python_open_iterates_the_set_merged "the Python package of this build does not load"
fi

rm -rf "${EVRING_RING_DIR:?}/$SET"
exit_with_results
