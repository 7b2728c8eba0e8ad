// The chain schedule: broadcast (plan.h).
#include <algorithm>

#include <stdexcept>

#include "plan_util.h"

namespace trn3::collectives {
using namespace detail;

namespace {

// reduce: the chain ends at the root; segments flow towards it, reduced at every rank.
std::vector<rank_plan> reduce_chain(const request& r) {
    const auto n = static_cast<unsigned>(r.ring.size());
    check_counters(r, counters_needed(algorithm::chain, op::reduce, n), "chain");
    const std::vector<unsigned>& ranks = ranks_of(r);
    const unsigned data = r.first_counter, tokens = r.first_counter + 1;
    const std::uint32_t root_id = ranks[r.root];
    const auto root_at = static_cast<unsigned>(std::find(r.ring.begin(), r.ring.end(), root_id) - r.ring.begin());
    const unsigned segments = segments_of(r, n);
    auto piece = [&](unsigned s) { return piece_of(r, segments, s); };
    const std::uint32_t reduce_flags = TRN3_DESC_REDUCE_WITH(r.reduce_op, r.reduce_type) | TRN3_DESC_ON_CHANNEL(data);
    const std::uint64_t token_slot = r.at.token + 2 * token_bytes * r.channel;
    // The buffer a rank reduces into: the root's output; the others' work (their inputs stay).
    auto buffer_of = [&](bool root) { return !root ? r.at.work : r.in_place ? r.at.send : r.at.recv; };
    std::vector<rank_plan> plans(n);
    for (unsigned q = 0; q < n; ++q) {  // q: place in the chain, the root last
        rank_plan& plan = plans[q];
        plan.fabric_id = r.ring[(root_at + 1 + q) % n];
        auto& d = plan.descriptors;
        const bool root = q + 1 == n;
        const std::uint64_t work = buffer_of(root);
        const std::uint64_t from = q == 0 ? r.at.send : work;  // what it sends on
        const unsigned next = r.ring[(root_at + 2 + q) % n], prev = r.ring[(root_at + q) % n];
        if (q > 0) {
            if (work != r.at.send)
                for (unsigned s = 0; s < segments; ++s)
                    if (piece(s).count > 0)
                        d.push_back(copy(r.at.send + piece(s).first, work + piece(s).first, piece(s).count));
            // Ready: the predecessor may reduce into this rank's buffer.
            d.push_back(copy(token_slot, TRN3_FABRIC_ADDR(prev, token_slot + token_bytes), token_bytes,
                             TRN3_DESC_ON_CHANNEL(tokens)));
        }
        if (!root) d.push_back(wait_on(tokens, token_bytes));
        std::uint64_t landed = 0;
        for (unsigned s = 0; s < segments; ++s) {
            const chunk seg = piece(s);
            if (seg.count == 0) continue;
            if (q > 0) {
                landed += seg.count;
                d.push_back(wait_on(data, landed));
            }
            if (!root)
                d.push_back(copy(from + seg.first, TRN3_FABRIC_ADDR(next, buffer_of(q + 2 == n) + seg.first), seg.count,
                                 reduce_flags));
        }
        d.push_back(wait_on(data, landed));
        plan.rx_bytes = landed + (root ? 0 : token_bytes);
    }
    return plans;
}

}  // namespace

std::vector<rank_plan> plan_chain(const request& r) {
    check_supported(algorithm::chain, r.what, static_cast<unsigned>(r.ring.size()));
    check(r);
    if (r.what == op::reduce) return reduce_chain(r);
    const auto n = static_cast<unsigned>(r.ring.size());
    const std::vector<unsigned>& ranks = ranks_of(r);
    // The chain: the ring from the root on.
    const std::uint32_t root_id = ranks[r.root];
    const auto start = static_cast<unsigned>(std::find(r.ring.begin(), r.ring.end(), root_id) - r.ring.begin());
    const unsigned segments = segments_of(r, n);
    auto piece = [&](unsigned s) { return piece_of(r, segments, s); };
    const std::uint64_t input = r.at.send, output = r.in_place ? r.at.send : r.at.recv;
    std::vector<rank_plan> plans(n);
    for (unsigned q = 0; q < n; ++q) {  // q: place in the chain
        rank_plan& plan = plans[q];
        plan.fabric_id = r.ring[(start + q) % n];
        auto& d = plan.descriptors;
        const bool last = q + 1 == n;
        const unsigned next = r.ring[(start + q + 1) % n];
        std::uint64_t landed = 0;
        for (unsigned s = 0; s < segments; ++s) {
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

}  // namespace trn3::collectives
