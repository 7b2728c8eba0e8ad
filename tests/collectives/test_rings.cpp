// The ring search over a fabric (sw/collectives rings.h): rings that are
// permutations, deterministic, and lighter on the fabric's narrow links
// than rings by stride.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "trn3/collectives/rings.h"
#include "two_racks.h"

using namespace trn3::collectives;
using trn3::test::two_racks;

namespace {

std::vector<std::vector<unsigned>> stride_rings(const std::vector<unsigned>& ranks, unsigned k) {
    const std::vector<unsigned> strides{1, 7, 3, 5};
    std::vector<std::vector<unsigned>> rings;
    for (unsigned c = 0; c < k; ++c) {
        std::vector<unsigned> ring;
        for (unsigned i = 0; i < ranks.size(); ++i) ring.push_back(ranks[(i * strides[c % 4]) % ranks.size()]);
        rings.push_back(ring);
    }
    return rings;
}

unsigned channel_of(unsigned k) { return 1 + k; }

}  // namespace

TEST_CASE("searched rings are permutations of the ranks, start apart, and are the same every time") {
    const two_racks fabric;
    std::vector<unsigned> ranks(8);
    std::iota(ranks.begin(), ranks.end(), 0u);
    const auto rings = search_rings(fabric.f, ranks, 4, channel_of);
    REQUIRE(rings.size() == 4);
    std::vector<unsigned> starts;
    for (const auto& ring : rings) {
        auto sorted = ring;
        std::sort(sorted.begin(), sorted.end());
        CHECK(sorted == ranks);
        starts.push_back(ring[0]);
    }
    std::sort(starts.begin(), starts.end());
    CHECK(std::unique(starts.begin(), starts.end()) == starts.end());  // each from another rank
    CHECK(search_rings(fabric.f, ranks, 4, channel_of) == rings);
    // A subgroup: ranks 1, 5, 6 (in that order) and nothing else.
    const auto sub = search_rings(fabric.f, {1, 5, 6}, 2, channel_of);
    for (const auto& ring : sub) {
        auto sorted = ring;
        std::sort(sorted.begin(), sorted.end());
        CHECK(sorted == std::vector<unsigned>{1, 5, 6});
    }
}

TEST_CASE(
    "searched rings cross between racks on different links: the busiest link carries one flow, strides two or four") {
    const two_racks fabric;
    std::vector<unsigned> ranks(8);
    std::iota(ranks.begin(), ranks.end(), 0u);
    // Every ring crosses each way at least once: k crossings a way over four
    // links of 1 unit. Two and four rings: the best there is, one flow per
    // link (the fourth ring is the second one reversed), where strides put
    // two and four.
    const struct {
        unsigned rings;
        double searched, strided;
    } cases[] = {{2, 1.0, 2.0}, {4, 1.0, 4.0}};
    for (const auto& c : cases) {
        INFO(c.rings << " rings");
        CHECK(ring_load(fabric.f, search_rings(fabric.f, ranks, c.rings, channel_of), channel_of) ==
              Approx(c.searched));
        CHECK(ring_load(fabric.f, stride_rings(ranks, c.rings), channel_of) == Approx(c.strided));
    }
}

TEST_CASE("a rank no other rank reaches, or a path over a link without capacity, is refused") {
    two_racks fabric;
    auto links = fabric.f.links;
    fabric.f.links = [links](unsigned s, unsigned d, unsigned c) {
        return d == 3 ? std::vector<unsigned>{} : links(s, d, c);
    };
    CHECK_THROWS_AS(search_rings(fabric.f, {0, 1, 3}, 1, channel_of), std::invalid_argument);
    two_racks zero;
    zero.f.capacity[0] = 0;
    CHECK_THROWS_AS(search_rings(zero.f, {0, 1, 2, 3}, 1, channel_of), std::invalid_argument);
}

TEST_CASE("the local search never makes a hop the routes do not reach") {
    // Two racks of four; no route from chip 0 to 5 or from 6 to 1 (say, a
    // failed path): a free hop to the optimiser if it did not look.
    two_racks fabric;
    auto links = fabric.f.links;
    fabric.f.links = [links](unsigned s, unsigned d, unsigned c) {
        return (s == 0 && d == 5) || (s == 6 && d == 1) ? std::vector<unsigned>{} : links(s, d, c);
    };
    std::vector<unsigned> ranks(8);
    std::iota(ranks.begin(), ranks.end(), 0u);
    for (unsigned k : {1u, 2u, 4u, 8u})
        for (bool local : {false, true}) {
            INFO(k << " rings, local search " << local);
            const auto rings = search_rings(fabric.f, ranks, k, channel_of, local);
            for (std::size_t r = 0; r < rings.size(); ++r)
                for (std::size_t i = 0; i < rings[r].size(); ++i)
                    CHECK_FALSE(fabric.f.links(rings[r][i], rings[r][(i + 1) % 8], channel_of(unsigned(r))).empty());
        }
}
