#!/usr/bin/env bash
# Build (if needed) and run one lesson:
#   scripts/run.sh                       day36-merge, the default lesson
#   scripts/run.sh day36-merge --quick   any lesson folder, then its options
# Without a GPU it still builds, then the lesson ends with its no-GPU line
# (exit code 77).
set -euo pipefail
cd "$(dirname "$0")/.."
# folder:program of every lesson the course plans; only those whose file exists run.
planned="day36-merge:merge_path ch12-merge-tiled:merge_tiled ch12-bitonic:bitonic_sort ch14-mergesort:merge_sort ch14-samplesort:sample_sort"
lesson="${1:-day36-merge}"
lesson="${lesson%/}"
[ $# -gt 0 ] && shift
present=""; target=""
for entry in $planned; do
  folder="${entry%%:*}"; program="${entry##*:}"
  [ -f "$folder/$program.cu" ] && present="$present $folder"
  [ "$folder" = "$lesson" ] && target="$program"
done
if [ -z "$target" ]; then
  echo "run.sh: unknown lesson '$lesson'; the lessons are:$present" >&2
  exit 2
fi
if [ ! -f "$lesson/$target.cu" ]; then
  echo "run.sh: the lesson '$lesson' is planned but not written yet; the lessons are:$present" >&2
  exit 2
fi
[ -f build/CMakeCache.txt ] || cmake --preset default
cmake --build --preset default --target "$target"
exec "build/$target" "$@"
