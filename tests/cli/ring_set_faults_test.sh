#!/bin/bash
# Ring sets under faults, end to end (docs/ring-sets.md, "Faults"): a set its
# writer removes on a clean close (`producer --threads N --remove`, the
# default keep_on_close false) ends `watch`, `record` and Python's
# follow(timeout=...), and `watch --follow-name` waits for a new set without
# spinning; a manifest that is a FIFO or a directory is named with what it is;
# a manifest entry naming another member's file reads each member once; a
# member cut short under a live reader exits 1 with its loss reported; events
# out of time order are counted in watch's and record's summaries.
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
skip_script_unless "python3 is not installed" command -v python3
make_work evring-ring-set-faults-test

PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
evring() { timeout -k 5 30 "$EVRING_BIN" "$@"; }

# Whether process $1 has exited (for poll).
gone() { ! kill -0 "$1" 2>/dev/null; }
# Whether the first MiB of file $1 holds text $2 (for poll: a reader that
# spins writes gigabytes, which grep must not read every poll).
said() { head -c 1048576 "$1" | grep -q -- "$2"; }
# The CPU time (user + system, in clock ticks) process $1 has used.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# --- a set removed by its writer's clean close ---
GONE=gone$$
# The producer stops itself once its set is made (start_ready_producer) and
# goes on once both readers are registered in it: a slowed build
# (AddressSanitizer) may otherwise start them after the short-lived set has
# come and gone.
"$EVRING_BIN" watch "$GONE" --wait --from oldest --format jsonl >"$WORK/gone.jsonl" 2>"$WORK/gone.err" &
watcher=$!
"$EVRING_BIN" record "$GONE" --wait --from oldest --output "$WORK/gone.evrec" 2>"$WORK/gone-record.err" &
recorder=$!
PIDS+=("$watcher" "$recorder")
attached() {
    wait_readers "$GONE" "watch +watch +$watcher .* alive" && wait_readers "$GONE" "record +record +$recorder "
}
if start_ready_producer "$GONE" --threads 2 --count 2000 --rate 4000 --remove && attached &&
    release_producer && wait "$PRODUCER_PID"; then
    if poll 500 0.02 gone "$watcher"; then
        wait "$watcher"; rc=$?
        lines=$(wc -l <"$WORK/gone.jsonl")
        if [ "$rc" = 0 ] && [ "$lines" = 4000 ] && [ "$(wc -l <"$WORK/gone.err")" -le 8 ] &&
            grep -q "ring set .*/$GONE was removed (its last writer closed it)" "$WORK/gone.err" &&
            grep -q "end of ring set '$GONE' (removed by its last writer" "$WORK/gone.err"; then
            ok watch_of_a_set_removed_by_its_writer_ends
        else
            fail watch_of_a_set_removed_by_its_writer_ends "exit $rc, $lines lines: $(head -c 2000 "$WORK/gone.err")"
        fi
    else
        fail watch_of_a_set_removed_by_its_writer_ends "still running after the set was removed: $(wc -l <"$WORK/gone.err") lines on stderr; $(head -3 "$WORK/gone.err")"
        kill "$watcher"
    fi
    if poll 100 0.02 gone "$recorder"; then
        wait "$recorder"; rc=$?
        if [ "$rc" = 0 ] && grep -q "recorded 4000 events" "$WORK/gone-record.err" &&
            [ "$(wc -l <"$WORK/gone-record.err")" -le 8 ]; then
            ok record_of_a_set_removed_by_its_writer_ends
        else
            fail record_of_a_set_removed_by_its_writer_ends "exit $rc: $(head -c 2000 "$WORK/gone-record.err")"
        fi
    else
        fail record_of_a_set_removed_by_its_writer_ends "still running after the set was removed: $(head -3 "$WORK/gone-record.err")"
        kill "$recorder"
    fi
else
    release_producer
    fail watch_of_a_set_removed_by_its_writer_ends "producer or readers not started: $(cat "$WORK/producer-$GONE.err" "$WORK/gone.err" "$WORK/gone-record.err" | head -c 2000)"
fi

