# What the CLI test scripts share; sourced, not run:
#
#     source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
#     skip_script_unless "jq is not installed (apt-get install jq)" command -v jq
#     make_work evring-cli-test           # WORK and EVRING_RING_DIR=$WORK/rings
#     start_thing & PIDS+=($!)            # stopped when the script exits
#     ...                                 # each case: ok NAME, fail NAME WHY or skip NAME WHY
#     exit_with_results                   # 1 if any case failed, else 0
#
# Every script needs EVRING_BIN and PRODUCER_BIN (exit 1 when unset) and runs
# with `set -u`.
#
# The lines a script prints are for people ("ok NAME", "FAIL NAME: WHY",
# "skip NAME: WHY"); meson counts each script as one test by its exit status:
# 0 passed, 77 skipped ("skipped: WHY", from skip_script_unless), else failed.
#
# On exit (however the script ends) the processes in PIDS are continued (a
# case may have stopped them) and sent KILL_SIGNAL (TERM unless the script
# sets it), the script's own cleanup_first runs before that when it defines
# one, and WORK is removed. A script that ends with status 0 without reaching
# exit_with_results failed: bash stops at a syntax error in a function (an
# unfinished [[ ]]) with status 0, and its cases would pass unrun.

set -u
: "${EVRING_BIN:?set EVRING_BIN to the evring binary}"
: "${PRODUCER_BIN:?set PRODUCER_BIN to the producer example}"

FAILED=0
FINISHED=0
PIDS=()
KILL_SIGNAL=${KILL_SIGNAL:-TERM}

ok() { echo "ok $1"; }
fail() { echo "FAIL $1: $2"; FAILED=1; }
skip() { echo "skip $1: $2"; }
exit_with_results() { FINISHED=1; exit "$FAILED"; }

# Ends the script as skipped, saying why, unless COMMAND... succeeds.
skip_script_unless() {
    local why=$1
    shift
    "$@" >/dev/null 2>&1 || { echo "skipped: $why"; FINISHED=1; exit 77; }
}

# Makes the work directory PARENT/NAME-XXXXXX (PARENT: /dev/shm unless given)
# with the ring directory in it, and removes it on exit.
make_work() {
    WORK=$(mktemp -d "${2:-/dev/shm}/$1-XXXXXX") || { echo "FAIL setup: no work directory"; exit 1; }
    export EVRING_RING_DIR="$WORK/rings"
    mkdir -p "$EVRING_RING_DIR"
}

harness_exit() {
    local status=$?
    [[ -z ${WORK:-} ]] || harness_cleanup
    if [[ $status == 0 && $FINISHED == 0 ]]; then
        echo "FAIL harness: the script ended before exit_with_results (a syntax error?)"
        exit 1
    fi
}
trap harness_exit EXIT

harness_cleanup() {
    if declare -F cleanup_first >/dev/null; then cleanup_first; fi
    [[ -z $NATS_PID ]] || kill "$NATS_PID" 2>/dev/null
    local pid
    for pid in "${PIDS[@]}"; do
        kill -CONT "$pid" 2>/dev/null
        kill "-$KILL_SIGNAL" "$pid" 2>/dev/null
    done
    wait
    rm -rf "$WORK"
} 2>/dev/null

# Runs COMMAND... (its output discarded) up to TRIES times, PAUSE seconds
# apart, until it succeeds; fails when it never did.
poll() {
    local tries=$1 pause=$2 _
    shift 2
    for _ in $(seq "$tries"); do
        "$@" >/dev/null 2>&1 && return 0
        sleep "$pause"
    done
    return 1
}

# Whether file $1 exists and has at least $2 lines (for poll).
has_lines() { [[ -f $1 && $(wc -l <"$1") -ge $2 ]]; }

# Whether file $1 holds a line matching the extended regular expression $2
# (for poll: a notice a process prints when something happened).
has_text() { grep -qE -- "$2" "$1" 2>/dev/null; }
# Polls (up to 10 s) until file $1 holds a line matching $2.
wait_for_text() { poll 1000 0.01 has_text "$1" "$2"; }

