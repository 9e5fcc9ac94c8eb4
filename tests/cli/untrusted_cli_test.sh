#!/usr/bin/env bash
# Untrusted input against what the CLI produces (issue 24): a schema built to
# amplify decoding (bounded output, marked), FIFOs named as schema files
# (refused at once), output files that are devices, FIFOs or symbolic links
# (written into or refused, never replaced), and bytes that are not UTF-8 or
# are terminal escapes (escaped in every text format). Needs EVRING_BIN,
# PRODUCER_BIN and PYTHONPATH with the evring Python package (it writes the
# crafted rings); prints "ok <name>" / "FAIL <name>: <why>".
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
PY=/usr/bin/python3
skip_script_unless "no /usr/bin/python3" test -x "$PY"
skip_script_unless "the evring Python package is not built (-Dpython=disabled?)" "$PY" -c "import evring"
skip_script_unless "jq is not installed (apt-get install jq)" command -v jq
make_work evring-untrusted-test

evring() { "$EVRING_BIN" "$@"; }
LIMIT_V=$((1024 * 1024))  # KiB: 1 GiB of address space for every command below
if ldd "$EVRING_BIN" 2>/dev/null | grep -q libasan; then
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}max_allocation_size_mb=512:hard_rss_limit_mb=1024"
    LIMIT_V=unlimited
fi
# Runs evring under the memory limit and a timeout.
limited() { (ulimit -v "$LIMIT_V"; timeout -k 5 60 "$EVRING_BIN" "$@"); }

# --- Item 5: a schema that amplifies, and one 1 MB event ---------------------
# 30 nested one-byte structs with 120-character names as a trailing array:
# unbounded, the 1 MB event decodes to 4 GB of text or JSON.
"$PY" - "$EVRING_RING_DIR/amp" <<'EOF' || { echo "FAIL setup: amplifying ring"; exit 1; }
import sys, evring
parts = ['content_type = 4661\ncontent_name = "amp"\n']
for level in range(30):
    inner = "u8" if level == 0 else f"s{level - 1}"
    parts.append(f'[struct.s{level}]\nfields = [ {{ name = "{"f" * 116}{level:04d}", type = "{inner}" }} ]\n')
parts.append('[[event]]\nnumber = 9\nname = "BIG"\nfields = [\n  { name = "count", type = "u32" },\n'
             '  { name = "items", type = "s29[count]" },\n]\n')
with evring.create(sys.argv[1], descriptor_shift=6, payload_shift=22, schema="\n".join(parts), keep=True) as w:
    w.record(9, (1_000_000).to_bytes(4, "little") + bytes(1_000_000))
    w.record(9, (2).to_bytes(4, "little") + bytes(2))
EOF

case_amplifying_event_is_bounded_and_marked_in_every_format() {
    local f size
    for f in jsonl text hex; do
        limited watch amp --from oldest --format "$f" >"$WORK/amp.$f" 2>"$WORK/amp.err" ||
            { fail amplify "watch --format $f exit $?: $(tail -2 "$WORK/amp.err")"; return; }
        size=$(wc -c <"$WORK/amp.$f")
        # The bound is max(1 MiB, 8 x 1 MB) per event, plus the hexdump's 4.3 MB in hex.
        (( size < 16000000 )) || { fail amplify "watch --format $f wrote $size bytes"; return; }
    done
    jq -e -s 'length == 2 and .[0].fields["(truncated)"] == true and (.[0].fields.items | length) > 0
              and (.[1].fields | has("(truncated)") | not) and (.[1].fields.items | length) == 2' \
        "$WORK/amp.jsonl" >/dev/null || { fail amplify "jsonl marker: $(head -c 200 "$WORK/amp.jsonl")"; return; }
    [[ $(grep -c ' (truncated)$' "$WORK/amp.text") == 1 ]] || { fail amplify "text marker"; return; }
    [[ $(grep -c ' (truncated)$' "$WORK/amp.hex") == 1 ]] || { fail amplify "hex marker"; return; }
    limited export amp --chrome-json "$WORK/amp.json" --perfetto "$WORK/amp.pftrace" 2>"$WORK/amp.err" ||
        { fail amplify "export exit $?: $(tail -2 "$WORK/amp.err")"; return; }
    (( $(wc -c <"$WORK/amp.json") < 16000000 && $(wc -c <"$WORK/amp.pftrace") < 16000000 )) ||
        { fail amplify "export sizes $(wc -c <"$WORK/amp.json") $(wc -c <"$WORK/amp.pftrace")"; return; }
    jq -e '[.traceEvents[] | select(.args["(truncated)"] == true)] | length == 1' "$WORK/amp.json" >/dev/null ||
        { fail amplify "chrome-json marker"; return; }
    grep -q '(truncated)' "$WORK/amp.pftrace" || { fail amplify "perfetto marker"; return; }
    ok amplifying_event_is_bounded_and_marked_in_every_format
}

