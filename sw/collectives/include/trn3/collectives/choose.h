// The runtime's choice of schedule for a collective (collectives.algorithm
// = auto): by op, rank count and size, from the figures the platform
// measured (docs/collectives.md, "Choosing the algorithm").
#pragma once

#include <cstdint>
#include <vector>

#include "trn3/collectives/plan.h"

namespace trn3::collectives {

// `channels`: how many channels run it; halving-doubling and
// hierarchical, where their fabric channels (counters_needed per channel)
// would not fit in the chip's TRN3_FABRIC_CHANNELS, give way, and
// hierarchical is a choice on at most 4 channels (choose.cpp) (the other
// choices, when they do not fit, are the program's one-line error).
// `levels`: the ranks on each level of the topology (their product the
// ranks; member_levels), empty where the platform gives none.
algorithm choose(op what, unsigned ranks, std::uint64_t bytes, unsigned channels = 1,
                 const std::vector<unsigned>& levels = {});

}  // namespace trn3::collectives
