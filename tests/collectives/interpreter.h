// An interpreter of the DMA engine's descriptors for collective schedules
// (sw/collectives) under adversarial timing: ranks step in a random order,
// and posted writes land at random later moments (in order per sender,
// receiver and fabric channel: a flow, which the routes keep on one path;
// a queue's writes on different channels may overtake each other). Channel k's plans run on
// queue 1 + k of every rank; each rank counts landed bytes per fabric
// channel (a write's ON_CHANNEL, else its queue), and a wait waits on its
// ON_CHANNEL, else its queue's. Local REDUCE descriptors reduce in place.
// A reducing write with REDUCE_OPERAND takes its other operand where the
// landing rank's FABRIC_OPERAND of its channel says: the offset its plans
// give for that channel (rank_plan::operand_offset, on operand_counter or
// else the plan's queue's), as the runtime sets it.
#pragma once

#include <catch2/catch.hpp>

#include <array>
#include <cstring>
#include <deque>
#include <map>
#include <random>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "trn3/collectives/plan.h"
#include "trn3/numerics/reduce.h"

namespace trn3::test::plans {

constexpr std::uint64_t base = 0x1000000000ull, region = 1ull << 30, region_bytes = 1 << 16;
// send, recv, work, token; scratch areas from the fifth region on, one region apart; avg's constant in the last.
inline const collectives::buffers at{base,   base + region,     base + 2 * region, base + 3 * region, base + 4 * region,
                                     region, base + 15 * region};

// A rank's memory: regions of 64 KiB, one per GiB from `base`, made when first touched.
struct memory {
    std::map<std::uint64_t, std::vector<std::uint8_t>> regions;
    std::uint8_t* at(std::uint64_t a, std::uint64_t n) {
        REQUIRE(a >= base);
        const std::uint64_t r = (a - base) / region, off = (a - base) % region;
        REQUIRE(r < 16);
        REQUIRE(off + n <= region_bytes);
        auto& v = regions[r];
        if (v.empty()) v.resize(region_bytes);
        return v.data() + off;
    }
};

using counts = std::array<std::uint64_t, TRN3_FABRIC_CHANNELS>;  // bytes landed per fabric channel

struct write_in_flight {
    std::uint64_t address;
    std::vector<std::uint8_t> data;
    std::uint32_t flags;
    unsigned counter;
};

inline void apply(std::uint8_t* dst, const std::uint8_t* src, std::size_t n, std::uint32_t flags) {
    if (flags & TRN3_DESC_REDUCE) {
        const auto r = numerics::reduction_of(TRN3_DESC_REDUCE_OP(flags), TRN3_DESC_REDUCE_TYPE(flags));
        REQUIRE(r);
        REQUIRE(numerics::reduce_into(*r, dst, src, n));
    } else {
        std::memmove(dst, src, n);
    }
}

// Runs the plans of every channel to the end; returns false on a deadlock.
// rx[rank]: the bytes that landed on each fabric channel.
inline bool run(const std::vector<std::vector<collectives::rank_plan>>& channels, const std::vector<unsigned>& ids,
                std::vector<memory>& mem, std::vector<counts>& rx, std::uint64_t seed) {
    const std::size_t n = mem.size(), queues = channels.size() * n;
    rx.assign(n, counts{});
    std::mt19937_64 rng(seed);
    std::vector<std::size_t> next(queues, 0);
    // (from, to, fabric channel) -> writes in order
    std::map<std::tuple<std::size_t, std::size_t, std::size_t>, std::deque<write_in_flight>> wire;
    std::map<unsigned, std::size_t> rank_of;
    for (std::size_t p = 0; p < n; ++p) rank_of[ids[p]] = p;
    std::vector<const collectives::rank_plan*> plan_of(queues, nullptr);  // queue k: channel k / n, rank k % n
    for (std::size_t c = 0; c < channels.size(); ++c)
        for (const auto& pl : channels[c]) plan_of.at(c * n + rank_of.at(pl.fabric_id)) = &pl;
    for (const auto* pl : plan_of) REQUIRE(pl != nullptr);
    std::vector<std::map<unsigned, std::uint64_t>> operand(n);  // per rank: FABRIC_OPERAND by fabric channel
    for (std::size_t k = 0; k < queues; ++k)
        if (plan_of[k]->operand_offset)
            operand[k % n][plan_of[k]->operand_counter.value_or(static_cast<unsigned>(1 + k / n))] =
                *plan_of[k]->operand_offset;
    for (;;) {
        // What can move: a queue whose next descriptor is not a wait it cannot pass, or a wire with a write.
        std::vector<std::size_t> ready;
        for (std::size_t k = 0; k < queues; ++k) {
            const auto& pl = *plan_of[k];
            if (next[k] < pl.descriptors.size()) {
                const auto& d = pl.descriptors[next[k]];
                const unsigned counter = TRN3_DESC_CHANNEL_OF(d.flags, static_cast<unsigned>(1 + k / n));
                if (!(d.flags & TRN3_DESC_WAIT_FABRIC) || rx[k % n][counter] >= d.src) ready.push_back(k);
            }
        }
        std::vector<std::tuple<std::size_t, std::size_t, std::size_t>> wires;
        for (const auto& [k, q] : wire)
            if (!q.empty()) wires.push_back(k);
        if (ready.empty() && wires.empty()) {
            for (std::size_t k = 0; k < queues; ++k)
                if (next[k] < plan_of[k]->descriptors.size()) return false;  // stuck
            return true;
        }
        const std::size_t pick = rng() % (ready.size() + wires.size());
        if (pick >= ready.size()) {
            const auto k = wires[pick - ready.size()];
            const write_in_flight& w = wire[k].front();
            const std::size_t to = std::get<1>(k);
            const std::uint64_t at = TRN3_FABRIC_OFFSET(w.address);
            if (w.flags & TRN3_DESC_REDUCE_OPERAND) {  // dst = operand op data
                REQUIRE((w.flags & TRN3_DESC_REDUCE));
                REQUIRE(operand[to].count(w.counter) == 1);
                std::memmove(mem[to].at(at, w.data.size()), mem[to].at(at + operand[to].at(w.counter), w.data.size()),
                             w.data.size());
            }
            apply(mem[to].at(at, w.data.size()), w.data.data(), w.data.size(), w.flags);
            rx[to][w.counter] += w.data.size();
            wire[k].pop_front();
            continue;
        }
        const std::size_t k = ready[pick], p = k % n;
        const trn3_dma_descriptor d = plan_of[k]->descriptors[next[k]++];
        if (d.flags & TRN3_DESC_WAIT_FABRIC) continue;
        std::vector<std::uint8_t> data(mem[p].at(d.src, d.length), mem[p].at(d.src, d.length) + d.length);
        if (d.dst >= TRN3_FABRIC_ADDR(0, 0)) {
            // In order per flow (source, destination, fabric channel), as the routes keep them.
            const unsigned channel = TRN3_DESC_CHANNEL_OF(d.flags, static_cast<unsigned>(1 + k / n));
            wire[{p, rank_of.at(TRN3_FABRIC_ID(d.dst)), channel}].push_back({d.dst, std::move(data), d.flags, channel});
        } else {
            REQUIRE_FALSE((d.flags & TRN3_DESC_REDUCE_OPERAND));  // malformed: an operand is a landing's
            apply(mem[p].at(d.dst, d.length), data.data(), d.length, d.flags);
        }
    }
}

// Every rank's landed bytes, all channels together, against its plans' rx_bytes.
inline void check_landed(const std::vector<std::vector<collectives::rank_plan>>& channels,
                         const std::vector<unsigned>& ids, const std::vector<counts>& rx) {
    for (std::size_t p = 0; p < ids.size(); ++p) {
        std::uint64_t want = 0, got = 0;
        for (const auto& ch : channels)
            for (const auto& pl : ch)
                if (pl.fabric_id == ids[p]) want += pl.rx_bytes;
        for (std::uint64_t b : rx[p]) got += b;
        CHECK(got == want);
    }
}

inline float f32(const std::uint8_t* p) {
    float v;
    std::memcpy(&v, p, 4);
    return v;
}

// all_reduce, reduce_scatter, all_gather on fp32: rank p's input element e
// is 1000 p + e (all_gather: its part, in its place when in place) ...
inline void fill_inputs(collectives::op what, std::uint64_t elements, bool in_place, std::vector<memory>& mem) {
    const auto n = static_cast<unsigned>(mem.size());
    const std::uint64_t chunk = elements / n;
    for (unsigned p = 0; p < n; ++p) {
        const bool part = what == collectives::op::all_gather;
        const std::uint64_t count = part ? chunk : elements, in = part && in_place ? at.recv + chunk * 4 * p : at.send;
        for (std::uint64_t e = 0; e < count; ++e) {
            const float v = float(1000 * p + e);
            std::memcpy(mem[p].at(in + e * 4, 4), &v, 4);
        }
    }
}

// ... and every rank's output is exactly what the op gives.
inline void check_outputs(collectives::op what, std::uint64_t elements, bool in_place, std::vector<memory>& mem) {
    const auto n = static_cast<unsigned>(mem.size());
    const std::uint64_t chunk = elements / n;
    const float sum_p = float(1000 * n * (n - 1) / 2);
    for (unsigned p = 0; p < n; ++p) {
        if (what == collectives::op::all_reduce) {
            const std::uint64_t out = in_place ? at.send : at.recv;
            for (std::uint64_t e = 0; e < elements; ++e) CHECK(f32(mem[p].at(out + e * 4, 4)) == sum_p + float(n * e));
        } else if (what == collectives::op::reduce_scatter) {
            const std::uint64_t out = in_place ? at.send + chunk * 4 * p : at.recv;
            for (std::uint64_t e = 0; e < chunk; ++e)
                CHECK(f32(mem[p].at(out + e * 4, 4)) == sum_p + float(n * (chunk * p + e)));
        } else {
            for (unsigned q = 0; q < n; ++q)
                for (std::uint64_t e = 0; e < chunk; ++e)
                    CHECK(f32(mem[p].at(at.recv + (chunk * q + e) * 4, 4)) == float(1000 * q + e));
        }
    }
}

// One run of every channel's plans under the timing `seed` gives, from
// fill_inputs' inputs, exactly what the op gives: no deadlock, every byte
// waited for landed, every output element right.
inline void check_exact(const std::vector<std::vector<collectives::rank_plan>>& plans, const std::vector<unsigned>& ids,
                        collectives::op what, std::uint64_t elements, bool in_place, std::uint64_t seed) {
    std::vector<memory> mem(ids.size());  // by rank
    std::vector<counts> rx;
    fill_inputs(what, elements, in_place, mem);
    REQUIRE(run(plans, ids, mem, rx, seed));
    check_landed(plans, ids, rx);
    check_outputs(what, elements, in_place, mem);
}

}  // namespace trn3::test::plans
