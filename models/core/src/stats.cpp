#include "trn3/core/stats.h"

#include "trn3/core/user_file.h"

#include <cmath>
#include <fstream>

#include "trn3/core/error.h"

namespace trn3 {

stat_base::stat_base(const sc_core::sc_object* owner, const std::string& leaf, std::string description)
    : name_(owner ? std::string(owner->name()) + "." + leaf : leaf), description_(std::move(description)) {
    auto [it, inserted] = stats_registry::instance().stats_.emplace(name_, this);
    if (!inserted) throw config_error("statistic " + name_ + " is declared twice");
}

stat_base::~stat_base() {
    auto& m = stats_registry::instance().stats_;
    auto it = m.find(name_);
    if (it != m.end() && it->second == this) m.erase(it);
}

void histogram::sample(double v) {
    if (v < 0) v = 0;
    int bin = v < 1.0 ? 0 : std::min(buckets - 1, static_cast<int>(std::floor(std::log2(v))) + 1);
    ++bins_[static_cast<std::size_t>(bin)];
    if (count_ == 0 || v < min_) min_ = v;
    if (count_ == 0 || v > max_) max_ = v;
    ++count_;
    sum_ += v;
}

double histogram::percentile(double p) const {
    if (count_ == 0) return 0.0;
    double target = p / 100.0 * static_cast<double>(count_);
    double seen = 0;
    for (int i = 0; i < buckets; ++i) {
        double n = static_cast<double>(bins_[static_cast<std::size_t>(i)]);
        if (n == 0) continue;
        if (seen + n >= target) {
            double lo = i == 0 ? 0.0 : std::ldexp(1.0, i - 1);
            double hi = std::ldexp(1.0, i);
            lo = std::max(lo, min_);
            hi = std::min(hi, max_);
            return lo + (hi - lo) * ((target - seen) / n);
        }
        seen += n;
    }
    return max_;
}

nlohmann::json histogram::to_json() const {
    return {{"count", count_},       {"min", min()},          {"mean", mean()},       {"max", max()},
            {"p50", percentile(50)}, {"p90", percentile(90)}, {"p99", percentile(99)}};
}

stats_registry& stats_registry::instance() {
    static stats_registry registry;
    return registry;
}

const stat_base* stats_registry::find(const std::string& name) const {
    auto it = stats_.find(name);
    return it == stats_.end() ? nullptr : it->second;
}

nlohmann::json stats_registry::to_json() const {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [name, s] : stats_) j[name] = s->to_json();
    j["sim.transactions"] = transaction_count();
    return j;
}

void stats_registry::write_json(const std::string& path) const {
    write_user_file(path, "stats file", to_json().dump(2) + "\n");
}

std::uint64_t& transaction_count() {
    static std::uint64_t n = 0;
    return n;
}

}  // namespace trn3