# --follow-name: after a removed set, waits (idle) for a new one and follows it.
FN=fn$$
"$EVRING_BIN" watch "$FN" --follow-name --from oldest --format jsonl >"$WORK/fn.jsonl" 2>"$WORK/fn.err" &
watcher=$!
PIDS+=("$watcher")
# Each set's producer goes on once the watcher is registered in it (see GONE above).
followed() { wait_readers "$FN" "watch +watch +$watcher .* alive"; release_producer; }
start_ready_producer "$FN" --threads 2 --count 500 --rate 2000 --remove && followed && wait "$PRODUCER_PID"
if poll 500 0.02 said "$WORK/fn.err" "waiting for a new ring set named '$FN'"; then
    before=$(cpu_ticks "$watcher")
    sleep 1
    used=$(( $(cpu_ticks "$watcher") - before ))
    start_ready_producer "$FN" --threads 3 --count 100 --rate 2000 --remove && followed && wait "$PRODUCER_PID"
    if poll 1000 0.01 has_lines "$WORK/fn.jsonl" 1300 &&
        poll 1000 0.01 sh -c "[ \$(head -c 1048576 '$WORK/fn.err' | grep -c \"waiting for a new ring set named '$FN'\") = 2 ]"; then
        kill -INT "$watcher"; wait "$watcher"; rc=$?
        # Waiting costs no CPU to speak of: at most 20 ticks (0.2 s) in that second.
        if [ "$rc" = 0 ] && [ "$used" -le 20 ] && [ "$(wc -l <"$WORK/fn.jsonl")" = 1300 ] &&
            [ "$(wc -l <"$WORK/fn.err")" -le 16 ]; then
            ok follow_name_waits_for_a_new_set_after_a_removed_one
        else
            fail follow_name_waits_for_a_new_set_after_a_removed_one "exit $rc, $used ticks idle, $(wc -l <"$WORK/fn.jsonl") lines: $(head -c 2000 "$WORK/fn.err")"
        fi
    else
        fail follow_name_waits_for_a_new_set_after_a_removed_one "the new set was not followed: $(head -c 2000 "$WORK/fn.err")"
    fi
else
    fail follow_name_waits_for_a_new_set_after_a_removed_one "no wait for a new set: $(head -c 2000 "$WORK/fn.err")"
fi
kill "$watcher" 2>/dev/null
rm -f "$WORK/gone.err" "$WORK/gone-record.err" "$WORK/fn.err"  # gigabytes when a reader spins

# Python: follow(timeout=2) of a set that is removed returns.
if [ -n "${EVRING_PYTHONPATH:-}" ] && PYTHONPATH="$EVRING_PYTHONPATH" "$PY" -c 'import evring' 2>/dev/null; then
    PYSET=py$$
    "$PRODUCER_BIN" "$PYSET" --threads 2 --count 6000 --rate 2000 --remove 2>/dev/null &
    producer=$!
    PIDS+=("$producer")
    poll 500 0.01 test -e "$EVRING_RING_DIR/$PYSET/m1"
    out=$(PYTHONPATH="$EVRING_PYTHONPATH" timeout -k 5 20 "$PY" -c '
import sys, time, evring
reader = evring.open(sys.argv[1])
start = time.monotonic()
n = sum(1 for _ in reader.follow(timeout=2))
print("returned" if time.monotonic() - start < 15 else "slow", n)
' "$PYSET" 2>&1); rc=$?
    case "$rc|$out" in
        "0|returned "*) ok python_follow_of_a_removed_set_returns ;;
        *) fail python_follow_of_a_removed_set_returns "exit $rc: $(echo "$out" | head -5)" ;;
    esac
    wait "$producer" 2>/dev/null
else
    skip python_follow_of_a_removed_set_returns "the Python package of this build does not load"
fi