# Polls (up to 10 s) until `evring readers RING` lists a line matching the
# extended regular expression PATTERN (dead readers are not reclaimed). Runs
# the script's own `evring` function.
wait_readers() { poll 200 0.05 readers_match "$1" "$2"; }
readers_match() { evring readers "$1" --no-reclaim 2>/dev/null | grep -qE "$2"; }

# start_producer RING [ARGS...]: the producer example in the background
# (PRODUCER_PID, in PIDS, its stderr in $WORK/producer-RING.err); returns once
# the file at the ring's name is there (a writer renames a whole ring file into
# place). Not `evring info`:
# under AddressSanitizer one run of it takes long enough for the producer to
# write all its events and exit before hold_producer could hold it.
start_producer() {
    local ring=$1; shift
    "$PRODUCER_BIN" "$ring" "$@" 2>"$WORK/producer-$ring.err" &
    PRODUCER_PID=$!
    PIDS+=("$PRODUCER_PID")
    poll 1000 0.01 test -e "$EVRING_RING_DIR/${ring%%:*}" && return 0
    echo "producer did not create $ring"; return 1
}

# start_ready_producer RING [ARGS...]: as start_producer, with --stop-when-ready:
# returns once the producer has stopped itself (SIGSTOP) with its ring, or its
# set and every member, made and nothing written, so readers can attach
# however slow the build; release_producer lets it go on.
start_ready_producer() {
    local ring=$1; shift
    "$PRODUCER_BIN" "$ring" "$@" --stop-when-ready 2>"$WORK/producer-$ring.err" &
    PRODUCER_PID=$!
    PIDS+=("$PRODUCER_PID")
    poll 3000 0.01 stopped_or_gone "$PRODUCER_PID" && stopped "$PRODUCER_PID" && return 0
    echo "producer did not make $ring: $(cat "$WORK/producer-$ring.err")"; return 1
}
# Whether process $1 is stopped (state T; the state follows the ") " that ends its name).
stopped() { [[ $(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) == T ]]; }
stopped_or_gone() { stopped "$1" || ! kill -0 "$1" 2>/dev/null; }

# Holds the producer still (SIGSTOP) right after its ring appears, so a
# follower can attach while the writer lives and before it has written much;
# a slowed build (AddressSanitizer) may otherwise start a follower after a
# short-lived writer has come and gone.
hold_producer() { kill -STOP "$PRODUCER_PID" 2>/dev/null; }
release_producer() { kill -CONT "$PRODUCER_PID" 2>/dev/null; }

# Waits until process $1 has the ring file $2 mapped (it is following it), or
# has already exited (its caller's `wait` then gives its status).
wait_attached() { poll 1000 0.01 attached_or_gone "$1" "$2"; }
attached_or_gone() { grep -qF "$2" "/proc/$1/maps" 2>/dev/null || ! kill -0 "$1" 2>/dev/null; }

# A `nats-server -js` on 127.0.0.1 with its store in $WORK/nats-store, for
# the stream scripts (its arguments go to nats-server: -c FILE for a
# configuration). start_nats_server starts it on $NATS_PORT when set (a
# restart keeps the port), else on a port it picks, which it then sets; it
# waits up to 15 s for the server's ports file and returns false when none
# came ($WORK/nats-server.log says why). stop_nats_server stops it and waits;
# the harness stops it on exit too. Needs jq.
NATS_PID=
NATS_PORT=
start_nats_server() {
    mkdir -p "$WORK/nats-store" "$WORK/nats-ports"
    rm -f "$WORK"/nats-ports/*
    nats-server "$@" -js -a 127.0.0.1 -p "${NATS_PORT:--1}" -sd "$WORK/nats-store" --ports_file_dir "$WORK/nats-ports" \
        >"$WORK/nats-server.log" 2>&1 &
    NATS_PID=$!
    local f _
    for _ in $(seq 1500); do
        f=$(ls "$WORK"/nats-ports/*.ports 2>/dev/null | head -1)
        if [[ -n $f ]] && jq -e '.nats[0]' "$f" >/dev/null 2>&1; then
            NATS_PORT=$(jq -r '.nats[0]' "$f" | sed 's/.*://')
            return 0
        fi
        sleep 0.01
    done
    return 1
}
stop_nats_server() { kill "$NATS_PID" 2>/dev/null; wait "$NATS_PID" 2>/dev/null; NATS_PID=; }
