// Statistics: counters and histograms registered by hierarchical name and
// written as one JSON document at the end of a run.
//
//   counter   reads{this, "reads", "read transactions served"};
//   histogram latency_ns{this, "latency_ns", "read latency in ns"};
//   ++reads; latency_ns.sample(t.to_seconds() * 1e9);
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>
#include <systemc>

namespace trn3 {

class stat_base {
public:
    stat_base(const stat_base&) = delete;
    stat_base& operator=(const stat_base&) = delete;
    virtual ~stat_base();
    const std::string& name() const { return name_; }
    const std::string& description() const { return description_; }
    virtual nlohmann::json to_json() const = 0;

protected:
    stat_base(const sc_core::sc_object* owner, const std::string& leaf, std::string description);

private:
    std::string name_;
    std::string description_;
};

class counter final : public stat_base {
public:
    counter(const sc_core::sc_object* owner, const std::string& leaf, std::string description)
        : stat_base(owner, leaf, std::move(description)) {}
    counter& operator++() {
        ++value_;
        return *this;
    }
    counter& operator+=(std::uint64_t n) {
        value_ += n;
        return *this;
    }
    std::uint64_t value() const { return value_; }
    nlohmann::json to_json() const override { return value_; }

private:
    std::uint64_t value_ = 0;
};

// Log2-bucketed histogram of non-negative samples: bucket i holds samples in
// [2^(i-1), 2^i) (bucket 0 holds [0, 1)). Percentiles are interpolated
// inside a bucket, so they are estimates good to the bucket's width; min,
// max, count and mean are exact.
class histogram final : public stat_base {
public:
    static constexpr int buckets = 64;
    histogram(const sc_core::sc_object* owner, const std::string& leaf, std::string description)
        : stat_base(owner, leaf, std::move(description)) {}
    void sample(double v);
    std::uint64_t count() const { return count_; }
    double min() const { return count_ ? min_ : 0.0; }
    double max() const { return count_ ? max_ : 0.0; }
    double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0.0; }
    double percentile(double p) const;  // p in [0, 100]
    nlohmann::json to_json() const override;

private:
    std::array<std::uint64_t, buckets> bins_{};
    std::uint64_t count_ = 0;
    double sum_ = 0, min_ = 0, max_ = 0;
};

class stats_registry {
public:
    static stats_registry& instance();
    const stat_base* find(const std::string& name) const;
    // {"name": value, ...} sorted by name.
    nlohmann::json to_json() const;
    void write_json(const std::string& path) const;

private:
    friend class stat_base;
    std::map<std::string, stat_base*> stats_;
};

// Transactions served in the whole simulation (b_transport calls that reached
// a target plus DMI accesses that initiators report); the end-of-run summary
// divides it by wall time.
std::uint64_t& transaction_count();

}  // namespace trn3
