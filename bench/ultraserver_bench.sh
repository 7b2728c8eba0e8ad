#!/usr/bin/env bash
# The full-system boot of each UltraServer: elaboration time (the platform
# reports it), wall time of the whole run and peak resident memory (GNU
# time). Targets for nl72x2: elaboration < 10 s, boot < 60 s, < 4 GiB.
#
#   bench/ultraserver_bench.sh [build dir, default build/release]
set -euo pipefail
build="${1:-build/release}"
for sku in nl72x2 nl32x2; do
  for gen in 1 2 3; do
    out=$( { /usr/bin/time -f "TIME %e %M" "$build/bin/trn3vp" run --platform $sku -p $sku.switch_gen=$gen 2>&1; } || true)
    elab=$(echo "$out" | sed -n 's/^elaboration: .* in \([0-9.]*\) s of wall time/\1/p')
    chips=$(echo "$out" | sed -n 's/^chips up: \(.*\)$/\1/p')
    read -r wall rss <<<"$(echo "$out" | awk '/^TIME/ {print $2, $3}')"
    verdict=$(echo "$out" | grep -o "platform $sku: [A-Z]*")
    printf '%s gen%s: elaboration %s s, whole run %s s wall, peak RSS %.2f GiB; %s; %s\n' \
      "$sku" "$gen" "$elab" "$wall" "$(awk -v r="$rss" 'BEGIN {print r / 1048576}')" "$chips" "$verdict"
  done
done

# Memory per chip and the boot's wall time for nl72x2 (targets: under 6 MiB
# per chip, boot under 3 s on a quiet machine): the median of three full
# runs, less a one-tray run (8 chips) to take out what does not scale.
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
runs=$(for _ in 1 2 3; do
  { /usr/bin/time -f "TIME %e %M" "$build/bin/trn3vp" run --platform nl72x2 -p boot.kernels=false 2>&1 || true; } |
    awk '/^TIME/ {print $2, $3}'
done)
small=$({ /usr/bin/time -f "TIME %e %M" "$build/bin/trn3vp" run --platform nl72x2 -p nl72x2.trays=1 \
  -p boot.kernels=false 2>&1 || true; } | awk '/^TIME/ {print $3}')
wall=$(echo "$runs" | awk '{print $1}' | median)
rss=$(echo "$runs" | awk '{print $2}' | median)
printf 'nl72x2 boot (kernels off): %s s wall (median of 3), peak RSS %.0f MiB, %.2f MiB per chip (%s KiB less the 8-chip run %s KiB, over 136 chips)\n' \
  "$wall" "$(awk -v r="$rss" 'BEGIN {print r / 1024}')" "$(awk -v r="$rss" -v s="$small" 'BEGIN {print (r - s) / 1024 / 136}')" "$rss" "$small"
