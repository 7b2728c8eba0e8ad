// A small fabric for the ring and level-order tests (sw/collectives
// rings.h, level_orders.h).
#pragma once

#include <vector>

#include "trn3/collectives/rings.h"

namespace trn3::test {

// Two racks of four chips (0-3, 4-7): inside a rack every pair is joined by
// a link of 4 units; across racks only chip i and i + 4 are, by a link of 1.
// A flow across racks to another chip than the counterpart goes through the
// counterpart or through the destination's counterpart, by source,
// destination and channel (as the route tables pick).
struct two_racks {
    collectives::fabric_paths f;
    std::vector<std::vector<int>> link_of = std::vector<std::vector<int>>(8, std::vector<int>(8, -1));
    two_racks() {
        for (unsigned a = 0; a < 8; ++a)
            for (unsigned b = 0; b < 8; ++b) {
                const bool same_rack = a / 4 == b / 4, counterparts = a % 4 == b % 4;
                if (a == b || !(same_rack || counterparts)) continue;
                link_of[a][b] = int(f.capacity.size());
                f.capacity.push_back(same_rack ? 4.0 : 1.0);
            }
        f.links = [this](unsigned s, unsigned d, unsigned c) {
            if (s == d || s >= 8 || d >= 8) return std::vector<unsigned>{};
            if (link_of[s][d] >= 0) return std::vector<unsigned>{unsigned(link_of[s][d])};
            const unsigned via = (s + d + c) % 2 == 0 ? (s + 4) % 8 : (d + 4) % 8;
            return std::vector<unsigned>{unsigned(link_of[s][via]), unsigned(link_of[via][d])};
        };
    }
};

}  // namespace trn3::test
