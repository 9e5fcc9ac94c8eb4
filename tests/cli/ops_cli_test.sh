#!/usr/bin/env bash
# End-to-end tests of the operations commands (docs/operations.md): watch and
# record registering, `readers`, `metrics` (stdout, promtool, HTTP), `top`
# piped (on a terminal: top_terminal_test.sh). Needs EVRING_BIN and PRODUCER_BIN. Each case prints
# "ok <name>", "skip <name>: <why>" or "FAIL <name>: <why>"; exits 1 if any failed.
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
skip_script_unless "no producer example at $PRODUCER_BIN (-Dexamples=false?)" test -x "$PRODUCER_BIN"
make_work evring-ops-test
KILL_SIGNAL=KILL

evring() { timeout -k 5 30 "$EVRING_BIN" "$@"; }

# A producer writing 2000 events/s into a 4096-slot ring, for the whole test.
"$PRODUCER_BIN" feed:12:20 --rate 2000 2>"$WORK/producer.err" &
PIDS+=($!)
poll 300 0.02 evring info feed
evring info feed >/dev/null 2>&1 || { echo "FAIL setup: the producer did not create the ring"; exit 1; }

test_readers_live_then_dead() {
    "$EVRING_BIN" watch feed >/dev/null 2>&1 &
    local watcher=$!
    PIDS+=("$watcher")
    wait_readers feed "watch +watch +$watcher .* alive" || { fail readers_live "watch $watcher not listed alive"; return; }
    evring readers feed --json | jq -e "select(.pid == $watcher) | .kind == \"watch\" and .lag_events != null" \
        >/dev/null || { fail readers_live "--json lacks the watch or its lag"; return; }
    evring info feed | grep -q "^readers .*1 alive" || { fail readers_live "info shows no readers summary"; return; }
    kill -9 "$watcher"; wait "$watcher" 2>/dev/null
    evring readers feed --no-reclaim | grep -qE " $watcher .*dead" || { fail readers_dead "not shown dead"; return; }
    evring readers feed | grep -qE " $watcher .*dead, reclaimed" || { fail readers_dead "not reclaimed"; return; }
    evring readers feed | grep -q " $watcher " && { fail readers_dead "still listed after reclaiming"; return; }
    evring ls | grep -q "feed.readers" && { fail ls_skips_registry "ls lists the registry as a ring"; return; }
    ok readers_live_then_dead_and_reclaimed
}

test_record_registers_and_no_register() {
    "$EVRING_BIN" record feed -o "$WORK/feed.evrec" 2>/dev/null &
    local recorder=$!
    "$EVRING_BIN" watch feed --no-register >/dev/null 2>&1 &
    local quiet=$!
    PIDS+=("$recorder" "$quiet")
    wait_readers feed "record +record +$recorder .*-> $WORK/feed.evrec" || { fail record_registers "not listed"; return; }
    # Only once it reads the ring can it be seen not to register.
    poll 1000 0.01 grep -qF "$EVRING_RING_DIR/feed" "/proc/$quiet/maps" ||
        { fail no_register "watch --no-register did not open the ring"; return; }
    evring readers feed | grep -q " $quiet " && { fail no_register "watch --no-register is listed"; return; }
    grep -qF "feed.readers" "/proc/$quiet/maps" && { fail no_register "watch --no-register maps the registry"; return; }
    kill "$recorder" "$quiet"; wait "$recorder" "$quiet" 2>/dev/null
    evring readers feed | grep -q " $recorder " && { fail record_registers "left its entry after a clean exit"; return; }
    ok record_registers_and_no_register_stays_out
}

