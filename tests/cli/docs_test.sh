#!/usr/bin/env bash
# Docs that cannot drift: what README.md and docs/ state about the CLI and the
# bindings, checked against the build.
#
# - docs/cli.md's `evring --help` block is exactly what `evring --help` prints;
# - every subcommand (and sub-subcommand) has a `evring NAME` section in
#   docs/cli.md, and every long option its --help lists is named there;
# - README.md's C snippet compiles against libevring.so and runs over a ring
#   the producer wrote; its Python snippet runs with the built package;
# - no file of the repository holds an absolute path of one machine.
#
# Needs EVRING_BIN, PRODUCER_BIN, EVRING_SOURCE_DIR, EVRING_LIB_DIR (where
# libevring.so is) and EVRING_PYTHONPATH (empty: no Python package built).
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
: "${EVRING_SOURCE_DIR:?}" "${EVRING_LIB_DIR:?}"
make_work evring-docs-test
cli_md="$EVRING_SOURCE_DIR/docs/cli.md"
readme="$EVRING_SOURCE_DIR/README.md"

# The fenced block right after a line "$ evring --help" in docs/cli.md.
documented_help=$(awk '/^\$ evring --help$/ {inside = 1; next} inside && /^```$/ {exit} inside {print}' "$cli_md")
actual_help=$("$EVRING_BIN" --help)
if [ "$documented_help" = "$actual_help" ]; then
    ok "cli.md's evring --help block is what evring --help prints"
else
    fail "help-block" "docs/cli.md's evring --help block differs from the program's: $(diff <(echo "$documented_help") <(echo "$actual_help") | head -20)"
fi

# Subcommand names from a --help text's "Subcommands:" section.
subcommands_of() {
    awk '/^Subcommands:/ {inside = 1; next} inside && /^[^ ]/ {exit} inside && NF {print $1}'
}
# Long options from a --help text's "Options:" section, but --help itself.
options_of() {
    grep -oE '(^|[ ,])--[a-z][a-z0-9-]*' | sed 's/^[ ,]*//' | grep -vx -- '--help' | sort -u
}

