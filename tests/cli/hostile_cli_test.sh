#!/usr/bin/env bash
# Hostile and damaged files against the evring binary (issues 10, 13): rings,
# snapshots and recordings crafted here from real ones (overflowing and
# inconsistent headers, descriptor bit flips, a wrapped sequence number,
# truncations, zstd bombs, damaged recordings of both kinds), FIFOs, devices,
# directories and sockets. Every command that reads a file (info, watch,
# snapshot, record, export) runs on each under
# a memory limit and a timeout: it must exit 0, 1 or 2 (never a signal, a
# hang or a sanitizer report), a refused file must give exit 1 and one
# `evring:` line naming the file, and damage that is read must say so.
#
# The memory limit is `ulimit -v` (3 GiB) in a plain build; AddressSanitizer
# reserves terabytes of shadow address space, so in an ASan build the same
# limit is ASan's own: no allocation over 1 GiB, no resident set over 2 GiB.
# Needs EVRING_BIN and PRODUCER_BIN; prints "ok <name>" / "FAIL <name>: <why>".
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
skip_script_unless "no producer example at $PRODUCER_BIN (-Dexamples=false?)" test -x "$PRODUCER_BIN"
skip_script_unless "the zstd program is not installed (apt-get install zstd)" command -v zstd
skip_script_unless "jq is not installed (apt-get install jq)" command -v jq
PY=/usr/bin/python3
skip_script_unless "no /usr/bin/python3" test -x "$PY"

make_work evring-hostile-test
H="$WORK/hostile"
mkdir -p "$H"

if ldd "$EVRING_BIN" 2>/dev/null | grep -q libasan; then
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}max_allocation_size_mb=1024:hard_rss_limit_mb=2048:detect_leaks=1"
    LIMIT_V=unlimited
else
    LIMIT_V=$((3 * 1024 * 1024))  # KiB
fi
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

# --- Material: a ring, its snapshot, recordings of both kinds ---------------
"$PRODUCER_BIN" base:12:20 --count 3000 --keep 2>/dev/null || { echo "FAIL setup: producer"; exit 1; }
BASE="$EVRING_RING_DIR/base"
"$EVRING_BIN" snapshot base -o "$WORK/base.zst" 2>/dev/null || { echo "FAIL setup: snapshot"; exit 1; }
"$EVRING_BIN" record base --from oldest -o "$WORK/z.evrec" 2>/dev/null || { echo "FAIL setup: record"; exit 1; }
"$EVRING_BIN" record base --from oldest --no-compress -o "$WORK/raw.evrec" 2>/dev/null ||
    { echo "FAIL setup: record --no-compress"; exit 1; }

# --- Crafting ----------------------------------------------------------------
# Rings are copies of BASE with fields overwritten (offsets from format.hpp:
# sizes at 40, last_seqno at 64, next_payload_byte at 72, window at 128,
# descriptors from 2 MiB, 64 bytes each, payload_size at +12, offset at +24).
"$PY" - "$BASE" "$WORK/z.evrec" "$WORK/raw.evrec" "$H" <<'EOF'
import os, shutil, struct, sys
base, zrec, rawrec, out = sys.argv[1:5]
MiB = 1 << 20
def ring(name, patches=(), size=None):
    data = bytearray(open(base, "rb").read())
    for off, fmt, value in patches:
        struct.pack_into(fmt, data, off, value)
    if size is not None:
        data = data[:size] if size <= len(data) else data + bytes(size - len(data))
    open(os.path.join(out, name), "wb").write(data)
