// The ring, direct all_to_all and chain schedules (sw/collectives) run by
// an interpreter of the DMA engine's descriptors under adversarial timing
// (interpreter.h). Every order must give the exact result, never deadlock,
// and land exactly the bytes each plan waits for.
#include <catch2/catch.hpp>

#include <algorithm>

#include "interpreter.h"

using namespace trn3;
using collectives::op;

using namespace trn3::test::plans;

namespace {
// Channel c's ring request over ids (rank r is fabric id ids[r]): its ring
// visits them in its own order (odd channels the other way round).
collectives::request ring_request(op what, const std::vector<unsigned>& ids, unsigned c, unsigned channels,
                                  std::uint64_t elements, bool in_place) {
    const auto n = static_cast<unsigned>(ids.size());
    collectives::request r;
    r.what = what;
    r.ranks = ids;
    for (unsigned i = 0; i < n; ++i) r.ring.push_back(ids[(c % 2 ? n - i : i + c) % n]);
    r.bytes = elements * 4;
    r.in_place = in_place;
    r.at = at;
    r.channels = channels;
    r.channel = c;
    return r;
}
}  // namespace

TEST_CASE("ring all_reduce, reduce_scatter and all_gather give exact results under every timing, in and out of "
          "place, on one channel or several rings") {
    for (const op what : {op::all_reduce, op::reduce_scatter, op::all_gather})
        for (const unsigned n : {2u, 3u, 5u, 8u})
            for (const std::uint64_t elements :
                 {std::uint64_t(n), std::uint64_t(7 * n), std::uint64_t(11), std::uint64_t(1)})
                for (const bool in_place : {false, true})
                    for (const unsigned channels : {1u, 3u}) {
                        if (what != op::all_reduce && elements % n != 0) continue;
                        // Rank r is fabric id ids[r] (any ids); channel c's ring visits them in its own order.
                        std::vector<unsigned> ids;
                        for (unsigned i = 0; i < n; ++i) ids.push_back((i * 3 + 1) % 16);
                        std::vector<std::vector<collectives::rank_plan>> plans;
                        for (unsigned c = 0; c < channels; ++c) {
                            plans.push_back(
                                collectives::plan_ring(ring_request(what, ids, c, channels, elements, in_place)));
                            REQUIRE(plans.back().size() == n);
                        }
                        for (std::uint64_t seed = 1; seed <= 8; ++seed) {
                            INFO(collectives::name(what) << " n " << n << " elements " << elements << " in place "
                                                         << in_place << " channels " << channels << " seed " << seed);
                            check_exact(plans, ids, what, elements, in_place, seed);
                        }
                    }
}

TEST_CASE("out of place, a ring rank reduces into its successor only once the successor has copied its input, "
          "however the predecessor's data races the successor's token") {
    // Pieces larger than a token: a predecessor's first piece landing before
    // the successor's token must not pass for the token.
    for (const unsigned n : {3u, 5u})
        for (const unsigned channels : {1u, 2u}) {
            const std::uint64_t elements = 64 * n * channels;
            std::vector<unsigned> ids;
            for (unsigned i = 0; i < n; ++i) ids.push_back(i);
            std::vector<std::vector<collectives::rank_plan>> plans;
            for (unsigned c = 0; c < channels; ++c) {
                collectives::request r;
                r.what = op::all_reduce;
                r.ranks = ids;
                for (unsigned i = 0; i < n; ++i) r.ring.push_back(ids[(c % 2 ? n - i : i) % n]);
                r.bytes = elements * 4;
                r.at = at;
                r.channels = channels;
                r.channel = c;
                plans.push_back(collectives::plan_ring(r));
            }
            for (std::uint64_t seed = 1; seed <= 200; ++seed) {
                INFO("n " << n << " channels " << channels << " seed " << seed);
                std::vector<memory> mem(n);
                std::vector<counts> rx;
                fill_inputs(op::all_reduce, elements, false, mem);
                REQUIRE(run(plans, ids, mem, rx, seed));
                check_outputs(op::all_reduce, elements, false, mem);
            }
        }
}

