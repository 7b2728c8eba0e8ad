#!/usr/bin/env bash
# Power-on to the first verified kernel result on trn3-dev, in wall time:
# five runs of `trn3vp run --platform trn3-dev`, the median of the wall
# column of its "first verified kernel result" line, and of the whole run.
#
#   bench/trn3_dev_bench.sh [build dir, default build/release]
set -euo pipefail
build="${1:-build/release}"
firsts=() totals=()
for i in 1 2 3 4 5; do
  out=$("$build/bin/trn3vp" run --platform trn3-dev 2>/dev/null)
  firsts+=("$(echo "$out" | awk '/first verified kernel result/ {print $(NF-1)}')")
  totals+=("$(echo "$out" | awk '/^wall time/ {print $3}')")
done
median() { printf '%s\n' "$@" | sort -g | sed -n 3p; }
echo "trn3-dev, power-on to first verified kernel result: $(median "${firsts[@]}") s wall (median of 5: ${firsts[*]})"
echo "trn3-dev, whole run (4 kernels on 5 cores, error paths, counters): $(median "${totals[@]}") s wall (${totals[*]})"
