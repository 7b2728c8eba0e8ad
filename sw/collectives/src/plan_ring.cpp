// The ring schedules: all_reduce, reduce_scatter and all_gather (plan.h).
#include <algorithm>

#include <stdexcept>
#include <string>

#include "plan_util.h"

namespace trn3::collectives {
using namespace detail;

std::vector<rank_plan> plan_ring(const request& r) {
    if (r.what == op::all_to_all) throw std::invalid_argument("all_to_all has no ring plan (plan_direct)");
    const std::map<unsigned, unsigned> rank_of = check(r);
    const auto n = static_cast<unsigned>(r.ring.size());
    const std::uint64_t es = r.element_bytes, elements = r.bytes / es;
    const bool reduce = r.what != op::all_gather, gather = r.what != op::reduce_scatter;
    const std::uint32_t reduce_flags = TRN3_DESC_REDUCE_WITH(r.reduce_op, r.reduce_type);

    const bool ahead = reduce && !r.in_place && r.copy_phases > 0 && n > 1;
    const unsigned phases = std::min(r.copy_phases, n - 1);
    if (ahead && (r.copy_counter <= r.channels || r.copy_counter + phases > TRN3_FABRIC_CHANNELS))
        throw std::invalid_argument("copy phases count on fabric channels past the channels' own, below " +
                                    std::to_string(TRN3_FABRIC_CHANNELS));
    auto phase_of = [&](unsigned s) { return s * phases / (n - 1); };
    const bool operand = reduce && !r.in_place && r.operand_landing && n > 1;
    if (r.operand_landing && r.copy_phases > 0)
        throw std::invalid_argument("operand landing and copy phases exclude each other");
    const std::uint32_t landing_flags = reduce_flags | (operand ? TRN3_DESC_REDUCE_OPERAND : 0u);

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
        // The buffer this rank works in, and what goes there first (ahead:
        // on the copy queues, plan_ring_copies).
        std::uint64_t work = r.at.recv;
        bool token = false;
        if (r.what != op::all_gather) {
            work = r.in_place ? r.at.send : r.what == op::all_reduce ? r.at.recv : r.at.work;
            if (!r.in_place && !ahead && !operand) {
                for (unsigned c = 0; c < n; ++c)  // this channel's pieces of the input
                    if (len(c) > 0) d.push_back(copy(r.at.send + off(c), work + off(c), len(c)));
                token = true;
            }
        } else if (!r.in_place && len(mine) > 0) {
            // all_gather: this rank's part (its input starts at send) in its place
            d.push_back(copy(r.at.send + off(mine) - off_whole(mine), r.at.recv + off(mine), len(mine)));
        }
        std::uint64_t landed = 0;  // bytes from the predecessor this rank has waited for so far, in order
        if (token) {
            // The token says this rank's copy is done; it counts on
            // token_channel, and a rank waits for one from its successor in
            // every channel's ring.
            const std::uint64_t slot = r.at.token + 2 * token_bytes * r.channel;
            d.push_back(copy(slot, TRN3_FABRIC_ADDR(pred, slot + token_bytes), token_bytes,
                             TRN3_DESC_ON_CHANNEL(token_channel)));
            d.push_back(wait_on(token_channel, token_bytes * r.channels));
        }
        if (reduce)
            for (unsigned s = 0; s + 1 < n; ++s) {
                if (s > 0) {
                    landed += len(chunk_at(mod(static_cast<long long>(p) - s - 1, n)));  // the predecessor's, at s - 1
                    d.push_back(wait_for(landed));
                }
                if (ahead && (s == 0 || phase_of(s) != phase_of(s - 1)))  // the successors' copies of the phase
                    d.push_back(wait_on(r.copy_counter + phase_of(s), token_bytes * r.channels));
                const unsigned c = chunk_at(mod(static_cast<long long>(p) - s - 1, n));
                const std::uint64_t from = (ahead || operand) && s == 0 ? r.at.send + off(c) : work + off(c);
                if (len(c) > 0) d.push_back(copy(from, TRN3_FABRIC_ADDR(succ, work + off(c)), len(c), landing_flags));
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
        plan.rx_bytes = landed + (token ? token_bytes : 0) + (ahead ? phases * token_bytes : 0);
        if (operand) plan.operand_offset = r.at.send - work;  // the input, from the chunk in the work buffer
    }
    return plans;
}

std::vector<std::vector<rank_plan>> plan_ring_copies(const std::vector<request>& requests, unsigned queues) {
    if (requests.empty() || queues == 0) return {};
    const std::vector<unsigned>& ranks = ranks_of(requests.front());
    const auto n = static_cast<unsigned>(ranks.size());
    const unsigned phases = std::min(requests.front().copy_phases, n - 1);
    if (n < 2 || phases == 0) throw std::invalid_argument("copy queues need two ranks and copy_phases");
    // [queue][rank][phase]: the copies, then the tokens.
    using by_phase = std::vector<std::vector<trn3_dma_descriptor>>;
    std::vector<std::vector<by_phase>> copies(queues, std::vector<by_phase>(n, by_phase(phases))), tokens = copies;
    for (unsigned k = 0; k < requests.size(); ++k) {
        const request& r = requests[k];
        const std::map<unsigned, unsigned> rank_of = check(r);
        if (ranks_of(r) != ranks || r.in_place || r.operand_landing || r.copy_phases != requests.front().copy_phases ||
            r.channel != k || r.channels != requests.size() ||
            (r.what != op::all_reduce && r.what != op::reduce_scatter) || r.copy_counter <= r.channels ||
            r.copy_counter + phases > TRN3_FABRIC_CHANNELS || r.traffic_class > 7 || r.token_class > 7)
            throw std::invalid_argument(
                "copy queues: one request per channel, in order, alike, all_reduce or reduce_scatter out of place "
                "without operand landing, copy counters past the channels' own");
        const std::uint64_t work = work_buffer(r), slot = r.at.token + 2 * token_bytes * r.channel;
        const std::uint32_t flags = r.timing_only ? TRN3_DESC_TIMING_ONLY : 0;
        for (unsigned q = 0; q < n; ++q) {  // ring position q: rank p
            const unsigned p = rank_of.at(r.ring[q]), pred = r.ring[(q + n - 1) % n];
            // At step s the predecessor reduces the chunk of position q - s - 2 into this rank's.
            for (unsigned s = 0; s + 1 < n; ++s) {
                const chunk piece = piece_of(r, n, rank_of.at(r.ring[mod(static_cast<long long>(q) - s - 2, n)]));
                if (piece.count > 0)
                    copies[k % queues][p][s * phases / (n - 1)].push_back(
                        copy(r.at.send + piece.first, work + piece.first, piece.count,
                             flags | TRN3_DESC_TRAFFIC_CLASS(r.traffic_class)));
            }
            for (unsigned g = 0; g < phases; ++g)
                tokens[k % queues][p][g].push_back(
                    copy(slot, TRN3_FABRIC_ADDR(pred, slot + token_bytes), token_bytes,
                         flags | TRN3_DESC_ON_CHANNEL(r.copy_counter + g) | TRN3_DESC_TRAFFIC_CLASS(r.token_class)));
        }
    }
    std::vector<std::vector<rank_plan>> out(queues, std::vector<rank_plan>(n));
    for (unsigned j = 0; j < queues; ++j)
        for (unsigned p = 0; p < n; ++p) {
            out[j][p].fabric_id = ranks[p];
            for (unsigned g = 0; g < phases; ++g) {
                auto& d = out[j][p].descriptors;
                d.insert(d.end(), copies[j][p][g].begin(), copies[j][p][g].end());
                d.insert(d.end(), tokens[j][p][g].begin(), tokens[j][p][g].end());
            }
        }
    return out;
}

}  // namespace trn3::collectives