# --- Item 7: a FIFO named as a schema file -----------------------------------
mkfifo "$WORK/schema.fifo"
"$PRODUCER_BIN" feed:10:20 --count 100 --keep 2>/dev/null || { echo "FAIL setup: producer"; exit 1; }

case_fifo_schema_is_refused_by_every_command() {
    local cmd
    local -a cmds=(
        "schema check $WORK/schema.fifo"
        "schema show $WORK/schema.fifo"
        "schema compile $WORK/schema.fifo -o $WORK/out.hpp"
        "info --schema $WORK/schema.fifo feed"
        "watch --schema $WORK/schema.fifo feed --from oldest --count 1"
        "export --schema $WORK/schema.fifo feed --chrome-json $WORK/fifo.json"
    )
    for cmd in "${cmds[@]}"; do
        # shellcheck disable=SC2086 # the words are the command line
        timeout -k 5 10 "$EVRING_BIN" $cmd >/dev/null 2>"$WORK/fifo.err"
        local rc=$?
        [[ $rc == 1 ]] || { fail fifo "'$cmd' exit $rc (124: it blocked): $(cat "$WORK/fifo.err")"; return; }
        grep -q "schema '$WORK/schema.fifo' is a FIFO, not a regular file" "$WORK/fifo.err" ||
            { fail fifo "'$cmd': $(cat "$WORK/fifo.err")"; return; }
    done
    ok fifo_schema_is_refused_by_every_command
}

# --- Item 10: output files that are devices, FIFOs or symbolic links ----------
SCHEMA="$WORK/orders.toml"
cp "$(dirname "${BASH_SOURCE[0]}")/../schemas/orders.toml" "$SCHEMA"

# Whether $1 is still a symbolic link to $2 and /dev/null still a character device.
link_survived() { [[ -L $1 && $(readlink "$1") == "$2" && -c /dev/null ]]; }

# Runs `evring ARGS... -o/--flag TARGET` with a reader on the FIFO TARGET; the
# reader's copy goes to $WORK/fifo.got.
through_fifo() {
    local fifo=$1
    shift
    rm -f "$fifo" "$WORK/fifo.got"
    mkfifo "$fifo"
    timeout -k 5 20 cat "$fifo" >"$WORK/fifo.got" &
    local reader=$!
    timeout -k 5 20 "$EVRING_BIN" "$@" 2>"$WORK/out.err"
    local rc=$?
    wait "$reader"
    [[ -p $fifo ]] || { echo "the FIFO was replaced"; return 1; }
    return $rc
}

case_outputs_write_into_devices_and_fifos_and_never_replace_links() {
    ln -s /dev/null "$WORK/null-link"
    local cmd
    for cmd in "schema compile $SCHEMA -o" "snapshot feed --force -o" "export feed --chrome-json"; do
        # shellcheck disable=SC2086 # the words are the command line
        "$EVRING_BIN" $cmd "$WORK/null-link" >/dev/null 2>"$WORK/out.err" ||
            { fail outputs "'$cmd null-link': $(cat "$WORK/out.err")"; return; }
        link_survived "$WORK/null-link" /dev/null || { fail outputs "'$cmd' replaced the link to /dev/null"; return; }
        [[ -z $(ls "$WORK" | grep '\.tmp') ]] || { fail outputs "'$cmd' left $(ls "$WORK" | grep '\.tmp')"; return; }
    done
    # /dev/stdout into a pipe: a link to /proc/self/fd/1, which names no file.
    "$EVRING_BIN" schema compile "$SCHEMA" -o /dev/stdout 2>"$WORK/out.err" | grep -q kContentType ||
        { fail outputs "-o /dev/stdout into a pipe: $(cat "$WORK/out.err")"; return; }
    # A device needs no --force: nothing is replaced.
    "$EVRING_BIN" snapshot feed -o "$WORK/null-link" 2>"$WORK/out.err" || { fail outputs "snapshot without --force: $(cat "$WORK/out.err")"; return; }
    through_fifo "$WORK/out.fifo" schema compile "$SCHEMA" -o "$WORK/out.fifo" ||
        { fail outputs "compile into a FIFO: $(cat "$WORK/out.err")"; return; }
    grep -q 'kContentType' "$WORK/fifo.got" || { fail outputs "the FIFO's reader got no header"; return; }
    if command -v zstd >/dev/null; then
        through_fifo "$WORK/out.fifo" snapshot feed -o "$WORK/out.fifo" ||
            { fail outputs "snapshot into a FIFO: $(cat "$WORK/out.err")"; return; }
        zstd -t -q "$WORK/fifo.got" || { fail outputs "the FIFO's reader got no zstd frame"; return; }
    fi
    through_fifo "$WORK/out.fifo" export feed --chrome-json "$WORK/out.fifo" ||
        { fail outputs "export into a FIFO: $(cat "$WORK/out.err")"; return; }
    jq -e '.traceEvents | length > 0' "$WORK/fifo.got" >/dev/null || { fail outputs "the FIFO's reader got no trace"; return; }
    ok outputs_write_into_devices_and_fifos_and_never_replace_links
}

