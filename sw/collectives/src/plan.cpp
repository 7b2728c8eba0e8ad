// What every plan shares: chunks, the request's checks, which algorithm
// runs which op, and the dispatch (plan.h).
#include "trn3/collectives/plan.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

#include "plan_util.h"

namespace trn3::collectives {

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
    case op::all_to_allv: return "all_to_allv";
    case op::broadcast: return "broadcast";
    case op::reduce: return "reduce";
    case op::send_recv: return "sendrecv";
    }
    return "?";
}

const char* name(algorithm a) {
    switch (a) {
    case algorithm::ring: return "ring";
    case algorithm::direct: return "direct";
    case algorithm::halving_doubling: return "halving_doubling";
    case algorithm::chain: return "chain";
    case algorithm::tree: return "tree";
    case algorithm::hierarchical: return "hierarchical";
    }
    return "?";
}

algorithm algorithm_named(const std::string& text) {
    for (algorithm a : {algorithm::ring, algorithm::direct, algorithm::halving_doubling, algorithm::chain,
                        algorithm::tree, algorithm::hierarchical})
        if (text == name(a)) return a;
    throw std::invalid_argument("unknown algorithm '" + text + "'");
}

namespace detail {

chunk piece_of(const request& r, unsigned n, unsigned c) {
    const std::uint64_t es = r.element_bytes;
    const chunk whole = chunk_of(r.bytes / es, n, c), part = chunk_of(whole.count, r.channels, r.channel);
    return chunk{(whole.first + part.first) * es, part.count * es};
}

chunk leaf_of(const request& r, unsigned leaves, unsigned i) {
    if (r.what != op::all_reduce) return piece_of(r, leaves, i);
    const std::uint64_t es = r.element_bytes;
    const chunk part = chunk_of(r.bytes / es, r.channels, r.channel), c = chunk_of(part.count, leaves, i);
    return chunk{(part.first + c.first) * es, c.count * es};
}

std::map<unsigned, unsigned> check(const request& r) {
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
    const bool even = r.what == op::reduce_scatter || r.what == op::all_gather || r.what == op::all_to_all;
    if (r.what == op::all_to_allv && r.splits.size() != std::size_t(n) * n)
        throw std::invalid_argument("all_to_allv: " + std::to_string(r.splits.size()) + " splits for " +
                                    std::to_string(n) + " ranks (want n x n)");
    if ((r.what == op::broadcast || r.what == op::reduce) && r.root >= n)
        throw std::invalid_argument("root " + std::to_string(r.root) + " is not a rank (0-" + std::to_string(n - 1) +
                                    ")");
    if (even && elements % n != 0)
        throw std::invalid_argument(std::string(name(r.what)) + ": size " + std::to_string(r.bytes) + " B is not " +
                                    std::to_string(n) + " chunks of whole elements");
    // The communicator's ranks (chunk c belongs to rank c): `ranks`, or the ring's order.
    const std::vector<unsigned>& ranks = ranks_of(r);
    std::map<unsigned, unsigned> rank_of;
    for (unsigned i = 0; i < ranks.size(); ++i) rank_of[ranks[i]] = i;
    if (ranks.size() != n || rank_of.size() != n ||
        !std::all_of(r.ring.begin(), r.ring.end(), [&](unsigned id) { return rank_of.count(id) != 0; }))
        throw std::invalid_argument("the ring is not an order of the communicator's chips");
    return rank_of;
}

void check_counters(const request& r, unsigned needed, const char* algorithm_name) {
    const std::string what = std::string(algorithm_name) + " " + name(r.what) + " on " + std::to_string(r.ring.size()) +
                             " ranks needs " + std::to_string(needed) + " fabric channels per channel";
    if (r.counters < needed) throw std::invalid_argument(what + "; it was given " + std::to_string(r.counters));
    const std::uint64_t last = r.first_counter + std::uint64_t(needed > 0 ? needed - 1 : 0) * r.counter_stride;
    if (needed > 0 && (r.counter_stride == 0 || last >= TRN3_FABRIC_CHANNELS))
        throw std::invalid_argument(what + "; from " + std::to_string(r.first_counter) + " by " +
                                    std::to_string(r.counter_stride) + " they reach " + std::to_string(last) +
                                    ", past the chip's " + std::to_string(TRN3_FABRIC_CHANNELS));
}

}  // namespace detail

unsigned counters_needed(algorithm a, op o, unsigned n, unsigned levels) {
    switch (a) {
    case algorithm::direct:
        return o == op::all_to_all || o == op::all_to_allv ? 0 : o == op::all_reduce || o == op::send_recv ? 2 : 1;
    case algorithm::halving_doubling: {
        const unsigned bits = detail::floor_log2(n);  // a counter per peer distance, one for the fold
        return bits + ((1u << bits) == n ? 0 : 1);
    }
    case algorithm::chain: return o == op::reduce ? 2 : 0;
    case algorithm::ring: return 0;
    case algorithm::tree: return 6;
    case algorithm::hierarchical: return 2 * levels;
    }
    return 0;
}

