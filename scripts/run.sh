#!/usr/bin/env bash
# Build (if needed) and run one lesson:
#   scripts/run.sh                       day36-merge, the default lesson
#   scripts/run.sh day36-merge --quick   any lesson folder, then its options
# Without a GPU it still builds, then the lesson ends with its no-GPU line
# (exit code 77).
set -euo pipefail
cd "$(dirname "$0")/.."
lesson="${1:-day36-merge}"
[ $# -gt 0 ] && shift
case "${lesson%/}" in
  day36-merge)      target=merge_path ;;
  ch12-merge-tiled) target=merge_tiled ;;
  ch12-bitonic)     target=bitonic_sort ;;
  ch14-mergesort)   target=merge_sort ;;
  ch14-samplesort)  target=sample_sort ;;
  *) echo "run.sh: unknown lesson '$lesson'; choose day36-merge, ch12-merge-tiled," \
          "ch12-bitonic, ch14-mergesort or ch14-samplesort" >&2
     exit 2 ;;
esac
[ -f build/CMakeCache.txt ] || cmake --preset default
cmake --build --preset default --target "$target"
exec "build/$target" "$@"