TEST_CASE("ring out of place on copy queues (the input copied phase by phase ahead): exact under every timing") {
    for (const op what : {op::all_reduce, op::reduce_scatter})
        for (const unsigned n : {2u, 3u, 5u, 8u})
            for (const unsigned channels : {1u, 3u})
                for (const unsigned queues : {1u, 2u})
                    for (const unsigned phases : {1u, 3u, 8u}) {
                        if (queues > channels) continue;
                        const std::uint64_t elements = 16 * n * channels;
                        std::vector<unsigned> ids;
                        for (unsigned i = 0; i < n; ++i) ids.push_back((i * 3 + 1) % 16);
                        std::vector<collectives::request> requests;
                        std::vector<std::vector<collectives::rank_plan>> plans;
                        for (unsigned c = 0; c < channels; ++c) {
                            collectives::request r = ring_request(what, ids, c, channels, elements, false);
                            r.copy_phases = phases;
                            r.copy_counter = 1 + channels;
                            requests.push_back(r);
                            plans.push_back(collectives::plan_ring(r));
                            // No copy on the channel's own queue; its first write reads the input.
                            for (const auto& rank : plans.back()) {
                                const auto first = std::find_if(
                                    rank.descriptors.begin(), rank.descriptors.end(),
                                    [](const trn3_dma_descriptor& d) { return d.dst >= TRN3_FABRIC_ADDR(0, 0); });
                                REQUIRE(first != rank.descriptors.end());
                                CHECK(first->src >= at.send);
                                CHECK(first->src < at.send + elements * 4);
                                const auto from_input = std::count_if(rank.descriptors.begin(), rank.descriptors.end(),
                                                                      [&](const trn3_dma_descriptor& d) {
                                                                          return !(d.flags & TRN3_DESC_WAIT_FABRIC) &&
                                                                                 d.src >= at.send &&
                                                                                 d.src < at.send + elements * 4;
                                                                      });
                                CHECK(from_input == 1);  // the first step's; the copies are the copy queues
                            }
                        }
                        const auto copies = collectives::plan_ring_copies(requests, queues);
                        REQUIRE(copies.size() == queues);
                        for (const auto& q : copies) plans.push_back(q);
                        for (std::uint64_t seed = 1; seed <= 6; ++seed) {
                            INFO(collectives::name(what) << " n " << n << " channels " << channels << " copy queues "
                                                         << queues << " phases " << phases << " seed " << seed);
                            check_exact(plans, ids, what, elements, false, seed);
                        }
                    }
}

TEST_CASE("ring out of place with operand landings (no copy, no token): exact under every timing") {
    for (const op what : {op::all_reduce, op::reduce_scatter})
        for (const unsigned n : {2u, 3u, 5u, 8u})
            for (const unsigned channels : {1u, 3u}) {
                const std::uint64_t elements = 32 * n * channels;  // 128-byte pieces: longer than a token
                std::vector<unsigned> ids;
                for (unsigned i = 0; i < n; ++i) ids.push_back((i * 3 + 1) % 16);
                std::vector<std::vector<collectives::rank_plan>> plans;
                for (unsigned c = 0; c < channels; ++c) {
                    collectives::request r = ring_request(what, ids, c, channels, elements, false);
                    r.operand_landing = true;
                    plans.push_back(collectives::plan(r));
                    const std::uint64_t work = what == op::all_reduce ? at.recv : at.work;
                    for (const auto& rank : plans.back()) {
                        REQUIRE(rank.operand_offset);
                        CHECK(*rank.operand_offset == at.send - work);
                        std::uint64_t landings = 0;
                        for (const auto& d : rank.descriptors) {
                            if (d.flags & TRN3_DESC_WAIT_FABRIC) continue;
                            if (d.dst >= TRN3_FABRIC_ADDR(0, 0) && (d.flags & TRN3_DESC_REDUCE)) {
                                CHECK((d.flags & TRN3_DESC_REDUCE_OPERAND));
                                ++landings;
                            } else if (d.dst >= TRN3_FABRIC_ADDR(0, 0)) {
                                CHECK(what == op::all_reduce);  // the all-gather's plain writes
                                CHECK(d.length > 64);  // no token
                            } else {
                                // No copy of the input, no token: the only local copy is reduce_scatter's result.
                                CHECK(d.dst < TRN3_FABRIC_ADDR(0, 0));
                                CHECK(what == op::reduce_scatter);
                                CHECK(d.src >= at.work);
                                CHECK(d.dst >= at.recv);
                                CHECK(d.dst < at.work);
                            }
                        }
                        CHECK(landings == n - 1);
                    }
                }
                for (std::uint64_t seed = 1; seed <= 6; ++seed) {
                    INFO(collectives::name(what) << " n " << n << " channels " << channels << " seed " << seed);
                    check_exact(plans, ids, what, elements, false, seed);
                }
            }
    collectives::request r = ring_request(op::all_reduce, {0, 1, 2}, 0, 1, 48, false);
    r.operand_landing = true;
    r.copy_phases = 2;
    r.copy_counter = 2;
    CHECK_THROWS_WITH(collectives::plan(r), "operand landing and copy phases exclude each other");
    CHECK_THROWS_WITH(collectives::plan_ring_copies({r}, 1), Catch::Contains("without operand landing"));
    r.copy_phases = 0;
    r.how = collectives::algorithm::direct;
    CHECK_THROWS_WITH(collectives::plan(r), "operand landing is the ring's and hierarchical's, not direct's");
}