test_metrics_stdout() {
    "$EVRING_BIN" watch feed >/dev/null 2>&1 &
    local watcher=$!
    PIDS+=("$watcher")
    wait_readers feed "watch +watch +$watcher .* alive" || { fail metrics_stdout "watch not registered"; return; }
    evring metrics feed >"$WORK/metrics.txt" || { fail metrics_stdout "exit $?"; return; }
    for want in '^# TYPE evring_events_total counter$' '^evring_type_events_total\{ring="feed",type="QUOTE",type_number="2"\} [0-9]' \
        '^evring_writer_alive\{ring="feed"\} 1$' "^evring_reader_lag_events\\{ring=\"feed\",reader=\"watch\",kind=\"watch\",pid=\"$watcher\"" \
        '^evring_reader_lost_events_total\{' '^evring_payload_window_ratio\{ring="feed"\} 0\.'; do
        grep -qE "$want" "$WORK/metrics.txt" || { fail metrics_stdout "no line matching $want"; return; }
    done
    kill "$watcher"; wait "$watcher" 2>/dev/null
    ok metrics_stdout
    if command -v promtool >/dev/null; then
        promtool check metrics <"$WORK/metrics.txt" >"$WORK/promtool.out" 2>&1 \
            && ok metrics_promtool || fail metrics_promtool "$(head -3 "$WORK/promtool.out")"
    else
        skip metrics_promtool "promtool is not installed (apt-get install prometheus)"
    fi
}

test_metrics_label_escaping_and_missing_ring() {
    local odd='we"ird\ring'
    evring metrics feed "$odd" >"$WORK/m2.txt" 2>"$WORK/m2.err"
    local rc=$?
    [[ $rc == 1 ]] || { fail metrics_missing "exit $rc, want 1"; return; }
    grep -qF 'evring_up{ring="we\"ird\\ring"} 0' "$WORK/m2.txt" || { fail metrics_escaping "label not escaped"; return; }
    grep -qF 'evring_up{ring="feed"} 1' "$WORK/m2.txt" || { fail metrics_missing "the good ring is missing"; return; }
    grep -q "^evring: no ring" "$WORK/m2.err" || { fail metrics_missing "no message: $(cat "$WORK/m2.err")"; return; }
    if command -v promtool >/dev/null; then
        promtool check metrics <"$WORK/m2.txt" >/dev/null 2>&1 || { fail metrics_escaping "promtool refuses it"; return; }
    fi
    ok metrics_label_escaping_and_missing_ring
}

# GET $2 from 127.0.0.1:$1 over bash's /dev/tcp (no curl needed).
http_get() {
    exec 3<>"/dev/tcp/127.0.0.1/$1" || return 1
    printf 'GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n' "$2" >&3
    timeout -k 5 10 cat <&3
    exec 3<&-
}

test_metrics_http() {
    "$EVRING_BIN" metrics feed --listen 127.0.0.1:0 2>"$WORK/serve.err" &
    local server=$!
    PIDS+=("$server")
    local port=""
    for _ in $(seq 200); do
        port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$WORK/serve.err")
        [[ -n $port ]] && break
        sleep 0.05
    done
    [[ -n $port ]] || { fail metrics_http "server did not say its port: $(cat "$WORK/serve.err")"; return; }
    http_get "$port" /metrics >"$WORK/scrape.txt"
    head -1 "$WORK/scrape.txt" | grep -q "^HTTP/1.[01] 200" || { fail metrics_http "$(head -1 "$WORK/scrape.txt")"; return; }
    grep -q '^evring_events_total{ring="feed"} [1-9]' "$WORK/scrape.txt" || { fail metrics_http "no events_total"; return; }
    if command -v promtool >/dev/null; then
        sed '1,/^\r*$/d' "$WORK/scrape.txt" | promtool check metrics >"$WORK/promtool-http.out" 2>&1 \
            || { fail metrics_http "promtool refuses the scrape: $(head -3 "$WORK/promtool-http.out")"; return; }
    fi
    http_get "$port" /nothing | head -1 | grep -q "^HTTP/1.[01] 404" || { fail metrics_http "/nothing is not 404"; return; }
    printf 'DELETE /metrics HTTP/1.0\r\n\r\n' | timeout -k 5 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port; cat >&3; cat <&3" \
        | head -1 | grep -q "^HTTP/1.[01] 405" || { fail metrics_http "DELETE is not 405"; return; }
    # Ten clients that connect and say nothing: a scrape is still answered
    # while they stay connected (the old one-at-a-time server made it wait
    # 2 s for each; http_get gives up after 10 s), and the server kept them:
    # one of them, speaking last, is answered too.
    local idle=() fd
    for _ in $(seq 10); do exec {fd}<>"/dev/tcp/127.0.0.1/$port"; idle+=("$fd"); done
    http_get "$port" /metrics | head -1 | grep -q "^HTTP/1.[01] 200" \
        || { fail metrics_idle_clients "a scrape was not answered with 10 idle connections open"; return; }
    printf 'GET /metrics HTTP/1.0\r\n\r\n' >&"${idle[0]}"
    timeout -k 5 10 head -1 <&"${idle[0]}" | grep -q "^HTTP/1.[01] 200" \
        || { fail metrics_idle_clients "an idle connection was dropped while another was served"; return; }
    for fd in "${idle[@]}"; do exec {fd}<&-; done
    # The same port again: a clear error, exit 1.
    evring metrics feed --listen "127.0.0.1:$port" 2>"$WORK/inuse.err"
    local rc=$?
    [[ $rc == 1 ]] && grep -q "cannot listen on 127.0.0.1:$port: Address already in use" "$WORK/inuse.err" \
        || { fail metrics_port_in_use "exit $rc: $(cat "$WORK/inuse.err")"; return; }
    kill -TERM "$server"; wait "$server"
    local src=$?
    [[ $src == 0 ]] || { fail metrics_http "server exit $src on SIGTERM"; return; }
    evring metrics feed --listen "nonsense" 2>/dev/null; [[ $? == 2 ]] || { fail metrics_http "bad --listen not a usage error"; return; }
    ok metrics_http_scrape_404_405_idle_clients_port_in_use
}

