// The hierarchical schedule's level orders (sw/collectives level_orders.h):
// each level's bandwidth from the fabric's routes, and channels taking the
// levels in orders that keep every level's links busy.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "trn3/collectives/level_orders.h"
#include "two_racks.h"

using namespace trn3::collectives;
using trn3::test::two_racks;

namespace {

const std::vector<unsigned> ranks{0, 1, 2, 3, 4, 5, 6, 7};
const std::vector<std::vector<unsigned>> positions{{0, 0}, {1, 0}, {2, 0}, {3, 0}, {0, 1}, {1, 1}, {2, 1}, {3, 1}};

}  // namespace

TEST_CASE("a level's bandwidth is the sum of the links a rank's routes to its peers there start on, the least over "
          "the ranks") {
    const two_racks fabric;
    CHECK(level_bandwidth(fabric.f, ranks, positions, 2) == std::vector<double>{12.0, 1.0});  // 3 links of 4; 1 cable
    two_racks cut;
    cut.f.capacity[unsigned(cut.link_of[5][6])] = 0.5;  // chip 5's link to 6 is narrower: the level's least is 5's
    CHECK(level_bandwidth(cut.f, ranks, positions, 2) == std::vector<double>{8.5, 1.0});
    two_racks unreached;
    const auto routes = unreached.f.links;
    unreached.f.links = [routes](unsigned s, unsigned d, unsigned c) {  // chip 4 has no route to its counterpart
        return s == 4 && d == 0 ? std::vector<unsigned>{} : routes(s, d, c);
    };
    CHECK_THROWS_WITH(level_bandwidth(unreached.f, ranks, positions, 2),
                      "level_bandwidth: chip 4 reaches no peer of level 1");
}

TEST_CASE("channels take equal levels in turn, narrower levels after wider ones, and wide levels first or second by "
          "their share of the bytes") {
    using orders = std::vector<std::vector<unsigned>>;
    // Equal levels of 4: the first channel innermost first (ties go to the
    // first order), then each channel the order the channels before left idle.
    CHECK(level_orders({4, 4}, {1.0, 1.0}, 4) == orders{{0, 1}, {1, 0}, {0, 1}, {1, 0}});
    CHECK(level_orders({4, 4}, {}, 2) == orders{{0, 1}, {1, 0}});  // no bandwidth known: all equal
    // The two racks: the cable is a twelfth of the rack's links, so every
    // channel crosses it last, with the least bytes.
    CHECK(level_orders({4, 2}, {12.0, 1.0}, 3) == orders{{0, 1}, {0, 1}, {0, 1}});
    // NL72x2's tray (4), rack (18) and racks (2) at 512, 512 and 128 GB/s:
    // innermost first moves 3/4 of a channel's bytes on the tray's links,
    // rack first 17/18 on the rack's; the channels share both, and the
    // narrow racks go last (a channel that began there would move half its
    // part on the cables).
    CHECK(level_orders({4, 18, 2}, {512e9, 512e9, 128e9}, 8) ==
          orders{{0, 1, 2}, {1, 0, 2}, {0, 1, 2}, {0, 1, 2}, {1, 0, 2}, {0, 1, 2}, {1, 0, 2}, {0, 1, 2}});

    CHECK_THROWS_WITH(level_orders({4, 1}, {}, 1), "level_orders: level 1 needs two places and a bandwidth above 0");
    CHECK_THROWS_WITH(level_orders({4, 4}, {1.0}, 1), "level_orders: 1 bandwidths for 2 levels");
}
