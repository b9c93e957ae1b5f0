#!/usr/bin/env bash
# scripts/run_concurrently.sh against its contract: every copy passing is 0, every copy skipping (77) is
# 77, one failing copy among passing ones is that copy's code with its output, a bad count is 2.
set -u
run="$(dirname "$0")/../run_concurrently.sh"
failures=0
expect() {  # expect CODE WHAT COMMAND...: the command's exit code is CODE
    local want=$1 what=$2
    shift 2
    out=$("$@" 2>&1)
    local got=$?
    if [ "$got" != "$want" ]; then
        echo "FAIL: $what: exit $got, expected $want; output: $out"
        failures=$((failures + 1))
    fi
}
expect 0 "three passing copies" "$run" 3 true
expect 77 "three skipping copies" "$run" 3 bash -c 'exit 77'
# One copy of four fails: the one that makes the directory first (a fresh name, removed after).
export ONE_COPY=$(mktemp -u)
fails_once='mkdir "$ONE_COPY" 2>/dev/null && { echo planted; exit 5; }; exit 0'
expect 5 "one failing copy of four" "$run" 4 bash -c "$fails_once"
grep -q planted <<<"$out" || { echo "FAIL: the failing copy's output is not shown: $out"; failures=$((failures + 1)); }
rmdir "$ONE_COPY"
expect 2 "a count that is no count" "$run" x true
expect 2 "no command" "$run" 3
[ "$failures" = 0 ] && echo "run_concurrently: every check passed"
exit $((failures > 0))