# Port the server at $1 printed on stderr (file), after waiting for it.
served_port() {
    local port="" _
    for _ in $(seq 200); do
        port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$1")
        [[ -n $port ]] && break
        sleep 0.05
    done
    echo "$port"
}

# The value of sample $2 in a scrape of port $1 (empty when absent).
scraped() { http_get "$1" /metrics | grep -F "$2 " | awk '{print $2}'; }

# A writer restarts under the same name: `metrics --listen` and `top` move to
# the new ring (as watch --follow-name would), and `readers` lists the new
# ring's readers instead of failing on the old instance's registry.
test_writer_restart_followed() {
    local ring="restart-$$"
    "$PRODUCER_BIN" "$ring:12:20" --rate 500 2>/dev/null &
    local first=$!
    PIDS+=("$first")
    poll 300 0.02 evring info "$ring"
    "$EVRING_BIN" watch "$ring" >/dev/null 2>&1 &
    local watcher=$!
    PIDS+=("$watcher")
    wait_readers "$ring" "watch +watch +$watcher .* alive" || { fail writer_restart "watch not registered"; return; }
    "$EVRING_BIN" metrics "$ring" --listen 127.0.0.1:0 2>"$WORK/restart-serve.err" &
    local server=$!
    PIDS+=("$server")
    local port
    port=$(served_port "$WORK/restart-serve.err")
    [[ -n $port ]] || { fail writer_restart "server did not say its port"; return; }
    [[ $(scraped "$port" "evring_writer_alive{ring=\"$ring\"}") == 1 ]] || { fail writer_restart "first writer not alive"; return; }
    "$EVRING_BIN" top "$ring" --interval 1 >"$WORK/restart-top.txt" 2>&1 &
    local top=$!
    PIDS+=("$top")
    # The old ring's reader stays alive (stopped), so its registry stays at
    # the name: an unused one would be reclaimed by the next writer.
    kill -STOP "$watcher"
    kill -9 "$first"; wait "$first" 2>/dev/null
    [[ $(scraped "$port" "evring_writer_alive{ring=\"$ring\"}") == 0 ]] || { fail writer_restart "dead writer shown alive"; return; }
    "$PRODUCER_BIN" "$ring:12:20" --rate 500 2>/dev/null &
    local second=$!
    PIDS+=("$second")
    poll 300 0.02 eval "evring ls | grep -qE '^$ring .* $second +yes'"
    # The old instance's registry is still at the name (its reader lives).
    evring readers "$ring" >"$WORK/restart-readers.txt" 2>&1 \
        || { fail readers_follow_name "exit $?: $(cat "$WORK/restart-readers.txt")"; return; }
    grep -q "belongs to an earlier instance of the ring: no reader of this one has registered yet" \
        "$WORK/restart-readers.txt" || { fail readers_follow_name "$(cat "$WORK/restart-readers.txt")"; return; }
    [[ -z $(evring readers "$ring" --json) ]] || { fail readers_follow_name "--json lists the old ring's readers"; return; }
    local alive
    alive=$(scraped "$port" "evring_writer_alive{ring=\"$ring\"}")
    [[ $alive == 1 ]] || { fail metrics_follow_name "writer_alive $alive after the restart"; return; }
    local before after
    before=$(scraped "$port" "evring_events_total{ring=\"$ring\"}")
    poll 100 0.05 eval "(( \$(scraped $port 'evring_events_total{ring=\"$ring\"}') > $before ))"
    after=$(scraped "$port" "evring_events_total{ring=\"$ring\"}")
    (( after > before )) || { fail metrics_follow_name "events frozen at $before"; return; }
    # Two more of top's lines: the second shows the ring at the name by then.
    local lines
    lines=$(wc -l <"$WORK/restart-top.txt")
    poll 100 0.05 eval "(( \$(wc -l <'$WORK/restart-top.txt') >= $lines + 2 ))"
    tail -1 "$WORK/restart-top.txt" | grep -q "writer alive" \
        || { fail top_follow_name "still the old ring after $lines + 2 lines: $(cat "$WORK/restart-top.txt")"; return; }
    "$EVRING_BIN" watch "$ring" >/dev/null 2>&1 &
    local watcher2=$!
    PIDS+=("$watcher2")
    wait_readers "$ring" "watch +watch +$watcher2 .* alive" || { fail readers_follow_name "the new ring's reader not listed"; return; }
    kill -9 "$watcher"
    kill "$second" "$watcher2" "$server" "$top"; wait "$second" "$watcher2" "$server" "$top" "$watcher" 2>/dev/null
    ok writer_restart_followed_by_metrics_readers_and_top
}

