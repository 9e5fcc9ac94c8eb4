#!/usr/bin/env bash
# The harness itself (harness.sh): a script that stops before exit_with_results fails, even
# when bash gives it status 0 (a syntax error inside a function's [[ ]]); one that reaches it
# passes; skip_script_unless skips (77). Each is run as a script of its own.
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
make_work evring-harness
HARNESS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/harness.sh

run_script() {  # BODY: the exit status of a script that sources the harness and runs BODY
    printf 'source %q\n%s\n' "$HARNESS" "$1" >"$WORK/script.sh"
    bash "$WORK/script.sh" >"$WORK/script.out" 2>&1
}

case_a_syntax_error_fails() {
    run_script $'f() {\n    [[ a ==\n       b ]] || echo x\n}\nok never\nexit_with_results'
    local rc=$?
    [[ $rc == 1 ]] && grep -q "FAIL harness: the script ended before exit_with_results" "$WORK/script.out" ||
        { fail syntax_error "exit $rc: $(cat "$WORK/script.out")"; return; }
    ok a_syntax_error_fails
}

case_finished_and_skipped_scripts_keep_their_status() {
    run_script $'ok one\nexit_with_results'; local rc=$?
    [[ $rc == 0 ]] || { fail finished "exit $rc: $(cat "$WORK/script.out")"; return; }
    run_script $'fail one "why"\nexit_with_results'; rc=$?
    [[ $rc == 1 ]] || { fail failed "exit $rc: $(cat "$WORK/script.out")"; return; }
    run_script $'skip_script_unless "never" false\nok never\nexit_with_results'; rc=$?
    [[ $rc == 77 ]] || { fail skipped "exit $rc: $(cat "$WORK/script.out")"; return; }
    ok finished_and_skipped_scripts_keep_their_status
}

case_a_syntax_error_fails
case_finished_and_skipped_scripts_keep_their_status
exit_with_results
