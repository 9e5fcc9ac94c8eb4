#!/usr/bin/env bash
# `evring top` on a terminal, as a user sees it (docs/cli.md, docs/operations.md):
# top runs in a detached tmux session of a fixed size and the cases read the
# screen with `tmux capture-pane -p`. They check that the header names the
# ring, that the rates and counters a live producer must move are not zero,
# the reader row of a registered `watch`, the message on a narrow terminal,
# that `q` and Ctrl-C (SIGINT from the terminal, during a long --interval)
# each end top with exit 0 and hand the terminal back as it was (its modes,
# a visible cursor), and a ring set's row per member. Skipped with the reason
# when tmux is missing. Every wait is bounded; the tmux server is killed on exit.
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
skip_script_unless "no producer example at $PRODUCER_BIN (-Dexamples=false?)" test -x "$PRODUCER_BIN"
skip_script_unless "tmux is not installed (apt-get install tmux)" command -v tmux
make_work evring-top-test
TMUX_SOCKET="evring-top-test-$$"
cleanup_first() { tmux -L "$TMUX_SOCKET" kill-server 2>/dev/null; }

evring() { timeout -k 5 30 "$EVRING_BIN" "$@"; }
tm() { tmux -L "$TMUX_SOCKET" "$@"; }

# A producer writing 2000 events/s (QUOTE and TRADE) into a 4096-slot ring,
# and a registered reader of it, for the whole test.
"$PRODUCER_BIN" feed:12:20 --rate 2000 2>"$WORK/producer.err" &
PIDS+=($!)
poll 300 0.02 evring info feed
evring info feed >/dev/null 2>&1 || { echo "FAIL setup: the producer did not create the ring"; exit 1; }
"$EVRING_BIN" watch feed >/dev/null 2>&1 &
WATCHER=$!
PIDS+=("$WATCHER")

