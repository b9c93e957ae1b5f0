#!/usr/bin/env bash
# Everything that needs a GPU, in one command:
#   scripts/gpu_check.sh               (add --large for the runs past 2^28 and 2^31 elements)
# 1. a native build for this card in build-gpu/ (a CUDA front-end or ptxas warning fails it: LESSONS_WERROR)
# 2. every CTest test (on a GPU nothing is skipped)
# 3. every lesson's full run: the transcript of its README, plus its CSV
# 4. compute-sanitizer memcheck, racecheck and synccheck on every lesson at small sizes
#    (the sort across GPUs also on four ranks)
# 5. with --large: inputs past 2^28 and 2^31 elements, checks only, in three
#    groups one after another, a group's runs side by side (about 90 GB of
#    device memory a group at most; minutes)
# Logs go to $LOG_DIR (default build-gpu/logs); a summary table is printed
# last, and the exit code is 1 if any step failed.
set -uo pipefail
cd "$(dirname "$0")/.."
large=0
for arg in "$@"; do
  case "$arg" in
    --large) large=1 ;;
    *) echo "gpu_check.sh: unknown argument '$arg' (allowed: --large)" >&2; exit 2 ;;
  esac
done
BUILD=build-gpu
LOG_DIR="${LOG_DIR:-$BUILD/logs}"
if ! nvidia-smi >/dev/null 2>&1; then
  echo "gpu_check.sh: no GPU here (nvidia-smi failed); use scripts/test.sh for the host tests" >&2
  exit 77
fi
mkdir -p "$LOG_DIR"  # only once a GPU was found
SANITIZER="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"

names=(); results=(); seconds=()
# step NAME COMMAND...: runs the command with its output in $LOG_DIR/NAME.log
step() {
  local name="$1"; shift
  local log="$LOG_DIR/$name.log" start=$SECONDS
  echo "== $name: $*" | tee "$log"
  "$@" >>"$log" 2>&1
  local rc=$?
  names+=("$name"); seconds+=($((SECONDS - start)))
  if [ $rc -eq 0 ]; then results+=("pass"); else results+=("FAIL (exit $rc)"); tail -n 20 "$log"; fi
}

step configure cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DLESSONS_WERROR=ON
step build cmake --build "$BUILD" --parallel

# The lessons CMake built, with the small inputs the sanitizers run on.
lessons=(); small_args=(); sanitizer_args=()
# add_lesson NAME SMALL_ARGS [SANITIZER_ARGS]
add_lesson() { [ -x "$BUILD/$1" ] && { lessons+=("$1"); small_args+=("$2"); sanitizer_args+=("${3:-}"); }; }
add_lesson merge_path   "--m 3001 --n 2000 --input many-ties --per-thread 1,3,4,64 --no-timing"
add_lesson merge_tiled  "--m 5001 --n 3001 --no-timing"
add_lesson bitonic_sort "--n 20011 --pairs --no-timing"
add_lesson merge_sort   "--n 200003 --pairs --no-timing"  # big enough for four-way passes in every row
add_lesson sample_sort  "--n 70000 --input zipf --pairs --no-timing"
# Built where NCCL is. NCCL's own start-up asks for kernel images this card
# has none of and goes on (cudaFuncGetAttributes: "no kernel image"); the
# sanitizer would count those as errors. The program checks every CUDA call
# of its own, so an API error there still fails the run.
add_lesson sample_sort_gpus "--n 70000 --input zipf --pairs --no-timing" "--report-api-errors no"
step ctest ctest --test-dir "$BUILD" --output-on-failure --parallel 4
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv >"$LOG_DIR/nvidia-smi.txt" 2>&1
for i in "${!lessons[@]}"; do
  lesson="${lessons[$i]}"
  step "${lesson}_run" "$BUILD/$lesson" --csv "$LOG_DIR/$lesson.csv"
  for tool in memcheck racecheck synccheck; do
    # shellcheck disable=SC2086  # the small and sanitizer arguments are meant to split
    step "${lesson}_${tool}" "$SANITIZER" --tool "$tool" --error-exitcode 1 ${sanitizer_args[$i]} "$BUILD/$lesson" ${small_args[$i]}
  done