void check_supported(algorithm a, op o, unsigned n) {
    const bool reduction_family = o == op::all_reduce || o == op::reduce_scatter || o == op::all_gather;
    bool ok = false;
    std::string why;
    switch (a) {
    case algorithm::ring: ok = reduction_family; break;
    case algorithm::direct:
        ok = reduction_family || o == op::all_to_all || o == op::all_to_allv || o == op::send_recv;
        break;
    case algorithm::chain: ok = o == op::broadcast || o == op::reduce; break;
    case algorithm::tree: ok = o == op::all_reduce; break;
    case algorithm::hierarchical: ok = reduction_family; break;
    case algorithm::halving_doubling:
        ok = reduction_family && (o == op::all_reduce || (n & (n - 1)) == 0);
        if (reduction_family && !ok) why = " (on " + std::to_string(n) + " ranks: only on a power of two)";
        break;
    }
    if (!ok) throw std::invalid_argument(std::string("the ") + name(a) + " algorithm does not run " + name(o) + why);
}

namespace {
using detail::piece_of;
using detail::ranks_of;

std::vector<rank_plan> by_algorithm(const request& r) {
    switch (r.how) {
    case algorithm::ring: return plan_ring(r);
    case algorithm::direct: return plan_direct(r);
    case algorithm::halving_doubling: return plan_halving_doubling(r);
    case algorithm::chain: return plan_chain(r);
    case algorithm::tree: return plan_tree(r);
    case algorithm::hierarchical: return plan_hierarchical(r);
    }
    return {};
}

// avg: the bytes of rank `rank`'s output this channel finished (in bytes,
// from the output's start), by the algorithm's split of the buffer.
std::vector<chunk> finished_here(const request& r, unsigned rank) {
    const auto n = static_cast<unsigned>(r.ring.size());
    const std::uint64_t es = r.element_bytes, elements = r.bytes / es;
    std::vector<chunk> out;
    if (r.what == op::reduce_scatter) {
        const chunk p = piece_of(r, n, rank), whole = chunk_of(elements, n, rank);
        out.push_back({r.in_place ? p.first : p.first - whole.first * es, p.count});
    } else if (r.what == op::reduce) {
        if (rank != r.root) return out;
        const unsigned segments = detail::segments_of(r, n);
        for (unsigned s = 0; s < segments; ++s) out.push_back(piece_of(r, segments, s));
    } else if (r.how == algorithm::ring) {
        for (unsigned c = 0; c < n; ++c) out.push_back(piece_of(r, n, c));
    } else {
        const chunk part = chunk_of(elements, r.channels, r.channel);
        out.push_back({part.first * es, part.count * es});
    }
    return out;
}
}  // namespace

std::vector<rank_plan> plan(const request& r) {
    check_supported(r.how, r.what, static_cast<unsigned>(r.ring.size()));
    if (r.traffic_class > 7 || r.token_class > 7) throw std::invalid_argument("traffic classes are 0 to 7");
    if (r.operand_landing && r.how != algorithm::ring && r.how != algorithm::hierarchical)
        throw std::invalid_argument(std::string("operand landing is the ring's and hierarchical's, not ") +
                                    name(r.how) + "'s");
    if (r.average && (r.reduce_op != TRN3_REDUCE_SUM || r.reduce_type == TRN3_REDUCE_INT32 ||
                      (r.what != op::all_reduce && r.what != op::reduce_scatter && r.what != op::reduce)))
        throw std::invalid_argument("avg is a sum over a floating type, for all_reduce, reduce_scatter and reduce");
    std::vector<rank_plan> plans = by_algorithm(r);
    if (r.average) {
        std::map<unsigned, unsigned> rank_of;
        for (unsigned i = 0; i < ranks_of(r).size(); ++i) rank_of[ranks_of(r)[i]] = i;
        const std::uint64_t output = r.in_place ? r.at.send : r.at.recv;
        for (auto& p : plans)
            for (const chunk& c : finished_here(r, rank_of.at(p.fabric_id)))
                if (c.count > 0)
                    p.descriptors.push_back(detail::copy(r.at.constant, output + c.first, c.count,
                                                         TRN3_DESC_REDUCE_WITH(TRN3_REDUCE_PROD, r.reduce_type)));
    }
    for (auto& p : plans)
        for (auto& d : p.descriptors) {
            if (d.flags & TRN3_DESC_WAIT_FABRIC) continue;
            if (r.timing_only) d.flags |= TRN3_DESC_TIMING_ONLY;
            d.flags |= TRN3_DESC_TRAFFIC_CLASS(detail::is_token(r, d) ? r.token_class : r.traffic_class);
        }
    return plans;
}

void offset_waits(std::vector<trn3_dma_descriptor>& descriptors, unsigned queue,
                  const std::array<std::uint64_t, TRN3_FABRIC_CHANNELS>& base) {
    for (auto& d : descriptors)
        if (d.flags & TRN3_DESC_WAIT_FABRIC) d.src += base[TRN3_DESC_CHANNEL_OF(d.flags, queue) % TRN3_FABRIC_CHANNELS];
}

}  // namespace trn3::collectives
