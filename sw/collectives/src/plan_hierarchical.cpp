// The hierarchical schedule: a ring reduce-scatter on each level of the
// topology in the channel's order (innermost first by default), then a ring
// all-gather on each in the reverse order (plan.h).
#include <set>
#include <stdexcept>

#include "plan_util.h"

namespace trn3::collectives {
using namespace detail;

namespace {

// The communicator as a grid: every rank's position on every level.
struct grid {
    std::vector<unsigned> dims;  // positions on each level
    std::map<std::vector<unsigned>, unsigned> rank_at;  // position -> rank
};

grid grid_of(const request& r, unsigned n) {
    if (r.coordinates.size() != n || r.coordinates.front().empty())
        throw std::invalid_argument("hierarchical: every rank needs a position on each level (" +
                                    std::to_string(r.coordinates.size()) + " positions for " + std::to_string(n) +
                                    " ranks)");
    grid g;
    const std::size_t levels = r.coordinates.front().size();
    g.dims.assign(levels, 0);
    for (unsigned p = 0; p < n; ++p) {
        const std::vector<unsigned>& c = r.coordinates[p];
        if (c.size() != levels) throw std::invalid_argument("hierarchical: ranks with different numbers of levels");
        for (std::size_t l = 0; l < levels; ++l) g.dims[l] = std::max(g.dims[l], c[l] + 1);
        if (!g.rank_at.emplace(c, p).second)
            throw std::invalid_argument("hierarchical: ranks " + std::to_string(g.rank_at.at(c)) + " and " +
                                        std::to_string(p) + " have the same position");
    }
    std::uint64_t cells = 1;
    for (std::size_t l = 0; l < levels; ++l) {
        if (g.dims[l] < 2)
            throw std::invalid_argument("hierarchical: level " + std::to_string(l) + " has one position");
        if (g.dims[l] > n)
            throw std::invalid_argument("hierarchical: level " + std::to_string(l) + " has positions past the " +
                                        std::to_string(n) + " ranks");
        cells *= g.dims[l];
    }
    if (cells != n)
        throw std::invalid_argument("hierarchical: the " + std::to_string(n) + " ranks do not fill their levels' " +
                                    std::to_string(cells) + " positions");
    return g;
}

// rings[l][p]: level l's ring through rank p (rank indices): the request's
// level_rings, checked, or the ranks that differ from p only on level l by
// position (odd channels the other way round).
std::vector<std::vector<std::vector<unsigned>>> rings_of(const request& r, const grid& g,
                                                         const std::map<unsigned, unsigned>& rank_of) {
    const auto n = static_cast<unsigned>(r.coordinates.size());
    const std::size_t levels = g.dims.size();
    std::vector<std::vector<std::vector<unsigned>>> rings(levels, std::vector<std::vector<unsigned>>(n));
    if (r.level_rings.empty()) {
        for (std::size_t l = 0; l < levels; ++l)
            for (unsigned p = 0; p < n; ++p) {
                std::vector<unsigned> pos = r.coordinates[p];
                for (unsigned v = 0; v < g.dims[l]; ++v) {
                    pos[l] = r.channel % 2 ? g.dims[l] - 1 - v : v;
                    rings[l][p].push_back(g.rank_at.at(pos));
                }
            }
        return rings;
    }
    if (r.level_rings.size() != levels)
        throw std::invalid_argument("hierarchical: rings for " + std::to_string(r.level_rings.size()) +
                                    " levels, not " + std::to_string(levels));
    for (std::size_t l = 0; l < levels; ++l) {
        for (const std::vector<unsigned>& ids : r.level_rings[l]) {
            std::vector<unsigned> ring;
            std::set<unsigned> places;
            for (unsigned id : ids) {
                const auto it = rank_of.find(id);
                if (it == rank_of.end())
                    throw std::invalid_argument("hierarchical: a ring has a chip off the communicator");
                ring.push_back(it->second);
                std::vector<unsigned> a = r.coordinates[it->second], b = r.coordinates[ring.front()];
                places.insert(a[l]);
                a[l] = b[l] = 0;
                if (a != b)
                    throw std::invalid_argument("hierarchical: a ring of level " + std::to_string(l) +
                                                " crosses another level");
            }
            if (places.size() != g.dims[l] || ring.size() != g.dims[l])
                throw std::invalid_argument("hierarchical: a ring of level " + std::to_string(l) + " is not its group");
            for (unsigned p : ring) {
                if (!rings[l][p].empty()) throw std::invalid_argument("hierarchical: a rank on two rings of one level");
                rings[l][p] = ring;
            }
        }
        for (unsigned p = 0; p < n; ++p)
            if (rings[l][p].empty())
                throw std::invalid_argument("hierarchical: rank " + std::to_string(p) + " is on no ring of level " +
                                            std::to_string(l));
    }
    return rings;
}

// The channel's level order: the request's, checked, or innermost first.
std::vector<unsigned> order_of(const request& r, unsigned levels) {
    std::vector<unsigned> order(levels);
    for (unsigned l = 0; l < levels; ++l) order[l] = l;
    if (r.level_order.empty()) return order;
    std::vector<unsigned> sorted = r.level_order;
    std::sort(sorted.begin(), sorted.end());
    if (sorted != order)
        throw std::invalid_argument("hierarchical: the level order is not a permutation of the " +
                                    std::to_string(levels) + " levels");
    return r.level_order;
}

}  // namespace

std::vector<rank_plan> plan_hierarchical(const request& r) {
    const std::map<unsigned, unsigned> rank_of = check(r);
    const auto n = static_cast<unsigned>(r.ring.size());
    check_supported(algorithm::hierarchical, r.what, n);
    const grid g = grid_of(r, n);
    const auto levels = static_cast<unsigned>(g.dims.size());
    check_counters(r, counters_needed(algorithm::hierarchical, r.what, n, levels), "hierarchical");
    const std::uint64_t es = r.element_bytes, elements = r.bytes / es;
    const bool reduce = r.what != op::all_gather, gather = r.what != op::reduce_scatter;
    const std::uint32_t reduce_flags = TRN3_DESC_REDUCE_WITH(r.reduce_op, r.reduce_type);
    const std::vector<unsigned>& ranks = ranks_of(r);
    const std::vector<std::vector<unsigned>>& at = r.coordinates;
    // Steps i = 0..L-1 take level order[i]; parts go by step, counters by level.
    const std::vector<unsigned> order = order_of(r, levels);

    // The chunk each rank ends with: its rank for reduce_scatter and
    // all_gather; for all_reduce the position read as a number with the
    // first step's level the most significant digit, so that every step's
    // part of the buffer is one contiguous range.
    std::vector<unsigned> owns(n);
    for (unsigned p = 0; p < n; ++p) {
        if (r.what != op::all_reduce) {
            owns[p] = p;
            continue;
        }
        unsigned place = n;
        for (unsigned l : order) {
            place /= g.dims[l];
            owns[p] += at[p][l] * place;
        }
    }
    // part[i][q]: what rank q holds after step i's reduce-scatter (and step
    // i's all-gather gives out): the chunks of the ranks that share q's
    // positions on the levels of steps 0..i, as byte ranges, adjacent ones
    // merged.
    std::vector<std::vector<std::vector<chunk>>> part(levels, std::vector<std::vector<chunk>>(n));
    std::vector<std::vector<std::uint64_t>> part_bytes(levels, std::vector<std::uint64_t>(n, 0));
    for (unsigned i = 0; i < levels; ++i)
        for (unsigned q = 0; q < n; ++q) {
            std::vector<unsigned> chunks;
            for (unsigned o = 0; o < n; ++o) {
                bool same = true;
                for (unsigned j = 0; j <= i && same; ++j) same = at[o][order[j]] == at[q][order[j]];
                if (same) chunks.push_back(owns[o]);
            }
            std::sort(chunks.begin(), chunks.end());
            auto& out = part[i][q];
            for (unsigned c : chunks) {
                const chunk b = leaf_of(r, n, c);
                append_range(out, b);
                part_bytes[i][q] += b.count;
            }
        }
    const std::vector<std::vector<std::vector<unsigned>>> rings = rings_of(r, g, rank_of);
    auto ring_at = [&](unsigned p, unsigned i) -> const std::vector<unsigned>& { return rings[order[i]][p]; };

    const std::uint64_t work = work_buffer(r);
    // Operand landings: the first step's reduce-scatter lands input op
    // incoming in the work buffer, and its first writes send the input.
    const bool operand = reduce && !r.in_place && r.operand_landing;
    std::vector<rank_plan> plans(n);
    for (unsigned p = 0; p < n; ++p) {
        rank_plan& plan = plans[p];
        plan.fabric_id = ranks[p];
        auto& d = plan.descriptors;
        // Ranges of the buffer at `from` (work, or the input) into the same ranges of work at `to`.
        auto send = [&](const std::vector<chunk>& ranges, unsigned to, std::uint32_t flags, std::uint64_t from) {
            for (const chunk& c : ranges)
                d.push_back(copy(from + c.first, TRN3_FABRIC_ADDR(ranks[to], work + c.first), c.count, flags));
        };
        const chunk mine = leaf_of(r, n, p), mine_whole = chunk_of(elements, n, p);
        if (!r.in_place) {
            if (!reduce) {
                if (mine.count > 0)
                    d.push_back(copy(r.at.send + mine.first - mine_whole.first * es, work + mine.first, mine.count));
            } else if (!operand) {
                // This channel's part of the input, in as few copies as its ranges allow.
                std::vector<chunk> all;
                for (unsigned c = 0; c < n; ++c) append_range(all, leaf_of(r, n, c));
                for (const chunk& b : all) d.push_back(copy(r.at.send + b.first, work + b.first, b.count));
            }
        }
        std::uint64_t landed_total = 0;
        std::vector<std::uint64_t> landed(levels, 0);  // per step, on its counter
        auto wait_step = [&](unsigned i, std::uint64_t bytes) {
            landed[i] += bytes;
            landed_total += bytes;
            d.push_back(wait_on(counter(r, order[i]), landed[i]));
        };
        if (reduce)
            for (unsigned i = 0; i < levels; ++i) {
                const std::vector<unsigned>& ring = ring_at(p, i);
                const auto size = static_cast<unsigned>(ring.size());
                const auto pos = static_cast<unsigned>(std::find(ring.begin(), ring.end(), p) - ring.begin());
                const unsigned succ = ring[(pos + 1) % size], pred = ring[(pos + size - 1) % size];
                const unsigned data = counter(r, order[i]), token = counter(r, levels + order[i]);
                if (i > 0 || (!r.in_place && !operand)) {
                    // Tell the predecessor this rank's part is whole (its copy,
                    // or the step before's reduce-scatter, is done): nothing
                    // of this step is reduced into it before, so the order
                    // of every sum is the schedule's.
                    // A slot per step and channel (a stride of 128 channels: 50 KiB
                    // of the 512 KiB token area on three levels).
                    const std::uint64_t slot =
                        r.at.token + 2 * token_bytes * (TRN3_FABRIC_CHANNELS * (1 + i) + r.channel);
                    d.push_back(copy(slot, TRN3_FABRIC_ADDR(ranks[pred], slot + token_bytes), token_bytes,
                                     TRN3_DESC_ON_CHANNEL(token)));
                    d.push_back(wait_on(token, token_bytes));
                    landed_total += token_bytes;
                }
                for (unsigned s = 0; s + 1 < size; ++s) {
                    const unsigned m = ring[mod(static_cast<long long>(pos) - s - 1, size)];
                    if (s > 0) wait_step(i, part_bytes[i][m]);  // what the predecessor sent at s - 1
                    const bool landing = operand && i == 0;  // input op incoming, the first send from the input
                    send(part[i][m], succ,
                         reduce_flags | (landing ? TRN3_DESC_REDUCE_OPERAND : 0u) | TRN3_DESC_ON_CHANNEL(data),
                         landing && s == 0 ? r.at.send : work);
                }
                wait_step(i, part_bytes[i][p]);  // this rank's part of the step, reduced
            }
        if (gather)
            for (unsigned i = levels; i-- > 0;) {
                const std::vector<unsigned>& ring = ring_at(p, i);
                const auto size = static_cast<unsigned>(ring.size());
                const auto pos = static_cast<unsigned>(std::find(ring.begin(), ring.end(), p) - ring.begin());
                const unsigned succ = ring[(pos + 1) % size];
                for (unsigned s = 0; s + 1 < size; ++s) {
                    const unsigned m = ring[mod(static_cast<long long>(pos) - s, size)];
                    if (s > 0) wait_step(i, part_bytes[i][m]);
                    send(part[i][m], succ, TRN3_DESC_ON_CHANNEL(counter(r, order[i])), work);
                }
                wait_step(i, part_bytes[i][ring[(pos + 1) % size]]);  // the predecessor's last
            }
        if (r.what == op::reduce_scatter && !r.in_place && mine.count > 0)
            d.push_back(copy(work + mine.first, r.at.recv + mine.first - mine_whole.first * es, mine.count));
        plan.rx_bytes = landed_total;
        if (operand) {
            plan.operand_offset = r.at.send - work;  // the input, from the part in the work buffer
            plan.operand_counter = counter(r, order[0]);
        }
    }
    return plans;
}

}  // namespace trn3::collectives
