#!/usr/bin/env bash
# scripts/run_concurrently.sh against its contract: the copies run at once; every copy passing is 0,
# every copy skipping (77) is 77, one failing copy among passing ones is that copy's code with its
# output, skips beside runs are 1, a bad count or no command is 2.
set -u
run="$(dirname "$0")/../run_concurrently.sh"
failures=0
out=
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
# At once: each copy leaves a mark, then waits (10 s at most) for all four; copies run one after
# another would time out.
export MARKS=$(mktemp -d)
rendezvous='touch "$MARKS/$BASHPID"; for t in $(seq 100); do [ $(ls "$MARKS" | wc -l) -ge 4 ] && exit 0; sleep 0.1; done; exit 9'
expect 0 "four copies meeting (run at once)" "$run" 4 bash -c "$rendezvous"
rm -rf "$MARKS"
# One copy of four fails (the one that makes the directory first: a fresh name), or skips.
export ONE_COPY=$(mktemp -u)
expect 5 "one failing copy of four" "$run" 4 bash -c 'mkdir "$ONE_COPY" 2>/dev/null && { echo planted; exit 5; }; exit 0'
grep -q planted <<<"$out" || { echo "FAIL: the failing copy's output is not shown: $out"; failures=$((failures + 1)); }
rmdir "$ONE_COPY"
expect 1 "one skipping copy beside passing ones" "$run" 4 bash -c 'mkdir "$ONE_COPY" 2>/dev/null && exit 77; exit 0'
rmdir "$ONE_COPY"
expect 2 "a count that is no count" "$run" x true
expect 2 "no command" "$run" 3
[ "$failures" = 0 ] && echo "run_concurrently: every check passed"
exit $((failures > 0))
