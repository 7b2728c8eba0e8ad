#!/bin/bash
# A distributed run's results do not depend on how many processes run it
# (docs/distributed.md). Runs a platform in one process and under mpirun
# with each given rank count, and compares the report and the stats JSON
# byte for byte (wall-clock figures masked as scripts/golden.sh masks them).
#
#   scripts/distributed_check.sh same BUILD RANKS... -- TRN3VP_RUN_ARGS...
#       (with STATS_CHECK set, a Python expression over the one-process stats
#       `s` that must hold: what the run is meant to exercise did happen)
#   scripts/distributed_check.sh fails BUILD RANKS CODE PATTERN -- TRN3VP_RUN_ARGS...
#       (every rank exits with CODE and says PATTERN, an extended regex)
#   scripts/distributed_check.sh timeline BUILD TRN3VP_RUN_ARGS...
#       (one --timeline from 2 ranks: valid JSON, no process named twice, the
#       processes TIMELINE_PROCESSES names by prefix: default both UltraServers')
#   scripts/distributed_check.sh sweep BUILD SWEEP_FILE EXPECTED_CSV
#       (trn3vp sweep, locally with -j 2 and on 2 ranks: both give EXPECTED_CSV and a plot)
set -euo pipefail
set -f  # the params' '*' patterns are not file globs
mode="$1" build="$2"
shift 2
bin="$build/bin/trn3vp"
[ -x "$bin" ] || { echo "distributed_check: $bin not built" >&2; exit 2; }
command -v mpirun >/dev/null || { echo "distributed_check: no mpirun (scripts/install-deps.sh installs Open MPI)" >&2; exit 2; }
# As root Open MPI wants --allow-run-as-root; a 2-core machine needs --oversubscribe for more ranks.
mpi=(mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader)

. "$(dirname "$0")/lib/mask_wall_clock.sh"  # mask: wall-clock figures become #

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "$mode" = same ]; then
  counts=()
  while [ "$1" != -- ]; do counts+=("$1"); shift; done
  shift
  timeout 600 "$bin" "$@" --stats "$tmp/one.json" >"$tmp/one.raw" 2>"$tmp/one.err" || {
    echo "distributed_check: the run in one process failed:" >&2; tail -20 "$tmp/one.err" >&2; exit 1; }
  mask <"$tmp/one.raw" >"$tmp/one.out"
  if [ -n "${STATS_CHECK:-}" ]; then
    /usr/bin/python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); assert eval(sys.argv[2]), sys.argv[2]' \
      "$tmp/one.json" "$STATS_CHECK" || { echo "distributed_check: the stats do not show: $STATS_CHECK" >&2; exit 1; }
  fi
  for n in "${counts[@]}"; do
    timeout 600 "${mpi[@]}" -n "$n" "$bin" "$@" --stats "$tmp/n$n.json" >"$tmp/n$n.raw" 2>"$tmp/n$n.err" || {
      echo "distributed_check: the run on $n ranks failed:" >&2; tail -20 "$tmp/n$n.err" >&2; exit 1; }
    mask <"$tmp/n$n.raw" >"$tmp/n$n.out"
    diff -u "$tmp/one.out" "$tmp/n$n.out" >&2 || { echo "distributed_check: $n ranks: the report differs" >&2; exit 1; }
    cmp "$tmp/one.json" "$tmp/n$n.json" >&2 || { echo "distributed_check: $n ranks: the stats differ" >&2; exit 1; }
    grep -q '^\[distributed\] '"$n"' ranks' "$tmp/n$n.err" || {
      echo "distributed_check: $n ranks: no [distributed] line (not run distributed?)" >&2; exit 1; }
    echo "$n ranks: report and stats identical to one process ($(grep -c . "$tmp/one.out") lines," \
      "$(grep -c . "$tmp/one.json") stats lines); $(grep '^\[distributed\]' "$tmp/n$n.err")"
  done
  exit 0
fi

if [ "$mode" = fails ]; then
  n="$1" code="$2" pattern="$3"
  shift 3
  [ "$1" = -- ] && shift
  rc=0
  timeout 600 "${mpi[@]}" -n "$n" "$bin" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  [ "$rc" = "$code" ] || { echo "distributed_check: exit $rc, expected $code" >&2; cat "$tmp/err" >&2; exit 1; }
  for ((r = 0; r < n; r++)); do
    grep -Eq "^trn3vp: rank $r of $n: .*($pattern)" "$tmp/err" || {
      echo "distributed_check: rank $r did not say /$pattern/:" >&2; cat "$tmp/err" >&2; exit 1; }
  done
  echo "$n ranks: each exited $code saying /$pattern/"
  exit 0
fi
if [ "$mode" = timeline ]; then
  # One timeline from 2 ranks: valid trace-event JSON with every UltraServer's tracks, the parts gone.
  timeout 600 "${mpi[@]}" -n 2 "$bin" "$@" --timeline "$tmp/t.json" >"$tmp/out" 2>"$tmp/err" || {
    echo "distributed_check: the run failed:" >&2; tail -20 "$tmp/err" >&2; exit 1; }
  ls "$tmp"/t.json.rank* >/dev/null 2>&1 && { echo "distributed_check: the parts were left" >&2; exit 1; }
  /usr/bin/python3 - "$tmp/t.json" "${TIMELINE_PROCESSES:-cluster.us0. cluster.us1.}" <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
names = [e["args"]["name"] for e in events if e.get("name") == "process_name"]
for us in sys.argv[2].split():
    assert any(n.startswith(us) for n in names), f"no process of {us}"
assert len(names) == len(set(names)), "a process named twice"
threads = [(e["pid"], e["args"]["name"]) for e in events if e.get("name") == "thread_name"]
assert len(threads) == len(set(threads)), "a process's thread named twice"
pids = {e["pid"] for e in events}
assert any(p >= 1 << 20 for p in pids) and any(p < 1 << 20 for p in pids), "not both ranks' processes"
print(f"timeline: {len(events)} events, {len(names)} processes from both ranks")
PY
  exit 0
fi
if [ "$mode" = sweep ]; then
  # A sweep file run in local processes (-j 2) and over 2 ranks: both CSVs are the expected one.
  file="$1" expected="$2"
  (cd "$tmp" && timeout 600 "$bin" sweep "$file" -j 2 --out local >local.log 2>&1) || {
    echo "distributed_check: the local sweep failed:" >&2; cat "$tmp/local.log" >&2; exit 1; }
  (cd "$tmp" && timeout 600 "${mpi[@]}" -n 2 "$bin" sweep "$file" --out ranks >ranks.log 2>&1) || {
    echo "distributed_check: the sweep on 2 ranks failed:" >&2; cat "$tmp/ranks.log" >&2; exit 1; }
  for run in local ranks; do
    diff -u "$expected" "$tmp/$run/sweep.csv" >&2 || { echo "distributed_check: $run: sweep.csv differs" >&2; exit 1; }
    [ -s "$tmp/$run/sweep.svg" ] || { echo "distributed_check: $run: no plot" >&2; exit 1; }
  done
  grep -q 'rank 1 of 2' "$tmp/ranks.log" || { echo "distributed_check: rank 1 ran no point" >&2; exit 1; }
  echo "sweep: $(($(wc -l <"$expected") - 1)) points, the same CSV locally (-j 2) and on 2 ranks, and the expected one"
  exit 0
fi
echo "distributed_check: unknown mode '$mode'" >&2
exit 2