case_a_link_to_a_file_is_followed_and_kept() {
    echo old >"$WORK/real.hpp"
    chmod 600 "$WORK/real.hpp"
    ln -s real.hpp "$WORK/link.hpp"
    "$EVRING_BIN" schema compile "$SCHEMA" -o "$WORK/link.hpp" 2>"$WORK/out.err" || { fail link "$(cat "$WORK/out.err")"; return; }
    link_survived "$WORK/link.hpp" real.hpp || { fail link "the link was replaced"; return; }
    grep -q kContentType "$WORK/real.hpp" || { fail link "the file it points to was not written"; return; }
    [[ $(stat -c %a "$WORK/real.hpp") == 600 ]] || { fail link "mode $(stat -c %a "$WORK/real.hpp"), expected 600"; return; }
    ln -s "$WORK/nowhere/x.hpp" "$WORK/dangling.hpp"
    "$EVRING_BIN" schema compile "$SCHEMA" -o "$WORK/dangling.hpp" 2>"$WORK/out.err"
    [[ $? == 1 ]] && grep -q "'$WORK/dangling.hpp' is a symbolic link to a missing file" "$WORK/out.err" ||
        { fail link "a dangling link: $(cat "$WORK/out.err")"; return; }
    [[ -L $WORK/dangling.hpp && ! -e $WORK/nowhere ]] || { fail link "a dangling link was followed or replaced"; return; }
    mkdir "$WORK/adir"
    "$EVRING_BIN" schema compile "$SCHEMA" -o "$WORK/adir" 2>"$WORK/out.err"
    [[ $? == 1 ]] && grep -q "cannot write '$WORK/adir': it is a directory" "$WORK/out.err" ||
        { fail link "a directory: $(cat "$WORK/out.err")"; return; }
    ok a_link_to_a_file_is_followed_and_kept
}

case_compile_never_writes_over_its_own_schema() {
    local before; before=$(sha256sum <"$SCHEMA")
    ln -s "$SCHEMA" "$WORK/schema-link"
    local target
    for target in "$SCHEMA" "$WORK/schema-link"; do
        "$EVRING_BIN" schema compile "$SCHEMA" -o "$target" 2>"$WORK/out.err"
        [[ $? == 1 ]] || { fail self "-o $target: not refused"; return; }
        grep -q "refusing to write the header over the schema it compiles" "$WORK/out.err" ||
            { fail self "$(cat "$WORK/out.err")"; return; }
    done
    [[ $(sha256sum <"$SCHEMA") == "$before" && -L $WORK/schema-link ]] || { fail self "the schema changed"; return; }
    ok compile_never_writes_over_its_own_schema
}

# --- Item 12: bytes that are not UTF-8, terminal escapes, huge values ---------
BAD=$'bad\xffname'
"$PRODUCER_BIN" "$BAD:10:20" --count 100 --keep 2>/dev/null || { echo "FAIL setup: producer $BAD"; exit 1; }

# Whether file $1 is valid UTF-8 throughout.
utf8_file() { "$PY" -c 'import sys; open(sys.argv[1], encoding="utf-8", errors="strict").read()' "$1" 2>/dev/null; }

