// The rings a collectives program's channels run on (collectives.rings):
// searched over the fabric's links and routes, or by stride. Searched once
// per run, then kept: every host asks for the same.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "communicator.h"
#include "trn3/collectives/grid_rings.h"
#include "trn3/collectives/level_orders.h"
#include "trn3/collectives/rings.h"

namespace trn3::apps {

class channel_rings {
public:
    // mode: topology, greedy (the search without its local search), grid
    // (collectives::grid_rings) or stride.
    // balanced_orders: the hierarchical channels' level orders by
    // collectives::level_orders over the fabric's level bandwidths (else
    // every channel innermost first).
    channel_rings(std::shared_ptr<const collectives::fabric_paths> fabric, std::vector<unsigned> members,
                  member_levels levels, unsigned channels, std::string mode, bool balanced_orders = false)
        : fabric_(std::move(fabric)), members_(std::move(members)), levels_(std::move(levels)), channels_(channels),
          mode_(std::move(mode)), balanced_orders_(balanced_orders) {}

    // Channel k's ring over every member, for the ring algorithm: searched
    // (collectives::search_rings; its flows count on the queue's fabric
    // channel, 1 + k), or over ranks 0..n-1 with stride 1, then n - 1 (the
    // reverse), then 3, n - 3, 5... whichever are coprime with n.
    std::vector<unsigned> ring(unsigned channel) const {
        if (searching()) {
            if (searched_.empty() && mode_ == "grid") {
                grid_ = collectives::grid_rings(*fabric_, members_, levels_.position, channels_,
                                                [](unsigned k) { return 1 + k; });
                searched_ = std::move(grid_->rings);
                grid_->rings.clear();
            } else if (searched_.empty()) {
                searched_ = collectives::search_rings(
                    *fabric_, members_, channels_, [](unsigned k) { return 1 + k; }, mode_ == "topology");
            }
            return searched_[channel];
        }
        const auto n = static_cast<unsigned>(members_.size());
        std::vector<unsigned> strides;
        for (unsigned s = 1; s < n && strides.size() <= channel; s += 2)
            for (unsigned t : {s, n - s})
                if (std::gcd(t, n) == 1 && std::find(strides.begin(), strides.end(), t) == strides.end())
                    strides.push_back(t);
        const unsigned stride = strides.empty() ? 1 : strides[channel % strides.size()];
        std::vector<unsigned> ring;
        for (unsigned i = 0; i < n; ++i) ring.push_back(members_[(std::uint64_t(i) * stride) % n]);
        return ring;
    }

    // Channel k's order of the levels, for the hierarchical algorithm.
    std::vector<unsigned> level_order(unsigned channel) const {
        if (orders_.empty() && balanced_orders_) {
            orders_ = collectives::level_orders(levels_.places, level_bandwidth(), channels_);
        } else if (orders_.empty()) {
            std::vector<unsigned> innermost(levels_.places.size());
            std::iota(innermost.begin(), innermost.end(), 0u);
            orders_.assign(channels_, innermost);
        }
        return orders_[channel];
    }
    // Each level's bandwidth on the channels (collectives::level_bandwidth;
    // bytes/s), computed when first asked; empty: none known, or a level no
    // member has a peer on (the grid has holes, which the plan refuses).
    const std::vector<double>& level_bandwidth() const {
        if (!bandwidth_known_ && fabric_) {
            bandwidth_ = collectives::level_bandwidth(*fabric_, members_, levels_.position, channels_);
            if (std::find(bandwidth_.begin(), bandwidth_.end(), 0.0) != bandwidth_.end()) bandwidth_.clear();
        }
        bandwidth_known_ = true;
        return bandwidth_;
    }

    // Channel k's rings of each level when `in_use` channels run, for the
    // hierarchical algorithm: searched (collectives::search_level_rings; the
    // data of channel k on level l on fabric channel l x in_use + k, its
    // counter), or empty (by position) for stride.
    collectives::rings_by_level level_rings(unsigned channel, unsigned in_use) const {
        if (!searching()) return {};
        std::vector<collectives::rings_by_level>& found = searched_levels_[in_use];
        if (found.empty()) {
            found = collectives::search_level_rings(
                *fabric_, members_, levels_.position, in_use,
                [in_use](unsigned k, unsigned l) { return l * in_use + k; }, mode_ != "greedy");
        }
        return found[channel];
    }

    // The ring algorithm's rings so far, by channel (fabric ids): empty until searched.
    const std::vector<std::vector<unsigned>>& searched() const { return searched_; }
    // For the header, once the grid rings are laid: "8 patterns x 8 channels,
    // hops out of a chip at most tray 4, rack 4, racks 1 (balanced)"; empty otherwise.
    std::string grid_text() const {
        if (!grid_) return "";
        std::string quotas;
        for (std::size_t l = 0; l < grid_->quota.size() && l < levels_.names.size(); ++l)
            quotas += (l ? ", " : "") + levels_.names[l] + " " + std::to_string(grid_->quota[l]);
        return std::to_string(grid_->patterns) + " patterns x " + std::to_string(grid_->copies) +
               " channels, hops out of a chip at most " + quotas +
               (grid_->excess == 0 ? " (balanced)" : " (" + std::to_string(grid_->excess) + " over)");
    }

private:
    bool searching() const { return mode_ != "stride" && fabric_; }

    std::shared_ptr<const collectives::fabric_paths> fabric_;
    std::vector<unsigned> members_;
    member_levels levels_;
    unsigned channels_;
    std::string mode_;
    bool balanced_orders_;
    mutable std::vector<std::vector<unsigned>> orders_;
    mutable std::vector<double> bandwidth_;
    mutable bool bandwidth_known_ = false;
    mutable std::vector<std::vector<unsigned>> searched_;
    mutable std::optional<collectives::grid_rings_result> grid_;  // without its rings (searched_ has them)
    mutable std::map<unsigned, std::vector<collectives::rings_by_level>> searched_levels_;  // by channels in use
};

}  // namespace trn3::apps