# Starts `evring top ARGS...` in a new detached session NAME of 120x30. When
# top exits, the pane says "top-exited-CODE tty-restored" (or tty-changed:
# the terminal's modes differ from before top), then stays for the checks.
start_top() {
    local name=$1
    shift
    tm -f /dev/null new-session -d -s "$name" -x 120 -y 30 \
        "before=\$(stty -g); EVRING_RING_DIR='$EVRING_RING_DIR' '$EVRING_BIN' top $*; rc=\$?;
         if [ \"\$(stty -g)\" = \"\$before\" ]; then t=restored; else t=changed; fi;
         echo top-exited-\$rc tty-\$t; sleep 60"
}
screen() { tm capture-pane -p -t "$1"; }
# Polls the screen of session $1 (up to $3 tenths of a second, default 100)
# until a line matches the extended regular expression $2.
wait_screen() {
    local _
    for _ in $(seq "${3:-100}"); do
        screen "$1" | grep -qE "$2" && return 0
        sleep 0.1
    done
    return 1
}
cursor_visible() { [[ $(tm display-message -p -t "$1" '#{cursor_flag}') == 1 ]]; }
# The seqno on the writer line of session $1's screen.
seqno_shown() { screen "$1" | sed -nE 's/^writer alive .* seqno ([0-9]+) .*/\1/p'; }

test_view_then_q() {
    wait_readers feed "watch +watch +$WATCHER .* alive" || { fail view "watch not registered"; return; }
    start_top view feed
    # The second refresh has rates (the first only sets the baseline).
    wait_screen view '^QUOTE +[1-9]' || { fail view "no QUOTE rate: $(screen view)"; return; }
    wait_screen view "^watch +watch +$WATCHER +alive" || { fail view "no reader row: $(screen view)"; return; }
    local s
    s=$(screen view)
    local want
    for want in "^evring top - feed \\($EVRING_RING_DIR/feed\\)   q quits$" \
        '^writer alive \(1 pid\)   seqno [1-9][0-9]*   descriptors [1-9][0-9]* of 4096   payload window [1-9]' \
        '^total [1-9][0-9.]*[kM]? ev/s  [0-9.]*[1-9][0-9]* MiB/s   abandoned reservations 0' \
        '^TYPE +EV/S +MIB/S +SHARE$' '^QUOTE +[1-9][0-9.]*[kM]? +[0-9.]+ +[1-9][0-9.]*%$' '^TRADE +[1-9]' \
        '^READERS \(1 registered\)$' '^NAME +KIND +PID +STATE +LAG-EV +LAG-TIME +LOST +ABANDONED$' \
        "^watch +watch +$WATCHER +alive +[0-9]+!? +[^ ]+( [a-z]+)? +[0-9]+ +[0-9]+$"; do
        grep -qE "$want" <<<"$s" || { fail view "no line matching '$want' on the screen:"$'\n'"$s"; return; }
    done
    cursor_visible view && { fail view "the cursor is shown while top draws"; return; }
    # The view refreshes: the writer's seqno moves on.
    local first later
    first=$(seqno_shown view)
    for _ in $(seq 50); do
        later=$(seqno_shown view)
        [[ -n $later && $later -gt $first ]] && break
        sleep 0.1
    done
    [[ -n $first && -n $later && $later -gt $first ]] || { fail view "seqno stayed at '$first' ('$later')"; return; }
    # A narrow terminal: a short message instead of wrapped lines.
    tm resize-window -t view -x 20 -y 10
    wait_screen view '^too narrow \(20 col\)' 50 || { fail view "narrow: $(screen view)"; return; }
    tm resize-window -t view -x 120 -y 30
    wait_screen view '^evring top - feed' 50 || { fail view "not redrawn at 120 columns: $(screen view)"; return; }
    tm send-keys -t view q
    wait_screen view '^top-exited-' 50 || { fail view "q did not quit: $(screen view)"; return; }
    wait_screen view '^top-exited-0 tty-restored$' 1 || { fail view "after q: $(screen view | grep top-exited)"; return; }
    cursor_visible view || { fail view "the cursor stays hidden after q"; return; }
    ok top_on_a_terminal_shows_ring_rates_and_readers_and_q_restores_the_terminal
}

test_ctrl_c() {
    # A refresh every 30 s: Ctrl-C must end the wait, not the next refresh.
    start_top ctrlc feed --interval 30
    wait_screen ctrlc '^evring top - feed' || { fail ctrl_c "top did not draw: $(screen ctrlc)"; return; }
    tm send-keys -t ctrlc C-c
    wait_screen ctrlc '^top-exited-' 50 || { fail ctrl_c "Ctrl-C did not quit within 5 s: $(screen ctrlc)"; return; }
    wait_screen ctrlc '^top-exited-0 tty-restored$' 1 || { fail ctrl_c "after Ctrl-C: $(screen ctrlc | grep top-exited)"; return; }
    cursor_visible ctrlc || { fail ctrl_c "the cursor stays hidden after Ctrl-C"; return; }
    ok top_ends_on_ctrl_c_during_a_long_interval_and_restores_the_terminal
}

test_ring_set() {
    "$PRODUCER_BIN" quotes:10:16 --threads 2 --rate 1000 2>"$WORK/set-producer.err" &
    PIDS+=($!)
    poll 300 0.02 evring info quotes || { fail ring_set "the producer did not create the set"; return; }
    start_top set quotes
    wait_screen set '^ +1 +[1-9][0-9.]*[kM]? +[0-9.]+ +[1-9][0-9]* ' || { fail ring_set "no member 1 rate: $(screen set)"; return; }
    local s
    s=$(screen set)
    local want
    for want in "^evring top - ring set quotes \\($EVRING_RING_DIR/quotes\\)   q quits$" \
        '^members 2 of at most 2   writers alive in 2$' '^total [1-9][0-9.]*[kM]? ev/s' \
        '^MEMBER +EV/S +MIB/S +SEQNO +WINDOW +WRITER +READERS +MAX-LAG +LOST +ABANDONED$' \
        '^ +0 +[1-9][0-9.]*[kM]? +[0-9.]+ +[1-9][0-9]* +[0-9.]+% alive ' '^ +1 +[1-9][0-9.]*[kM]? +[0-9.]+ +[1-9][0-9]* +[0-9.]+% alive '; do
        grep -qE "$want" <<<"$s" || { fail ring_set "no line matching '$want' on the screen:"$'\n'"$s"; return; }
    done
    tm send-keys -t set q
    wait_screen set '^top-exited-0 tty-restored$' 50 || { fail ring_set "q: $(screen set)"; return; }
    ok top_of_a_ring_set_shows_a_row_per_member
}

test_view_then_q
test_ctrl_c
test_ring_set
exit_with_results
