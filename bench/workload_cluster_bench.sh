#!/usr/bin/env bash
# The workload across UltraServers (docs/performance.md, "Workloads"): the
# MoE layer step (forward and backward, 1,024 tokens per chip, experts
# within each UltraServer) on two full nl72x2 joined by EFA (288 chips),
# kernels timed only, the HBM model's bandwidth engine; in one process and
# over two MPI ranks (one UltraServer each). Simulated step time, MFU, the
# experts' gradient all_reduce across the UltraServers, wall time and peak
# memory (of the largest process), one run each. The two runs' reports are
# identical but for wall-time lines (the script says so).
#
#   bench/workload_cluster_bench.sh [build dir, default build/release]
set -euo pipefail
build="${1:-build/release}"
params=(run --platform cluster -p 'cluster.*.app=workload' -p '*.timing_only=true' -p '*.timing_model=bandwidth'
  -p workload.moe.tokens=1024)
mpi=(mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader -n 2)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
row() {  # label, report file, time file
  awk -v label="$1" '
    /^step time/ {step = $3 " " $4}
    /^MFU/ {mfu = $2}
    /bwd.experts.grad_all_reduce/ && $NF == "us" {ar = sprintf("%.3f us", $(NF - 1) - $(NF - 2))}
    END {printf "| %s | %s | %s | %s |", label, step, mfu, ar}' "$2"
  awk '{printf " %s s | %.2f GiB |\n", $1, $2 / 1048576}' "$3"
}
/usr/bin/time -o "$out/one.time" -f "%e %M" "$build/bin/trn3vp" "${params[@]}" >"$out/one.out" 2>&1
/usr/bin/time -o "$out/two.time" -f "%e %M" "${mpi[@]}" "$build/bin/trn3vp" "${params[@]}" >"$out/two.out" 2>&1
echo "| 2 x nl72x2 (288 chips), MoE layer, EP 144 in each | simulated step | MFU | gradient all_reduce (last on the critical path) | whole run | peak memory (largest process) |"
echo "|---|---|---|---|---|---|"
row "one process" "$out/one.out" "$out/one.time"
row "two MPI ranks, an UltraServer each" "$out/two.out" "$out/two.time"
mask='/^(wall time|simulation speed|transactions|elaboration|\[progress\]|\[distributed\]|# kernels timed)/d'
if diff <(sed -E "$mask" "$out/one.out") <(sed -E "$mask" "$out/two.out") >/dev/null; then
  echo "(the two reports are identical but for wall-time lines)"
else
  echo "(the two reports differ)"
  exit 1
fi
