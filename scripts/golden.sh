#!/usr/bin/env bash
# The behaviour guard of refactors: runs every line of tests/golden/runs.txt,
# masks the figures that depend on the host (wall times, speeds), and
# compares the run's report and its stats JSON with the recorded ones, byte
# for byte. Exit 0 when every run matches, 1 with a diff otherwise.
#
#   scripts/golden.sh [--update] [--noise N] [--build DIR] [name...]
#
# --update records the current behaviour (after a change that is meant to
# alter it: say why in the commit). --noise N runs each with N unrelated
# timed events in the kernel (sim.heap_noise, core/heap_noise.h), which
# changes the order the kernel runs same-time processes in: the recorded
# reports must still match byte for byte. Names pick runs; default: all.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/release
update=0
noise=0
names=()
while [ $# -gt 0 ]; do
  case "$1" in
    --update) update=1 ;;
    --build) build="$2"; shift ;;
    --noise) noise="$2"; shift ;;
    *) names+=("$1") ;;
  esac
  shift
done
bin="$build/bin/trn3vp"
dir=tests/golden
[ -x "$bin" ] || { echo "golden: $bin not built" >&2; exit 2; }

. scripts/lib/mask_wall_clock.sh  # mask: wall-clock figures become #

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
ran=0
while read -r name args; do
  case "$name" in ''|'#'*) continue ;; esac
  if [ ${#names[@]} -gt 0 ] && ! printf '%s\n' "${names[@]}" | grep -qx "$name"; then continue; fi
  ran=$((ran + 1))
  # shellcheck disable=SC2086
  "$bin" run $args -p sim.progress=0 -p sim.heap_noise="$noise" --stats "$tmp/$name.stats.json" >"$tmp/$name.raw" 2>/dev/null || true
  mask <"$tmp/$name.raw" >"$tmp/$name.out"
  if [ "$update" = 1 ]; then
    cp "$tmp/$name.out" "$dir/$name.out"
    cp "$tmp/$name.stats.json" "$dir/$name.stats.json"
    echo "golden: recorded $name"
    continue
  fi
  for f in "$name.out" "$name.stats.json"; do
    if ! diff -u "$dir/$f" "$tmp/$f" >"$tmp/diff" 2>&1; then
      echo "golden: $f differs:"
      head -40 "$tmp/diff"
      failed=1
    fi
  done
done <"$dir/runs.txt"
[ "$ran" -gt 0 ] || { echo "golden: no run matched ${names[*]}" >&2; exit 2; }
[ "$update" = 1 ] && exit 0
with=""
[ "$noise" = 0 ] || with=" with $noise events of heap noise"
if [ "$failed" = 0 ]; then echo "golden: $ran runs match$with"; fi
exit "$failed"
