// Rings laid by construction on a switched grid (collectives.rings=grid),
// where the ring search (rings.h) leaves links with more than their share.
//
// The fabric is a grid when the chips fill the levels' positions (a tray's
// slots, a rack's trays, the racks) and a chip reaches every chip that
// differs from it on one level alone over that level's own links, its
// "ways" (a tray's switches, a plane's switches, the cross-rack cable),
// the way a flow (s, d, c) takes being TRN3_ROUTE_PICK(s, d, c, ways).
// Three ideas make every link carry its share:
//  - Copies. G rings of one order on G consecutive fabric channels put one
//    flow of each hop on each of a level's G ways (G: the most ways of any
//    level, counted over 64 channels at least, which the others' divide). The rings are P = rings / G
//    patterns, each on G channels.
//  - Quotas. Over the P patterns, a chip's hops out (and in) go to the
//    levels in proportion to their bandwidth: at most quota[l] =
//    floor(x B_l / G) to level l, x the least load per way at which the
//    quotas add up to P (nl72x2: 8 tray and 8 plane ways of 64 GB/s and a
//    128 GB/s cable, P = 9: 4, 4 and 1, every x8 link then 4 flows).
//  - Symmetry. The patterns are one base ring and its images under shifts
//    of the levels' positions: level l by places / order[l], the orders
//    dividing the places and multiplying to P (nl72x2, P = 9: the trays by
//    2; P = 8: the trays by 9 and the slots by 1). A chip's hops over the
//    patterns are then the base ring's hops at the P chips of its orbit,
//    and the quotas need to hold per orbit (n / P classes) rather than per
//    chip: a search of one ring.
// The base ring starts as a reflected Gray code over the levels (each hop
// one level) and is annealed by reversals of runs and moves of runs of up
// to 4 chips, from a fixed seed (deterministic: every host lays the same),
// until every orbit meets its quotas, `steps` moves were tried, or a
// quarter of them found no better ring; the best ring seen is kept.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "trn3/collectives/rings.h"

namespace trn3::collectives {

struct grid_rings_result {
    std::vector<std::vector<unsigned>>
        rings;  // rings[k] on fabric_channel(k), fabric ids, ring k starting at rank k n / rings
    unsigned patterns = 0, copies = 0;  // P, G
    std::vector<unsigned> quota;  // by level
    std::vector<unsigned> shift_orders;  // by level: the shifts' orders (their product P)
    std::uint64_t excess =
        0;  // sum over orbits and levels of the hops out and in past the quota, squared: 0 when balanced
    std::uint64_t steps = 0;  // annealing moves tried
};

// `positions[p]`: rank p's position on each level (as member_levels gives
// them). Throws std::invalid_argument, saying why, when the ranks do not
// fill the grid, a level has no route between peers, the levels' ways do
// not divide the most ways (G), `rings` is not a multiple of G, P is not a
// product of divisors of the levels' places, or no level has an even number of places
// (the Gray code would not close).
grid_rings_result grid_rings(const fabric_paths& fabric, const std::vector<unsigned>& ranks,
                             const std::vector<std::vector<unsigned>>& positions, unsigned rings,
                             const std::function<unsigned(unsigned)>& fabric_channel, std::uint64_t steps = 40'000'000);

}  // namespace trn3::collectives