case_text_formats_stay_utf8_with_a_bad_ring_name() {
    evring metrics "$BAD" >"$WORK/bad.prom" 2>"$WORK/bad.err" || { fail utf8 "metrics: $(cat "$WORK/bad.err")"; return; }
    utf8_file "$WORK/bad.prom" || { fail utf8 "metrics output is not UTF-8"; return; }
    grep -q $'ring="bad\xef\xbf\xbdname"' "$WORK/bad.prom" || { fail utf8 "no U+FFFD in the ring label"; return; }
    if command -v promtool >/dev/null; then
        promtool check metrics <"$WORK/bad.prom" >"$WORK/promtool.out" 2>&1 ||
            { fail utf8 "promtool: $(head -3 "$WORK/promtool.out")"; return; }
    else
        skip utf8_promtool "promtool is not installed (apt-get install prometheus)"
    fi
    evring export "$BAD" --chrome-json "$WORK/bad.json" --perfetto "$WORK/bad.pftrace" 2>"$WORK/bad.err" ||
        { fail utf8 "export: $(cat "$WORK/bad.err")"; return; }
    utf8_file "$WORK/bad.json" || { fail utf8 "the Chrome JSON is not UTF-8"; return; }
    jq -e '[.. | strings | select(contains("bad\ufffdname"))] | length > 0' "$WORK/bad.json" >/dev/null ||
        { fail utf8 "no U+FFFD in the Chrome JSON"; return; }
    LC_ALL=C grep -q "$BAD" "$WORK/bad.pftrace" && { fail utf8 "the raw name is in the Perfetto trace"; return; }
    LC_ALL=C grep -q $'bad\xef\xbf\xbdname' "$WORK/bad.pftrace" || { fail utf8 "no U+FFFD in the Perfetto trace"; return; }
    evring info --json "$BAD" >"$WORK/bad.info" && utf8_file "$WORK/bad.info" || { fail utf8 "info --json"; return; }
    ok text_formats_stay_utf8_with_a_bad_ring_name
}

case_schema_show_never_sends_escapes_to_the_terminal() {
    cat >"$WORK/esc.toml" <<'TOML'
content_type = 4662
content_name = "esc"
description = "title \u001b]0;pwned\u0007 and \u001b[31mred\u001b[0m"

[[event]]
number = 2
name = "E"
description = "clear \u001b[2J screen"
fields = [ { name = "x", type = "u8", doc = "bell \u0007 here" } ]
TOML
    evring schema show "$WORK/esc.toml" >"$WORK/esc.out" 2>"$WORK/esc.err" || { fail escapes "$(cat "$WORK/esc.err")"; return; }
    if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$WORK/esc.out"; then fail escapes "a control character reached the output"; return; fi
    grep -qF 'title \x1b]0;pwned\x07 and \x1b[31mred\x1b[0m' "$WORK/esc.out" || { fail escapes "$(head -3 "$WORK/esc.out")"; return; }
    grep -qF 'clear \x1b[2J screen' "$WORK/esc.out" || { fail escapes "event description"; return; }
    evring schema show "$WORK/esc.toml" --json | jq -e '.description | startswith("title \u001b]0;")' >/dev/null ||
        { fail escapes "--json lost the description"; return; }
    ok schema_show_never_sends_escapes_to_the_terminal
}

case_a_huge_value_is_not_echoed_whole() {
    local huge; huge=$(printf 'x%.0s' $(seq 100000))  # one argument can hold 128 KiB at most
    evring watch feed --from "$huge" >/dev/null 2>"$WORK/huge.err"
    local rc=$?
    [[ $rc == 2 ]] || { fail huge "exit $rc"; return; }
    local size; size=$(wc -c <"$WORK/huge.err")
    (( size < 1000 )) || { fail huge "a $size-byte error"; return; }
    grep -q "^evring: bad --from 'xxxx*\.\.\.(100000 bytes)': expected latest" "$WORK/huge.err" ||
        { fail huge "$(head -c 300 "$WORK/huge.err")"; return; }
    evring watch "$huge" >/dev/null 2>"$WORK/huge.err"  # a ring name of 100 kB
    rc=$?
    size=$(wc -c <"$WORK/huge.err")
    [[ $rc == 1 ]] && (( size < 1000 )) || { fail huge "ring name: exit $rc, a $size-byte error"; return; }
    grep -q "^evring: no ring 'xxxx*\.\.\.(100000 bytes)'" "$WORK/huge.err" || { fail huge "$(head -c 300 "$WORK/huge.err")"; return; }
    "$PY" - "$EVRING_RING_DIR/feed" <<'PYTHON' || { fail huge "Python seek"; return; }
import sys, evring
try:
    evring.open(sys.argv[1]).seek("y" * (1 << 20))
except evring.Error as e:
    assert len(str(e)) < 1000 and "(1048576 bytes)" in str(e), str(e)[:300]
else:
    raise SystemExit("no error")
PYTHON
    ok a_huge_value_is_not_echoed_whole
}

case_amplifying_event_is_bounded_and_marked_in_every_format
case_fifo_schema_is_refused_by_every_command
case_outputs_write_into_devices_and_fifos_and_never_replace_links
case_a_link_to_a_file_is_followed_and_kept
case_compile_never_writes_over_its_own_schema
case_text_formats_stay_utf8_with_a_bad_ring_name
case_schema_show_never_sends_escapes_to_the_terminal
case_a_huge_value_is_not_echoed_whole
exit_with_results
