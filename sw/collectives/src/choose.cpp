// collectives.algorithm = auto: an alpha-beta estimate of each candidate,
// the cheaper one wins.
//
//   ring:              2(n-1) steps, 2(n-1)/n x size on each rank's links
//   halving_doubling:  2 log2 p steps (+2 for the fold when n is not a power
//                      of two, p the largest below), 2(p-1)/p x size, plus
//                      2 x size through the fold's ranks
//
// One dependent step costs `step_bytes` of bandwidth time: a step's latency
// (about 1.2 us: a descriptor read ahead, the fabric crossed, the wait met)
// times a chip's bandwidth in one channel (about 25 GB/s), as measured on
// nl72x2 (docs/collectives.md, "Choosing the algorithm"). On 144 chips the
// crossover falls near 3.8 MiB, between the sweeps' 1 MiB (halving-doubling
// 75.89 us, the ring 194.73) and 4 MiB (255.15 against 247.90); on a
// power of two halving-doubling always wins (no fold), as the 64-chip sweep
// shows.
// reduce_scatter and all_gather take halving-doubling on a power of two,
// the ring otherwise; all_to_all is direct, broadcast the chain. Where
// halving-doubling's fabric channels (one per peer distance, per channel)
// do not fit in the chip's 16, the ring runs.
#include "trn3/collectives/choose.h"

#include "plan_util.h"

namespace trn3::collectives {

namespace {
constexpr double step_bytes = 30e3;
}  // namespace

algorithm choose(op what, unsigned ranks, std::uint64_t bytes, unsigned channels) {
    if (what == op::all_to_all || what == op::all_to_allv) return algorithm::direct;
    if (what == op::broadcast || what == op::reduce) return algorithm::chain;
    if (what == op::send_recv) return algorithm::direct;
    const bool room =
        std::uint64_t(counters_needed(algorithm::halving_doubling, what, ranks)) * channels <= TRN3_FABRIC_CHANNELS;
    if (!room) return algorithm::ring;
    const unsigned bits = detail::floor_log2(ranks);
    const unsigned p = 1u << bits;
    const bool fold = p != ranks;
    if (what != op::all_reduce) return fold ? algorithm::ring : algorithm::halving_doubling;
    const double n = ranks, size = static_cast<double>(bytes);
    const double ring = 2 * (n - 1) * step_bytes + 2 * (n - 1) / n * size;
    const double halving_doubling =
        (2.0 * bits + (fold ? 2 : 0)) * step_bytes + 2.0 * (p - 1) / p * size + (fold ? 2 * size : 0);
    return halving_doubling <= ring ? algorithm::halving_doubling : algorithm::ring;
}

}  // namespace trn3::collectives
