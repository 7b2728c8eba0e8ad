// Rings by construction on a switched grid (sw/collectives grid_rings.h),
// over a fabric shaped like nl72x2: racks of trays of four chips; a tray's
// chips share 8 switches, each chip one way (1 unit) to each; the chips in
// one slot of a rack's trays share 8 plane switches the same way; a chip and
// its twin in the other rack share a cable of 2 units. Routes pick a way
// by (source + destination + channel) mod 8, as TRN3_ROUTE_PICK does; chips
// that differ on more than one level are reached through the source's twin
// (its cable, then on from there), as forwarding chips do.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>

#include "trn3/collectives/grid_rings.h"

using namespace trn3::collectives;

namespace {

struct switched_grid {
    unsigned trays, slots = 4, racks = 2;
    fabric_paths f;
    std::vector<std::vector<unsigned>> positions;  // slot, tray, rack
    std::vector<unsigned> ranks;

    unsigned rack(unsigned a) const { return a / (trays * slots); }
    unsigned tray(unsigned a) const { return a / slots % trays; }
    unsigned slot(unsigned a) const { return a % slots; }
    // Links of chip a: 8 tray ways out and in, 8 plane ways out and in, the cable out.
    static unsigned link(unsigned a, unsigned kind, unsigned way) { return a * 33 + kind * 8 + way; }

    explicit switched_grid(unsigned trays_per_rack) : trays(trays_per_rack) {
        const unsigned n = racks * trays * slots;
        f.capacity.assign(std::size_t(n) * 33, 1.0);
        for (unsigned a = 0; a < n; ++a) {
            f.capacity[link(a, 4, 0)] = 2.0;
            positions.push_back({slot(a), tray(a), rack(a)});
            ranks.push_back(a);
        }
        f.links = [this](unsigned s, unsigned d, unsigned c) -> std::vector<unsigned> {
            const unsigned way = (s + d + c) % 8;
            const bool same_rack = rack(s) == rack(d), same_tray = tray(s) == tray(d), same_slot = slot(s) == slot(d);
            if (same_rack && same_tray && !same_slot) return {link(s, 0, way), link(d, 1, way)};
            if (same_rack && !same_tray && same_slot) return {link(s, 2, way), link(d, 3, way)};
            if (!same_rack && same_tray && same_slot) return {link(s, 4, 0)};
            const unsigned twin = (s + trays * slots) % (racks * trays * slots);
            std::vector<unsigned> path{link(s, 4, 0)};
            if (twin != d) path.push_back(link(twin, 0, way));
            return path;
        };
    }
};

unsigned channel_of(unsigned k) { return 1 + k; }

// Flows on the busiest link (flows per unit of capacity).
double busiest(const switched_grid& g, const std::vector<std::vector<unsigned>>& rings) {
    return ring_load(g.f, rings, channel_of);
}

}  // namespace

TEST_CASE("grid rings on 144 chips: 72 rings put 4 flows on every x8 way and 8 on every cable, the search 5 or more") {
    const switched_grid g(18);
    const auto grid = grid_rings(g.f, g.ranks, g.positions, 72, channel_of);
    CHECK(grid.copies == 8);
    CHECK(grid.patterns == 9);
    CHECK(grid.quota == std::vector<unsigned>{4, 4, 1});
    CHECK(grid.shift_orders == std::vector<unsigned>{1, 9, 1});  // the trays: 18 places, shifts by 2
    CHECK(grid.excess == 0);
    REQUIRE(grid.rings.size() == 72);
    for (const auto& ring : grid.rings) {
        auto sorted = ring;
        std::sort(sorted.begin(), sorted.end());
        REQUIRE(sorted == g.ranks);
        for (std::size_t i = 0; i < ring.size(); ++i) {  // every hop one level: one switch hop or the cable
            const auto &a = g.positions[ring[i]], &b = g.positions[ring[(i + 1) % ring.size()]];
            REQUIRE((a[0] != b[0]) + (a[1] != b[1]) + (a[2] != b[2]) == 1);
        }
    }
    // Every link full and none past its share: 4 flows a unit, on every link.
    std::vector<double> load(g.f.capacity.size(), 0.0);
    for (unsigned k = 0; k < 72; ++k)
        for (std::size_t i = 0; i < 144; ++i)
            for (unsigned l : g.f.links(grid.rings[k][i], grid.rings[k][(i + 1) % 144], channel_of(k)))
                load[l] += 1.0 / g.f.capacity[l];
    CHECK(*std::max_element(load.begin(), load.end()) == Approx(4.0));
    CHECK(*std::min_element(load.begin(), load.end()) == Approx(4.0));
    CHECK(busiest(g, grid.rings) == Approx(4.0));
    // The same rings every time (every host computes them).
    CHECK(grid_rings(g.f, g.ranks, g.positions, 72, channel_of).rings == grid.rings);
    // The ring search on the same fabric leaves busier links.
    CHECK(busiest(g, search_rings(g.f, g.ranks, 72, channel_of)) >= 5.0);
}

