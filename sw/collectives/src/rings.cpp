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

}  // namespace

std::vector<std::vector<unsigned>> search_rings(const fabric_paths& fabric, const std::vector<unsigned>& ranks,
                                                unsigned rings,
                                                const std::function<unsigned(unsigned)>& fabric_channel) {
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
            if (best == n) throw std::invalid_argument("search_rings: a rank no other rank reaches");
            add(path(ranks[at], ranks[best], channel));
            visited[best] = true;
            ring.push_back(ranks[best]);
            at = best;
        }
        add(path(ranks[at], ranks[start], channel));  // closing the ring
        return ring;
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
        std::vector<const std::vector<unsigned>*> best_flows;
        double best_max = 0, best_squares = 0;
        // The candidates: greedy rings from `tries` starts, then the reverse
        // of every ring laid before (its links' other directions).
        for (std::size_t t = 0; t < tries + out.size(); ++t) {
            std::vector<const std::vector<unsigned>*> flows;
            std::vector<unsigned> ring;
            if (t < tries) ring = lay((first + t * n / tries) % n, channel, flows);
            else {
                ring.assign(out[t - tries].rbegin(), out[t - tries].rend());
                for (std::size_t i = 0; i < n; ++i) {
                    const auto& links = path(ring[i], ring[(i + 1) % n], channel);
                    if (links.empty() && n > 1)
                        throw std::invalid_argument("search_rings: a rank no other rank reaches");
                    flows.push_back(&links);
                }
            }
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
                best_flows = std::move(flows);
                best_max = most;
                best_squares = squares;
            }
        }
        for (const auto* links : best_flows)
            for (unsigned l : *links) load[l] += 1.0 / fabric.capacity[l];
        out.push_back(std::move(best));
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