done
# The sort across GPUs on four ranks: past the visible GPUs they share them,
# and the exchange runs as device copies.
if [ -x "$BUILD/sample_sort_gpus" ]; then
  for tool in memcheck racecheck synccheck; do
    step "sample_sort_gpus_4_ranks_${tool}" "$SANITIZER" --tool "$tool" --error-exitcode 1 --report-api-errors no \
      "$BUILD/sample_sort_gpus" --ranks 4 --n 20000 --input few-distinct --pairs --no-timing
  done
fi
# large NAME COMMAND...: starts a check-only run in the background; the
# runs share the card (no timing is involved) and finish_large collects them.
large_names=(); large_pids=(); large_starts=()
large() {
  local name="$1"; shift
  [ -x "$1" ] || return 0
  echo "== $name: $*" | tee "$LOG_DIR/$name.log"
  "$@" >>"$LOG_DIR/$name.log" 2>&1 &
  large_names+=("$name"); large_pids+=($!); large_starts+=($SECONDS)
}
finish_large() {
  for i in "${!large_names[@]}"; do
    wait "${large_pids[$i]}"
    local rc=$?
    names+=("${large_names[$i]}"); seconds+=($((SECONDS - large_starts[i])))
    if [ $rc -eq 0 ]; then results+=("pass"); else results+=("FAIL (exit $rc)"); tail -n 20 "$LOG_DIR/${large_names[$i]}.log"; fi
  done
  large_names=(); large_pids=(); large_starts=()  # the next group starts afresh
}
if [ $large -eq 1 ]; then
  # 3e9 + 1e6 float keys: indices past 2^31 and 2^32 (about 48 GB of device memory).
  large merge_path_past_2e31 "$BUILD/merge_path" --m 3000000000 --n 1000003 --per-thread 4,64 --no-timing
  # 2^31 + 4 elements through every merge_tiled kernel (float keys; about 34 GB).
  large merge_tiled_past_2e31 "$BUILD/merge_tiled" --verify --key float --m 1073741825 --n 1073741827
  # 2^28 + 3 keys, not a power of two, keys and key-value (a few GB).
  large bitonic_sort_past_2e28 "$BUILD/bitonic_sort" --verify --n 268435459
  finish_large  # the three above take about 90 GB together; the two below as much again
  # 2^31 + 11 keys through every merge_sort row, checked against CUB's stable merge sort (about 60 GB).
  large merge_sort_past_2e31 "$BUILD/merge_sort" --verify --n 2147483659 --key uint32
  # 2^31 + 11 keys through the sample sort (checks only).
  large sample_sort_past_2e31 "$BUILD/sample_sort" --n 2147483659 --no-timing
  finish_large
  # The sort across GPUs, checks only: 2^31 + 11 keys in all, split over the
  # visible GPUs (global positions past 2^31). It needs about 85 bytes a key
  # on a GPU (its keys, their bucketed copy, what it receives, sample_sort's
  # scratch), so one H200 cannot hold 2^31: there it takes 1.5 x 2^30 + 11
  # (about 137 GB).
  gpus=$(nvidia-smi -L | grep -c '^GPU')
  if [ "$gpus" -ge 2 ]; then per_gpu=$(( (2147483659 + gpus - 1) / gpus )); else per_gpu=1610612747; fi
  large sample_sort_gpus_large "$BUILD/sample_sort_gpus" --n "$per_gpu" --no-timing
  finish_large
fi

echo
echo "gpu_check summary ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1), $(date -u +%Y-%m-%d))"
printf '%-34s %-16s %8s\n' step result seconds
printf '%-34s %-16s %8s\n' ---------------------------------- ---------------- --------
failed=0
for i in "${!names[@]}"; do
  printf '%-34s %-16s %8s\n' "${names[$i]}" "${results[$i]}" "${seconds[$i]}"
  [ "${results[$i]}" = pass ] || failed=1
done
[ $failed -eq 0 ] && echo "all steps passed" || echo "SOME STEPS FAILED (logs in $LOG_DIR)"
exit $failed
