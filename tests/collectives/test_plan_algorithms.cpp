// The direct and recursive halving-doubling schedules for all_reduce,
// reduce_scatter and all_gather (sw/collectives), run by the interpreter
// under adversarial timing (interpreter.h): exact results in and out of
// place, on any channel count, never a deadlock; and for every algorithm a
// result that does not depend on the timing, bit for bit, when the sums round.
#include <catch2/catch.hpp>

#include <functional>
#include <numeric>

#include <set>

#include "interpreter.h"
#include "trn3/collectives/choose.h"

using namespace trn3;
using namespace trn3::test::plans;
using collectives::algorithm;
using collectives::op;

namespace {

// Plans of every channel; channel k names fabric channels from k x needed
// on (with a counter_stride from `also`: k, k + stride, ...) and rings from
// the k-th rank; `also` sets what else a case needs.
std::vector<std::vector<collectives::rank_plan>> plans_for(
    algorithm how, op what, const std::vector<unsigned>& ids, std::uint64_t elements, bool in_place, unsigned channels,
    const std::function<void(collectives::request&)>& also = {}) {
    const auto n = static_cast<unsigned>(ids.size());
    std::vector<std::vector<collectives::rank_plan>> plans;
    for (unsigned c = 0; c < channels; ++c) {
        collectives::request r;
        r.what = what;
        r.how = how;
        for (unsigned id : ids) r.ranks.push_back(id);
        for (unsigned i = 0; i < n; ++i) r.ring.push_back(ids[(i + c) % n]);
        r.bytes = elements * 4;
        r.in_place = in_place;
        r.at = at;
        r.channels = channels;
        r.channel = c;
        if (also) also(r);
        const auto levels = static_cast<unsigned>(r.coordinates.empty() ? 1 : r.coordinates.front().size());
        r.counters = collectives::counters_needed(how, what, n, levels);
        r.first_counter = r.counter_stride > 1 ? c : c * r.counters;
        plans.push_back(collectives::plan(r));
        REQUIRE(plans.back().size() == n);
    }
    return plans;
}

// The positions of a grid of `dims` (level 0 first), dealt to the ranks
// out of order: rank p takes cell (5 p + 3) mod n, read with level 0 the
// least significant digit.
std::vector<std::vector<unsigned>> grid_positions(const std::vector<unsigned>& dims) {
    unsigned n = 1;
    for (unsigned d : dims) n *= d;
    const unsigned step = std::gcd(5u, n) == 1 ? 5 : 1;
    std::vector<std::vector<unsigned>> at;
    for (unsigned p = 0; p < n; ++p) {
        unsigned cell = (step * p + 3) % n;
        std::vector<unsigned> pos;
        for (unsigned d : dims) {
            pos.push_back(cell % d);
            cell /= d;
        }
        at.push_back(pos);
    }
    return at;
}

// Each level's rings (fabric ids), every group out of position order:
// positions descending, rotated by the group's first rank.
collectives::rings_by_level scrambled_rings(const std::vector<std::vector<unsigned>>& at,
                                            const std::vector<unsigned>& ids) {
    collectives::rings_by_level out(at.front().size());
    for (std::size_t l = 0; l < out.size(); ++l) {
        std::map<std::vector<unsigned>, std::map<unsigned, unsigned, std::greater<>>> groups;
        for (std::size_t p = 0; p < at.size(); ++p) {
            std::vector<unsigned> key = at[p];
            key.erase(key.begin() + long(l));
            groups[key][at[p][l]] = ids[p];
        }
        for (const auto& [key, members] : groups) {
            std::vector<unsigned> ring;
            for (const auto& [place, id] : members) ring.push_back(id);
            std::rotate(ring.begin(), ring.begin() + ring.front() % ring.size(), ring.end());
            out[l].push_back(ring);
        }
    }
    return out;
}

std::vector<unsigned> ids_of(unsigned n) {
    std::vector<unsigned> ids;
    for (unsigned i = 0; i < n; ++i) ids.push_back((i * 7 + 5) % 64);
    return ids;
}

}  // namespace

