// The rings a collectives program's channels run on (collectives.rings):
// searched over the fabric's links and routes, or by stride. Searched once
// per run, then kept: every host asks for the same.
#pragma once

#include <algorithm>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "communicator.h"
#include "trn3/collectives/rings.h"

namespace trn3::apps {

class channel_rings {
public:
    // mode: topology, greedy (the search without its local search) or stride.
    channel_rings(std::shared_ptr<const collectives::fabric_paths> fabric, std::vector<unsigned> members,
                  member_levels levels, unsigned channels, std::string mode)
        : fabric_(std::move(fabric)), members_(std::move(members)), levels_(std::move(levels)), channels_(channels),
          mode_(std::move(mode)) {}

    // Channel k's ring over every member, for the ring algorithm: searched
    // (collectives::search_rings; its flows count on the queue's fabric
    // channel, 1 + k), or over ranks 0..n-1 with stride 1, then n - 1 (the
    // reverse), then 3, n - 3, 5... whichever are coprime with n.
    std::vector<unsigned> ring(unsigned channel) const {
        if (searching()) {
            if (searched_.empty())
                searched_ = collectives::search_rings(
                    *fabric_, members_, channels_, [](unsigned k) { return 1 + k; }, mode_ == "topology");
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

    // Channel k's rings of each level, for the hierarchical algorithm:
    // searched (collectives::search_level_rings; level l's data on fabric
    // channel 2 L k + l, L levels), or empty (by position) for stride.
    collectives::rings_by_level level_rings(unsigned channel) const {
        if (!searching()) return {};
        if (searched_levels_.empty()) {
            const auto levels = static_cast<unsigned>(levels_.names.size());
            searched_levels_ = collectives::search_level_rings(
                *fabric_, members_, levels_.position, channels_,
                [levels](unsigned k, unsigned l) { return k * 2 * levels + l; }, mode_ == "topology");
        }
        return searched_levels_[channel];
    }

    // The ring algorithm's rings so far, by channel (fabric ids): empty until searched.
    const std::vector<std::vector<unsigned>>& searched() const { return searched_; }

private:
    bool searching() const { return mode_ != "stride" && fabric_; }

    std::shared_ptr<const collectives::fabric_paths> fabric_;
    std::vector<unsigned> members_;
    member_levels levels_;
    unsigned channels_;
    std::string mode_;
    mutable std::vector<std::vector<unsigned>> searched_;
    mutable std::vector<collectives::rings_by_level> searched_levels_;
};

}  // namespace trn3::apps
