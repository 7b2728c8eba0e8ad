// The direct schedules: all_to_all, and reduce_scatter, all_gather and
// all_reduce one-shot over the switches (plan.h).
#include <stdexcept>

#include "plan_util.h"

namespace trn3::collectives {
using namespace detail;

namespace {

// all_to_all and all_to_allv: what rank i sends rank j is, in bytes, the
// piece sent(i, j) of i's input, and it lands at received(j, i) in j's output.
std::vector<rank_plan> all_to_all(const request& r) {
    const auto n = static_cast<unsigned>(r.ring.size());
    const std::vector<unsigned>& ranks = ranks_of(r);
    const std::uint64_t es = r.element_bytes;
    const bool uneven = r.what == op::all_to_allv;
    // Where i's elements for j start in i's input, and where i's land in j's output (all_to_allv).
    auto split = [&](unsigned i, unsigned j) { return r.splits[std::size_t(i) * n + j]; };
    auto sent_before = [&](unsigned i, unsigned j) {
        std::uint64_t e = 0;
        for (unsigned k = 0; k < j; ++k) e += split(i, k);
        return e;
    };
    auto received_before = [&](unsigned j, unsigned i) {
        std::uint64_t e = 0;
        for (unsigned k = 0; k < i; ++k) e += split(k, j);
        return e;
    };
    // This channel's piece of what i sends j, and where it lands in j's output.
    auto sent = [&](unsigned i, unsigned j) {
        if (!uneven) return piece_of(r, n, j);
        const chunk c = chunk_of(split(i, j), r.channels, r.channel);
        return chunk{(sent_before(i, j) + c.first) * es, c.count * es};
    };
    auto received = [&](unsigned j, unsigned i) {
        if (!uneven) return piece_of(r, n, i).first;
        return (received_before(j, i) + chunk_of(split(i, j), r.channels, r.channel).first) * es;
    };
    // Token slots: channel k's token from peer i lands at token + (512 k + i) x 64; slot n is the one sent.
    auto token_slot = [&](unsigned from) { return r.at.token + (512ull * r.channel + from) * token_bytes; };
    std::vector<rank_plan> plans(n);
    for (unsigned me = 0; me < n; ++me) {
        rank_plan& plan = plans[me];
        plan.fabric_id = ranks[me];
        auto& d = plan.descriptors;
        std::uint64_t from = r.at.send, landed = 0;
        const std::uint64_t output = r.in_place ? r.at.send : r.at.recv;
        const chunk own = sent(me, me);
        if (r.in_place) {
            from = r.at.work;
            if (uneven) {
                // Other channels' pieces land where this channel's input lies
                // (the layouts differ): every channel puts the whole input
                // aside (the same bytes: their copies do not conflict).
                std::uint64_t total = 0;
                for (unsigned c = 0; c < n; ++c) total += split(me, c);
                if (total > 0) d.push_back(copy(r.at.send, from, total * es));
            } else {
                for (unsigned c = 0; c < n; ++c)
                    if (sent(me, c).count > 0)
                        d.push_back(copy(r.at.send + sent(me, c).first, from + sent(me, c).first, sent(me, c).count));
            }
            // Every peer has its buffer aside once its tokens of every
            // channel have come: a channel's token says only that this
            // channel's copy is done, and (uneven) another channel's pieces
            // land where this channel copies from. Tokens count on
            // token_channel, apart from the data.
            for (unsigned s = 1; s < n; ++s)
                d.push_back(copy(token_slot(n), TRN3_FABRIC_ADDR(ranks[(me + s) % n], token_slot(me)), token_bytes,
                                 TRN3_DESC_ON_CHANNEL(token_channel)));
            d.push_back(wait_on(token_channel, std::uint64_t(n - 1) * token_bytes * r.channels));
        }
        // Its own piece: already in place for an in-place all_to_all.
        if (own.count > 0 && !(r.in_place && !uneven))
            d.push_back(copy(from + own.first, output + received(me, me), own.count));
        for (unsigned s = 1; s < n; ++s) {
            const unsigned to = (me + s) % n;
            const chunk out = sent(me, to);
            // This rank's piece for rank `to` goes to its place in `to`'s output.
            if (out.count > 0)
                d.push_back(copy(from + out.first, TRN3_FABRIC_ADDR(ranks[to], output + received(to, me)), out.count));
            landed += sent(to, me).count;  // and `to`'s piece for this rank comes here
        }
        d.push_back(wait_for(landed));
        plan.rx_bytes = landed + (r.in_place ? std::uint64_t(n - 1) * token_bytes : 0);
    }
    return plans;
}

// send_recv: rank p's buffer (this channel's part) to rank p + 1's output.
std::vector<rank_plan> send_recv(const request& r) {
    const auto n = static_cast<unsigned>(r.ring.size());
    check_counters(r, counters_needed(algorithm::direct, op::send_recv, n), "direct");
    const std::vector<unsigned>& ranks = ranks_of(r);
    const unsigned data = r.first_counter, tokens = r.first_counter + 1;
    const std::uint64_t es = r.element_bytes;
    const chunk c = chunk_of(r.bytes / es, r.channels, r.channel);
    const chunk part{c.first * es, c.count * es};
    const std::uint64_t token_slot = r.at.token + 2 * token_bytes * r.channel;
    std::vector<rank_plan> plans(n);
    for (unsigned me = 0; me < n; ++me) {
        rank_plan& plan = plans[me];
        plan.fabric_id = ranks[me];
        auto& d = plan.descriptors;
        const unsigned next = ranks[(me + 1) % n], prev = ranks[(me + n - 1) % n];
        std::uint64_t from = r.at.send, landed = 0;
        const std::uint64_t output = r.in_place ? r.at.send : r.at.recv;
        if (r.in_place) {
            // Aside first; then the predecessor may write here, and this rank
            // writes to its successor once the successor has said so.
            from = r.at.work;
            if (part.count > 0) d.push_back(copy(r.at.send + part.first, from + part.first, part.count));
            d.push_back(copy(token_slot, TRN3_FABRIC_ADDR(prev, token_slot + token_bytes), token_bytes,
                             TRN3_DESC_ON_CHANNEL(tokens)));
            d.push_back(wait_on(tokens, token_bytes));
            landed += token_bytes;
        }
        if (part.count > 0)
            d.push_back(copy(from + part.first, TRN3_FABRIC_ADDR(next, output + part.first), part.count,
                             TRN3_DESC_ON_CHANNEL(data)));
        d.push_back(wait_on(data, part.count));
        plan.rx_bytes = landed + part.count;
    }
    return plans;
}

// reduce_scatter, all_gather, all_reduce: every rank writes each chunk
// straight to its owner, then the owner's chunk to every rank.
std::vector<rank_plan> reductions(const request& r) {
    const auto n = static_cast<unsigned>(r.ring.size());
    check_counters(r, counters_needed(algorithm::direct, r.what, n), "direct");
    const std::vector<unsigned>& ranks = ranks_of(r);
    const std::uint64_t es = r.element_bytes, elements = r.bytes / es;
    const bool reduce = r.what != op::all_gather, gather = r.what != op::reduce_scatter;
    const std::uint32_t reduce_flags = TRN3_DESC_REDUCE_WITH(r.reduce_op, r.reduce_type);
    const unsigned scatter_counter = r.first_counter, gather_counter = r.first_counter + (reduce ? 1 : 0);
    auto leaf = [&](unsigned i) { return leaf_of(r, n, i); };
    // Rank i's leaf for a peer lands in the peer's scratch slot i of this channel.
    const std::uint64_t slot_bytes = ((elements / (std::uint64_t(n) * r.channels) + 2) * es + 63) / 64 * 64;
    auto slot = [&](unsigned i) { return r.at.scratch + (std::uint64_t(i) * r.channels + r.channel) * slot_bytes; };
    const std::uint64_t work = work_buffer(r);
    std::vector<rank_plan> plans(n);
    for (unsigned me = 0; me < n; ++me) {
        rank_plan& plan = plans[me];
        plan.fabric_id = ranks[me];
        auto& d = plan.descriptors;
        const chunk mine = leaf(me), whole_mine = chunk_of(elements, n, me);
        if (!r.in_place)
            for (unsigned i = 0; i < n; ++i)
                if (reduce && leaf(i).count > 0)
                    d.push_back(copy(r.at.send + leaf(i).first, work + leaf(i).first, leaf(i).count));
        if (!r.in_place && !reduce && mine.count > 0)
            d.push_back(copy(r.at.send + mine.first - whole_mine.first * es, work + mine.first, mine.count));
        std::uint64_t scattered = 0, gathered = 0;
        if (reduce) {
            for (unsigned s = 1; s < n; ++s) {
                const unsigned to = (me + s) % n;
                if (leaf(to).count > 0)
                    d.push_back(copy(work + leaf(to).first, TRN3_FABRIC_ADDR(ranks[to], slot(me)), leaf(to).count,
                                     TRN3_DESC_ON_CHANNEL(scatter_counter)));
            }
            scattered = std::uint64_t(n - 1) * mine.count;
            d.push_back(wait_on(scatter_counter, scattered));
            // The reduction in rank order, whatever order the data came in.
            for (unsigned i = 0; i < n; ++i)
                if (i != me && mine.count > 0) d.push_back(copy(slot(i), work + mine.first, mine.count, reduce_flags));
        }
        if (gather) {
            for (unsigned s = 1; s < n; ++s) {
                const unsigned to = (me + s) % n;
                if (mine.count > 0)
                    d.push_back(copy(work + mine.first, TRN3_FABRIC_ADDR(ranks[to], work + mine.first), mine.count,
                                     TRN3_DESC_ON_CHANNEL(gather_counter)));
                gathered += leaf(to).count;
            }
            d.push_back(wait_on(gather_counter, gathered));
        }
        if (r.what == op::reduce_scatter && !r.in_place && mine.count > 0)
            d.push_back(copy(work + mine.first, r.at.recv + mine.first - whole_mine.first * es, mine.count));
        plan.rx_bytes = scattered + gathered;
    }
    return plans;
}

}  // namespace

std::vector<rank_plan> plan_direct(const request& r) {
    check(r);
    check_supported(algorithm::direct, r.what, static_cast<unsigned>(r.ring.size()));
    if (r.what == op::all_to_all || r.what == op::all_to_allv) return all_to_all(r);
    return r.what == op::send_recv ? send_recv(r) : reductions(r);
}

}  // namespace trn3::collectives
