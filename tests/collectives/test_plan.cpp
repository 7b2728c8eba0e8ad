// The ring schedules (sw/collectives) run by an interpreter of the DMA
// engine's descriptors under adversarial timing: ranks step in a random
// order, and posted writes land at random later moments (in order per
// sender and receiver, as on a NeuronLink path). Every order must give the
// exact result, never deadlock, and land exactly the bytes each plan waits for.
#include <catch2/catch.hpp>

#include <cstring>
#include <deque>
#include <map>
#include <random>
#include <stdexcept>
#include <vector>

#include "trn3/collectives/plan.h"
#include "trn3/numerics/reduce.h"

using namespace trn3;
using collectives::op;

namespace {
constexpr std::uint64_t base = 0x1000000000ull, region = 1ull << 30, region_bytes = 1 << 16;
const collectives::buffers at{base, base + region, base + 2 * region, base + 3 * region};

// A rank's memory: four regions (send, recv, work, token) of 64 KiB.
struct memory {
    std::vector<std::vector<std::uint8_t>> regions =
        std::vector<std::vector<std::uint8_t>>(4, std::vector<std::uint8_t>(region_bytes));
    std::uint8_t* at(std::uint64_t a, std::uint64_t n) {
        const std::uint64_t r = (a - base) / region, off = (a - base) % region;
        REQUIRE(r < 4);
        REQUIRE(off + n <= region_bytes);
        return regions[r].data() + off;
    }
};

struct write_in_flight {
    std::uint64_t address;
    std::vector<std::uint8_t> data;
    std::uint32_t flags;
};

// Runs the plans to the end; returns false on a deadlock.
bool run(const std::vector<collectives::rank_plan>& plans, std::vector<memory>& mem, std::vector<std::uint64_t>& rx,
         std::uint64_t seed) {
    const std::size_t n = plans.size();
    std::mt19937_64 rng(seed);
    std::vector<std::size_t> next(n, 0);
    std::map<std::pair<std::size_t, std::size_t>, std::deque<write_in_flight>> wire;  // (from, to) -> in order
    std::map<unsigned, std::size_t> rank_of;
    for (std::size_t p = 0; p < n; ++p) rank_of[plans[p].fabric_id] = p;
    auto land = [&](std::size_t to, const write_in_flight& w) {
        std::uint8_t* dst = mem[to].at(TRN3_FABRIC_OFFSET(w.address), w.data.size());
        if (w.flags & TRN3_DESC_REDUCE) {
            const auto r = numerics::reduction_of(TRN3_DESC_REDUCE_OP(w.flags), TRN3_DESC_REDUCE_TYPE(w.flags));
            REQUIRE(r);
            REQUIRE(numerics::reduce_into(*r, dst, w.data.data(), w.data.size()));
        } else {
            std::memcpy(dst, w.data.data(), w.data.size());
        }
        rx[to] += w.data.size();
    };
    for (;;) {
        // What can move: a rank whose next descriptor is not a wait it cannot pass, or a wire with a write.
        std::vector<std::size_t> ranks;
        for (std::size_t p = 0; p < n; ++p)
            if (next[p] < plans[p].descriptors.size()) {
                const auto& d = plans[p].descriptors[next[p]];
                if (!(d.flags & TRN3_DESC_WAIT_FABRIC) || rx[p] >= d.src) ranks.push_back(p);
            }
        std::vector<std::pair<std::size_t, std::size_t>> wires;
        for (const auto& [k, q] : wire)
            if (!q.empty()) wires.push_back(k);
        if (ranks.empty() && wires.empty()) {
            for (std::size_t p = 0; p < n; ++p)
                if (next[p] < plans[p].descriptors.size()) return false;  // stuck
            return true;
        }
        const std::size_t pick = rng() % (ranks.size() + wires.size());
        if (pick >= ranks.size()) {
            const auto k = wires[pick - ranks.size()];
            land(k.second, wire[k].front());
            wire[k].pop_front();
            continue;
        }
        const std::size_t p = ranks[pick];
        const trn3_dma_descriptor d = plans[p].descriptors[next[p]++];
        if (d.flags & TRN3_DESC_WAIT_FABRIC) continue;
        std::vector<std::uint8_t> data(mem[p].at(d.src, d.length), mem[p].at(d.src, d.length) + d.length);
        if (d.dst >= TRN3_FABRIC_ADDR(0, 0)) {
            wire[{p, rank_of.at(TRN3_FABRIC_ID(d.dst))}].push_back({d.dst, std::move(data), d.flags});
        } else if (d.flags & TRN3_DESC_REDUCE) {
            FAIL("a local reduction in a ring plan");
        } else {
            std::memcpy(mem[p].at(d.dst, d.length), data.data(), d.length);
        }
    }
}

float f32(const std::uint8_t* p) {
    float v;
    std::memcpy(&v, p, 4);
    return v;
}
}  // namespace

