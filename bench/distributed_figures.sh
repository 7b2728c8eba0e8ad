#!/bin/bash
# The distributed run's figures of docs/performance.md: nl72x2 cut by rack,
# and the full 2 x nl72x2 cluster (288 chips) running an all_reduce across
# its UltraServers, in one process and as 2 MPI ranks (a rank per rack or
# UltraServer) on this machine: wall time, peak memory, the window
# protocol's cost, and the check that both print the same report.
#
#   bench/distributed_figures.sh [build/release]   (about 7 minutes on 2 cores; nothing else running)
set -euo pipefail
set -f  # the params' '*' patterns are not file globs
bin="${1:-build/release}/bin/trn3vp"
[ -x "$bin" ] || { echo "distributed_figures: no $bin (build first)" >&2; exit 2; }
mpi=(mpirun --allow-run-as-root --bind-to none --mca btl self,vader)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# label, ranks (1: no mpirun), trn3vp run args...
run() {
  local label="$1" n="$2"
  shift 2
  local launch=("$bin")
  [ "$n" -gt 1 ] && launch=("${mpi[@]}" -n "$n" "$bin")
  /usr/bin/time -f "%e %M" -o "$tmp/time" "${launch[@]}" run "$@" >"$tmp/out.$n" 2>"$tmp/err.$n" || {
    echo "distributed_figures: $label on $n ranks failed:" >&2; tail -20 "$tmp/err.$n" >&2; exit 1; }
  read -r wall peak_kb <"$tmp/time"
  echo "## $label, $n rank(s): ${wall} s wall in all, $(grep '^wall time' "$tmp/out.$n" | awk '{print $3}') s running" \
    "(after elaboration), peak $((peak_kb / 1024)) MiB (the largest process)"
  grep -E '^ +[0-9]+ +[0-9]+ ' "$tmp/out.$n" | head -2
  grep '^\[distributed\]' "$tmp/err.$n" || true
}
same() {
  diff <(grep -vE '^(wall time|simulation speed|transactions)|of wall time$' "$tmp/out.1") \
    <(grep -vE '^(wall time|simulation speed|transactions)|of wall time$' "$tmp/out.$1") >/dev/null &&
    echo "(the report on $1 ranks is the one-process report, wall-clock lines aside)" ||
    { echo "distributed_figures: the reports differ" >&2; exit 1; }
}

# nl72x2 (144 chips) whole, then cut by rack (partitions = racks) in one
# process and on 2 ranks: the cut's own model (split cross-rack links, the
# racks' programs meeting through the store) gives the same report on both.
nl72=(--platform nl72x2 -p nl72x2.app=collectives -p collectives.min_bytes=1M -p collectives.max_bytes=16M
  -p collectives.factor=4)
run "nl72x2 whole, all_reduce 1 to 16 MiB" 1 "${nl72[@]}"
run "nl72x2 cut by rack, all_reduce 1 to 16 MiB" 1 "${nl72[@]}" -p nl72x2.partitions=racks
run "nl72x2 cut by rack, all_reduce 1 to 16 MiB" 2 "${nl72[@]}" -p nl72x2.partitions=racks
same 2

cluster=(--platform cluster -p 'cluster.*.app=collectives' -p '*.timing_model=bandwidth')
for size in 64M 1G; do
  run "2 x nl72x2, all_reduce $size, timed only, HBM bandwidth engine" 1 "${cluster[@]}" \
    -p collectives.min_bytes=$size -p collectives.max_bytes=$size
  run "2 x nl72x2, all_reduce $size, timed only, HBM bandwidth engine" 2 "${cluster[@]}" \
    -p collectives.min_bytes=$size -p collectives.max_bytes=$size
  same 2
done
