// The double binary tree: all_reduce (plan.h).
#include <functional>

#include "plan_util.h"

namespace trn3::collectives {
using namespace detail;

namespace {

// A rank's place in one tree: its parent (-1: the root), its children (-1:
// none) and which of its parent's two children it is.
struct tree_node {
    int parent = -1;
    int child[2] = {-1, -1};
    unsigned slot = 0;
};

// Tree t over ranks 0..n-1, on positions 1..n laid in order by their lowest
// set bit b: position i's children are i - b/2 and i + b/2 (or the nearest
// i + b/4, i + b/8... that exists), the root the largest power of two, the
// odd positions leaves. Tree 0 puts rank i - 1 at position i, tree 1 rank
// i mod n (shifted by one): the odd ranks are inside tree 0 and leaves of
// tree 1, the even ranks the other way round (for odd n, rank 0 is a leaf
// of both): no rank forwards in both trees.
std::vector<tree_node> tree_of(unsigned n, unsigned t) {
    std::vector<tree_node> nodes(n);
    auto rank_at = [&](unsigned position) { return t == 0 ? position - 1 : position % n; };
    std::function<void(unsigned, int, unsigned)> lay = [&](unsigned position, int parent, unsigned slot) {
        const unsigned rank = rank_at(position), b = position & (0u - position);
        tree_node& node = nodes[rank];
        node.parent = parent;
        node.slot = slot;
        if (b == 1) return;
        node.child[0] = int(rank_at(position - b / 2));
        lay(position - b / 2, int(rank), 0);
        unsigned step = b / 2;
        while (step >= 1 && position + step > n) step /= 2;
        if (step >= 1) {
            node.child[1] = int(rank_at(position + step));
            lay(position + step, int(rank), 1);
        }
    };
    unsigned root = 1;
    while (root * 2 <= n) root *= 2;
    lay(root, -1, 0);
    return nodes;
}

}  // namespace

std::vector<rank_plan> plan_tree(const request& r) {
    check(r);
    const auto n = static_cast<unsigned>(r.ring.size());
    check_supported(algorithm::tree, r.what, n);
    check_counters(r, counters_needed(algorithm::tree, r.what, n), "tree");
    const std::uint64_t es = r.element_bytes, elements = r.bytes / es;
    const std::uint32_t reduce_flags = TRN3_DESC_REDUCE_WITH(r.reduce_op, r.reduce_type);
    const std::vector<unsigned>& ranks = ranks_of(r);
    const std::vector<tree_node> trees[2] = {tree_of(n, 0), tree_of(n, 1)};

    // This channel's part of the buffer: half of it for each tree, each half
    // in segments of segment_bytes that pipeline (0: each half whole; in
    // this model a segment's descriptors cost about a microsecond at every
    // rank, so pipelining pays only for large halves).
    const chunk part = chunk_of(elements, r.channels, r.channel);
    auto half = [&](unsigned t) {
        const chunk h = chunk_of(part.count, 2, t);
        return chunk{part.first + h.first, h.count};  // elements
    };
    const std::uint64_t largest_half = half(0).count * es;
    const unsigned segments = segments_of(r, 1, largest_half);
    auto segment = [&](unsigned t, unsigned g) {  // bytes, from the buffer's start
        const chunk h = half(t), s = chunk_of(h.count, segments, g);
        return chunk{(h.first + s.first) * es, s.count * es};
    };
    // Tree t: child slot s's data lands in scratch area 2t + s, counted on
    // fabric channel first + 3t + s; what comes down from the parent on first + 3t + 2.
    auto area = [&](unsigned t, unsigned s) { return r.at.scratch + std::uint64_t(2 * t + s) * r.at.scratch_stride; };
    auto up_counter = [&](unsigned t, unsigned s) { return r.first_counter + 3 * t + s; };
    auto down_counter = [&](unsigned t) { return r.first_counter + 3 * t + 2; };
    const std::uint64_t work = work_buffer(r);

    std::vector<rank_plan> plans(n);
    for (unsigned me = 0; me < n; ++me) {
        rank_plan& plan = plans[me];
        plan.fabric_id = ranks[me];
        auto& d = plan.descriptors;
        counter_waits waits(r, 6, d);
        auto wait = [&](unsigned counter, std::uint64_t bytes) { waits.wait(counter, bytes); };
        if (!r.in_place && part.count > 0)
            d.push_back(copy(r.at.send + part.first * es, work + part.first * es, part.count * es));
        // Up: each segment reduced from this rank's and its children's (in
        // child order), then sent to the parent's slot for this rank.
        for (unsigned g = 0; g < segments; ++g)
            for (unsigned t = 0; t < 2; ++t) {
                const chunk seg = segment(t, g);
                if (seg.count == 0) continue;
                const tree_node& node = trees[t][me];
                for (unsigned s = 0; s < 2; ++s)
                    if (node.child[s] >= 0) {
                        wait(up_counter(t, s), seg.count);
                        d.push_back(copy(area(t, s) + seg.first, work + seg.first, seg.count, reduce_flags));
                    }
                if (node.parent >= 0)
                    d.push_back(copy(work + seg.first,
                                     TRN3_FABRIC_ADDR(ranks[unsigned(node.parent)], area(t, node.slot) + seg.first),
                                     seg.count, TRN3_DESC_ON_CHANNEL(up_counter(t, node.slot))));
            }
        // Down: the root's result, segment by segment, to every rank.
        for (unsigned g = 0; g < segments; ++g)
            for (unsigned t = 0; t < 2; ++t) {
                const chunk seg = segment(t, g);
                if (seg.count == 0) continue;
                const tree_node& node = trees[t][me];
                if (node.parent >= 0) wait(down_counter(t), seg.count);
                for (unsigned s = 0; s < 2; ++s)
                    if (node.child[s] >= 0)
                        d.push_back(copy(work + seg.first,
                                         TRN3_FABRIC_ADDR(ranks[unsigned(node.child[s])], work + seg.first), seg.count,
                                         TRN3_DESC_ON_CHANNEL(down_counter(t))));
            }
        plan.rx_bytes = waits.total();
    }
    return plans;
}

}  // namespace trn3::collectives
