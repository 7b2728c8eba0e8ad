#!/bin/bash
# The collectives figures of docs/performance.md that are too slow for
# scripts/docs_figures.sh: the full nl72x2 (144 chips) and the bandwidth
# runs. Prints each figure with its wall time; simulated figures are
# deterministic, wall times are this machine's. Every size runs on every
# channel (collectives.channel_bytes=0), as these figures were measured.
#
#   bench/collectives_figures.sh [build/release]   (about 70 minutes on 2 cores)
set -euo pipefail
set -f  # the params' '*' patterns are not file globs
bin="${1:-build/release}/bin/trn3vp"
[ -x "$bin" ] || { echo "collectives_figures: no $bin (build first)" >&2; exit 2; }

# One run: prints the table rows and the wall time.
run() {
    local label="$1"
    shift
    local start out ms
    start=$(date +%s%N)
    out=$("$bin" run "$@" 2>&1) || { echo "collectives_figures: $label failed:" >&2; echo "$out" | tail -20 >&2; exit 1; }
    ms=$((($(date +%s%N) - start) / 1000000))
    echo "## $label ($((ms / 1000)).$((ms % 1000 / 100)) s wall)"
    echo "$out" | grep -E '^ +[0-9]+ +[0-9]+ ' || true
}

full="--platform nl72x2 -p nl72x2.app=collectives -p collectives.check_max_bytes=0 -p collectives.channel_bytes=0"
run "nl72x2 all_reduce 8 B to 2 MiB, auto" $full -p collectives.min_bytes=8 -p collectives.max_bytes=2M
for a in ring halving_doubling; do
    run "nl72x2 all_reduce 1 MiB and 4 MiB, $a" $full -p collectives.algorithm=$a \
        -p collectives.min_bytes=1M -p collectives.max_bytes=4M -p collectives.factor=4
done
run "nl72x2 all_reduce 16 MiB, ring" $full -p collectives.algorithm=ring -p collectives.min_bytes=16M \
    -p collectives.max_bytes=16M
run "nl72x2 all_reduce 64 MiB, ring" $full -p collectives.algorithm=ring -p collectives.min_bytes=64M \
    -p collectives.max_bytes=64M
run "nl72x2 all_reduce 1 MiB to 64 MiB, hierarchical" $full -p collectives.algorithm=hierarchical \
    -p collectives.min_bytes=1M -p collectives.max_bytes=64M -p collectives.factor=4

for orders in innermost balanced; do
    run "nl72x2 all_reduce 1 MiB to 64 MiB, hierarchical, 8 channels, $orders level orders" $full \
        -p collectives.algorithm=hierarchical -p collectives.channels=8 -p collectives.level_orders=$orders \
        -p collectives.min_bytes=1M -p collectives.max_bytes=64M -p collectives.factor=4
done

run "nl72x2 all_reduce 8 B to 4 KiB, SBUF to SBUF, auto" $full -p collectives.buffers=sbuf -p collectives.min_bytes=8 \
    -p collectives.max_bytes=4K -p collectives.factor=8
run "nl72x2 all_reduce 8 B to 2 MiB, tree" $full -p collectives.algorithm=tree -p collectives.min_bytes=8 \
    -p collectives.max_bytes=2M -p collectives.factor=16

sixty_four="--platform nl32x2 -p nl32x2.app=collectives -p collectives.check_max_bytes=0 -p collectives.channel_bytes=0"
for a in ring direct halving_doubling tree; do
    run "64 chips all_reduce 64 MiB, $a" $sixty_four -p collectives.algorithm=$a -p collectives.min_bytes=64M \
        -p collectives.max_bytes=64M
done

eight="--platform nl32x2 -p nl32x2.trays=2 -p nl32x2.app=collectives -p collectives.algorithm=ring -p collectives.channel_bytes=0"
eight="$eight -p collectives.min_bytes=64M -p collectives.max_bytes=64M -p collectives.check_max_bytes=0"
for ch in 2 8 15; do
    for rings in topology stride; do
        run "8 chips all_reduce 64 MiB, $ch channels, 16 engines, $rings rings" $eight -p collectives.channels=$ch \
            -p collectives.rings=$rings -p 'nl32x2.*.dma0.engines=16'
    done