check_command() {  # check_command WORDS...: the command "evring WORDS"
    local name="$*" help option sub
    help=$("$EVRING_BIN" "$@" --help 2>&1) || { fail "$name" "'evring $name --help' failed"; return; }
    # A heading naming `evring NAME ...`; a sub-subcommand may share its parent's
    # heading as one of `evring PARENT a|b|c`.
    local parent="${*:1:$#-1}" last="${!#}"
    if grep -qE "^#+ .*\`evring $name( |\`)" "$cli_md" ||
        { [ $# -gt 1 ] && grep -E "^#+ .*\`evring $parent " "$cli_md" | grep -qE "[ |]$last([ |]|\`)"; }; then
        ok "cli.md has a section for evring $name"
    else
        fail "section-$name" "docs/cli.md has no heading naming \`evring $name\`"
    fi
    local missing=()
    while read -r option; do
        [ -n "$option" ] || continue
        grep -qF -- "$option" "$cli_md" || missing+=("$option")
    done < <(echo "$help" | awk '/^Subcommands:/ {exit} {print}' | options_of)
    if [ ${#missing[@]} -eq 0 ]; then
        ok "cli.md names every option of evring $name"
    else
        fail "options-$name" "docs/cli.md does not name ${missing[*]} of 'evring $name'"
    fi
    while read -r sub; do
        [ -n "$sub" ] && check_command "$@" "$sub"
    done < <(echo "$help" | subcommands_of)
}
while read -r command; do
    check_command "$command"
done < <(echo "$actual_help" | subcommands_of)

# The snippets link libevring.so; a sanitized one (the ASan and TSan builds)
# loads only into programs built with its runtime, so they run in the release build.
sanitized=""
[ -n "${EVRING_SANITIZE:-}" ] && [ "$EVRING_SANITIZE" != none ] &&
    sanitized="libevring.so is built with -fsanitize=$EVRING_SANITIZE; the release build runs this"

# README.md's C snippet, inside a main over a ring the producer wrote.
ring="docs-feed-$$"
"$PRODUCER_BIN" "$ring:12:20" --count 200 --keep >/dev/null 2>&1 || fail "producer" "the producer failed"
c_snippet=$(awk '/^```c$/ {inside = 1; next} inside && /^```$/ {exit} inside {print}' "$readme")
if [ -z "$c_snippet" ]; then
    fail "readme-c" "README.md has no \`\`\`c block"
elif [ -n "$sanitized" ]; then
    skip "readme-c" "$sanitized"
elif ! command -v cc >/dev/null; then
    skip "readme-c" "no C compiler"
else
    {
        echo '#include <stdio.h>'
        echo '#include <evring/evring.h>'
        echo 'int main(void) {'
        echo "$c_snippet" | sed "s/\"feed\"/\"$ring\"/"
        echo '    return 0;'
        echo '}'
    } >"$WORK/readme.c"
    if ! cc -std=c11 -Wall -Werror -I"$EVRING_SOURCE_DIR/include" "$WORK/readme.c" -L"$EVRING_LIB_DIR" -levring \
            -o "$WORK/readme_c" 2>"$WORK/cc.log"; then
        fail "readme-c" "README.md's C snippet does not compile: $(head -5 "$WORK/cc.log")"
    else
        out=$(LD_LIBRARY_PATH="$EVRING_LIB_DIR" "$WORK/readme_c" 2>&1)
        lines=$(echo "$out" | grep -cE '^[0-9]+ [A-Z_]+$')
        if [ "$lines" -eq 200 ]; then
            ok "README.md's C snippet prints the 200 events of the ring"
        else
            fail "readme-c" "README.md's C snippet printed $lines event lines, not 200: $(echo "$out" | head -3)"
        fi
    fi
fi

# The error message docs/c-api.md quotes, from the C ABI.
quoted=$(grep -oE "opening '/dev/shm/no-such-ring': [^\`]*" "$EVRING_SOURCE_DIR/docs/c-api.md")
cat >"$WORK/missing.c" <<'C'
#include <stdio.h>
#include <evring/evring.h>
int main(void) {
    evring_source* src = evring_source_open("/dev/shm/no-such-ring", NULL);
    if (src != NULL) { evring_source_close(src); return 1; }
    printf("%s\n", evring_last_error());
    return 0;
}
C
if [ -z "$quoted" ]; then
    fail "c-api-message" "docs/c-api.md quotes no message for /dev/shm/no-such-ring"
elif [ -n "$sanitized" ]; then
    skip "c-api-message" "$sanitized"
elif [ -e /dev/shm/no-such-ring ]; then
    skip "c-api-message" "/dev/shm/no-such-ring exists"
elif cc -std=c11 -I"$EVRING_SOURCE_DIR/include" "$WORK/missing.c" -L"$EVRING_LIB_DIR" -levring -o "$WORK/missing" &&
        actual=$(LD_LIBRARY_PATH="$EVRING_LIB_DIR" "$WORK/missing") && [ "$actual" = "$quoted" ]; then
    ok "docs/c-api.md quotes the C ABI's message for a missing ring"
else
    fail "c-api-message" "docs/c-api.md quotes '$quoted', the C ABI says '${actual:-nothing}'"
fi

# README.md's Python snippet, over a real snapshot when there is one.
py_snippet=$(awk '/^```python$/ {inside = 1; next} inside && /^```$/ {exit} inside {print}' "$readme")
snapshot="${EVRING_CONFORMANCE_DIR:-}/emn-1b-15m.snapshot.zst"
if [ -z "${EVRING_PYTHONPATH:-}" ]; then
    skip "readme-python" "the Python package is not built"
elif [ -n "$sanitized" ]; then
    skip "readme-python" "$sanitized"
elif [ ! -f "$snapshot" ]; then
    skip "readme-python" "no snapshot at $snapshot (EVRING_CONFORMANCE_DIR)"
else
    # Run from the repository's top, as README.md's relative paths (schemas/) mean.
    echo "$py_snippet" | sed -e "s#\"/path/to/emn-1b-15m.snapshot.zst\"#\"$snapshot\"#" \
        -e "s#\"/dev/shm/\([a-z]*\)\"#\"$WORK/\1\"#" >"$WORK/readme.py"
    if out=$(cd "$EVRING_SOURCE_DIR" && PYTHONPATH="$EVRING_PYTHONPATH" PYTHONDONTWRITEBYTECODE=1 \
            timeout -k 5 120 /usr/bin/python3 "$WORK/readme.py" 2>&1); then
        if echo "$out" | grep -qE '^[0-9]+ BLOCK_START '; then
            ok "README.md's Python snippet runs and decodes the snapshot"
        else
            fail "readme-python" "README.md's Python snippet printed no BLOCK_START: $(echo "$out" | tail -3)"
        fi
    else
        fail "readme-python" "README.md's Python snippet failed: $(echo "$out" | tail -5)"
    fi
fi

# No absolute path of this machine: the folder the checkout sits in, or $HOME
# (build folders and fetched data aside: git tracks neither).
if command -v git >/dev/null && git -C "$EVRING_SOURCE_DIR" rev-parse >/dev/null 2>&1; then
    # The parent folder, unless it is a shared temporary or root folder
    # (a checkout cloned into /tmp/evring: "/tmp/" is no path of one machine).
    parent="$(cd "$EVRING_SOURCE_DIR/.." && pwd)/"
    machine_paths=(-e "$(cd "$EVRING_SOURCE_DIR" && pwd)/")
    case "$parent" in
        / | /tmp/ | /var/tmp/ | /dev/shm/ | /run/ | /home/) ;;
        *) machine_paths+=(-e "$parent") ;;
    esac
    [ -n "${HOME:-}" ] && [ "$HOME" != / ] && machine_paths+=(-e "$HOME/")
    hits=$(git -C "$EVRING_SOURCE_DIR" grep -nIF "${machine_paths[@]}" -- . 2>/dev/null | head -5)
    if [ -z "$hits" ]; then
        ok "no machine paths in the repository"
    else
        fail "machine-paths" "absolute machine paths in the repository: $hits"
    fi
else
    skip "machine-paths" "not a git checkout"
fi

# The floor plan (docs/architecture.md "Where things are"): lib/ has a folder
# per subsystem with its own meson.build, no folder holds more than 40 source
# files, and at most 35 headers sit at the top of include/evring/.
src=$EVRING_SOURCE_DIR
lib_folders=$(find "$src/lib" -mindepth 1 -maxdepth 1 -type d | wc -l)
lib_built=$(find "$src/lib" -mindepth 2 -maxdepth 2 -name meson.build | wc -l)
if [ "$lib_folders" -ge 5 ] && [ "$lib_built" -eq "$lib_folders" ]; then
    ok "lib/ has $lib_folders folders, each with a meson.build"
else
    fail "floor-plan" "lib/ has $lib_folders folders, $lib_built of them with a meson.build (wanted >= 5, all)"
fi
crowded=$(cd "$src" && for d in $(find include lib tools tests bench fuzz python examples -type d -not -path '*/corpus*'); do
    n=$(find "$d" -maxdepth 1 -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.c' -o -name '*.py' -o -name '*.sh' \) | wc -l)
    [ "$n" -gt 40 ] && echo "$d ($n)"
done)
if [ -z "$crowded" ]; then
    ok "no folder holds more than 40 source files"
else
    fail "floor-plan" "folders with more than 40 source files: $crowded"
fi
# README.md's layout names every folder of lib/ and of tools/evring/.
unnamed=$(cd "$src" && for d in lib/*/ tools/evring/*/; do
    name=$(basename "$d")
    grep -qE "\`$name/\`" "$readme" || echo "$d"
done)
if [ -z "$unnamed" ]; then
    ok "README.md's layout names every folder of lib/ and tools/evring/"
else
    fail "readme-layout" "README.md's layout does not name: $unnamed"
fi
top_headers=$(find "$src/include/evring" -maxdepth 1 -type f | wc -l)
if [ "$top_headers" -le 35 ]; then
    ok "$top_headers headers at the top of include/evring/"
else
    fail "floor-plan" "$top_headers headers at the top of include/evring/ (at most 35)"
fi
exit_with_results
