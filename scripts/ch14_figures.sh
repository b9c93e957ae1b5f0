#!/usr/bin/env bash
# The runs whose CSVs the chapter-14 READMEs quote, on the GPU at hand:
#   scripts/ch14_figures.sh [GROUP...] [SORT]   GROUP: keys pairs dist t4 small (default: all five);
#                                               SORT: merge_sort or sample_sort (default: both)
#   keys   each sort's default run: the 2^28-key table (uniform uint32) and the size sweep
#   pairs  the same with values (--pairs)
#   dist   a table per distribution (--dist all), keys
#   t4     the sm_75 one-file builds (a T4's), run here through PTX with a T4's shared memory a block
#          (--shared-per-block 65536: the T4's rows, tiles and tiers): --verify, then the default run (the
#          T4 path's sweep)
#   small  each sort at a learner's sizes, 2^20, 2^22 and 2^24 keys (--n: no size sweep), with the
#          tables of each step (sample sort) and each pass (merge sort) where the fixed costs show
# Each sort is built from its one file with the nvcc line of its header (-arch for this card, sm_75 for
# t4), builds side by side; each run median of 9 (REPEATS to change), CSV and log in OUT_DIR (default
# build-gpu/figures), named SORT-GROUP.csv (small: SORT-small-nLOG2N.csv). A table of runs, exit codes
# and seconds is printed last; the exit code is 1 if a build or run failed or was cut. On an H200 a group
# takes about 2 minutes a sort, dist several (about 30 s a distribution: each one's 2^28 keys are made,
# sorted on the host and checked row by row): give dist a call of its own a sort.
#   DISTS="staggered organ-pipe"  dist runs these distributions, one process each (--input D --n 2^28,
#                                 SORT-dist-D.csv), instead of one --dist all run
#   DEADLINE=S                    no run starts after S seconds (counted from the script's start), and a
#                                 run still going then is stopped ("cut"); the CSVs keep every row printed
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
groups=(); sorts=()
for arg in "$@"; do
  case "$arg" in
    keys|pairs|dist|t4|small) groups+=("$arg") ;;
    merge_sort) sorts+=(ch14-mergesort/merge_sort) ;;
    sample_sort) sorts+=(ch14-samplesort/sample_sort) ;;
    *) echo "ch14_figures.sh: unknown argument '$arg' (allowed: keys pairs dist t4 small merge_sort sample_sort)" >&2; exit 2 ;;
  esac
done
[ ${#groups[@]} -eq 0 ] && groups=(keys pairs dist t4 small)
[ ${#sorts[@]} -eq 0 ] && sorts=(ch14-mergesort/merge_sort ch14-samplesort/sample_sort)
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .')
if [ -z "$cc" ]; then
  echo "ch14_figures.sh: no GPU here (nvidia-smi failed); scripts/test.sh runs the host tests" >&2
  exit 77
fi
OUT_DIR="${OUT_DIR:-build-gpu/figures}"
REPEATS="${REPEATS:-9}"
mkdir -p "$OUT_DIR"

names=(); results=(); seconds=()
record() {  # NAME RC START
  names+=("$1"); seconds+=($((SECONDS - $3)))
  if [ "$2" -eq 0 ]; then results+=("pass"); else results+=("FAIL (exit $2)"); tail -n 20 "$OUT_DIR/$1.log"; fi
}

# The builds, side by side: for this card (keys, pairs, dist, small) and for sm_75 (t4).
arches=()
for g in "${groups[@]}"; do
  if [ "$g" = t4 ]; then arch=sm_75; else arch="sm_$cc"; fi
  [[ " ${arches[*]} " == *" $arch "* ]] || arches+=("$arch")
done
pids=(); builds=(); start=$SECONDS
for arch in "${arches[@]}"; do
  for src in "${sorts[@]}"; do
    name="build-$(basename "$src")-$arch"
    nvcc -std=c++17 -O3 -arch="$arch" -o "$OUT_DIR/$(basename "$src")-$arch" "$src.cu" >"$OUT_DIR/$name.log" 2>&1 &
    pids+=($!); builds+=("$name")
  done
done
for i in "${!pids[@]}"; do wait "${pids[$i]}"; record "${builds[$i]}" $? "$start"; done

# run NAME BINARY ARGS...: one run; a timed one (no --verify) writes OUT_DIR/NAME.csv
run() {
  local name="$1" binary="$OUT_DIR/$2"; shift 2
  local start=$SECONDS args=("$@")
  [ -x "$binary" ] || { echo "no $binary (its build failed)" >"$OUT_DIR/$name.log"; record "$name" 1 "$start"; return; }
  [ "${args[0]:-}" = --verify ] || args+=(--csv "$OUT_DIR/$name.csv" --repeats "$REPEATS")
  local limit=()
  if [ -n "${DEADLINE:-}" ]; then
    local left=$((DEADLINE - SECONDS))
    if [ "$left" -lt 10 ]; then names+=("$name"); results+=("skipped (deadline)"); seconds+=(0); return; fi
    limit=(timeout -k 5 "$left")
  fi
  echo "== $name: $binary ${args[*]}" >"$OUT_DIR/$name.log"
  ${limit[@]+"${limit[@]}"} "$binary" "${args[@]}" >>"$OUT_DIR/$name.log" 2>&1
  local rc=$?
  if [ ${#limit[@]} -gt 0 ] && { [ $rc -eq 124 ] || [ $rc -eq 137 ]; }; then
    names+=("$name"); results+=("cut (deadline)"); seconds+=($((SECONDS - start))); return
  fi
  record "$name" $rc "$start"
}
for g in "${groups[@]}"; do
  for src in "${sorts[@]}"; do
    sort=$(basename "$src")
    case "$g" in
      keys)  run "$sort-keys" "$sort-sm_$cc" ;;
      pairs) run "$sort-pairs" "$sort-sm_$cc" --pairs ;;
      dist)  if [ -z "${DISTS:-}" ]; then run "$sort-dist" "$sort-sm_$cc" --dist all
             else for d in $DISTS; do run "$sort-dist-$d" "$sort-sm_$cc" --input "$d" --n 2^28; done; fi ;;
      t4)    run "$sort-t4-verify" "$sort-sm_75" --verify --shared-per-block 65536
             run "$sort-t4" "$sort-sm_75" --shared-per-block 65536 ;;
      small) for log2n in 20 22 24; do run "$sort-small-n$log2n" "$sort-sm_$cc" --n "2^$log2n"; done ;;
    esac
  done
done

echo
echo "ch14_figures summary ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1), $(date -u +%Y-%m-%d), in $OUT_DIR)"
printf '%-34s %-20s %8s\n' run result seconds
failed=0
for i in "${!names[@]}"; do
  printf '%-34s %-20s %8s\n' "${names[$i]}" "${results[$i]}" "${seconds[$i]}"
  [ "${results[$i]}" = pass ] || failed=1
done
exit $failed
