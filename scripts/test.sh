#!/usr/bin/env bash
# Configure, build and test every lesson:   scripts/test.sh
# Without a GPU the GPU tests are reported as skipped; the host tests
# (--selftest, the exercises' host checks, the plotter, the notebook's
# compiles) still run. The last line says how many tests were skipped and why.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset default
cmake --build --preset default
log=build/ctest.log
set +e
ctest --preset default 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e

# ctest marks a skipped test "***Skipped" (exit 77, or the no-GPU line of an expected-failure test).
skipped=$(grep -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*Skipped' "$log" | sed -E 's/.*#[0-9]+: ([^ ]+) .*/\1/' || true)
tools=$(grep -E '^(plot_sweep_pngs|colab_notebook_runs)$' <<<"$skipped" | tr '\n' ' ' || true)
gpu=$(grep -cvE '^(plot_sweep_pngs|colab_notebook_runs)?$' <<<"$skipped" || true)
if nvidia-smi -L >/dev/null 2>&1; then why="although this machine has a GPU: see build/Testing/Temporary/LastTest.log"
else why="no CUDA device on this machine; scripts/gpu_check.sh runs them on a GPU"; fi
line="skipped: ${gpu} GPU tests ($why)"
[ -n "$tools" ] && line+="; and ${tools% } (a Python package is missing: python3 -m pip install --user matplotlib nbclient nbformat ipykernel)"
echo "$line"
exit "$status"
