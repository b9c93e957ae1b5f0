#!/usr/bin/env bash
# Runs COPIES copies of one command at once and waits for all:
#   scripts/run_concurrently.sh COPIES COMMAND [ARG...]
# Exit 0 when every copy passed; 77 (ctest's skip) when every copy skipped
# (no GPU); else the first failing copy's code, after its output, and 1
# where some copies skipped and others ran (a copy that could not reach the
# GPU under load must not pass as a skip). A fault that needs the GPU shared
# and busy (several processes' work interleaved) shows here, where one
# process alone can pass it for hours.
set -u
if [ $# -lt 2 ] || ! [[ $1 =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: $0 COPIES COMMAND [ARG...] (COPIES a positive count)" >&2
    exit 2
fi
copies=$1
shift
dir=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$dir"' EXIT
trap 'exit 143' INT TERM  # a test timeout: the copies are stopped too (the EXIT trap)
for ((i = 0; i < copies; ++i)); do
    "$@" >"$dir/$i.log" 2>&1 &
    pids+=($!)
done
codes=()
for pid in "${pids[@]}"; do
    wait "$pid"
    codes+=($?)
done
skipped=0
for ((i = 0; i < copies; ++i)); do
    rc=${codes[i]}
    if [ "$rc" = 77 ]; then
        skipped=$((skipped + 1))
    elif [ "$rc" != 0 ]; then
        echo "copy $((i + 1)) of $copies failed (exit $rc):"
        cat "$dir/$i.log"
        exit "$rc"
    fi
done
if [ "$skipped" = "$copies" ]; then
    cat "$dir/0.log"
    exit 77
fi
if [ "$skipped" != 0 ]; then
    echo "$skipped of $copies copies skipped while the others ran:"
    for ((i = 0; i < copies; ++i)); do [ "${codes[i]}" = 77 ] && cat "$dir/$i.log"; done
    exit 1
fi
echo "$copies copies at once: every one passed"
cat "$dir/0.log"