TEST_CASE("direct and halving-doubling all_reduce, reduce_scatter and all_gather, and the double binary tree's "
          "all_reduce, give exact results under every timing, in and out of place, on one channel or several") {
    for (const algorithm how : {algorithm::direct, algorithm::halving_doubling, algorithm::tree})
        for (const op what : {op::all_reduce, op::reduce_scatter, op::all_gather})
            for (const unsigned n : {2u, 3u, 4u, 6u, 7u, 8u}) {
                const bool power_of_two = (n & (n - 1)) == 0;
                if (how == algorithm::halving_doubling && what != op::all_reduce && !power_of_two) continue;
                if (how == algorithm::tree && what != op::all_reduce) continue;
                for (const std::uint64_t elements : {std::uint64_t(n), std::uint64_t(9 * n), std::uint64_t(1)})
                    for (const bool in_place : {false, true})
                        for (const unsigned channels : {1u, 2u}) {
                            if (what != op::all_reduce && elements % n != 0) continue;
                            const auto ids = ids_of(n);
                            const auto plans = plans_for(how, what, ids, elements, in_place, channels);
                            for (std::uint64_t seed = 1; seed <= 6; ++seed) {
                                INFO(collectives::name(how)
                                     << " " << collectives::name(what) << " n " << n << " elements " << elements
                                     << " in place " << in_place << " channels " << channels << " seed " << seed);
                                check_exact(plans, ids, what, elements, in_place, seed);
                            }
                        }
            }
}

TEST_CASE("hierarchical all_reduce, reduce_scatter and all_gather give exact results under every timing on grids of "
          "one to three levels, with positions in any rank order, in and out of place, on one channel or two") {
    const std::vector<std::vector<unsigned>> grids{{2}, {3}, {2, 3}, {3, 2}, {4, 2}, {2, 2, 2}, {2, 3, 2}};
    for (const auto& dims : grids)
        for (const op what : {op::all_reduce, op::reduce_scatter, op::all_gather}) {
            const auto at = grid_positions(dims);
            const auto n = static_cast<unsigned>(at.size());
            for (const std::uint64_t elements :
                 {std::uint64_t(n), std::uint64_t(9 * n), std::uint64_t(1), std::uint64_t(7)})
                for (const bool in_place : {false, true})
                    for (const unsigned channels : {1u, 2u}) {
                        if (what != op::all_reduce && elements % n != 0) continue;
                        const auto ids = ids_of(n);
                        const auto plans = plans_for(algorithm::hierarchical, what, ids, elements, in_place, channels,
                                                     [&](collectives::request& r) { r.coordinates = at; });
                        for (std::uint64_t seed = 1; seed <= 5; ++seed) {
                            INFO(collectives::name(what)
                                 << " levels " << dims.size() << " n " << n << " elements " << elements << " in place "
                                 << in_place << " channels " << channels << " seed " << seed);
                            check_exact(plans, ids, what, elements, in_place, seed);
                        }
                    }
        }
}

