// Each channel's order of the levels for the hierarchical schedule
// (level_orders.h).
#include "trn3/collectives/level_orders.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

namespace trn3::collectives {

std::vector<double> level_bandwidth(const fabric_paths& fabric, const std::vector<unsigned>& ranks,
                                    const std::vector<std::vector<unsigned>>& positions, unsigned channels) {
    const std::size_t levels = positions.empty() ? 0 : positions.front().size();
    std::vector<double> least(levels, 0.0);
    for (std::size_t p = 0; p < ranks.size(); ++p)
        for (std::size_t l = 0; l < levels; ++l) {
            std::set<unsigned> first_links;
            bool peers = false;
            for (std::size_t q = 0; q < ranks.size(); ++q) {
                bool peer = positions[q][l] != positions[p][l];
                for (std::size_t j = 0; j < levels && peer; ++j) peer = j == l || positions[q][j] == positions[p][j];
                if (!peer) continue;
                peers = true;
                for (unsigned k = 0; k < channels; ++k) {
                    const std::vector<unsigned> path = fabric.links(ranks[p], ranks[q], unsigned(l) * channels + k);
                    if (!path.empty()) first_links.insert(path.front());
                }
            }
            if (!peers) continue;  // a communicator that leaves a hole in the grid (the plan says so)
            double sum = 0;
            for (unsigned link : first_links) sum += fabric.capacity.at(link);
            if (sum <= 0)
                throw std::invalid_argument("level_bandwidth: chip " + std::to_string(ranks[p]) +
                                            " reaches no peer of level " + std::to_string(l));
            least[l] = least[l] == 0 ? sum : std::min(least[l], sum);
        }
    return least;
}

std::vector<std::vector<unsigned>> level_orders(const std::vector<unsigned>& places,
                                                const std::vector<double>& bandwidth, unsigned channels) {
    const std::size_t levels = places.size();
    if (!bandwidth.empty() && bandwidth.size() != levels)
        throw std::invalid_argument("level_orders: " + std::to_string(bandwidth.size()) + " bandwidths for " +
                                    std::to_string(levels) + " levels");
    for (std::size_t l = 0; l < levels; ++l)
        if (places[l] < 2 || (!bandwidth.empty() && !(bandwidth[l] > 0)))
            throw std::invalid_argument("level_orders: level " + std::to_string(l) +
                                        " needs two places and a bandwidth above 0");
    // The seconds an order spends on each level, per byte of the channel.
    auto cost = [&](const std::vector<unsigned>& order) {
        std::vector<double> t(levels, 0.0);
        double left = 1.0;
        for (unsigned l : order) {
            t[l] = left * (places[l] - 1) / places[l] / (bandwidth.empty() ? 1.0 : bandwidth[l]);
            left /= places[l];
        }
        return t;
    };
    std::vector<double> busy(levels, 0.0);
    std::vector<std::vector<unsigned>> out;
    for (unsigned k = 0; k < channels; ++k) {
        std::vector<unsigned> order(levels);
        for (std::size_t l = 0; l < levels; ++l) order[l] = unsigned(l);
        std::vector<unsigned> best;
        double best_most = 0, best_total = 0;
        do {
            // Wider levels first: a channel's steps run one after another, so
            // one that began on a narrow level would move most of its part
            // over the narrow links and finish last.
            bool wider_first = true;
            for (std::size_t i = 1; i < levels && !bandwidth.empty(); ++i)
                wider_first = wider_first && bandwidth[order[i]] <= bandwidth[order[i - 1]];
            if (!wider_first) continue;
            const std::vector<double> t = cost(order);
            double most = 0, total = 0;
            for (std::size_t l = 0; l < levels; ++l) {
                most = std::max(most, busy[l] + t[l]);
                total += busy[l] + t[l];
            }
            if (best.empty() || most < best_most || (most == best_most && total < best_total)) {
                best = order;
                best_most = most;
                best_total = total;
            }
        } while (std::next_permutation(order.begin(), order.end()));
        const std::vector<double> t = cost(best);
        for (std::size_t l = 0; l < levels; ++l) busy[l] += t[l];
        out.push_back(best);
    }
    return out;
}

}  // namespace trn3::collectives