# --- manifests that are not regular files: named, with what they are ---
for kind in fifo directory; do
    mkdir -p "$EVRING_RING_DIR/bad-$kind"
    case $kind in
        fifo) mkfifo "$EVRING_RING_DIR/bad-$kind/manifest"; what="a FIFO" ;;
        directory) mkdir "$EVRING_RING_DIR/bad-$kind/manifest"; what="a directory" ;;
    esac
    timeout -k 5 10 "$EVRING_BIN" watch "bad-$kind" >/dev/null 2>"$WORK/bad-$kind.err"; rc=$?
    if [ "$rc" = 1 ] && grep -q "ring set manifest $EVRING_RING_DIR/bad-$kind/manifest is $what, not a regular file" "$WORK/bad-$kind.err"; then
        ok "a_manifest_that_is_a_${kind}_is_named_with_what_it_is"
    else
        fail "a_manifest_that_is_a_${kind}_is_named_with_what_it_is" "exit $rc: $(cat "$WORK/bad-$kind.err")"
    fi
done

# --- a manifest entry naming another member's file ---
LIE=lie$$
if "$PRODUCER_BIN" "$LIE:10:16" --threads 2 --count 100 2>/dev/null; then
    # Entry 1's name (manifest offset 256 + 64 + 32) becomes "m0".
    printf 'm0\0' | dd of="$EVRING_RING_DIR/$LIE/manifest" bs=1 seek=$((256 + 64 + 32)) conv=notrunc 2>/dev/null
    "$EVRING_BIN" watch "$LIE" --from oldest --format jsonl >"$WORK/lie.jsonl" 2>"$WORK/lie.err"; rc=$?
    # Member 1's events are m1's own (each member file read alone), not m0's again.
    per=$("$PY" -c '
import json, sys
def events(path, member=None):
    out = []
    for line in open(path):
        e = json.loads(line)
        if member is None or e["member"] == member: out.append((e["seqno"], e["record_epoch_nanos"]))
    return out
merged = [events(sys.argv[1], m) for m in (0, 1)]
alone = [events(p) for p in sys.argv[2:4]]
print("same" if merged == alone and len(merged[1]) == 100 else "differ")' \
        "$WORK/lie.jsonl" <("$EVRING_BIN" watch "$EVRING_RING_DIR/$LIE/m0" --from oldest --format jsonl 2>/dev/null) \
        <("$EVRING_BIN" watch "$EVRING_RING_DIR/$LIE/m1" --from oldest --format jsonl 2>/dev/null))
    if [ "$rc" = 0 ] && [ "$per" = same ] &&
        grep -q "member entry 1 names 'm0', not its own file 'm1'" "$WORK/lie.err"; then
        ok an_entry_naming_another_members_file_reads_each_member_once
    else
        fail an_entry_naming_another_members_file_reads_each_member_once "exit $rc, per member $per: $(cat "$WORK/lie.err")"
    fi
else
    fail an_entry_naming_another_members_file_reads_each_member_once "producer"
fi

# --- events out of time order: counted in the summaries ---
# Member 0's event 50 gets event 1's time: the merge hands it out in its
# member's order, after later events (descriptor slot 49 of m0: 2 MiB + 49 * 64,
# record_epoch_nanos at +16).
"$PY" -c '
import sys
path = sys.argv[1]
with open(path, "r+b") as f:
    f.seek((2 << 20) + 16); first = f.read(8)
    f.seek((2 << 20) + 49 * 64 + 16); f.write(first)
' "$EVRING_RING_DIR/$LIE/m0"
"$EVRING_BIN" watch "$LIE" --from oldest >/dev/null 2>"$WORK/late.err"
"$EVRING_BIN" record "$LIE" --from oldest --output "$WORK/late.evrec" 2>"$WORK/late-record.err"
if grep -q "(1 event out of time order: stamped earlier than one shown before it)" "$WORK/late.err" &&
    grep -q "recorded 200 events.*(1 event out of time order" "$WORK/late-record.err"; then
    ok events_out_of_time_order_are_counted_in_the_summaries
else
    fail events_out_of_time_order_are_counted_in_the_summaries "$(tail -1 "$WORK/late.err") / $(tail -1 "$WORK/late-record.err")"
fi
rm -rf "${EVRING_RING_DIR:?}/$LIE"

# watch --wait on a set created later: every member is merged before events
# stamped after it joined are shown (none out of time order).
LATER=later$$
"$EVRING_BIN" watch "$LATER" --wait --from oldest --format jsonl >"$WORK/later.jsonl" 2>"$WORK/later.err" &
watcher=$!
PIDS+=("$watcher")
# Created once the watcher waits for it; the producer stops itself once its
# set is made and writes (flat out) once the watcher is registered in it
# (see GONE above).
wait_for_text "$WORK/later.err" "waiting for ring '$LATER' to be created"
start_ready_producer "$LATER" --threads 4 --count 5000 --remove &&
    wait_readers "$LATER" "watch +watch +$watcher .* alive"
release_producer
wait "$PRODUCER_PID"
if poll 1000 0.01 gone "$watcher"; then
    back=$("$PY" -c '
import json, sys
last, back = 0, 0
for line in open(sys.argv[1]):
    t = json.loads(line)["record_epoch_nanos"]
    if t < last: back += 1
    last = max(last, t)
print(back)' "$WORK/later.jsonl")
    if [ "$back" = 0 ] && [ "$(wc -l <"$WORK/later.jsonl")" = 20000 ] && ! grep -q "out of time order" "$WORK/later.err"; then
        ok watch_wait_on_a_set_created_later_shows_events_in_time_order
    else
        fail watch_wait_on_a_set_created_later_shows_events_in_time_order "$back back in time: $(tail -1 "$WORK/later.err")"
    fi
else
    fail watch_wait_on_a_set_created_later_shows_events_in_time_order "did not end: $(head -3 "$WORK/later.err")"
fi

# --- a member cut short under a live reader: exit 1, its loss reported ---
CUT=cut$$
"$PRODUCER_BIN" "$CUT:12:20" --threads 2 --count 100000 --rate 2000 2>/dev/null &
producer=$!
PIDS+=("$producer")
if poll 500 0.01 test -e "$EVRING_RING_DIR/$CUT/m1"; then
    "$EVRING_BIN" watch "$CUT" --from oldest --format jsonl >"$WORK/cut.jsonl" 2>"$WORK/cut.err" &
    watcher=$!
    PIDS+=("$watcher")
    poll 1000 0.01 has_lines "$WORK/cut.jsonl" 200
    # The reader held while m0's writer goes on 200 events past what it has
    # read (m0's last_seqno, header offset 64), then m0 is cut to its header
    # section: the writer dies of it (SIGBUS) as soon as it writes past the
    # new end, and the reader, let go, finds m0's descriptors gone.
    kill -STOP "$watcher"
    read_m0=$(grep -c '"member":0,' "$WORK/cut.jsonl")
    poll 1000 0.01 "$PY" -c '
import struct, sys
with open(sys.argv[1], "rb") as f:
    f.seek(64); last = struct.unpack("<Q", f.read(8))[0]
sys.exit(0 if last > int(sys.argv[2]) + 200 else 1)' "$EVRING_RING_DIR/$CUT/m0" "$read_m0"
    truncate -s 2M "$EVRING_RING_DIR/$CUT/m0"
    kill -CONT "$watcher"
    if poll 1000 0.01 gone "$watcher"; then
        wait "$watcher"; rc=$?
        # The loss is reported: a gap line when m0's header still says how far
        # it went (it does: the header section is the 2 MiB kept), in the summary too.
        if [ "$rc" = 1 ] && grep -Eq "lost [0-9]+ events? \(member 0 seqno [0-9.]+\): .*truncated.*; member 0 is no longer read" "$WORK/cut.err" &&
            grep -q "is damaged" "$WORK/cut.err" && grep -Eq "\(1 damaged part\(s\), [1-9][0-9]* seqnos lost to damage" "$WORK/cut.err"; then
            ok a_member_cut_short_under_a_live_reader_exits_1
        else
            fail a_member_cut_short_under_a_live_reader_exits_1 "exit $rc: $(cat "$WORK/cut.err")"
        fi
    else
        fail a_member_cut_short_under_a_live_reader_exits_1 "watch did not end: $(cat "$WORK/cut.err")"
    fi
else
    fail a_member_cut_short_under_a_live_reader_exits_1 "the producer made no set"
fi
kill "$producer" 2>/dev/null; wait "$producer" 2>/dev/null
rm -rf "${EVRING_RING_DIR:?}/$CUT"

exit_with_results
