#!/bin/bash
# A run's results do not depend on the order in which the SystemC kernel
# runs processes woken at one simulated time (docs/distributed.md, "Ties").
# That order changes with every event the kernel holds: runs the platform
# plainly and with each given number of unrelated timed events kept in the
# kernel (sim.heap_noise, core/heap_noise.h), and compares the report and
# the stats JSON byte for byte (wall-clock figures masked as
# scripts/golden.sh masks them).
#
#   scripts/ties_check.sh BUILD NOISE... -- TRN3VP_RUN_ARGS...
#
# Exit 0 when every run matches the plain one, 1 with a diff otherwise, 2
# on bad arguments.
set -euo pipefail
set -f  # the params' '*' patterns are not file globs
[ $# -ge 3 ] || { echo "usage: scripts/ties_check.sh BUILD NOISE... -- TRN3VP_RUN_ARGS..." >&2; exit 2; }
build="$1"
shift
bin="$build/bin/trn3vp"
[ -x "$bin" ] || { echo "ties_check: $bin not built" >&2; exit 2; }
counts=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  case "$1" in ''|*[!0-9]*|0) echo "ties_check: a noise count is a whole number above 0, not '$1'" >&2; exit 2 ;; esac
  counts+=("$1")
  shift
done
[ $# -gt 1 ] && [ "${#counts[@]}" -gt 0 ] || { echo "ties_check: give noise counts, then -- and the run's arguments" >&2; exit 2; }
shift

. "$(dirname "$0")/lib/mask_wall_clock.sh"  # mask: wall-clock figures become #

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for n in 0 "${counts[@]}"; do
  timeout 600 "$bin" "$@" -p sim.progress=0 -p sim.heap_noise="$n" --stats "$tmp/n$n.json" >"$tmp/n$n.raw" \
    2>"$tmp/n$n.err" || { echo "ties_check: the run with $n events of heap noise failed:" >&2; tail -20 "$tmp/n$n.err" >&2; exit 1; }
  mask <"$tmp/n$n.raw" >"$tmp/n$n.out"
  [ "$n" = 0 ] && continue
  diff -u "$tmp/n0.out" "$tmp/n$n.out" >&2 || { echo "ties_check: $n events of heap noise: the report differs" >&2; exit 1; }
  diff -u "$tmp/n0.json" "$tmp/n$n.json" >&2 || { echo "ties_check: $n events of heap noise: the stats differ" >&2; exit 1; }
  echo "$n events of heap noise: report and stats identical ($(grep -c . "$tmp/n0.out") lines," \
    "$(grep -c . "$tmp/n0.json") stats lines)"
done
