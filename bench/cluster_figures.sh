#!/bin/bash
# The scale-out figures of docs/performance.md too slow for
# scripts/docs_figures.sh: the all_reduce over every chip of 2 x nl72x2
# (288 chips: NeuronLink inside each UltraServer, EFA between them) set
# beside the same sizes on one nl72x2 (144 chips), with each run's wall
# time and peak memory; then issue 17's host-speed run (the 2 x nl72x2
# boot and one 1 GiB all_reduce, timed only, with the HBM bandwidth
# engine), and the 64 MiB row under each HBM engine. Simulated figures are
# deterministic; wall times and memory are this machine's.
#
#   bench/cluster_figures.sh [build/release]   (about 16 minutes on 2 cores)
set -euo pipefail
set -f  # the params' '*' patterns are not file globs
bin="${1:-build/release}/bin/trn3vp"
[ -x "$bin" ] || { echo "cluster_figures: no $bin (build first)" >&2; exit 2; }

# One run: prints the first table's rows, the wall time and the peak resident memory.
run() {
    local label="$1"
    shift
    local out log
    log=$(mktemp)
    out=$(/usr/bin/time -v "$bin" run "$@" 2>"$log") || {
        echo "cluster_figures: $label failed:" >&2
        tail -20 "$log" >&2
        rm -f "$log"
        exit 1
    }
    echo "## $label ($(grep -oP 'Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): \K.*' "$log") wall," \
        "$(($(grep -oP 'Maximum resident set size \(kbytes\): \K[0-9]+' "$log") / 1024)) MiB peak)"
    echo "$out" | awk '/^# .*ranks/ { n++ } n == 1 && /^ +[0-9]+ +[0-9]+ / { print }'
    rm -f "$log"
}

sizes="-p collectives.min_bytes=1M -p collectives.max_bytes=256M -p collectives.factor=16 -p collectives.check_max_bytes=1M"
run "2 x nl72x2 (288 chips) all_reduce, hierarchical across UltraServers" --platform cluster \
    -p 'cluster.*.app=collectives' $sizes
run "nl72x2 (144 chips) all_reduce, auto" --platform nl72x2 -p nl72x2.app=collectives $sizes

cluster="--platform cluster -p cluster.*.app=collectives"
run "2 x nl72x2, one 1 GiB all_reduce, timed only, HBM timing_model=bandwidth (the host-speed target)" $cluster \
    -p collectives.min_bytes=1G -p collectives.max_bytes=1G -p '*.timing_model=bandwidth'
for engine in dram bandwidth; do
    run "2 x nl72x2, 64 MiB, HBM timing_model=$engine" $cluster \
        -p collectives.min_bytes=64M -p collectives.max_bytes=64M -p "*.timing_model=$engine"
done
