#!/usr/bin/env bash
# Runs COPIES copies of one command at once and waits for all:
#   scripts/run_concurrently.sh COPIES COMMAND [ARG...]
# Exit 0 when every copy passed; 77 (ctest's skip) when every copy skipped
# (no GPU); else the first failing copy's code, after its output. A fault
# that needs the GPU shared and busy (work of several processes interleaved)
# shows here, where one process alone can pass it for hours.
set -u
if [ $# -lt 2 ] || ! [[ $1 =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: $0 COPIES COMMAND [ARG...] (COPIES a positive count)" >&2
    exit 2
fi
copies=$1
shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for ((i = 0; i < copies; ++i)); do
    ("$@" >"$dir/$i.log" 2>&1; echo $? >"$dir/$i.rc") &
done
wait
skipped=0
for ((i = 0; i < copies; ++i)); do
    rc=$(cat "$dir/$i.rc")
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
echo "$copies copies at once: $((copies - skipped)) passed, $skipped skipped"
cat "$dir/0.log"
