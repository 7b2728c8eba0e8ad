// The ring search (rings.h).
#include "trn3/collectives/rings.h"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>
#include <tuple>

namespace trn3::collectives {

namespace {

// The flows' paths, each looked up once.
class path_cache {
public:
    explicit path_cache(const fabric_paths& f) : fabric_(f) {}
    const std::vector<unsigned>& operator()(unsigned src, unsigned dst, unsigned channel) {
        const auto key = std::make_tuple(src, dst, channel);
        auto it = paths_.find(key);
        if (it == paths_.end()) {
            it = paths_.emplace(key, fabric_.links(src, dst, channel)).first;
            for (unsigned l : it->second)
                if (l >= fabric_.capacity.size() || !(fabric_.capacity[l] > 0))
                    throw std::invalid_argument("fabric_paths: a path crosses a link without capacity");
        }
        return it->second;
    }

private:
    const fabric_paths& fabric_;
    std::map<std::tuple<unsigned, unsigned, unsigned>, std::vector<unsigned>> paths_;
};

// Loads over the rings laid so far, and what a change of flows costs in the
// sum of their 8th powers: a link twice as loaded costs 256 times as much,
// so the sum follows the busiest links (a path of more links costs little
// beside a flow off the busiest), yet moving flows off a busy link pays even
// when the busiest link stays.
class link_loads {
public:
    // Loads in flows per the widest link's bandwidth (so rounding is relative to 1).
    explicit link_loads(const fabric_paths& f) : load_(f.capacity.size(), 0.0) {
        const double widest = f.capacity.empty() ? 1.0 : *std::max_element(f.capacity.begin(), f.capacity.end());
        for (double c : f.capacity) weight_.push_back(widest / c);
    }
    // Adds (sign 1) or removes (sign -1) a flow; returns the change in the sum of 8th powers.
    double change(const std::vector<unsigned>& links, double sign) {
        double delta = 0;
        for (unsigned l : links) {
            const double before = load_[l];
            load_[l] += sign * weight_[l];
            delta += cost(load_[l]) - cost(before);
        }
        total_ += delta;
        return delta;
    }
    double total() const { return total_; }  // the sum of the links' cost
    double most() const { return load_.empty() ? 0.0 : *std::max_element(load_.begin(), load_.end()); }
    static double cost(double x) {
        const double x2 = x * x, x4 = x2 * x2;
        return x4 * x4;
    }

private:
    std::vector<double> weight_;  // load of one flow on each link
    std::vector<double> load_;
    double total_ = 0;
};

// Local search on one ring over the rings laid before (`loads` holds them
// and this ring): moves a run of up to 8 consecutive ranks to another place
// in the ring (its order kept), or reverses a run, whenever that lowers
// link_loads' cost, until no move does (or `passes` rounds). The greedy walk takes the locally best
// hop; a move sees what a hop costs the ring's other flows. The ring keeps
// its first rank.
void improve(std::vector<unsigned>& ring, unsigned channel, link_loads& loads, path_cache& path, unsigned passes) {
    const std::size_t n = ring.size();
    if (n < 4 || n > 64) return;  // past 64 ranks the moves cost seconds of host time
    const unsigned first = ring[0];
    // Paths by position in `ids` (dense: the search asks for each many times).
    const std::vector<unsigned> ids = ring;
    std::map<unsigned, std::size_t> index;
    for (std::size_t i = 0; i < n; ++i) index[ids[i]] = i;
    std::vector<const std::vector<unsigned>*> table(n * n, nullptr);
    std::vector<std::size_t> at(n);  // ring as positions in ids
    for (std::size_t i = 0; i < n; ++i) at[i] = i;
    auto flow = [&](std::size_t a, std::size_t b) -> const std::vector<unsigned>& {
        const std::vector<unsigned>*& p = table[a * n + b];
        if (!p) p = &path(ids[a], ids[b], channel);
        return *p;
    };
    auto move = [&](std::size_t a, std::size_t b, double sign) { return loads.change(flow(a, b), sign); };
    // A hop with no route (an empty path) is never made: it is not free.
    auto routed = [&](std::size_t a, std::size_t b) { return !flow(a, b).empty(); };

    const std::size_t longest = std::min<std::size_t>(8, n - 3);
    for (unsigned pass = 0; pass < passes; ++pass) {
        bool moved = false;
        for (std::size_t len = 1; len <= longest; ++len)
            for (std::size_t i = 0; i < n; ++i) {
                // The run at[i .. i + len - 1], between p and q.
                const std::size_t p = at[(i + n - 1) % n], s0 = at[i], s1 = at[(i + len - 1) % n],
                                  q = at[(i + len) % n];
                if (!routed(p, q)) continue;  // the run cannot leave: p does not reach q
                const double eps = 1e-9 * std::max(1.0, loads.total());  // below this, rounding
                const double out = move(p, s0, -1) + move(s1, q, -1) + move(p, q, 1);
                double best = -eps;  // a move must lower the sum by more than rounding
                std::size_t best_k = n;
                for (std::size_t k = 0; k + len + 2 <= n; ++k) {  // between a and b, from q on to p
                    const std::size_t a = at[(i + len + k) % n], b = at[(i + len + k + 1) % n];
                    if (!routed(a, s0) || !routed(s1, b)) continue;
                    const double in = move(a, b, -1) + move(a, s0, 1) + move(s1, b, 1);
                    move(a, s0, -1);
                    move(s1, b, -1);
                    move(a, b, 1);
                    if (out + in < best) {
                        best = out + in;
                        best_k = k;
                    }
                }
                if (best_k == n) {  // it stays
                    move(p, q, -1);
                    move(p, s0, 1);
                    move(s1, q, 1);
                    continue;
                }
                const std::size_t a = at[(i + len + best_k) % n], b = at[(i + len + best_k + 1) % n];
                move(a, b, -1);
                move(a, s0, 1);
                move(s1, b, 1);
                // The ring again: from q to a, the run, then b to p.
                std::vector<std::size_t> next;
                for (std::size_t k = 0; k <= best_k; ++k) next.push_back(at[(i + len + k) % n]);
                for (std::size_t k = 0; k < len; ++k) next.push_back(at[(i + k) % n]);
                for (std::size_t k = best_k + 1; k + len < n; ++k) next.push_back(at[(i + len + k) % n]);
                at = std::move(next);
                moved = true;
            }
        // Reversals (2-opt): a run's flows then
        // go the other way, over other links (a directed link's cost is
        // its own); the run is at[i .. j], between at[i - 1] and at[j + 1].
        for (std::size_t i = 1; i + 1 < n; ++i)
            for (std::size_t j = i + 1; j + 1 < n; ++j) {
                const std::size_t p = at[i - 1], q = at[j + 1];
                bool reachable = routed(p, at[j]) && routed(at[i], q);
                for (std::size_t k = i; k < j && reachable; ++k) reachable = routed(at[k + 1], at[k]);
                if (!reachable) continue;
                auto flip = [&](double sign) {  // sign 1: to the reversed run; -1: back
                    double delta = move(p, at[i], -sign) + move(at[j], q, -sign);
                    for (std::size_t k = i; k < j; ++k) delta += move(at[k], at[k + 1], -sign);
                    delta += move(p, at[j], sign) + move(at[i], q, sign);
                    for (std::size_t k = i; k < j; ++k) delta += move(at[k + 1], at[k], sign);
                    return delta;
                };
                if (flip(1) < -1e-9 * std::max(1.0, loads.total())) {
                    std::reverse(at.begin() + std::ptrdiff_t(i), at.begin() + std::ptrdiff_t(j) + 1);
                    moved = true;
                } else flip(-1);
            }
        if (!moved) break;
    }
    const std::size_t start = std::size_t(std::find(at.begin(), at.end(), index[first]) - at.begin());
    for (std::size_t i = 0; i < n; ++i) ring[i] = ids[at[(start + i) % n]];
}

}  // namespace

std::vector<std::vector<unsigned>> search_rings(const fabric_paths& fabric, const std::vector<unsigned>& ranks,
                                                unsigned rings, const std::function<unsigned(unsigned)>& fabric_channel,
                                                bool local_search) {
    const std::size_t n = ranks.size();
    std::vector<std::vector<unsigned>> out;
    if (n == 0) return out;
    path_cache path(fabric);
    std::vector<double> load(fabric.capacity.size(), 0.0);
    // One ring from `start`, greedily; its flows' paths.
    auto lay = [&](std::size_t start, unsigned channel, std::vector<const std::vector<unsigned>*>& flows) {
        std::vector<double> mine = load;
        auto add = [&](const std::vector<unsigned>& links) {
            for (unsigned l : links) mine[l] += 1.0 / fabric.capacity[l];
            flows.push_back(&links);
        };
        std::vector<bool> visited(n, false);
        std::vector<unsigned> ring{ranks[start]};
        visited[start] = true;
        std::size_t at = start;
        while (ring.size() < n) {

            std::size_t best = n;
            double best_load = std::numeric_limits<double>::infinity();
            std::size_t best_links = 0;
            for (std::size_t step = 1; step < n; ++step) {  // the next rank in order first
                const std::size_t j = (at + step) % n;
                if (visited[j]) continue;
                const auto& links = path(ranks[at], ranks[j], channel);
                if (links.empty()) continue;
                if (ring.size() + 1 == n && path(ranks[j], ranks[start], channel).empty()) continue;  // must close
                double worst = 0;
                for (unsigned l : links) worst = std::max(worst, mine[l] + 1.0 / fabric.capacity[l]);
                // Loads compare within a part in a million (sums of reciprocals round).
                const bool better = best == n || worst < best_load * (1 - 1e-6) ||
                                    (worst <= best_load * (1 + 1e-6) && links.size() < best_links);
                if (better) {
                    best = j;
                    best_load = worst;
                    best_links = links.size();
                }
            }
            if (best == n) return std::vector<unsigned>{};  // a dead end: not a ring from this start
            add(path(ranks[at], ranks[best], channel));
            visited[best] = true;
            ring.push_back(ranks[best]);
            at = best;
        }
        const auto& closing = path(ranks[at], ranks[start], channel);
        if (closing.empty() && n > 1) return std::vector<unsigned>{};  // no way back to the start: not a ring
        add(closing);
        return ring;
    };
    // Ring k improved by moves over rings 0 .. out.size() - 1, kept unless
    // the busiest link ends busier.
    auto polish = [&](std::size_t k) {
        if (n < 4 || n > 64 || !local_search) return;  // improve()'s bounds
        link_loads loads(fabric);
        for (std::size_t r = 0; r < out.size(); ++r)
            for (std::size_t i = 0; i < n; ++i)
                loads.change(path(out[r][i], out[r][(i + 1) % n], fabric_channel(unsigned(r))), 1);
        const double before = loads.most();
        std::vector<unsigned> ring = out[k];
        improve(ring, fabric_channel(unsigned(k)), loads, path, 16);
        if (loads.most() <= before * (1 + 1e-6)) out[k] = std::move(ring);
    };
    for (unsigned k = 0; k < rings; ++k) {
        const unsigned channel = fabric_channel(k);
        // From several starts (spread over the ranks, so rings meet the
        // fabric's narrow places, a rack's edge, at different chips), the
        // ring after which the busiest link is least busy, then the one
        // whose loads are most even (sum of squares).
        const std::size_t first = (std::size_t(k) * n / std::max(1u, rings)) % n;
        const std::size_t tries = std::min<std::size_t>(n, 8);
        std::vector<unsigned> best;
        double best_max = 0, best_squares = 0;
        // The candidates: greedy rings from `tries` starts, then the reverse
        // of every ring laid before (its links' other directions).
        for (std::size_t t = 0; t < tries + out.size(); ++t) {
            std::vector<const std::vector<unsigned>*> flows;
            std::vector<unsigned> ring;
            if (t < tries) ring = lay((first + t * n / tries) % n, channel, flows);
            else {
                ring.assign(out[t - tries].rbegin(), out[t - tries].rend());
                for (std::size_t i = 0; i < n && !ring.empty(); ++i) {
                    const auto& links = path(ring[i], ring[(i + 1) % n], channel);
                    if (links.empty() && n > 1) ring.clear();  // a hop without a route: not a candidate
                    flows.push_back(&links);
                }
            }
            if (ring.empty()) continue;
            std::vector<double> after = load;
            for (const auto* links : flows)
                for (unsigned l : *links) after[l] += 1.0 / fabric.capacity[l];
            double most = 0, squares = 0;
            for (double x : after) {
                most = std::max(most, x);
                squares += x * x;
            }
            if (best.empty() || most < best_max * (1 - 1e-6) ||
                (most <= best_max * (1 + 1e-6) && squares < best_squares * (1 - 1e-9))) {
                best = std::move(ring);
                best_max = most;
                best_squares = squares;
            }
        }
        if (best.empty())
            throw std::invalid_argument("search_rings: no ring over these ranks (a rank no other rank reaches)");
        // Then moves of runs of ranks while they lower link_loads' cost,
        // kept unless the busiest link ends busier.
        out.push_back(best);
        polish(out.size() - 1);
        best = out.back();
        out.pop_back();
        for (std::size_t i = 0; i < n && n > 1; ++i)
            for (unsigned l : path(best[i], best[(i + 1) % n], channel)) load[l] += 1.0 / fabric.capacity[l];
        out.push_back(std::move(best));
    }
    // Then each ring again over all the others (the first were laid before
    // the later ones loaded the fabric), twice round.
    for (unsigned round = 0; round < 2; ++round)
        for (std::size_t k = 0; k < out.size(); ++k) polish(k);
    // Ring k starts at rank k n / rings (a rotation moves no flow): rings
    // start their steps at different ranks.
    for (std::size_t k = 0; k < out.size(); ++k) {
        const unsigned start = ranks[(k * n / std::max(1u, rings)) % n];
        std::rotate(out[k].begin(), std::find(out[k].begin(), out[k].end(), start), out[k].end());
    }
    return out;
}

std::vector<rings_by_level> search_level_rings(const fabric_paths& fabric, const std::vector<unsigned>& ranks,
                                               const std::vector<std::vector<unsigned>>& positions, unsigned rings,
                                               const std::function<unsigned(unsigned, unsigned)>& fabric_channel,
                                               bool local_search) {
    const std::size_t levels = positions.empty() ? 0 : positions.front().size();
    std::vector<rings_by_level> out(rings, rings_by_level(levels));
    for (std::size_t l = 0; l < levels; ++l) {
        // The groups: ranks alike on every level but l, each by its position on l.
        std::map<std::vector<unsigned>, std::map<unsigned, unsigned>> groups;
        for (std::size_t p = 0; p < ranks.size(); ++p) {
            std::vector<unsigned> key = positions[p];
            key.erase(key.begin() + long(l));
            groups[key][positions[p][l]] = ranks[p];
        }
        for (const auto& [key, members] : groups) {
            std::vector<unsigned> ids;
            for (const auto& [place, id] : members) ids.push_back(id);
            const auto found = search_rings(
                fabric, ids, rings, [&](unsigned k) { return fabric_channel(k, unsigned(l)); }, local_search);
            for (unsigned k = 0; k < rings; ++k) out[k][l].push_back(found[k]);
        }
    }
    return out;
}

double ring_load(const fabric_paths& fabric, const std::vector<std::vector<unsigned>>& rings,
                 const std::function<unsigned(unsigned)>& fabric_channel) {
    std::vector<double> load(fabric.capacity.size(), 0.0);
    for (std::size_t k = 0; k < rings.size(); ++k)
        for (std::size_t i = 0; i < rings[k].size(); ++i) {
            const unsigned from = rings[k][i], to = rings[k][(i + 1) % rings[k].size()];
            if (from == to) continue;
            for (unsigned l : fabric.links(from, to, fabric_channel(unsigned(k)))) load[l] += 1.0 / fabric.capacity[l];
        }
    return load.empty() ? 0.0 : *std::max_element(load.begin(), load.end());
}

}  // namespace trn3::collectives
