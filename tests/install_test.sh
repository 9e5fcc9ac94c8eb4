#!/usr/bin/env bash
# What an application gets from `meson install`: installs this build into a
# temporary DESTDIR and checks that
#   (a) at most MAX_HEADERS headers are installed (MAX_NATS_HEADERS more when
#       libnats is built): an application sees the API, not the library's
#       internals (issue 23; on-disk formats and helpers live in lib/);
#   (b) every installed header includes only installed headers, so no
#       installed header needs the source tree;
#   (c) README.md's C++ sample, the example producer and consumer (with the
#       header `evring schema compile` generates) and the C example compile and
#       link against the installed tree alone, through the installed evring.pc.
# Needs EVRING_BUILD_DIR, EVRING_SOURCE_DIR; EVRING_SANITIZE (skipped when set
# to anything but none: the release build runs this).
set -euo pipefail
: "${EVRING_BUILD_DIR:?}" "${EVRING_SOURCE_DIR:?}"
MAX_HEADERS=36  # 36 since query/span_reader.hpp: whole span instances (blocks) read from any source
MAX_NATS_HEADERS=2

if [ -n "${EVRING_SANITIZE:-}" ] && [ "$EVRING_SANITIZE" != none ]; then
    echo "skipped: a sanitized build; the release build runs this"
    exit 77
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/evring-install.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
failures=0
ok() { echo "ok   $1"; }
fail() { echo "FAIL $1: $2" >&2; failures=$((failures + 1)); }

dest="$WORK/dest"
if ! meson install -C "$EVRING_BUILD_DIR" --no-rebuild --quiet --destdir "$dest" --tags devel,runtime \
        > "$WORK/install.log" 2>&1; then
    cat "$WORK/install.log" >&2
    echo "FAIL meson install --destdir" >&2
    exit 1
fi
inc=$(find "$dest" -type d -path '*/include/evring' | head -1)
pc=$(find "$dest" -name evring.pc | head -1)
if [ -z "$inc" ] || [ -z "$pc" ]; then
    echo "FAIL install: no include/evring or no evring.pc under $dest" >&2
    exit 1
fi
incroot=${inc%/evring}

# (a) How many headers.
core=$(find "$inc" -type f -not -path "$inc/nats/*" | wc -l)
nats=$(find "$inc" -type f -path "$inc/nats/*" | wc -l)
if [ "$core" -le "$MAX_HEADERS" ]; then
    ok "$core headers installed (at most $MAX_HEADERS)"
else
    fail header-count "$core headers installed, at most $MAX_HEADERS wanted: $(cd "$inc" && find . -type f | sort | tr '\n' ' ')"
fi
if [ "$nats" -le "$MAX_NATS_HEADERS" ]; then
    ok "$nats NATS headers installed (at most $MAX_NATS_HEADERS)"
else
    fail nats-header-count "$nats NATS headers installed, at most $MAX_NATS_HEADERS wanted"
fi