# Nothing left behind: a clean writer exit with a registered reader leaves no
# registry once the reader leaves; a writer SIGKILLed mid-creation (the test
# hook stops it once its temporary file has its full size) leaves debris that
# `ls` mentions, `ls --all` lists, `gc` shows and `gc --delete` removes.
test_debris_ls_all_and_gc() {
    local dir
    dir=$(mktemp -d /dev/shm/evring-gc-test-XXXXXX) || { fail debris "no directory"; return; }
    "$PRODUCER_BIN" "$dir/clean:10:16" --rate 200 2>/dev/null &
    local producer=$!
    PIDS+=("$producer")
    poll 300 0.02 evring info "$dir/clean"
    "$EVRING_BIN" watch "$dir/clean" >/dev/null 2>&1 &
    local watcher=$!
    PIDS+=("$watcher")
    wait_readers "$dir/clean" "watch +watch +$watcher .* alive" || { fail debris "watch not registered"; return; }
    kill -TERM "$producer"; wait "$producer" 2>/dev/null
    timeout -k 5 10 tail --pid="$watcher" -f /dev/null  # watch ends with its writer
    [[ -z $(ls -A "$dir") ]] || { fail debris_clean_exit "left behind: $(ls -A "$dir")"; return; }

    EVRING_TEST_STOP_AFTER_ALLOCATE=1 "$PRODUCER_BIN" "$dir/feed:12:20" 2>/dev/null &
    local killed=$!
    PIDS+=("$killed")
    poll 200 0.02 grep -q '^State:.*stopped' "/proc/$killed/status"
    kill -9 "$killed"; wait "$killed" 2>/dev/null
    [[ -f $dir/feed.$killed ]] || { fail debris "no temporary file feed.$killed"; return; }
    evring ls --dir "$dir" | grep -q "^# and debris: 1 file holding" || { fail debris_ls "ls does not mention it"; return; }
    evring ls --dir "$dir" --all | grep -qE "^feed\.$killed +temp-ring .*left by pid $killed, which is gone" \
        || { fail debris_ls_all "$(evring ls --dir "$dir" --all)"; return; }
    evring ls --dir "$dir" --all --json | jq -e "select(.debris == \"temp-ring\") | .pid == $killed and .allocated > 0" \
        >/dev/null || { fail debris_ls_all "--json"; return; }
    evring gc --dir "$dir" | grep -q "^would-remove $dir/feed.$killed (temp-ring" || { fail debris_gc "dry run"; return; }
    [[ -f $dir/feed.$killed ]] || { fail debris_gc "the dry run removed it"; return; }
    evring gc --dir "$dir" --delete | grep -q "^removed 1 file, freed" || { fail debris_gc "--delete"; return; }
    [[ -z $(ls -A "$dir") ]] || { fail debris_gc "left behind: $(ls -A "$dir")"; return; }
    rmdir "$dir"
    ok debris_clean_exit_ls_all_and_gc
}