done

wide="--platform nl72x2 -p nl72x2.trays=2 -p nl72x2.app=collectives -p collectives.algorithm=ring -p collectives.channel_bytes=0"
wide="$wide -p collectives.min_bytes=256M -p collectives.max_bytes=256M -p collectives.check_max_bytes=0"
wide="$wide -p collectives.channels=15 -p nl72x2.*.dma0.engines=16"
for orders in innermost balanced; do
    run "nl72x2 reduced to 16 chips, all_reduce 64 MiB, hierarchical, 15 channels, 16 engines, $orders level orders" \
        --platform nl72x2 -p nl72x2.trays=2 -p nl72x2.app=collectives -p collectives.algorithm=hierarchical \
        -p collectives.channel_bytes=0 -p collectives.min_bytes=64M -p collectives.max_bytes=64M \
        -p collectives.check_max_bytes=0 -p collectives.channels=15 -p 'nl72x2.*.dma0.engines=16' \
        -p collectives.level_orders=$orders
done
for chunk in 1M 256K; do
    run "nl72x2 reduced to 16 chips, all_reduce 256 MiB, 15 channels, 16 engines, dma0.chunk $chunk" $wide \
        -p "nl72x2.*.dma0.chunk=$chunk"
done
# More DMA queues than the default 16 (dma0.queues): 31 and 63 channels, a ring each.
for ch in 31 63; do
    for chunk in 256K 64K; do
        run "nl72x2 reduced to 16 chips, all_reduce 256 MiB, $ch channels on $((ch + 1)) queues and engines, dma0.chunk $chunk" \
            --platform nl72x2 -p nl72x2.trays=2 -p nl72x2.app=collectives -p collectives.algorithm=ring \
            -p collectives.channel_bytes=0 -p collectives.min_bytes=256M -p collectives.max_bytes=256M \
            -p collectives.check_max_bytes=0 -p collectives.channels=$ch -p "nl72x2.*.dma0.queues=$((ch + 1))" \
            -p "nl72x2.*.dma0.engines=$((ch + 1))" -p "nl72x2.*.dma0.chunk=$chunk"
    done
done
# The hosts see their chips' queues done through DMA_PENDING (collectives.completion=pending).
run "nl72x2 reduced to 16 chips, all_reduce 256 MiB, 63 channels on 64 queues and engines, dma0.chunk 64K, completion pending" \
    --platform nl72x2 -p nl72x2.trays=2 -p nl72x2.app=collectives -p collectives.algorithm=ring \
    -p collectives.channel_bytes=0 -p collectives.min_bytes=256M -p collectives.max_bytes=256M \
    -p collectives.check_max_bytes=0 -p collectives.channels=63 -p "nl72x2.*.dma0.queues=64" \
    -p "nl72x2.*.dma0.engines=64" -p "nl72x2.*.dma0.chunk=64K" -p collectives.completion=pending
# Rings on a switched grid (collectives.rings=grid): 64 channels on 16 chips (8 patterns, the
# cables' ceiling), against the searched rings on the same channels.
for rings in grid topology; do
    run "nl72x2 reduced to 16 chips, all_reduce 256 MiB, 64 channels on 128 queues and engines, rings $rings, completion pending" \
        --platform nl72x2 -p nl72x2.trays=2 -p nl72x2.app=collectives -p collectives.algorithm=ring \
        -p collectives.channel_bytes=0 -p collectives.min_bytes=256M -p collectives.max_bytes=256M \
        -p collectives.check_max_bytes=0 -p collectives.channels=64 -p "nl72x2.*.dma0.queues=128" \
        -p "nl72x2.*.dma0.engines=128" -p "nl72x2.*.dma0.chunk=64K" -p collectives.completion=pending \
        -p collectives.rings=$rings
