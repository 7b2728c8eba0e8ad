#!/usr/bin/env bash
# The soak (issue 20, docs/reliability.md "Soak"): long runs whose resident
# memory must stay flat and, under the sanitizers, leak nothing.
#
#   scripts/soak.sh [build dir, default build/release] [processes, default 100]
#
# 1. One process: the bringup platform for 1 s of simulated time (its two
#    traffic generators, 50 M blocks each, write and read back; 200 M
#    transactions), its resident memory (VmRSS) sampled every half second
#    of wall time. Flat: the last sample is within 1 MiB of the sample at a
#    quarter of the run.
# 2. The trn3-dev bring-up (links, enumeration, firmware boot through the
#    boot ROM, the driver's probe and handshake, the chip checks) in
#    `processes` processes one after another: SystemC 2.3.4 cannot elaborate
#    a second platform in a process that has simulated (E529), so each
#    repetition is a process. Every one must pass with the same summary
#    (wall-time lines aside) and the same peak memory to within 1 MiB.
#
# With an asan build dir (cmake --preset asan && cmake --build --preset asan
# --target trn3vp), every run is under AddressSanitizer and UBSan with leak
# detection on: a leak or error report fails the soak. Exit 0 when flat and
# clean, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/release}"
processes="${2:-100}"
bin="$build/bin/trn3vp"
[ -x "$bin" ] || { echo "soak: no $bin (build it first)" >&2; exit 2; }
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=23"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
status=0

echo "== 1. bringup, 1 s of simulated time, one process ($bin)"
"$bin" run -p bringup.tg0.count=50000000 -p bringup.tg1.count=50000000 >"$out/long.log" 2>&1 &
pid=$!
: >"$out/rss"
while kill -0 "$pid" 2>/dev/null; do
  awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null >>"$out/rss" || true
  sleep 0.5
done
rc=0
wait "$pid" || rc=$?
samples=$(wc -l <"$out/rss")
if [ "$rc" -ne 0 ] || ! grep -q "PASSED" "$out/long.log" || grep -q "ERROR: \(Address\|Leak\)Sanitizer\|runtime error:" "$out/long.log"; then
  echo "soak: the long run failed (exit $rc):" >&2
  tail -20 "$out/long.log" >&2
  status=1
fi
if [ "$samples" -ge 4 ]; then
  quarter=$(sed -n "$((samples / 4))p" "$out/rss")
  last=$(tail -1 "$out/rss")
  peak=$(sort -n "$out/rss" | tail -1)
  echo "samples $samples (every 0.5 s): RSS at a quarter $quarter KiB, at the end $last KiB, peak $peak KiB"
  if [ "$samples" -le 30 ]; then
    echo "RSS samples (KiB): $(tr '\n' ' ' <"$out/rss")"
  else
    echo "RSS samples (KiB): $(head -12 "$out/rss" | tr '\n' ' ')... $(tail -3 "$out/rss" | tr '\n' ' ')"
  fi
  if [ "$last" -gt $((quarter + 1024)) ]; then
    echo "soak: resident memory grew by $((last - quarter)) KiB after the first quarter" >&2
    status=1
  fi
else
  echo "soak: too short a run to sample ($samples samples)" >&2
  status=1
fi
grep -E "^(simulated time|wall time|transactions)" "$out/long.log"

echo "== 2. trn3-dev bring-up, $processes processes"
for i in $(seq 1 "$processes"); do
  rc=0
  /usr/bin/time -f "%M" -o "$out/peak.$i" "$bin" run --platform trn3-dev >"$out/dev.$i.log" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ] || grep -q "ERROR: \(Address\|Leak\)Sanitizer\|runtime error:" "$out/dev.$i.log"; then
    echo "soak: repetition $i failed (exit $rc):" >&2
    tail -20 "$out/dev.$i.log" >&2
    status=1
    break
  fi
  # Wall-clock figures aside: the summary's lines and the phase table's last column.
  grep -v -E "^(wall time|simulation speed|transactions) |wall time" "$out/dev.$i.log" |
    sed -E 's/ +[0-9.]+ s$//' >"$out/dev.$i.summary"
  if ! cmp -s "$out/dev.1.summary" "$out/dev.$i.summary"; then
    echo "soak: repetition $i's output differs from the first's:" >&2
    diff "$out/dev.1.summary" "$out/dev.$i.summary" | head -10 >&2
    status=1
    break
  fi
done
if ls "$out"/peak.* >/dev/null 2>&1; then
  sort -n "$out"/peak.* >"$out/peaks"
  n=$(wc -l <"$out/peaks")
  low=$(head -1 "$out/peaks")
  high=$(tail -1 "$out/peaks")
  echo "$n processes passed with the same output; peak RSS $low to $(sed -n "$(((n + 1) / 2))p" "$out/peaks") (median) to $high KiB"
  if [ "$high" -gt $((low + 1024)) ]; then
    echo "soak: peak memory differs by $((high - low)) KiB between repetitions" >&2
    status=1
  fi
fi
[ "$status" -eq 0 ] && echo "soak: flat and clean" || echo "soak: FAILED" >&2
exit "$status"
