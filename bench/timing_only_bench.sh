#!/usr/bin/env bash
# The NeuronCore's timing-only mode against the data mode: the same GEMM's
# simulated time (identical by design), the kernel's host time and the whole
# run's wall time and peak memory, one run each (docs/performance.md, "NeuronCore").
#
#   bench/timing_only_bench.sh [build dir, default build/release] [sizes, default "2048 4096"]
set -euo pipefail
build="${1:-build/release}"
sizes="${2:-2048 4096}"
run() {  # size dtype timing_only
  /usr/bin/time -f "%e %M" "$build/bin/trn3vp" run --platform neuroncore -p neuroncore.m="$1" -p neuroncore.n="$1" \
    -p neuroncore.k="$1" -p neuroncore.dtype="$2" -p neuroncore.nc0.timing_only="$3" 2>&1 |
    awk -v n="$1" -v t="$2" -v mode="$3" '
      /^  simulated time/ {sim = $3 " " $4}
      /^  host time/ {host = $3 " s"}
      /^[0-9.]+ [0-9]+$/ {wall = $1 " s"; mem = int($2 / 1024) " MiB"}
      END {printf "| %s %d^3 | %s | %s | %s | %s | %s |\n", t, n, mode == "true" ? "timing only" : "data", sim, host, wall, mem}'
}
echo "| GEMM | mode | simulated | kernel host time | whole run | peak memory |"
echo "|---|---|---|---|---|---|"
for n in $sizes; do
  run "$n" bf16 false
  run "$n" bf16 true
done
run 16384 mxfp8 true