done
# Out of place without a copy: each reducing write takes its other operand from the input where it
# lands (collectives.out_of_place=operand, TRN3_DESC_REDUCE_OPERAND).
run "nl72x2 reduced to 16 chips, all_reduce 256 MiB, 64 grid channels, out_of_place operand, completion pending" \
    --platform nl72x2 -p nl72x2.trays=2 -p nl72x2.app=collectives -p collectives.algorithm=ring \
    -p collectives.channel_bytes=0 -p collectives.min_bytes=256M -p collectives.max_bytes=256M \
    -p collectives.check_max_bytes=0 -p collectives.channels=64 -p "nl72x2.*.dma0.queues=128" \
    -p "nl72x2.*.dma0.engines=128" -p "nl72x2.*.dma0.chunk=64K" -p collectives.completion=pending \
    -p collectives.rings=grid -p collectives.out_of_place=operand
# Out of place, the input copied on 32 queues of their own, phase by phase ahead of the steps.
run "nl72x2 reduced to 16 chips, all_reduce 256 MiB, 64 grid channels, copy_queues 32, completion pending" \
    --platform nl72x2 -p nl72x2.trays=2 -p nl72x2.app=collectives -p collectives.algorithm=ring \
    -p collectives.channel_bytes=0 -p collectives.min_bytes=256M -p collectives.max_bytes=256M \
    -p collectives.check_max_bytes=0 -p collectives.channels=64 -p "nl72x2.*.dma0.queues=128" \
    -p "nl72x2.*.dma0.engines=128" -p "nl72x2.*.dma0.chunk=64K" -p collectives.completion=pending \
    -p collectives.rings=grid -p collectives.copy_queues=32
# The full nl72x2 at 256 MiB on grid rings: 72 channels (9 patterns, every x8 way 4 flows), out of
# place copying the input first, then reducing from it where data lands (4 to 13 minutes each).
for oop in copy operand; do
    run "nl72x2 (144 chips), all_reduce 256 MiB, ring on 72 grid rings, 128 queues and engines, dma0.chunk 64K, completion pending, out_of_place $oop" \
        $full -p collectives.algorithm=ring -p collectives.rings=grid -p collectives.channels=72 \
        -p collectives.min_bytes=256M -p collectives.max_bytes=256M -p "nl72x2.*.dma0.queues=128" \
        -p "nl72x2.*.dma0.engines=128" -p "nl72x2.*.dma0.chunk=64K" -p collectives.completion=pending \
        -p collectives.wait=interrupt -p "*.timing_model=bandwidth" -p collectives.out_of_place=$oop
done
# The same at 1 GiB with operand landings (about 8 minutes).
run "nl72x2 (144 chips), all_reduce 1 GiB, ring on 72 grid rings, 128 queues and engines, dma0.chunk 64K, completion pending, out_of_place operand" \
    $full -p collectives.algorithm=ring -p collectives.rings=grid -p collectives.channels=72 \
    -p collectives.min_bytes=1G -p collectives.max_bytes=1G -p "nl72x2.*.dma0.queues=128" \
    -p "nl72x2.*.dma0.engines=128" -p "nl72x2.*.dma0.chunk=64K" -p collectives.completion=pending \
    -p collectives.wait=interrupt -p "*.timing_model=bandwidth" -p collectives.out_of_place=operand
# The full nl72x2 (144 chips) at 256 MiB: 63 channels on 64 queues (about 9 minutes), and the
# hierarchical all_reduce on 21 (6 fabric channels each: 126 of 128); interrupts and the HBM
# bandwidth engine keep the host's side fast.
for a in "ring -p collectives.channels=63" "hierarchical -p collectives.channels=21"; do
    # shellcheck disable=SC2086  # $a is the algorithm and its channels
    run "nl72x2 (144 chips), all_reduce 256 MiB, $a, 64 queues and engines, dma0.chunk 64K, completion pending" \
        $full -p collectives.algorithm=$a -p collectives.min_bytes=256M -p collectives.max_bytes=256M \
        -p "nl72x2.*.dma0.queues=64" -p "nl72x2.*.dma0.engines=64" -p "nl72x2.*.dma0.chunk=64K" \
        -p collectives.completion=pending -p collectives.wait=interrupt -p "*.timing_model=bandwidth"
done