# (b) Each include of an installed header names an installed header: a quoted
# one relative to the header or to the include root, an <evring/...> one
# under the include root.
missing=""
while IFS= read -r header; do
    while IFS= read -r target; do
        name=${target:1:${#target}-2}
        case "$target" in
            \"*) [ -f "$(dirname "$header")/$name" ] || [ -f "$incroot/$name" ] || missing+=" ${header#"$incroot"/} -> $name" ;;
            \<evring/*) [ -f "$incroot/$name" ] || missing+=" ${header#"$incroot"/} -> $name" ;;
        esac
    done < <(sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*(["<][^">]*[">]).*/\1/p' "$header")
done < <(find "$inc" -type f)
if [ -z "$missing" ]; then
    ok "installed headers include only installed headers"
else
    fail private-include "installed headers include what is not installed:$missing"
fi

# (c) Programs built against the installed tree alone (no -I into the source
# tree or lib/): pkg-config with the DESTDIR as its sysroot.
flags() { PKG_CONFIG_PATH="$(dirname "$pc")" PKG_CONFIG_SYSROOT_DIR="$dest" pkg-config "$@" evring; }
if ! command -v pkg-config > /dev/null || ! command -v c++ > /dev/null || ! command -v cc > /dev/null; then
    fail build-against-install "pkg-config, c++ or cc is missing"
else
    cflags=$(flags --cflags) libs=$(flags --libs)
    case "$cflags" in
        *"$dest"*) ok "evring.pc points into the installed tree ($cflags)" ;;
        *) fail pkg-config "evring.pc's --cflags do not point into $dest: $cflags" ;;
    esac
    examples="$EVRING_SOURCE_DIR/examples"
    build_cpp() {  # NAME SOURCE [extra flags]: compile and link one C++ program
        local name=$1 source=$2
        shift 2
        # shellcheck disable=SC2086  # the flags are words
        if c++ -std=c++20 -Wall -Werror "$@" $cflags "$source" $libs -o "$WORK/$name" 2> "$WORK/$name.err"; then
            ok "$name builds against the installed headers and libevring.so"
        else
            fail "$name" "$(head -20 "$WORK/$name.err")"
        fi
    }
    build_cpp readme_sample "$examples/readme_sample.cpp"
    build_cpp blocks "$examples/blocks.cpp"
    generated="$EVRING_BUILD_DIR/examples/demo_schema.hpp"
    if [ -f "$generated" ]; then
        # The header `evring schema compile` wrote includes only installed headers too.
        build_cpp producer "$examples/producer.cpp" -I"$(dirname "$generated")"
        build_cpp consumer "$examples/consumer.cpp" -I"$(dirname "$generated")"
    else
        echo "skip producer, consumer: no $generated (built without the evring program)"
    fi
    # shellcheck disable=SC2086
    if cc -std=c11 -Wall -Werror $cflags "$examples/c_reader_writer.c" $libs -o "$WORK/c_reader_writer" \
            2> "$WORK/c.err"; then
        ok "c_reader_writer builds against the installed evring.h and libevring.so"
    else
        fail c_reader_writer "$(head -20 "$WORK/c.err")"
    fi
    # The blocks example, built against the installed tree, prints every finalized
    # block of a real snapshot as `evring watch --assemble block` does.
    snap="${EVRING_CONFORMANCE_DIR:-}/emn-30b-15m.snapshot.zst"
    evring_exe="$EVRING_BUILD_DIR/tools/evring"
    if [ -x "$WORK/blocks" ] && [ -f "$snap" ] && [ -x "$evring_exe" ]; then
        libdir=$(dirname "$(find "$dest" -name 'libevring.so' | head -1)")
        LD_LIBRARY_PATH="$libdir" timeout 60 "$WORK/blocks" "$snap" finalized > "$WORK/blocks.out" 2> "$WORK/blocks.err"
        timeout 60 "$evring_exe" watch "$snap" --from oldest --assemble block --stage finalized \
            > "$WORK/watch.out" 2> /dev/null
        blocks=$(wc -l < "$WORK/blocks.out")
        if [ "$blocks" -gt 0 ] && cmp -s "$WORK/blocks.out" "$WORK/watch.out"; then
            ok "blocks prints the $blocks finalized blocks evring watch --assemble prints"
        else
            fail blocks-run "blocks and evring watch --assemble differ ($blocks lines): $(diff "$WORK/blocks.out" \
                "$WORK/watch.out" | head -5) $(head -3 "$WORK/blocks.err")"
        fi
    else
        echo "skip blocks run: no real snapshot (EVRING_CONFORMANCE_DIR) or no evring program"
    fi
    # The C example runs with the installed library (a 1 MiB ring of its own, removed on close).
    if [ -x "$WORK/c_reader_writer" ]; then
        libdir=$(dirname "$(find "$dest" -name 'libevring.so' | head -1)")
        if out=$(LD_LIBRARY_PATH="$libdir" timeout 20 "$WORK/c_reader_writer" "/dev/shm/evring-install-test-$$" 2>&1); then
            ok "c_reader_writer runs with the installed libevring.so"
        else
            fail c_reader_writer-run "$out"
        fi
        rm -f "/dev/shm/evring-install-test-$$"*
    fi
fi

if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed" >&2
    exit 1
fi
echo "all install checks passed"