TEST_CASE("ring all_reduce, reduce_scatter and all_gather give exact results under every timing, in and out of place") {
    for (const op what : {op::all_reduce, op::reduce_scatter, op::all_gather})
        for (const unsigned n : {2u, 3u, 5u, 8u})
            for (const std::uint64_t elements :
                 {std::uint64_t(n), std::uint64_t(7 * n), std::uint64_t(11), std::uint64_t(1)})
                for (const bool in_place : {false, true}) {
                    if (what != op::all_reduce && elements % n != 0) continue;
                    collectives::request r;
                    r.what = what;
                    for (unsigned i = 0; i < n; ++i) r.ring.push_back((i * 3 + 1) % 16);  // any ids, any order
                    r.bytes = elements * 4;
                    r.in_place = in_place;
                    r.at = at;
                    const auto plans = collectives::plan_ring(r);
                    REQUIRE(plans.size() == n);
                    const std::uint64_t chunk = elements / n;
                    for (std::uint64_t seed = 1; seed <= 12; ++seed) {
                        INFO(collectives::name(what)
                             << " n " << n << " elements " << elements << " in place " << in_place << " seed " << seed);
                        std::vector<memory> mem(n);
                        std::vector<std::uint64_t> rx(n, 0);
                        // Rank p's input: element e is 1000 p + e (all_gather: its part).
                        for (unsigned p = 0; p < n; ++p) {
                            const std::uint64_t count = what == op::all_gather ? chunk : elements;
                            const std::uint64_t in =
                                what == op::all_gather && in_place ? at.recv + chunk * 4 * p : at.send;
                            for (std::uint64_t e = 0; e < count; ++e) {
                                const float v = float(1000 * p + e);
                                std::memcpy(mem[p].at(in + e * 4, 4), &v, 4);
                            }
                        }
                        REQUIRE(run(plans, mem, rx, seed));
                        for (unsigned p = 0; p < n; ++p) {
                            CHECK(rx[p] == plans[p].rx_bytes);
                            if (what == op::all_reduce) {
                                const std::uint64_t out = in_place ? at.send : at.recv;
                                for (std::uint64_t e = 0; e < elements; ++e)
                                    CHECK(f32(mem[p].at(out + e * 4, 4)) == float(1000 * n * (n - 1) / 2 + n * e));
                            } else if (what == op::reduce_scatter) {
                                const std::uint64_t out = in_place ? at.send + chunk * 4 * p : at.recv;
                                for (std::uint64_t e = 0; e < chunk; ++e)
                                    CHECK(f32(mem[p].at(out + e * 4, 4)) ==
                                          float(1000 * n * (n - 1) / 2 + n * (chunk * p + e)));
                            } else {
                                for (unsigned q = 0; q < n; ++q)
                                    for (std::uint64_t e = 0; e < chunk; ++e)
                                        CHECK(f32(mem[p].at(at.recv + (chunk * q + e) * 4, 4)) == float(1000 * q + e));
                            }
                        }
                    }
                }
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
}

TEST_CASE("chunks split the elements as evenly as they allow, the larger first") {
    CHECK(collectives::chunk_of(11, 4, 0).first == 0);
    CHECK(collectives::chunk_of(11, 4, 0).count == 3);
    CHECK(collectives::chunk_of(11, 4, 2).first == 6);
    CHECK(collectives::chunk_of(11, 4, 3).count == 2);
    CHECK(collectives::chunk_of(2, 4, 3).count == 0);
}