TEST_CASE("hierarchical plans run on rings of any order within each level's groups, exact, and rings that are not "
          "the level's groups are refused with one line") {
    for (const auto& dims : std::vector<std::vector<unsigned>>{{2, 3}, {3, 2}, {2, 2, 2}})
        for (const op what : {op::all_reduce, op::reduce_scatter, op::all_gather})
            for (const bool in_place : {false, true}) {
                const auto at = grid_positions(dims);
                const auto n = static_cast<unsigned>(at.size());
                const auto ids = ids_of(n);
                const std::uint64_t elements = 5 * n;
                const auto plans =
                    plans_for(algorithm::hierarchical, what, ids, elements, in_place, 2, [&](collectives::request& r) {
                        r.coordinates = at;
                        r.level_rings = scrambled_rings(at, ids);
                    });
                for (std::uint64_t seed = 1; seed <= 4; ++seed) {
                    INFO(collectives::name(what)
                         << " levels " << dims.size() << " in place " << in_place << " seed " << seed);
                    check_exact(plans, ids, what, elements, in_place, seed);
                }
            }
    const auto at = grid_positions({2, 3});
    const auto ids = ids_of(6);
    auto refused = [&](const collectives::rings_by_level& rings) {
        try {
            plans_for(algorithm::hierarchical, op::all_reduce, ids, 60, false, 1, [&](collectives::request& r) {
                r.coordinates = at;
                r.level_rings = rings;
            });
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    auto rings = scrambled_rings(at, ids);
    CHECK(refused({rings[0]}) == "hierarchical: rings for 1 levels, not 2");
    auto crossing = rings;
    std::swap(crossing[0][0][1], crossing[0][1][1]);  // two level-0 groups trade a rank: each crosses level 1
    CHECK(refused(crossing) == "hierarchical: a ring of level 0 crosses another level");
    auto twice = rings;
    twice[1].push_back(twice[1][0]);
    CHECK(refused(twice) == "hierarchical: a rank on two rings of one level");
    auto missing = rings;
    missing[1].pop_back();
    CHECK(refused(missing).rfind("hierarchical: rank ", 0) == 0);
}

TEST_CASE("hierarchical out of place with operand landings on its first level: no copy, exact under every timing") {
    for (const auto& dims : std::vector<std::vector<unsigned>>{{2}, {3}, {2, 3}, {3, 2}, {2, 2, 2}})
        for (const op what : {op::all_reduce, op::reduce_scatter})
            for (const unsigned channels : {1u, 2u}) {
                const auto at = grid_positions(dims);
                const auto n = static_cast<unsigned>(at.size());
                const auto ids = ids_of(n);
                const std::uint64_t elements = 5 * n * channels;
                const auto plans = plans_for(
                    algorithm::hierarchical, what, ids, elements, false, channels, [&](collectives::request& r) {
                        r.coordinates = at;
                        r.operand_landing = true;
                        // Odd channels take the levels the other way round.
                        for (unsigned l = 0; l < dims.size(); ++l)
                            r.level_order.push_back(r.channel % 2 ? unsigned(dims.size()) - 1 - l : l);
                    });
                const std::uint64_t input_end = trn3::test::plans::at.send + elements * 4;
                for (const auto& channel : plans)
                    for (const auto& rank : channel) {
                        REQUIRE(rank.operand_offset);
                        REQUIRE(rank.operand_counter);
                        std::uint64_t with_operand = 0, tokens = 0;
                        for (const auto& d : rank.descriptors) {
                            if (d.flags & TRN3_DESC_WAIT_FABRIC) continue;
                            if (d.dst < TRN3_FABRIC_ADDR(0, 0)) {
                                // No copy of the input: reduce_scatter's result is the only local copy.
                                CHECK(what == op::reduce_scatter);
                                CHECK_FALSE((d.src >= trn3::test::plans::at.send && d.src < input_end));
                            }
                            if (d.flags & TRN3_DESC_REDUCE_OPERAND) {
                                CHECK(TRN3_DESC_CHANNEL_OF(d.flags, 0) == *rank.operand_counter);
                                ++with_operand;
                            }
                            if (d.dst >= TRN3_FABRIC_ADDR(0, 0) && d.length == 64) ++tokens;  // pieces: 20 B x k
                        }
                        CHECK(with_operand > 0);
                        CHECK(tokens == dims.size() - 1);  // none before the first level: nothing copied
                    }
                for (std::uint64_t seed = 1; seed <= 5; ++seed) {
                    INFO(collectives::name(what)
                         << " levels " << dims.size() << " n " << n << " channels " << channels << " seed " << seed);
                    check_exact(plans, ids, what, elements, false, seed);
                }
            }
}

TEST_CASE("hierarchical plans with each channel in its own level order and the channels' counters interleaved are "
          "exact under every timing") {
    for (const auto& dims : std::vector<std::vector<unsigned>>{{2, 3}, {3, 2}, {2, 2, 2}, {2, 3, 2}})
        for (const op what : {op::all_reduce, op::reduce_scatter, op::all_gather})
            for (const bool in_place : {false, true}) {
                const auto at = grid_positions(dims);
                const auto n = static_cast<unsigned>(at.size());
                const auto ids = ids_of(n);
                // Every permutation of the levels, one per channel.
                std::vector<std::vector<unsigned>> orders;
                std::vector<unsigned> order(dims.size());
                std::iota(order.begin(), order.end(), 0u);
                do orders.push_back(order);
                while (std::next_permutation(order.begin(), order.end()));
                const auto channels = static_cast<unsigned>(orders.size());
                const std::uint64_t elements = 3 * n * channels;
                const auto plans = plans_for(algorithm::hierarchical, what, ids, elements, in_place, channels,
                                             [&](collectives::request& r) {
                                                 r.coordinates = at;
                                                 r.level_order = orders[r.channel];
                                                 r.counter_stride = channels;
                                             });
                for (std::uint64_t seed = 1; seed <= 4; ++seed) {
                    INFO(collectives::name(what)
                         << " levels " << dims.size() << " in place " << in_place << " seed " << seed);
                    check_exact(plans, ids, what, elements, in_place, seed);
                }
            }
    collectives::request r;
    r.how = algorithm::hierarchical;
    for (unsigned i = 0; i < 4; ++i) r.ring.push_back(i);
    r.bytes = 64;
    r.at = at;
    r.counters = 4;
    r.coordinates = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};
    r.level_order = {1, 1};
    CHECK_THROWS_WITH(collectives::plan(r), "hierarchical: the level order is not a permutation of the 2 levels");
    r.level_order = {1, 0};
    r.counter_stride = 43;  // counters 0, 43, 86 and 129: past the chip's 128
    CHECK_THROWS_WITH(collectives::plan(r), "hierarchical all_reduce on 4 ranks needs 4 fabric channels per channel; "
                                            "from 0 by 43 they reach 129, past the chip's 128");
    r.counter_stride = 42;
    CHECK(collectives::plan(r).size() == 4);
}

TEST_CASE("a hierarchical all_reduce on 2 x 3 x 2 ranks takes 2 x (1 + 2 + 1) steps, each rank sending 2 (n - 1) / n "
          "of the buffer, the most on level 0") {
    const auto at = grid_positions({2, 3, 2});
    const unsigned n = 12;
    const std::uint64_t elements = 12 * 100;
    const auto plans = plans_for(algorithm::hierarchical, op::all_reduce, ids_of(n), elements, true, 1,
                                 [&](collectives::request& r) { r.coordinates = at; });
    for (const auto& p : plans[0]) {
        std::uint64_t sent = 0;
        unsigned waits = 0;
        std::map<unsigned, std::uint64_t> per_counter;
        for (const auto& d : p.descriptors) {
            if (d.flags & TRN3_DESC_WAIT_FABRIC) ++waits;
            else if (d.dst >= TRN3_FABRIC_ADDR(0, 0)) {
                sent += d.length;
                per_counter[TRN3_DESC_CHANNEL_OF(d.flags, 1)] += d.length;
            }
        }
        // Data and tokens: level l's data counts on l, its tokens on 3 + l (in place: levels 1 and 2 only).
        CHECK(sent == 2 * (n - 1) * 100 * 4 + 2 * 64);
        CHECK(per_counter[0] == 2 * 1 * 600 * 4);  // level 0 (2 ranks): half of the 1200 elements, both ways
        CHECK(per_counter[1] == 2 * 2 * 200 * 4);  // level 1 (3 ranks): two thirds of the 600 left
        CHECK(per_counter[2] == 2 * 1 * 100 * 4);  // level 2 (2 ranks): half of the 200 left
        CHECK(per_counter[4] == 64);
        CHECK(per_counter[5] == 64);
        CHECK(waits == 2 * (1 + 2 + 1) + 2);  // a wait per step, one per token
    }
    // Level 1 first: two thirds of the buffer on level 1's links, then half
    // of the rest on level 0's; tokens before the second and third steps.
    const auto rack_first =
        plans_for(algorithm::hierarchical, op::all_reduce, ids_of(n), elements, true, 1, [&](collectives::request& r) {
            r.coordinates = at;
            r.level_order = {1, 0, 2};
        });
    for (const auto& p : rack_first[0]) {
        std::map<unsigned, std::uint64_t> per_counter;
        for (const auto& d : p.descriptors)
            if (!(d.flags & TRN3_DESC_WAIT_FABRIC) && d.dst >= TRN3_FABRIC_ADDR(0, 0))
                per_counter[TRN3_DESC_CHANNEL_OF(d.flags, 1)] += d.length;
        CHECK(per_counter[1] == 2 * 2 * 400 * 4);
        CHECK(per_counter[0] == 2 * 1 * 200 * 4);
        CHECK(per_counter[2] == 2 * 1 * 100 * 4);
        CHECK(per_counter[3] == 64);  // level 0's token
        CHECK(per_counter[4] == 0);  // level 1 goes first: in place, no token
        CHECK(per_counter[5] == 64);
    }
}

TEST_CASE("the double binary tree pipelines in segments of any size, exact, and each tree's leaves are the other's "
          "inner ranks") {
    for (const unsigned n : {5u, 8u, 13u})
        for (const std::uint64_t segment_bytes : {4u, 12u, 1000u}) {
            const std::uint64_t elements = 37;
            const auto ids = ids_of(n);
            const auto plans = plans_for(algorithm::tree, op::all_reduce, ids, elements, false, 1,
                                         [&](collectives::request& r) { r.segment_bytes = segment_bytes; });
            for (std::uint64_t seed = 1; seed <= 3; ++seed) {
                INFO("n " << n << " segment_bytes " << segment_bytes << " seed " << seed);
                std::vector<memory> mem(n);
                std::vector<counts> rx;
                fill_inputs(op::all_reduce, elements, false, mem);
                REQUIRE(run(plans, ids, mem, rx, seed));
                check_landed(plans, ids, rx);
                check_outputs(op::all_reduce, elements, false, mem);
            }
            // No rank is inside both trees: each sends to its parent and two
            // children in one tree and to its parent in the other, four
            // peers at most (a rank inside both would have five or six).
            for (const auto& p : plans[0]) {
                std::set<unsigned> peers;
                for (const auto& d : p.descriptors)
                    if (d.dst >= TRN3_FABRIC_ADDR(0, 0)) peers.insert(TRN3_FABRIC_ID(d.dst));
                CHECK(peers.size() <= 4);
            }
        }
}

TEST_CASE("every algorithm's all_reduce is the same bits on every rank under every timing when its sums round") {
    for (const algorithm how :
         {algorithm::ring, algorithm::direct, algorithm::halving_doubling, algorithm::tree, algorithm::hierarchical})
        for (const unsigned n : {5u, 8u}) {
            const std::uint64_t elements = 40;
            const auto ids = ids_of(n);
            const auto plans = plans_for(how, op::all_reduce, ids, elements, false, 2, [&](collectives::request& r) {
                if (how == algorithm::hierarchical)
                    r.coordinates = grid_positions(n == 8 ? std::vector<unsigned>{2, 2, 2} : std::vector<unsigned>{5});
            });
            std::vector<std::uint8_t> first;
            for (std::uint64_t seed = 1; seed <= 8; ++seed) {
                INFO(collectives::name(how) << " n " << n << " seed " << seed);
                std::vector<memory> mem(n);
                std::vector<counts> rx;
                std::mt19937 values(7);  // the same inputs every run: sums of these round in fp32
                for (unsigned p = 0; p < n; ++p)
                    for (std::uint64_t e = 0; e < elements; ++e) {
                        const float v = std::ldexp(float(values() % 100000) + 0.1f, int(values() % 40) - 20);
                        std::memcpy(mem[p].at(at.send + e * 4, 4), &v, 4);
                    }
                REQUIRE(run(plans, ids, mem, rx, seed));
                const std::uint8_t* out = mem[0].at(at.recv, elements * 4);
                if (first.empty()) first.assign(out, out + elements * 4);
                for (unsigned p = 0; p < n; ++p)
                    CHECK(std::memcmp(mem[p].at(at.recv, elements * 4), first.data(), elements * 4) == 0);
            }
        }
}

TEST_CASE("an algorithm that cannot run an op, or has too few fabric channels, is refused with one line") {
    CHECK_THROWS_WITH(
        collectives::check_supported(algorithm::halving_doubling, op::reduce_scatter, 6),
        "the halving_doubling algorithm does not run reduce_scatter (on 6 ranks: only on a power of two)");
    CHECK_THROWS_WITH(collectives::check_supported(algorithm::ring, op::all_to_all, 4),
                      "the ring algorithm does not run all_to_all");
    CHECK_THROWS_WITH(collectives::check_supported(algorithm::tree, op::reduce_scatter, 4),
                      "the tree algorithm does not run reduce_scatter");
    CHECK_THROWS_WITH(collectives::check_supported(algorithm::chain, op::all_reduce, 4),
                      "the chain algorithm does not run all_reduce");
    CHECK_NOTHROW(collectives::check_supported(algorithm::halving_doubling, op::all_reduce, 6));
    CHECK(collectives::counters_needed(algorithm::halving_doubling, op::all_reduce, 144) == 8);  // 7 distances, a fold
    CHECK(collectives::counters_needed(algorithm::halving_doubling, op::all_reduce, 64) == 6);
    CHECK(collectives::counters_needed(algorithm::direct, op::all_reduce, 64) == 2);
    CHECK(collectives::counters_needed(algorithm::ring, op::all_reduce, 64) == 0);
    collectives::request r;
    r.what = op::all_reduce;
    r.how = algorithm::halving_doubling;
    for (unsigned i = 0; i < 6; ++i) r.ring.push_back(i);
    r.bytes = 64;
    r.at = at;
    r.first_counter = 0;
    r.counters = 2;
    CHECK_THROWS_WITH(collectives::plan(r),
                      "halving_doubling all_reduce on 6 ranks needs 3 fabric channels per channel; it was given 2");
    CHECK(collectives::counters_needed(algorithm::hierarchical, op::all_reduce, 144, 3) == 6);
    CHECK_THROWS_WITH(collectives::check_supported(algorithm::hierarchical, op::all_to_all, 4),
                      "the hierarchical algorithm does not run all_to_all");
    // Positions that leave a hole in their grid, repeat, or put every rank at one place on a level.
    r.how = algorithm::hierarchical;
    r.counters = 4;
    r.coordinates = {{0, 0}, {1, 0}, {2, 0}, {0, 1}, {1, 1}, {1, 2}};
    CHECK_THROWS_WITH(collectives::plan(r), "hierarchical: the 6 ranks do not fill their levels' 9 positions");
    r.coordinates = {{0, 0}, {1, 0}, {2, 0}, {0, 1}, {1, 1}, {1, 1}};
    CHECK_THROWS_WITH(collectives::plan(r), "hierarchical: ranks 4 and 5 have the same position");
    r.coordinates = {{0, 0}, {1, 0}, {2, 0}, {3, 0}, {4, 0}, {5, 0}};
    CHECK_THROWS_WITH(collectives::plan(r), "hierarchical: level 1 has one position");
    r.coordinates = {{0, 0}, {1, 0}, {2, 0}, {0, 1}, {1, 1}, {2, 1}};
    r.counters = 3;
    CHECK_THROWS_WITH(collectives::plan(r),
                      "hierarchical all_reduce on 6 ranks needs 4 fabric channels per channel; it was given 3");
    r.counters = 4;
    CHECK(collectives::plan(r).size() == 6);
}

TEST_CASE("auto picks halving-doubling on a power of two and for all_reduces to 4 MiB, the ring for large ones on 144 "
          "ranks, direct all_to_all and the chain broadcast, and the ring where halving-doubling would not fit in the "
          "fabric channels, and with the topology's levels, hierarchical in the ring's place and from 1 MiB in "
          "halving-doubling's, on up to 4 channels") {
    using collectives::choose;
    CHECK(choose(op::all_reduce, 64, 8) == algorithm::halving_doubling);
    CHECK(choose(op::all_reduce, 64, 1ull << 30) == algorithm::halving_doubling);
    CHECK(choose(op::all_reduce, 144, 3ull << 20) == algorithm::halving_doubling);
    CHECK(choose(op::all_reduce, 144, 4ull << 20) == algorithm::ring);  // the fold's 2 x size outweighs 270 steps
    CHECK(choose(op::reduce_scatter, 16, 1 << 20) == algorithm::halving_doubling);
    CHECK(choose(op::reduce_scatter, 144, 1 << 20) == algorithm::ring);
    CHECK(choose(op::all_gather, 6, 64) == algorithm::ring);
    CHECK(choose(op::all_to_all, 64, 64) == algorithm::direct);
    // 16 ranks: 4 fabric channels per channel; 32 channels fit in 128, 33 do not.
    CHECK(choose(op::all_reduce, 16, 1 << 20, 4) == algorithm::halving_doubling);
    CHECK(choose(op::all_reduce, 16, 512 << 10, 32) == algorithm::halving_doubling);
    CHECK(choose(op::all_reduce, 16, 1 << 20, 5) == algorithm::ring);  // on many channels: the ring from 1 MiB
    CHECK(choose(op::all_reduce, 16, 512 << 10, 33) ==
          algorithm::ring);  // 33 x 4 of 128: no room (the chip has 15 queues)
    CHECK(choose(op::reduce_scatter, 16, 1 << 20, 40) == algorithm::ring);
    CHECK(choose(op::broadcast, 64, 64) == algorithm::chain);
    // With the topology's levels: hierarchical instead of the ring, and from 1 MiB instead of halving-doubling.
    const std::vector<unsigned> nl72x2{4, 18, 2}, torus{4, 4};
    CHECK(choose(op::all_reduce, 144, 128 << 10, 2, nl72x2) == algorithm::halving_doubling);
    CHECK(choose(op::all_reduce, 144, 512 << 10, 2, nl72x2) == algorithm::hierarchical);  // the fold's 2 x size
    CHECK(choose(op::all_reduce, 144, 1ull << 30, 2, nl72x2) == algorithm::hierarchical);
    CHECK(choose(op::all_reduce, 144, 1ull << 30, 4, nl72x2) == algorithm::hierarchical);
    // On many channels hierarchical only where the ring's steps are many: 143 against 21 on 144 chips, 15
    // against 5 on 16 chips of nl72x2 and 15 against 6 on the 2D torus.
    CHECK(choose(op::all_reduce, 144, 1ull << 30, 8, nl72x2) == algorithm::hierarchical);
    CHECK(choose(op::all_reduce, 16, 1ull << 30, 8, {4, 2, 2}) == algorithm::ring);
    CHECK(choose(op::all_reduce, 16, 1ull << 30, 8, torus) == algorithm::ring);
    CHECK(choose(op::all_reduce, 16, 4 << 20, 4, torus) == algorithm::hierarchical);
    CHECK(choose(op::reduce_scatter, 16, 1 << 20, 8) == algorithm::ring);  // many channels: the ring from 1 MiB
    CHECK(choose(op::reduce_scatter, 16, 512 << 10, 8) == algorithm::halving_doubling);
    CHECK(choose(op::all_reduce, 16, 512 << 10, 2, torus) == algorithm::halving_doubling);
    CHECK(choose(op::all_reduce, 16, 1 << 20, 2, torus) == algorithm::hierarchical);
    CHECK(choose(op::reduce_scatter, 16, 512 << 10, 2, torus) == algorithm::halving_doubling);
    CHECK(choose(op::reduce_scatter, 16, 1 << 20, 2, torus) == algorithm::hierarchical);
    CHECK(choose(op::all_gather, 144, 64, 2, nl72x2) == algorithm::hierarchical);  // not a power of two
    CHECK(choose(op::all_reduce, 144, 1ull << 30, 2, {144}) == algorithm::ring);  // one level: a ring anyway
}

TEST_CASE("chain reduce gives the root the exact reduction and leaves every input as it was, and sendrecv gives "
          "each rank its predecessor's buffer, in and out of place, under every timing") {
    for (const op what : {op::reduce, op::send_recv})
        for (const unsigned n : {2u, 3u, 5u})
            for (const std::uint64_t elements : {std::uint64_t(1), std::uint64_t(13), std::uint64_t(8 * n)})
                for (const bool in_place : {false, true})
                    for (const unsigned channels : {1u, 2u}) {
                        const auto ids = ids_of(n);
                        const unsigned root = n / 2;
                        const algorithm how = what == op::reduce ? algorithm::chain : algorithm::direct;
                        const auto plans =
                            plans_for(how, what, ids, elements, in_place, channels, [&](collectives::request& r) {
                                r.root = root;
                                r.segment_bytes = elements == 13 ? 8 : 0;  // 7 segments of 2 elements, one of 1
                            });
                        for (std::uint64_t seed = 1; seed <= 6; ++seed) {
                            INFO(collectives::name(what) << " n " << n << " elements " << elements << " in place "
                                                         << in_place << " channels " << channels << " seed " << seed);
                            std::vector<memory> mem(n);
                            std::vector<counts> rx;
                            for (unsigned p = 0; p < n; ++p)
                                for (std::uint64_t e = 0; e < elements; ++e) {
                                    const float v = float(1000 * p + e);
                                    std::memcpy(mem[p].at(at.send + e * 4, 4), &v, 4);
                                }
                            REQUIRE(run(plans, ids, mem, rx, seed));
                            check_landed(plans, ids, rx);
                            const std::uint64_t out = in_place ? at.send : at.recv;
                            for (unsigned p = 0; p < n; ++p)
                                for (std::uint64_t e = 0; e < elements; ++e) {
                                    if (what == op::send_recv) {
                                        CHECK(f32(mem[p].at(out + e * 4, 4)) == float(1000 * ((p + n - 1) % n) + e));
                                    } else if (p == root) {
                                        CHECK(f32(mem[p].at(out + e * 4, 4)) == float(1000 * n * (n - 1) / 2 + n * e));
                                    } else {
                                        CHECK(f32(mem[p].at(at.send + e * 4, 4)) == float(1000 * p + e));  // untouched
                                    }
                                }
                        }
                    }
}

TEST_CASE("direct all_to_allv: every rank gets each rank's piece for it, of any size (empty ones too), in rank "
          "order, in and out of place, under every timing") {
    for (const unsigned n : {2u, 3u, 5u})
        for (const bool in_place : {false, true})
            for (const unsigned channels : {1u, 2u}) {
                const auto ids = ids_of(n);
                std::vector<std::uint64_t> splits;
                for (unsigned i = 0; i < n * n; ++i) splits.push_back((i * 7 + 3) % 11);  // 0 to 10 elements
                const auto plans = plans_for(algorithm::direct, op::all_to_allv, ids, 1, in_place, channels,
                                             [&](collectives::request& r) {
                                                 for (std::uint64_t s : splits) r.splits.push_back(s);
                                             });
                // In place on several channels, each channel puts the whole
                // input aside: many timings, for a peer's write racing a copy.
                for (std::uint64_t seed = 1; seed <= (in_place && channels > 1 ? 150u : 6u); ++seed) {
                    INFO("n " << n << " in place " << in_place << " channels " << channels << " seed " << seed);
                    std::vector<memory> mem(n);
                    std::vector<counts> rx;
                    for (unsigned i = 0; i < n; ++i) {  // element e of rank i's input: 1000 i + e
                        std::uint64_t total = 0;
                        for (unsigned j = 0; j < n; ++j) total += splits[i * n + j];
                        for (std::uint64_t e = 0; e < total; ++e) {
                            const float v = float(1000 * i + e);
                            std::memcpy(mem[i].at(at.send + e * 4, 4), &v, 4);
                        }
                    }
                    REQUIRE(run(plans, ids, mem, rx, seed));
                    check_landed(plans, ids, rx);
                    for (unsigned j = 0; j < n; ++j) {
                        std::uint64_t at_out = 0;
                        for (unsigned i = 0; i < n; ++i) {
                            std::uint64_t first = 0;  // where i's piece for j starts in i's input
                            for (unsigned k = 0; k < j; ++k) first += splits[i * n + k];
                            for (std::uint64_t e = 0; e < splits[i * n + j]; ++e, ++at_out)
                                CHECK(f32(mem[j].at((in_place ? at.send : at.recv) + at_out * 4, 4)) ==
                                      float(1000 * i + first + e));
                        }
                    }
                }
            }
}

TEST_CASE("avg: every algorithm's sum, then each rank's finished bytes multiplied once by 1/n, for all_reduce, "
          "reduce_scatter and reduce, under every timing") {
    struct one {
        op what;
        algorithm how;
    };
    for (const one c : {one{op::all_reduce, algorithm::ring}, one{op::all_reduce, algorithm::direct},
                        one{op::all_reduce, algorithm::halving_doubling}, one{op::all_reduce, algorithm::tree},
                        one{op::reduce_scatter, algorithm::ring}, one{op::reduce_scatter, algorithm::direct},
                        one{op::reduce, algorithm::chain}})
        for (const unsigned n : {2u, 4u, 6u})
            for (const bool in_place : {false, true}) {
                const std::uint64_t elements = 12 * n;
                const auto ids = ids_of(n);
                const auto plans = plans_for(c.how, c.what, ids, elements, in_place, 2,
                                             [](collectives::request& r) { r.average = true; });
                for (std::uint64_t seed = 1; seed <= 4; ++seed) {
                    INFO(collectives::name(c.how) << " " << collectives::name(c.what) << " n " << n << " in place "
                                                  << in_place << " seed " << seed);
                    std::vector<memory> mem(n);
                    std::vector<counts> rx;
                    const float inverse = 1.0f / float(n);
                    for (unsigned p = 0; p < n; ++p) {
                        for (std::uint64_t e = 0; e < elements; ++e) {
                            const float v = float(8 * p + e % 8);
                            std::memcpy(mem[p].at(at.send + e * 4, 4), &v, 4);
                            std::memcpy(mem[p].at(at.constant + e * 4, 4), &inverse, 4);
                        }
                    }
                    REQUIRE(run(plans, ids, mem, rx, seed));
                    const std::uint64_t chunk = elements / n;
                    for (unsigned p = 0; p < n; ++p) {
                        if (c.what == op::reduce && p != 0) continue;  // root 0
                        const std::uint64_t first = c.what == op::reduce_scatter ? chunk * p : 0;
                        const std::uint64_t count = c.what == op::reduce_scatter ? chunk : elements;
                        const std::uint64_t out = in_place ? at.send + first * 4 : at.recv;
                        for (std::uint64_t e = 0; e < count; ++e) {
                            const float sum = float(8 * n * (n - 1) / 2 + n * ((first + e) % 8));
                            CHECK(f32(mem[p].at(out + e * 4, 4)) == sum * inverse);  // scaled once
                        }
                    }
                }
            }
    collectives::request r;
    r.what = op::all_reduce;
    for (unsigned i = 0; i < 4; ++i) r.ring.push_back(i);
    r.bytes = 64;
    r.at = at;
    r.average = true;
    r.reduce_type = TRN3_REDUCE_INT32;
    CHECK_THROWS_WITH(collectives::plan(r),
                      "avg is a sum over a floating type, for all_reduce, reduce_scatter and reduce");
}
