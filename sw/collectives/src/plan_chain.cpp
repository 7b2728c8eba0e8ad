// The chain schedule: broadcast (plan.h).
#include <algorithm>

#include <stdexcept>

#include "plan_util.h"

namespace trn3::collectives {
using namespace detail;

std::vector<rank_plan> plan_chain(const request& r) {
    if (r.what != op::broadcast) throw std::invalid_argument(std::string(name(r.what)) + " has no chain plan");
    check(r);
    const auto n = static_cast<unsigned>(r.ring.size());
    const std::vector<unsigned>& ranks = ranks_of(r);
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

}  // namespace trn3::collectives