TEST_CASE("a plan that cannot be made is refused with one line") {
    collectives::request r;
    r.at = at;
    r.bytes = 64;
    r.ring = {3};
    CHECK_THROWS_WITH(collectives::plan_ring(r), "a collective needs at least two chips");
    r.ring = {1, 2, 1};
    CHECK_THROWS_WITH(collectives::plan_ring(r), "a chip appears twice in the communicator");
    r.ring = {0, 1, 2};
    r.bytes = 10;
    CHECK_THROWS_WITH(collectives::plan_ring(r), "size 10 B is not a whole number of 4-byte elements");
    r.what = op::reduce_scatter;
    r.bytes = 16;
    CHECK_THROWS_WITH(collectives::plan_ring(r), "reduce_scatter: size 16 B is not 3 chunks of whole elements");
    r.bytes = 48;
    r.ranks = {0, 1, 5};
    CHECK_THROWS_WITH(collectives::plan_ring(r), "the ring is not an order of the communicator's chips");
    r.ranks.clear();
    r.channel = 2;
    r.channels = 2;
    CHECK_THROWS_WITH(collectives::plan_ring(r), "channel outside the channels");
}

TEST_CASE("chunks split the elements as evenly as they allow, the larger first") {
    CHECK(collectives::chunk_of(11, 4, 0).first == 0);
    CHECK(collectives::chunk_of(11, 4, 0).count == 3);
    CHECK(collectives::chunk_of(11, 4, 2).first == 6);
    CHECK(collectives::chunk_of(11, 4, 3).count == 2);
    CHECK(collectives::chunk_of(2, 4, 3).count == 0);
}

TEST_CASE("direct all_to_all: every rank gets chunk i of rank i's input at chunk i, in and out of place, under every "
          "timing") {
    // 64 elements a chunk: pieces larger than a token, so a peer's piece
    // landing before another peer's token must not pass for it.
    for (const unsigned n : {2u, 3u, 5u, 8u})
        for (const std::uint64_t per_chunk : {std::uint64_t(1), std::uint64_t(6), std::uint64_t(64)})
            for (const bool in_place : {false, true})
                for (const unsigned channels : {1u, 2u}) {
                    std::vector<unsigned> ids;
                    for (unsigned i = 0; i < n; ++i) ids.push_back((i * 5 + 2) % 32);
                    const std::uint64_t elements = per_chunk * n;
                    std::vector<std::vector<collectives::rank_plan>> plans;
                    for (unsigned c = 0; c < channels; ++c) {
                        collectives::request r;
                        r.what = op::all_to_all;
                        r.how = collectives::algorithm::direct;
                        r.ranks.assign(ids.begin(), ids.end());  // (= trips GCC 12's -Wnonnull at -O3)
                        r.ring.assign(ids.begin(), ids.end());
                        r.bytes = elements * 4;
                        r.in_place = in_place;
                        r.at = at;
                        r.channels = channels;
                        r.channel = c;
                        plans.push_back(collectives::plan(r));
                    }
                    for (std::uint64_t seed = 1; seed <= (per_chunk == 64 ? 60u : 8u); ++seed) {
                        INFO("n " << n << " per chunk " << per_chunk << " in place " << in_place << " channels "
                                  << channels << " seed " << seed);
                        std::vector<memory> mem(n);
                        std::vector<counts> rx;
                        for (unsigned p = 0; p < n; ++p)
                            for (std::uint64_t e = 0; e < elements; ++e) {
                                const float v = float(1000 * p + e);  // chunk j of rank p: for rank j
                                std::memcpy(mem[p].at(at.send + e * 4, 4), &v, 4);
                            }
                        REQUIRE(run(plans, ids, mem, rx, seed));
                        for (unsigned q = 0; q < n; ++q)
                            for (unsigned i = 0; i < n; ++i)
                                for (std::uint64_t e = 0; e < per_chunk; ++e)
                                    CHECK(f32(mem[q].at((in_place ? at.send : at.recv) + (i * per_chunk + e) * 4, 4)) ==
                                          float(1000 * i + q * per_chunk + e));
                    }
                }
    collectives::request r;
    r.what = op::all_to_all;
    r.how = collectives::algorithm::direct;
    r.ring = {0, 1, 2};
    r.bytes = 16;
    r.at = at;
    CHECK_THROWS_WITH(collectives::plan(r), "all_to_all: size 16 B is not 3 chunks of whole elements");
    r.bytes = 12;
    CHECK_THROWS_WITH(collectives::plan_ring(r), "all_to_all has no ring plan (plan_direct)");
}

