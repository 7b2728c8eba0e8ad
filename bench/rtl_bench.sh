#!/usr/bin/env bash
# The systolic-array RTL's costs: Verilator build time and peak memory of the
# array testbench at 32 x 32 and 128 x 128 (fresh build directories, no
# ccache, the project's verilate() flags), its simulation speed in cycles and
# PE-cycles per wall second, and the wall time of one 128 x 128 x 512 matmul
# through the full-size array (weights, 512 columns, drain).
#
#   bench/rtl_bench.sh            (about two minutes; figures in docs/performance.md)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

printf '%-8s %12s %14s %14s %18s\n' array "build (s)" "peak RSS (MB)" "cycles/s" "M PE-cycles/s"
for size in 32 128; do
  full=OFF
  [ "$size" = 128 ] && full=ON
  cmake -S "$root" -B "$work/b$size" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRN3_BUILD_TESTS=OFF \
        -DTRN3_BUILD_BENCH=OFF -DTRN3_RTL_FULL=$full -DCMAKE_CXX_COMPILER_LAUNCHER= >/dev/null
  /usr/bin/time -f '%e %M' -o "$work/time" cmake --build "$work/b$size" --target rtl_array_tb >/dev/null
  read -r build_s rss_kb < "$work/time"
  matmuls=8
  [ "$size" = 128 ] && matmuls=4
  out="$("$work/b$size/rtl/rtl_array_tb" "$matmuls" 512)"
  speed="$(grep '^speed:' <<<"$out")"
  cycles_s="$(awk '{print $2}' <<<"$speed")"
  pe_s="$(awk '{print $4}' <<<"$speed")"
  printf '%-8s %12s %14d %14s %18s\n' "${size}x${size}" "$build_s" "$((rss_kb / 1024))" "$cycles_s" "$pe_s"
  grep -q ' 0 mismatches' <<<"$out" || { echo "$out"; exit 1; }
done
one="$("$work/b128/rtl/rtl_array_tb" 1 512)"
echo "one 128x128x512 matmul through the 128x128 RTL: $(grep '^speed:' <<<"$one" | sed 's/.*wall \(.*\))/\1/') wall; $(grep '^cycles:' <<<"$one")"
