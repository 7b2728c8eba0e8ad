#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "rig.h"
#include "trn3/kernels/elementwise.h"

using namespace trn3;
using namespace trn3::kernels;

TEST_CASE("SwiGLU computes silu(G) x U over 384 rows in three tiles within fp32 rounding of fp64") {
    test::core_rig r;
    const unsigned R = 384, C = 1000;
    constexpr std::uint64_t g = 0x0, u = 0x1000'0000, y = 0x2000'0000;
    std::mt19937 rng(5);
    std::normal_distribution<float> nd(0.0f, 3.0f);
    std::vector<float> G(R * C), U(R * C);
    for (auto& x : G) x = nd(rng);
    for (auto& x : U) x = nd(rng);
    r.write(g, G.data(), G.size() * 4);
    r.write(u, U.data(), U.size() * 4);
    r.run(swiglu({R, C}, g, u, y));
    for (unsigned e = 0; e < isa::engine_count; ++e)
        REQUIRE(r.core.status(static_cast<isa::engine>(e)) != neuroncore::engine_status::error);
    double worst = 0;
    for (std::size_t i = 0; i < G.size(); ++i) {
        const double want = G[i] / (1.0 + std::exp(-static_cast<double>(G[i]))) * U[i];
        float got;
        std::memcpy(&got, r.device.data() + y + 4 * i, 4);
        worst = std::max(worst, std::fabs(got - want) / (std::fabs(want) + 1e-3));
    }
    INFO("worst relative error " << worst);
    CHECK(worst < 1e-5);  // two fp32 roundings and libm's silu
}

TEST_CASE("SwiGLU's tiles overlap: three tiles take less than three times one") {
    test::core_rig r;  // one core, two programs one after the other
    const double t1 = r.run_from_reset(swiglu({128, 4096}, 0, 0x1000'0000, 0x2000'0000)).to_seconds();
    const double t3 = r.run_from_reset(swiglu({384, 4096}, 0, 0x1000'0000, 0x2000'0000)).to_seconds();
    INFO("one tile " << t1 * 1e6 << " us, three " << t3 * 1e6 << " us");
    CHECK(t3 < 3 * t1 * 0.9);
}

TEST_CASE("SwiGLU reuses a tile buffer only once the tile two back is stored: the wait is on that tile's first load") {
    const program p = swiglu({512, 1024}, 0, 0x1000'0000, 0x2000'0000);
    const auto& sync = p.on(isa::engine::sync).code();
    REQUIRE(sync.size() == 2 * 4 + 1);  // G and U per tile, then halt
    for (unsigned t = 0; t < 4; ++t) {
        INFO("tile " << t);
        const isa::instruction& g = sync[2 * t];
        const isa::instruction& u = sync[2 * t + 1];
        if (t >= 2) {
            CHECK(unsigned(g.wait_sem) == rows_done_semaphore);
            CHECK(g.wait_value == t - 1);
        } else {
            CHECK(g.wait_sem == isa::no_semaphore);
        }
        CHECK(u.wait_sem == isa::no_semaphore);  // follows its G load in order
    }
}

TEST_CASE("a SwiGLU shape the kernel cannot tile is refused") {
    CHECK_THROWS_AS(swiglu({100, 64}, 0, 0, 0), std::invalid_argument);
    CHECK_THROWS_AS(swiglu({128, 5000}, 0, 0, 0), std::invalid_argument);
}
