// The recursive halving-doubling schedule: all_reduce on any number of
// ranks, reduce_scatter and all_gather on a power of two (plan.h).
#include <stdexcept>

#include "plan_util.h"

namespace trn3::collectives {
using namespace detail;

std::vector<rank_plan> plan_halving_doubling(const request& r) {
    check(r);
    const auto n = static_cast<unsigned>(r.ring.size());
    check_supported(algorithm::halving_doubling, r.what, n);
    const unsigned needed = counters_needed(algorithm::halving_doubling, r.what, n);
    check_counters(r, needed, "halving_doubling");
    const unsigned bits = floor_log2(n);
    const unsigned p = 1u << bits, fold = r.first_counter + bits;
    const std::uint64_t es = r.element_bytes, elements = r.bytes / es;
    const bool reduce = r.what != op::all_gather, gather = r.what != op::reduce_scatter;
    const std::uint32_t reduce_flags = TRN3_DESC_REDUCE_WITH(r.reduce_op, r.reduce_type);
    const std::vector<unsigned>& ranks = ranks_of(r);

    // all_reduce: this channel's contiguous part of the buffer in p leaves;
    // reduce_scatter and all_gather (p = n): this channel's piece of each chunk.
    const chunk part = chunk_of(elements, r.channels, r.channel);
    const chunk part_bytes{part.first * es, part.count * es};
    auto leaf = [&](unsigned i) { return leaf_of(r, p, i); };
    // Leaves [lo, lo + count) as byte ranges, adjacent ones merged.
    auto ranges = [&](unsigned lo, unsigned count) {
        std::vector<chunk> out;
        for (unsigned i = lo; i < lo + count; ++i) append_range(out, leaf(i));
        return out;
    };
    auto bytes_of = [&](unsigned lo, unsigned count) {
        std::uint64_t b = 0;
        for (const chunk& c : ranges(lo, count)) b += c.count;
        return b;
    };
    // Step k's (distance p >> (k + 1)) data lands in scratch area k; the fold's in area `bits`.
    auto area = [&](unsigned k) { return r.at.scratch + std::uint64_t(k) * r.at.scratch_stride; };
    const std::uint64_t work = work_buffer(r);
    std::vector<rank_plan> plans(n);
    for (unsigned me = 0; me < n; ++me) {
        rank_plan& plan = plans[me];
        plan.fabric_id = ranks[me];
        auto& d = plan.descriptors;
        if (me >= p) {
            // Beyond the power of two: give the input to rank me - p, take its result back.
            if (part_bytes.count > 0)
                d.push_back(copy(r.at.send + part_bytes.first,
                                 TRN3_FABRIC_ADDR(ranks[me - p], area(bits) + part_bytes.first), part_bytes.count,
                                 TRN3_DESC_ON_CHANNEL(fold)));
            d.push_back(wait_on(fold, part_bytes.count));
            plan.rx_bytes = part_bytes.count;
            continue;
        }
        counter_waits waits(r, needed, d);
        auto wait = [&](unsigned counter, std::uint64_t bytes) { waits.wait(counter, bytes); };
        // Out of place: the input to the buffer worked in (all_gather: this rank's part to its place).
        const chunk whole_mine = chunk_of(elements, n, me);
        if (!r.in_place && reduce)
            for (const chunk& c : ranges(0, p)) d.push_back(copy(r.at.send + c.first, work + c.first, c.count));
        if (!r.in_place && !reduce)
            for (const chunk& c : ranges(me, 1))
                d.push_back(copy(r.at.send + c.first - whole_mine.first * es, work + c.first, c.count));
        const bool partnered = me + p < n;  // a rank beyond the power of two gives this one its input
        if (reduce) {
            if (partnered) {
                wait(fold, part_bytes.count);
                if (part_bytes.count > 0)
                    d.push_back(
                        copy(area(bits) + part_bytes.first, work + part_bytes.first, part_bytes.count, reduce_flags));
            }
            unsigned lo = 0;
            for (unsigned k = 0; k < bits; ++k) {
                const unsigned dist = p >> (k + 1), partner = me ^ dist, counter = r.first_counter + k;
                const unsigned keep = (me & dist) ? lo + dist : lo, give = (me & dist) ? lo : lo + dist;
                for (const chunk& c : ranges(give, dist))
                    d.push_back(copy(work + c.first, TRN3_FABRIC_ADDR(ranks[partner], area(k) + c.first), c.count,
                                     TRN3_DESC_ON_CHANNEL(counter)));
                wait(counter, bytes_of(keep, dist));
                for (const chunk& c : ranges(keep, dist))
                    d.push_back(copy(area(k) + c.first, work + c.first, c.count, reduce_flags));
                lo = keep;
            }
        }
        if (gather) {
            for (unsigned j = 0; j < bits; ++j) {
                const unsigned dist = 1u << j, partner = me ^ dist, counter = r.first_counter + bits - 1 - j;
                const unsigned block = me & ~(dist - 1);
                for (const chunk& c : ranges(block, dist))
                    d.push_back(copy(work + c.first, TRN3_FABRIC_ADDR(ranks[partner], work + c.first), c.count,
                                     TRN3_DESC_ON_CHANNEL(counter)));
                wait(counter, bytes_of(block ^ dist, dist));
            }
            if (partnered && part_bytes.count > 0)
                d.push_back(copy(work + part_bytes.first, TRN3_FABRIC_ADDR(ranks[me + p], work + part_bytes.first),
                                 part_bytes.count, TRN3_DESC_ON_CHANNEL(fold)));
        }
        if (r.what == op::reduce_scatter && !r.in_place)
            for (const chunk& c : ranges(me, 1))
                d.push_back(copy(work + c.first, r.at.recv + c.first - whole_mine.first * es, c.count));
        plan.rx_bytes = waits.total();
    }
    return plans;
}

}  // namespace trn3::collectives
