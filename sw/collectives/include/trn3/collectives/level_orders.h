// The order in which each channel of a hierarchical collective takes the
// topology's levels. Every channel taking the innermost level first leaves
// the outer levels' links idle while it runs and the inner ones idle after;
// channels in different orders keep every level's links busy at once (the
// multi-dimensional schedules of torus machines, and of switched fabrics
// whose tray and rack links are apart). No SystemC.
#pragma once

#include <vector>

#include "trn3/collectives/rings.h"

namespace trn3::collectives {

// Bytes per second one rank can send to the peers of each level (the ranks
// that differ from it only there) on `channels` channels of the
// hierarchical plan: the sum of the capacities of the links the routes take
// first from the rank towards those peers on the fabric channels the
// plan's level-l data uses (l x channels + k, k < channels: the routes
// spread a rank's flows over equal next hops by channel), and of the ranks
// the least (ranks without peers on a level
// left out; a level no rank has peers on: 0). `positions`: per rank (in
// `ranks` order), its place on each level, innermost first. Throws
// std::invalid_argument when a rank reaches none of a level's peers.
std::vector<double> level_bandwidth(const fabric_paths& fabric, const std::vector<unsigned>& ranks,
                                    const std::vector<std::vector<unsigned>>& positions, unsigned channels);

// One order per channel (a permutation of the levels), chosen channel by
// channel: each step of an order reduce-scatters over its level the part
// the steps before left (the first step (d - 1)/d of the channel's bytes,
// the next (d' - 1)/d' of the 1/d left, ...), which takes bytes / bandwidth
// of that level's links; of the orders that take wider levels before
// narrower ones (a channel's steps run in sequence: one that began on a
// narrow level would move most of its part there and finish last), a
// channel takes the one after which the busiest level (the one with most
// time so far over all channels) is least busy, then the least total time,
// then the first in lexicographic order (innermost first wins ties). `places`: ranks on each level (each >= 2);
// `bandwidth`: per level (> 0; level_bandwidth()), or empty: all equal.
std::vector<std::vector<unsigned>> level_orders(const std::vector<unsigned>& places,
                                                const std::vector<double>& bandwidth, unsigned channels);

}  // namespace trn3::collectives