TEST_CASE("chain broadcast: every rank gets the root's input, from any root, in and out of place, in n segments or "
          "segments of a size, under every timing") {
    for (const unsigned n : {2u, 3u, 5u, 8u})
        for (const std::uint64_t elements : {std::uint64_t(1), std::uint64_t(13), std::uint64_t(8 * n)})
            for (const bool in_place : {false, true})
                for (const unsigned channels : {1u, 2u}) {
                    std::vector<unsigned> ids;
                    for (unsigned i = 0; i < n; ++i) ids.push_back((i * 7 + 3) % 64);
                    const unsigned root = n / 2;
                    std::vector<std::vector<collectives::rank_plan>> plans;
                    for (unsigned c = 0; c < channels; ++c) {
                        collectives::request r;
                        r.what = op::broadcast;
                        r.how = collectives::algorithm::chain;
                        for (unsigned id : ids) r.ranks.push_back(id);
                        for (unsigned i = 0; i < n; ++i) r.ring.push_back(ids[(c % 2 ? n - i : i) % n]);
                        r.bytes = elements * 4;
                        r.in_place = in_place;
                        r.at = at;
                        r.channels = channels;
                        r.channel = c;
                        r.root = root;
                        r.segment_bytes = elements == 13 ? 12 : 0;  // 5 segments: 4 of 3 elements, one of 1
                        plans.push_back(collectives::plan(r));
                    }
                    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
                        INFO("n " << n << " elements " << elements << " in place " << in_place << " channels "
                                  << channels << " seed " << seed);
                        std::vector<memory> mem(n);
                        std::vector<counts> rx;
                        for (unsigned p = 0; p < n; ++p)
                            for (std::uint64_t e = 0; e < elements; ++e) {
                                const float v = float(1000 * p + e);
                                std::memcpy(mem[p].at(at.send + e * 4, 4), &v, 4);
                            }
                        REQUIRE(run(plans, ids, mem, rx, seed));
                        for (unsigned p = 0; p < n; ++p)
                            for (std::uint64_t e = 0; e < elements; ++e)
                                CHECK(f32(mem[p].at((in_place ? at.send : at.recv) + e * 4, 4)) ==
                                      float(1000 * root + e));
                    }
                }
    collectives::request r;
    r.what = op::broadcast;
    r.how = collectives::algorithm::chain;
    for (unsigned i = 0; i < 3; ++i) r.ring.push_back(i);  // (= {..} trips GCC 12's -Wnonnull at -O3)
    r.bytes = 12;
    r.at = at;
    r.root = 3;
    CHECK_THROWS_WITH(collectives::plan(r), "root 3 is not a rank (0-2)");
}

TEST_CASE(
    "plan() gives the data descriptors the request's traffic class and the 64-byte tokens theirs, and waits carry "
    "none") {
    collectives::request r;
    r.at = at;
    r.ring = {0, 1, 2, 3};
    r.bytes = 4096;
    r.traffic_class = 2;
    r.token_class = 5;
    unsigned tokens = 0, data = 0;
    for (const auto& p : collectives::plan(r))
        for (const auto& d : p.descriptors) {
            const unsigned tc = TRN3_DESC_TRAFFIC_CLASS_OF(d.flags);
            if (d.flags & TRN3_DESC_WAIT_FABRIC) {
                CHECK(tc == 0);
            } else if (d.length == 64 && d.src >= at.token && d.src < at.token + (512 << 10)) {
                CHECK(tc == 5);
                ++tokens;
            } else {
                CHECK(tc == 2);
                ++data;
            }
        }
    CHECK(tokens == 4);  // out of place: each rank tells its predecessor its copy is done
    CHECK(data > 0);
    r.token_class = 8;
    CHECK_THROWS_WITH(collectives::plan(r), "traffic classes are 0 to 7");
}