ring("ring-layout-wraps", [(56, "<Q", (1 << 64) - 2 * MiB)])           # context area: sections wrap
ring("ring-capacity-not-pow2", [(40, "<Q", 4097)])
ring("ring-capacity-huge", [(40, "<Q", 1 << 62)])
ring("ring-payload-2-to-40", [(48, "<Q", 1 << 40)])                   # file far smaller than claimed
ring("ring-last-seqno-wrapped", [(64, "<Q", (1 << 64) - 1)])
ring("ring-window-past-next-byte", [(128, "<Q", 1 << 61)])
ring("ring-bad-magic", [(0, "<6s", b"RING99")])
ring("ring-size-bit-flips", [(2 * MiB + 64 * i + 12, "<I", 0xFFFFFFFF) for i in range(1, 64)] +
                            [(2 * MiB + 64 * i + 24, "<Q", (1 << 63) + 12345) for i in range(64, 128)])
ring("ring-seqnos-scrambled", [(2 * MiB + 64 * i, "<Q", (i * 7919) % 4000 + (1 << 61) * (i % 2)) for i in range(4096)])
ring("ring-truncated-half", size=os.path.getsize(base) // 2)
ring("ring-header-only", size=192)
open(os.path.join(out, "ring-3-bytes"), "wb").write(b"RIN")
open(os.path.join(out, "empty"), "wb").close()
open(os.path.join(out, "junk-4m"), "wb").write(os.urandom(4 * MiB))

def recording(src, name, mutate):
    data = bytearray(open(src, "rb").read())
    data = mutate(data)
    open(os.path.join(out, name), "wb").write(data)
for src, kind in ((zrec, "zstd"), (rawrec, "raw")):
    n = os.path.getsize(src)
    def flip(d, at):
        d[at] ^= 0x10
        return d
    recording(src, f"rec-{kind}-flip-middle", lambda d: flip(d, n // 2))
    recording(src, f"rec-{kind}-flip-header", lambda d: flip(d, 60))
    recording(src, f"rec-{kind}-cut-2-3", lambda d: d[: n * 2 // 3])
    recording(src, f"rec-{kind}-cut-3-bytes", lambda d: d[: n - 3])
    recording(src, f"rec-{kind}-garbage-after-end", lambda d: d + os.urandom(5000))
    recording(src, f"rec-{kind}-zeroed-run", lambda d: d[: n // 3] + bytes(n // 3) + d[2 * n // 3 :])
    # A header claiming a 2^40-byte payload buffer (its checksum then fails too).
    recording(src, f"rec-{kind}-claims-2-to-40", lambda d: d[:56] + struct.pack("<Q", 1 << 40) + d[64:])
    recording(src, f"rec-{kind}-version-9", lambda d: d[:8] + struct.pack("<H", 9) + d[10:])
    recording(src, f"rec-{kind}-header-only", lambda d: d[:128])
EOF
[[ $? == 0 ]] || { echo "FAIL setup: crafting"; exit 1; }

# Snapshots: the crafted rings compressed, plus bombs and broken frames.
for r in ring-layout-wraps ring-capacity-huge ring-payload-2-to-40 ring-last-seqno-wrapped \
         ring-window-past-next-byte ring-size-bit-flips ring-seqnos-scrambled ring-truncated-half; do
    zstd -q -1 -c "$H/$r" > "$H/snap-${r#ring-}.zst"
done
size=$(stat -c %s "$WORK/base.zst")
head -c $((size / 2)) "$WORK/base.zst" > "$H/snap-cut-half.zst"
cat "$WORK/base.zst" "$WORK/base.zst" > "$H/snap-two-frames.zst"
{ printf '\x28\xb5\x2f\xfd'; head -c 3000 /dev/urandom; } > "$H/snap-magic-then-junk.zst"
# A bomb: 64 MiB of zeros behind a ring header, a few KiB compressed.
{ head -c 192 "$BASE"; head -c $((64 * 1024 * 1024)) /dev/zero; } | zstd -q -3 -c > "$H/snap-zero-bomb.zst"
# A frame that declares 2^40 bytes of content.
"$PY" - "$H/snap-declares-2-to-40.zst" <<'EOF'
import struct, sys
# Frame header: magic, descriptor (FCS 8 bytes, single segment), the size; then one raw block.
frame = b"\x28\xb5\x2f\xfd" + bytes([0xE0]) + struct.pack("<Q", 1 << 40) + bytes([0x21, 0x00, 0x00]) + b"RING01"
open(sys.argv[1], "wb").write(frame)
EOF

# Not regular files.
mkfifo "$H/fifo"
mkdir "$H/directory"
ln -s /dev/zero "$H/device-link"
"$PY" -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$H/socket"
mkfifo "$EVRING_RING_DIR/planted"   # a FIFO planted under a pure ring name

# --- Running -----------------------------------------------------------------
# run NAME ARGS...: runs evring under the limits; sets RC and leaves stderr in $WORK/err.
run() {
    (ulimit -v "$LIMIT_V"; exec timeout -s KILL 30 "$EVRING_BIN" "$@") >"$WORK/out" 2>"$WORK/err" </dev/null
    RC=$?
}

# check FILE-LABEL FILE ARGS...: one command on one hostile file.
check() {
    local label=$1 file=$2; shift 2
    run "$@"
    local what="evring $* ($label)"
    if ((RC >= 128)); then fail "$label" "$what: killed by signal $((RC - 128))$( ((RC == 137)) && echo ' (timeout or memory)'): $(head -c 600 "$WORK/err")"; return 1; fi
    if ((RC > 2)); then fail "$label" "$what: exit $RC: $(head -c 600 "$WORK/err")"; return 1; fi
    if grep -qE "AddressSanitizer|LeakSanitizer|runtime error:|terminate called" "$WORK/err"; then
        fail "$label" "$what: sanitizer report: $(head -c 600 "$WORK/err")"; return 1
    fi
    if grep -q $'\e' "$WORK/err"; then fail "$label" "$what: raw control characters on stderr"; return 1; fi
    if ((RC != 0)); then
        local base; base=$(basename "$file")
        grep -q "^evring: .*$base" "$WORK/err" || { fail "$label" "$what: exit $RC without naming $base: $(head -c 600 "$WORK/err")"; return 1; }
    fi
    return 0
}

# Every reading command on FILE; the file is refused (exit 1 from each) when $2 is "refused".
every_command() {
    local file=$1 expect=$2 label; label=$(basename "$file")
    local cmds=(
        "info $file"
        "info --json $file"
        "watch $file --from oldest --format text"
        "watch $file --from oldest --format hex"
        "watch $file --from oldest --format jsonl"
        "watch $file --from -10 --format jsonl"
        "watch $file --from 2026-01-01T00:00:00Z --count 5"
        "watch $file --from 1 --until 100000"
        "snapshot $file -o $WORK/copy.zst --force"
        "record $file --from oldest -o $WORK/copy.evrec"
        "export $file --perfetto $WORK/copy.pftrace"
        "export $file --chrome-json $WORK/copy.json --from -10 --track-by flow:0"
        "digest $file"
        "stats $file --json"
        "diff $file $file --format json"
    )
    # A refusal happens when the file is opened, the same for every position
    # and format: refused files get one watch run of the four.
    [[ $expect == refused ]] && cmds=("${cmds[@]:0:3}" "${cmds[@]:8}")
    local c
    for c in "${cmds[@]}"; do
        rm -f "$WORK/copy.evrec"* "$WORK/copy.pftrace" "$WORK/copy.json"
        # shellcheck disable=SC2086
        check "$label" "$file" $c || return
        # An export of a file read as far as it is readable leaves its (partial) trace: the file,
        # and for Chrome JSON a complete JSON document (possibly without events).
        if [[ $c == export* && $expect != refused ]]; then
            if [[ ! -e $WORK/copy.pftrace && ! -e $WORK/copy.json ]]; then
                fail "$label" "evring $c: exit $RC and no trace written: $(head -c 300 "$WORK/err")"; return
            fi
            if [[ -e $WORK/copy.json ]] && ! jq -e '.traceEvents | type == "array"' "$WORK/copy.json" >/dev/null 2>&1; then
                fail "$label" "evring $c: exit $RC and the Chrome JSON trace does not parse"; return
            fi
        fi
        # diff answers 0 (equal) or 1 (different); trouble is 2, as cmp's.
        local refusal=1
        [[ $c == diff* ]] && refusal=2
        if [[ $expect == refused && $RC != "$refusal" ]]; then
            fail "$label" "evring $c: exit $RC, expected a refusal ($refusal): $(head -c 300 "$WORK/err")"; return
        fi
        if [[ $expect == refused && $(wc -l < "$WORK/err") != 1 ]]; then
            fail "$label" "evring $c: the refusal is not one line: $(head -c 600 "$WORK/err")"; return
        fi
    done
    ok "$label"
}

# Files that no command may read: refused by every command, one line each.
for f in ring-layout-wraps ring-capacity-not-pow2 ring-capacity-huge ring-payload-2-to-40 \
         ring-last-seqno-wrapped ring-bad-magic ring-truncated-half \
         ring-header-only ring-3-bytes empty junk-4m \
         snap-layout-wraps.zst snap-capacity-huge.zst snap-payload-2-to-40.zst snap-last-seqno-wrapped.zst \
         snap-window-past-next-byte.zst snap-truncated-half.zst snap-cut-half.zst snap-two-frames.zst \
         snap-magic-then-junk.zst snap-zero-bomb.zst snap-declares-2-to-40.zst \
         rec-zstd-version-9 rec-raw-version-9 fifo directory device-link socket; do
    every_command "$H/$f" refused
done

# Files that are read as far as they are readable: never a crash; exit 0 or
# 1, and when damage was met it is reported naming the file. (A window past
# next_payload_byte is refused in a snapshot, but in a ring file a reader can
# see it while a writer moves both words, so there payloads read as expired.)
for f in ring-window-past-next-byte ring-size-bit-flips ring-seqnos-scrambled snap-size-bit-flips.zst snap-seqnos-scrambled.zst \
         rec-zstd-flip-middle rec-zstd-flip-header rec-zstd-cut-2-3 rec-zstd-cut-3-bytes \
         rec-zstd-garbage-after-end rec-zstd-zeroed-run rec-zstd-claims-2-to-40 rec-zstd-header-only \
         rec-raw-flip-middle rec-raw-flip-header rec-raw-cut-2-3 rec-raw-cut-3-bytes \
         rec-raw-garbage-after-end rec-raw-zeroed-run rec-raw-claims-2-to-40 rec-raw-header-only; do
    every_command "$H/$f" read
done

# Damage in a recording is never replayed as a clean end: exit 1 and a line saying so.
for f in rec-zstd-flip-middle rec-zstd-cut-2-3 rec-zstd-cut-3-bytes rec-zstd-garbage-after-end \
         rec-raw-flip-middle rec-raw-cut-2-3 rec-raw-cut-3-bytes rec-raw-garbage-after-end; do
    run watch "$H/$f" --from oldest --format jsonl
    if [[ $RC != 1 ]] || ! grep -q "'$H/$f' is damaged" "$WORK/err"; then
        fail "damage_$f" "watch: exit $RC: $(head -c 600 "$WORK/err")"
    else
        ok "damage_is_reported_$f"
    fi
done

# A FIFO planted under a pure ring name is refused without blocking.
run info planted
if [[ $RC == 1 ]] && grep -q "FIFO" "$WORK/err"; then ok planted_fifo; else fail planted_fifo "exit $RC: $(cat "$WORK/err")"; fi

# ls over a directory of hostile files lists or skips them, never crashes.
cp "$H"/ring-* "$H"/junk-4m "$EVRING_RING_DIR/" 2>/dev/null
for args in "ls" "ls --json"; do
    # shellcheck disable=SC2086
    check ls "$EVRING_RING_DIR" $args && [[ $RC == 0 ]] && ok "$args over hostile files" ||
        { [[ $RC == 0 ]] || fail ls "evring $args: exit $RC: $(head -c 600 "$WORK/err")"; }
done

exit_with_results
