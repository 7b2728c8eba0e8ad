// collectives.algorithm = auto: an alpha-beta estimate of each candidate,
// the cheaper one wins.
//
//   ring:              2(n-1) steps, 2(n-1)/n x size on each rank's links
//   halving_doubling:  2 log2 p steps (+2 for the fold when n is not a power
//                      of two, p the largest below), 2(p-1)/p x size, plus
//                      2 x size through the fold's ranks
//   hierarchical:      2 sum(d_i - 1) steps on levels of d_i ranks, 2(n-1)/n
//                      x size (the ring's), most of it on level 0's links
//
// One dependent step costs `step_bytes` of bandwidth time: a step's latency
// (about 1.2 us: a descriptor read ahead, the fabric crossed, the wait met)
// times a chip's bandwidth in one channel (about 25 GB/s), as measured on
// nl72x2 (docs/collectives.md, "Choosing the algorithm"). On 144 chips the
// ring against halving-doubling crosses near 3.8 MiB, between the sweeps'
// 1 MiB (halving-doubling 75.89 us, the ring 194.73) and 4 MiB (255.15
// against 247.90); on a power of two halving-doubling always wins (no fold).
//
// Where the topology gives levels (two or more) and the collective runs on
// at most `level_channels` channels (or on more, where the ring has at
// least `many_channel_steps` times the levels' steps), hierarchical takes
// the ring's place (the same bytes in fewer steps) and, from `near_bytes` on,
// halving-doubling's too: its bytes cross the nearest links, where
// halving-doubling's later steps cross the farthest (a torus's several
// hops, the racks' switches). Measured crossovers, 2 channels: 512 KiB on
// the 2D and 3D tori and 144 chips of nl72x2, 2 MiB on 64 chips of nl32x2
// (a tie at 512 KiB), 2-8 MiB on 16 chips of nl72x2. Below near_bytes the
// estimate decides between the two. On more channels the ring's searched
// rings use every link and the ring wins at large sizes where its steps
// are few (8 channels on the 2D torus, 32 MiB: 482.62 GB/s against
// 392.80, 15 against 6 steps each way; 15 channels on 16 chips of nl72x2,
// 64 MiB: 295.93 against 220.36, 15 against 5), and loses where they are
// many (8 channels on 144 chips, 64 MiB: 131.95 against 136.80, 143
// against 21, and 258 s of host time against 80). Without hierarchical,
// on many channels, from near_bytes on the ring alone: halving-doubling's far peers then
// cost more than its fewer steps save (8 channels, 16 chips of nl32x2, 128
// MiB: 131.4 GB/s against the ring's 246.5).
//
// reduce_scatter and all_gather take halving-doubling on a power of two,
// else the ring (hierarchical as for all_reduce); all_to_all is direct,
// broadcast the chain. Where an algorithm's fabric channels (per channel)
// do not fit in the chip's 128, it is not a candidate.
#include "trn3/collectives/choose.h"

#include <algorithm>
#include <numeric>

#include "plan_util.h"

namespace trn3::collectives {

namespace {
constexpr double step_bytes = 30e3;
constexpr std::uint64_t near_bytes = 1 << 20;
constexpr unsigned level_channels = 4;
constexpr double many_channel_steps = 5;

bool fits(algorithm a, op what, unsigned ranks, unsigned channels, unsigned levels) {
    return std::uint64_t(counters_needed(a, what, ranks, levels)) * channels <= TRN3_FABRIC_CHANNELS;
}
}  // namespace

algorithm choose(op what, unsigned ranks, std::uint64_t bytes, unsigned channels, const std::vector<unsigned>& levels) {
    if (what == op::all_to_all || what == op::all_to_allv) return algorithm::direct;
    if (what == op::broadcast || what == op::reduce) return algorithm::chain;
    if (what == op::send_recv) return algorithm::direct;
    const double n = ranks, size = static_cast<double>(bytes);
    const auto level_count = static_cast<unsigned>(levels.size());
    const double level_steps = std::accumulate(levels.begin(), levels.end(), 0.0) - level_count;
    // On many channels only where the ring's steps far outnumber the levels' (144 chips: 143 against 21).
    const bool levels_pay = channels <= level_channels || n - 1 >= many_channel_steps * level_steps;
    const bool hierarchical = level_count >= 2 && levels_pay &&
                              fits(algorithm::hierarchical, what, ranks, channels, level_count) &&
                              std::all_of(levels.begin(), levels.end(), [](unsigned d) { return d >= 2; }) &&
                              std::accumulate(levels.begin(), levels.end(), 1ull, std::multiplies<>()) == ranks;

    const algorithm wide = hierarchical ? algorithm::hierarchical : algorithm::ring;
    const bool halving = fits(algorithm::halving_doubling, what, ranks, channels, 1);
    const bool many_channels = channels > level_channels;
    if (!halving || ((hierarchical || many_channels) && bytes >= near_bytes)) return wide;
    const unsigned bits = detail::floor_log2(ranks);
    const unsigned p = 1u << bits;
    const bool fold = p != ranks;
    // reduce_scatter, all_gather: log2 p steps against sum(d_i - 1) or n - 1, the same bytes.
    if (what != op::all_reduce) return fold ? wide : algorithm::halving_doubling;
    const double wide_cost = hierarchical ? 2 * level_steps * step_bytes + 2 * (n - 1) / n * size
                                          : 2 * (n - 1) * step_bytes + 2 * (n - 1) / n * size;
    const double halving_doubling =
        (2.0 * bits + (fold ? 2 : 0)) * step_bytes + 2.0 * (p - 1) / p * size + (fold ? 2 * size : 0);
    return halving_doubling <= wide_cost ? algorithm::halving_doubling : wide;
}

}  // namespace trn3::collectives
