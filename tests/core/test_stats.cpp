#include <catch2/catch.hpp>

#include "trn3/core/error.h"
#include "trn3/core/stats.h"

using namespace trn3;

namespace {
struct block : sc_core::sc_module {
    counter reads{this, "reads", "reads"};
    histogram latency_ns{this, "latency_ns", "latency"};
    explicit block(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {}
};
}  // namespace

TEST_CASE("counters are registered by hierarchical name and written as JSON") {
    block b("hbm0");
    ++b.reads;
    b.reads += 41;
    auto j = stats_registry::instance().to_json();
    CHECK(j["hbm0.reads"] == 42);
    CHECK(stats_registry::instance().find("hbm0.latency_ns") == &b.latency_ns);
}

TEST_CASE("a histogram keeps exact count, min, mean and max and bucketed percentiles") {
    block b("hbm0");
    for (int i = 1; i <= 100; ++i) b.latency_ns.sample(i);
    CHECK(b.latency_ns.count() == 100);
    CHECK(b.latency_ns.min() == 1);
    CHECK(b.latency_ns.max() == 100);
    CHECK(b.latency_ns.mean() == Approx(50.5));
    // p50 falls in [32, 64); the estimate interpolates inside that bucket.
    CHECK(b.latency_ns.percentile(50) >= 32);
    CHECK(b.latency_ns.percentile(50) < 64);
    CHECK(b.latency_ns.percentile(100) == 100);
    auto j = b.latency_ns.to_json();
    CHECK(j["count"] == 100);
}

TEST_CASE("a statistic declared twice is an error") {
    block b("hbm0");
    CHECK_THROWS_AS(counter(&b, "reads", "again"), config_error);
}