TEST_CASE(
    "grid rings on 144 chips: 64 rings are 8 patterns, shifts of the trays by 9 and of the slots, 4 flows a way") {
    const switched_grid g(18);
    const auto grid = grid_rings(g.f, g.ranks, g.positions, 64, channel_of);
    CHECK(grid.patterns == 8);
    CHECK(grid.shift_orders == std::vector<unsigned>{4, 2, 1});
    CHECK(grid.quota == std::vector<unsigned>{4, 4, 1});
    CHECK(grid.excess == 0);
    CHECK(busiest(g, grid.rings) == Approx(4.0));
}

TEST_CASE("grid rings start apart, and copies of a pattern share its order on consecutive channels") {
    const switched_grid g(18);
    const auto grid = grid_rings(g.f, g.ranks, g.positions, 72, channel_of);
    std::map<unsigned, unsigned> starts;
    for (unsigned k = 0; k < 72; ++k) ++starts[grid.rings[k][0]];
    CHECK(starts.size() == 72);
    auto rotated_equal = [](std::vector<unsigned> a, const std::vector<unsigned>& b) {
        std::rotate(a.begin(), std::find(a.begin(), a.end(), b[0]), a.end());
        return a == b;
    };
    CHECK(rotated_equal(grid.rings[0], grid.rings[7]));
    CHECK_FALSE(rotated_equal(grid.rings[7], grid.rings[8]));
}

TEST_CASE("grid rings on 16 chips: 32 rings stay within the cables' ceiling") {
    const switched_grid g(2);
    const auto grid = grid_rings(g.f, g.ranks, g.positions, 32, channel_of);
    CHECK(grid.patterns == 4);
    CHECK(grid.shift_orders == std::vector<unsigned>{4, 1, 1});  // the slots: 4 places, shifts by 1
    // The quotas give the cable none (2 + 2 + 0 = 4), but every ring crosses:
    // the best is one crossing a chip, one pattern of 8 flows on 2 units.
    CHECK(grid.quota == std::vector<unsigned>{2, 2, 0});
    CHECK(busiest(g, grid.rings) <= 4.0 + 1e-9);
}

TEST_CASE(
    "grid rings refuse what is not a grid, a ring count that is not a multiple of the ways, or no level to shift") {
    const switched_grid g(18);
    CHECK_THROWS_WITH(grid_rings(g.f, g.ranks, g.positions, 20, channel_of),
                      Catch::Contains("20 rings: a multiple of 8"));
    // Fewer rings than a level's ways: the ways are counted over 64 channels all the same.
    CHECK_THROWS_WITH(grid_rings(g.f, g.ranks, g.positions, 4, channel_of),
                      Catch::Contains("4 rings: a multiple of 8"));
    CHECK_THROWS_WITH(grid_rings(g.f, g.ranks, g.positions, 56, channel_of),
                      Catch::Contains("7 patterns: not a product of divisors of the levels' places"));
    auto holes = g.positions;
    holes.pop_back();
    std::vector<unsigned> fewer(g.ranks.begin(), g.ranks.end() - 1);
    CHECK_THROWS_WITH(grid_rings(g.f, fewer, holes, 72, channel_of), Catch::Contains("do not fill the levels' grid"));
}
