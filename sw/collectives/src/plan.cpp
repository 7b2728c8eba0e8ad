#include "trn3/collectives/plan.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

namespace trn3::collectives {
namespace {
constexpr std::uint64_t token_bytes = 64;

trn3_dma_descriptor copy(std::uint64_t src, std::uint64_t dst, std::uint64_t bytes, std::uint32_t flags = 0) {
    return {src, dst, static_cast<std::uint32_t>(bytes), flags, 0};
}
trn3_dma_descriptor wait_for(std::uint64_t bytes) { return {bytes, 0, 0, TRN3_DESC_WAIT_FABRIC, 0}; }
// This channel's piece of chunk c of the request's buffer, in bytes: where
// it starts and how long it is.
chunk piece_of(const request& r, unsigned n, unsigned c) {
    const std::uint64_t es = r.element_bytes;
    const chunk whole = chunk_of(r.bytes / es, n, c), part = chunk_of(whole.count, r.channels, r.channel);
    return chunk{(whole.first + part.first) * es, part.count * es};
}
unsigned mod(long long a, unsigned n) { return static_cast<unsigned>(((a % n) + n) % n); }
}  // namespace

chunk chunk_of(std::uint64_t elements, unsigned n, unsigned c) {
    const std::uint64_t base = elements / n, extra = elements % n;
    return {c * base + std::min<std::uint64_t>(c, extra), base + (c < extra ? 1 : 0)};
}

const char* name(op o) {
    switch (o) {
    case op::all_reduce: return "all_reduce";
    case op::reduce_scatter: return "reduce_scatter";
    case op::all_gather: return "all_gather";
    case op::all_to_all: return "all_to_all";
    case op::broadcast: return "broadcast";
    }
    return "?";
}

// The checks every plan makes; the communicator's ranks by fabric id.
static std::map<unsigned, unsigned> check(const request& r) {
    const auto n = static_cast<unsigned>(r.ring.size());
    if (n < 2) throw std::invalid_argument("a collective needs at least two chips");
    if (r.channels == 0 || r.channel >= r.channels) throw std::invalid_argument("channel outside the channels");
    if (std::set<unsigned>(r.ring.begin(), r.ring.end()).size() != n)
        throw std::invalid_argument("a chip appears twice in the communicator");
    const std::uint64_t es = r.element_bytes;
    if (es == 0 || r.bytes % es != 0)
        throw std::invalid_argument("size " + std::to_string(r.bytes) + " B is not a whole number of " +
                                    std::to_string(es) + "-byte elements");
    const std::uint64_t elements = r.bytes / es;
    const bool even = r.what != op::all_reduce && r.what != op::broadcast;
    if (r.what == op::broadcast && r.root >= n)
        throw std::invalid_argument("root " + std::to_string(r.root) + " is not a rank (0-" + std::to_string(n - 1) +
                                    ")");
    if (even && elements % n != 0)
        throw std::invalid_argument(std::string(name(r.what)) + ": size " + std::to_string(r.bytes) + " B is not " +
                                    std::to_string(n) + " chunks of whole elements");
    // The communicator's ranks (chunk c belongs to rank c): `ranks`, or the ring's order.
    const std::vector<unsigned>& ranks = r.ranks.empty() ? r.ring : r.ranks;
    std::map<unsigned, unsigned> rank_of;
    for (unsigned i = 0; i < ranks.size(); ++i) rank_of[ranks[i]] = i;
    if (ranks.size() != n || rank_of.size() != n ||
        !std::all_of(r.ring.begin(), r.ring.end(), [&](unsigned id) { return rank_of.count(id) != 0; }))
        throw std::invalid_argument("the ring is not an order of the communicator's chips");
    return rank_of;
}

std::vector<rank_plan> plan_ring(const request& r) {
    if (r.what == op::all_to_all) throw std::invalid_argument("all_to_all has no ring plan (plan_direct)");
    const std::map<unsigned, unsigned> rank_of = check(r);
    const auto n = static_cast<unsigned>(r.ring.size());
    const std::uint64_t es = r.element_bytes, elements = r.bytes / es;
    const bool reduce = r.what != op::all_gather, gather = r.what != op::reduce_scatter;
    const std::uint32_t reduce_flags = TRN3_DESC_REDUCE_WITH(r.reduce_op, r.reduce_type);

    std::vector<rank_plan> plans(n);
    for (unsigned p = 0; p < n; ++p) {
        rank_plan& plan = plans[p];
        plan.fabric_id = r.ring[p];
        const unsigned succ = r.ring[(p + 1) % n], pred = r.ring[(p + n - 1) % n];
        // This channel's piece of chunk c: where it starts and its bytes.
        auto piece = [&](unsigned c) { return piece_of(r, n, c); };
        auto off = [&](unsigned c) { return piece(c).first; };
        auto off_whole = [&](unsigned c) { return chunk_of(elements, n, c).first * es; };
        auto len = [&](unsigned c) { return piece(c).count; };
        auto& d = plan.descriptors;
        // Chunks belong to ranks (the communicator's order), whatever the
        // ring: ring position q forwards what ends at rank chunk_at(q).
        auto chunk_at = [&](unsigned q) { return rank_of.at(r.ring[q]); };
        const unsigned mine = chunk_at(p);
        // The buffer this rank works in, and what goes there first.
        std::uint64_t work = r.at.recv;
        bool token = false;
        if (r.what != op::all_gather) {
            work = r.in_place ? r.at.send : r.what == op::all_reduce ? r.at.recv : r.at.work;
            if (!r.in_place) {
                for (unsigned c = 0; c < n; ++c)  // this channel's pieces of the input
                    if (len(c) > 0) d.push_back(copy(r.at.send + off(c), work + off(c), len(c)));
                token = true;
            }
        } else if (!r.in_place && len(mine) > 0) {
            // all_gather: this rank's part (its input starts at send) in its place
            d.push_back(copy(r.at.send + off(mine) - off_whole(mine), r.at.recv + off(mine), len(mine)));
        }
        std::uint64_t landed = 0;  // bytes this rank has waited for so far, in order
        if (token) {
            const std::uint64_t slot = r.at.token + 2 * token_bytes * r.channel;
            d.push_back(copy(slot, TRN3_FABRIC_ADDR(pred, slot + token_bytes), token_bytes));
            landed += token_bytes;
            d.push_back(wait_for(landed));  // the successor's copy is done
        }
        if (reduce)
            for (unsigned s = 0; s + 1 < n; ++s) {
                if (s > 0) {
                    landed += len(chunk_at(mod(static_cast<long long>(p) - s - 1, n)));  // the predecessor's, at s - 1
                    d.push_back(wait_for(landed));
                }
                const unsigned c = chunk_at(mod(static_cast<long long>(p) - s - 1, n));
                if (len(c) > 0)
                    d.push_back(copy(work + off(c), TRN3_FABRIC_ADDR(succ, work + off(c)), len(c), reduce_flags));
            }
        if (reduce && n > 1) landed += len(mine);  // the last reduce-scatter step: this rank's chunk, complete
        if (gather)
            for (unsigned s = 0; s + 1 < n; ++s) {
                if (s > 0) landed += len(chunk_at(mod(static_cast<long long>(p) - s, n)));  // from step s - 1
                if (reduce || s > 0) d.push_back(wait_for(landed));
                const unsigned c = chunk_at(mod(static_cast<long long>(p) - s, n));
                if (len(c) > 0) d.push_back(copy(work + off(c), TRN3_FABRIC_ADDR(succ, work + off(c)), len(c)));
            }
        if (gather) landed += len(chunk_at(mod(static_cast<long long>(p) + 1, n)));  // the last all-gather step
        d.push_back(wait_for(landed));
        if (r.what == op::reduce_scatter && !r.in_place && len(mine) > 0)
            d.push_back(copy(work + off(mine), r.at.recv + off(mine) - off_whole(mine), len(mine)));
        plan.rx_bytes = landed;
    }
    return plans;
}

std::vector<rank_plan> plan_direct(const request& r) {
    const auto n = static_cast<unsigned>(r.ring.size());
    if (r.what != op::all_to_all) throw std::invalid_argument(std::string(name(r.what)) + " has no direct plan");
    check(r);
    const std::vector<unsigned>& ranks = r.ranks.empty() ? r.ring : r.ranks;
    // This channel's piece of chunk c.
    auto piece = [&](unsigned c) { return piece_of(r, n, c); };
    // Token slots: channel k's token from peer i lands at token + (512 k + i) x 64; slot n is the one sent.
    auto token_slot = [&](unsigned from) { return r.at.token + (512ull * r.channel + from) * token_bytes; };
    std::vector<rank_plan> plans(n);
    for (unsigned me = 0; me < n; ++me) {
        rank_plan& plan = plans[me];
        plan.fabric_id = ranks[me];
        auto& d = plan.descriptors;
        std::uint64_t from = r.at.send, landed = 0;
        const std::uint64_t output = r.in_place ? r.at.send : r.at.recv;
        const chunk own = piece(me);
        if (r.in_place) {
            from = r.at.work;
            for (unsigned c = 0; c < n; ++c)
                if (piece(c).count > 0)
                    d.push_back(copy(r.at.send + piece(c).first, from + piece(c).first, piece(c).count));
            for (unsigned s = 1; s < n; ++s)
                d.push_back(copy(token_slot(n), TRN3_FABRIC_ADDR(ranks[(me + s) % n], token_slot(me)), token_bytes));
            landed += std::uint64_t(n - 1) * token_bytes;
            d.push_back(wait_for(landed));  // every peer has its buffer aside
        } else if (own.count > 0) {
            d.push_back(copy(r.at.send + own.first, r.at.recv + own.first, own.count));
        }
        for (unsigned s = 1; s < n; ++s) {
            const unsigned to = (me + s) % n;
            const chunk out = piece(to);
            // Chunk `to` of this rank's input goes to rank `to`, at chunk `me` of its output.
            if (out.count > 0)
                d.push_back(copy(from + out.first, TRN3_FABRIC_ADDR(ranks[to], output + own.first), out.count));
        }
        landed += std::uint64_t(n - 1) * own.count;
        d.push_back(wait_for(landed));
        plan.rx_bytes = landed;
    }
    return plans;
}

std::vector<rank_plan> plan_chain(const request& r) {
    if (r.what != op::broadcast) throw std::invalid_argument(std::string(name(r.what)) + " has no chain plan");
    check(r);
    const auto n = static_cast<unsigned>(r.ring.size());
    const std::vector<unsigned>& ranks = r.ranks.empty() ? r.ring : r.ranks;
    // The chain: the ring from the root on.
    const std::uint32_t root_id = ranks[r.root];
    const auto start = static_cast<unsigned>(std::find(r.ring.begin(), r.ring.end(), root_id) - r.ring.begin());
    auto piece = [&](unsigned s) { return piece_of(r, n, s); };
    const std::uint64_t input = r.at.send, output = r.in_place ? r.at.send : r.at.recv;
    std::vector<rank_plan> plans(n);
    for (unsigned q = 0; q < n; ++q) {  // q: place in the chain
        rank_plan& plan = plans[q];
        plan.fabric_id = r.ring[(start + q) % n];
        auto& d = plan.descriptors;
        const bool last = q + 1 == n;
        const unsigned next = r.ring[(start + q + 1) % n];
        std::uint64_t landed = 0;
        for (unsigned s = 0; s < n; ++s) {
            const chunk seg = piece(s);
            if (seg.count == 0) continue;
            if (q == 0) {
                if (!r.in_place) d.push_back(copy(input + seg.first, output + seg.first, seg.count));
                d.push_back(copy(input + seg.first, TRN3_FABRIC_ADDR(next, output + seg.first), seg.count));
                continue;
            }
            landed += seg.count;
            d.push_back(wait_for(landed));
            if (!last) d.push_back(copy(output + seg.first, TRN3_FABRIC_ADDR(next, output + seg.first), seg.count));
        }
        d.push_back(wait_for(landed));
        plan.rx_bytes = landed;
    }
    return plans;
}

std::vector<rank_plan> plan(const request& r) {
    return r.what == op::all_to_all ? plan_direct(r) : r.what == op::broadcast ? plan_chain(r) : plan_ring(r);
}

void offset_waits(std::vector<trn3_dma_descriptor>& descriptors, std::uint64_t base) {
    for (auto& d : descriptors)
        if (d.flags & TRN3_DESC_WAIT_FABRIC) d.src += base;
}

}  // namespace trn3::collectives