test_missing_ring() {
    for cmd in readers top metrics; do
        evring "$cmd" no-such-ring >/dev/null 2>"$WORK/missing.err"
        local rc=$?
        [[ $rc == 1 ]] && grep -qE "^evring: (no ring 'no-such-ring'|ring file '.*/no-such-ring' does not exist)" "$WORK/missing.err" \
            || { fail missing_ring "$cmd: exit $rc: $(cat "$WORK/missing.err")"; return; }
    done
    ok missing_ring_is_a_clear_error
}

test_top_piped() {
    "$EVRING_BIN" watch feed >/dev/null 2>&1 &
    local watcher=$!
    PIDS+=("$watcher")
    wait_readers feed "watch +watch +$watcher .* alive" || { fail top_piped "watch not registered"; return; }
    evring top feed --count 3 >"$WORK/top.txt" || { fail top_piped "exit $?"; return; }
    kill "$watcher"; wait "$watcher" 2>/dev/null
    [[ $(wc -l <"$WORK/top.txt") == 2 ]] || { fail top_piped "want 2 lines: $(cat "$WORK/top.txt")"; return; }
    grep -q $'\e' "$WORK/top.txt" && { fail top_piped "escape sequences in piped output"; return; }
    grep -qE '^[0-9T:.-]+Z feed: [0-9.kM]+ ev/s .* writer alive, readers [1-9] alive' "$WORK/top.txt" \
        || { fail top_piped "unexpected line: $(head -1 "$WORK/top.txt")"; return; }
    ok top_piped_prints_summary_lines
}

test_damaged_registry() {
    "$PRODUCER_BIN" damaged:12:20 --rate 100 2>/dev/null &
    PIDS+=($!)
    poll 300 0.02 evring info damaged
    head -c 4096 /dev/urandom >"$EVRING_RING_DIR/damaged.readers"
    printf 'EVRGREGS' | dd of="$EVRING_RING_DIR/damaged.readers" conv=notrunc status=none
    evring readers damaged >/dev/null 2>"$WORK/damaged.err"
    local rc=$?
    [[ $rc == 1 ]] && grep -qE "^evring: cannot list the readers of '.*damaged': registry '.*damaged.readers' is (damaged|unsupported-version): ." \
        "$WORK/damaged.err" || { fail damaged_registry "exit $rc: $(cat "$WORK/damaged.err")"; return; }
    evring metrics damaged | grep -q '^evring_registry_ok{ring="damaged"} 0$' || { fail damaged_registry "metrics"; return; }
    evring info damaged | grep -q "^readers .*registry" || { fail damaged_registry "info says nothing"; return; }
    ok damaged_registry_is_a_clear_error
}

test_readers_live_then_dead
test_record_registers_and_no_register
test_metrics_stdout
test_metrics_label_escaping_and_missing_ring
test_metrics_http
test_writer_restart_followed
test_debris_ls_all_and_gc
test_missing_ring
test_top_piped
test_damaged_registry
exit_with_results
