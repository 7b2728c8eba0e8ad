// The runtime's choice of schedule for a collective (collectives.algorithm
// = auto): by op, rank count and size, from the figures the platform
// measured (docs/collectives.md, "Choosing the algorithm").
#pragma once

#include <cstdint>

#include "trn3/collectives/plan.h"

namespace trn3::collectives {

algorithm choose(op what, unsigned ranks, std::uint64_t bytes);

}  // namespace trn3::collectives
