// Rings from the fabric: what a runtime knows of the scale-up fabric (the
// directed links, their bandwidth, and the links each flow crosses) and a
// search that lays one ring per channel over it so that no link carries more
// than it must. No SystemC: the platform describes its fabric
// (platforms/ultraserver), the host program asks for rings.
#pragma once

#include <functional>
#include <vector>

#include "trn3/collectives/plan.h"

namespace trn3::collectives {

struct fabric_paths {
    // Bytes per second of each directed link (a cable's two directions are two links).
    std::vector<double> capacity;
    // The directed links a flow from fabric chip `src` to `dst` on fabric
    // channel `channel` crosses, in order (the route tables' choice for it,
    // spec/device.h TRN3_ROUTE_PICK); empty when there is no route.
    std::function<std::vector<unsigned>(unsigned src, unsigned dst, unsigned channel)> links;
};

// One ring per channel over `ranks` (fabric ids; the ring of channel k is
// rings[k], a permutation of ranks), built greedily: a ring goes from its
// start to the unvisited rank whose flow on that channel
// would leave the most loaded link on its path least loaded (load: flows per
// byte per second, counted over the rings laid before and this ring's
// flows so far), ties to the fewer
// links, then to the next rank in `ranks` order; of the rings from 8 starts
// and the reverses of the rings laid before, the one after which the busiest
// link is least busy (then the most even loads). Then (with local_search), on up to 64 ranks,
// a local search moves runs of ranks and reverses runs while that lowers
// the sum of the links' loads to the 8th power (the busiest link no
// busier), over each new ring and then twice over every ring. Ring k is
// given starting at rank k x n / rings (rings start apart). No hop of a
// ring is one the routes do not reach (an empty path): the greedy walk and
// the moves skip those. Throws std::invalid_argument when no ring closes
// over the routes, or a path crosses a link without capacity. Deterministic: every host
// computes the same rings. `fabric_channel(k)` is the fabric channel ring k's
// flows carry.
std::vector<std::vector<unsigned>> search_rings(const fabric_paths& fabric, const std::vector<unsigned>& ranks,
                                                unsigned rings, const std::function<unsigned(unsigned)>& fabric_channel,
                                                bool local_search = true);

// The hierarchical plan's rings (request::level_rings), channel by
// channel: on each level, the ranks that differ only on that level (their
// `positions`, by rank, innermost level first) form a group, and
// search_rings lays `rings` rings over each group, ring k's flows on
// fabric channel fabric_channel(k, level). Groups are searched one by one:
// they are different chips, so their links barely overlap. result[k][l]:
// channel k's rings of level l, one per group.
std::vector<rings_by_level> search_level_rings(const fabric_paths& fabric, const std::vector<unsigned>& ranks,
                                               const std::vector<std::vector<unsigned>>& positions, unsigned rings,
                                               const std::function<unsigned(unsigned, unsigned)>& fabric_channel,
                                               bool local_search = true);

// The most loaded directed link's load (flows / bytes per second) when ring
// k's flows run on fabric_channel(k): what the search minimises, for reports
// and tests.
double ring_load(const fabric_paths& fabric, const std::vector<std::vector<unsigned>>& rings,
                 const std::function<unsigned(unsigned)>& fabric_channel);

}  // namespace trn3::collectives
