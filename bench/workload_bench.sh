#!/usr/bin/env bash
# The workload figures (docs/performance.md, "Workloads"): a 144-chip
# MoE layer step (forward and backward; with the HBM model's dram engine,
# the default, and its bandwidth engine) and a dense transformer step on
# nl72x2, kernels timed only: simulated step time, MFU, the kernels' timing
# before the step, and the whole run's wall time and peak memory, one run
# each.
#
#   bench/workload_bench.sh [build dir, default build/release]
set -euo pipefail
build="${1:-build/release}"
run() {  # label, then the run's params
  local label="$1"
  shift
  /usr/bin/time -f "%e %M" "$build/bin/trn3vp" run --platform nl72x2 -p nl72x2.app=workload -p '*.timing_only=true' \
    "$@" 2>&1 |
    awk -v label="$label" '
      /^step time/ {step = $3 " " $4}
      /^MFU/ {mfu = $2}
      /^# kernels timed/ {n = split($0, f, " "); sub(/,/, "", f[11]); kern = f[11] " kernels, " f[n-4] " s"}
      /^[0-9.]+ [0-9]+$/ {wall = $1 " s"; mem = sprintf("%.2f GiB", $2 / 1048576)}
      END {printf "| %s | %s | %s | %s | %s | %s |\n", label, step, mfu, kern, wall, mem}'
}
echo "| step (nl72x2, 144 chips) | simulated step | MFU | kernels timed before the step | whole run | peak memory |"
echo "|---|---|---|---|---|---|"
run "MoE layer, 1,024 tokens per chip, EP 144, bf16" -p workload.moe.tokens=1024
run "the same, HBM bandwidth engine (\`*.timing_model=bandwidth\`)" -p workload.moe.tokens=1024 \
  -p '*.timing_model=bandwidth'
run "dense, tp 8 x pp 2 x dp 9, 2 layers, seq 2,048, 2 micro-batches" -p workload.source=dense -p workload.dense.tp=8 \
  -p workload.dense.pp=2 -p workload.dense.layers=2 -p workload.dense.seq=2048 -p workload.dense.micro_batches=2
