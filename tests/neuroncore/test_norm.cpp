#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "rig.h"
#include "trn3/kernels/norm.h"

using namespace trn3;
using namespace trn3::kernels;

namespace {
std::vector<float> random_rows(unsigned rows, unsigned cols, std::uint32_t seed, float scale) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd(0.0f, scale);
    std::vector<float> v(static_cast<std::size_t>(rows) * cols);
    for (auto& x : v) x = nd(rng);
    return v;
}
}  // namespace

TEST_CASE("softmax over 256 rows of 1000 is bit-exact to its fp32 definition and within 1e-5 of fp64") {
    test::core_rig r;
    const rows_shape s{256, 1000};
    auto x = random_rows(s.rows, s.cols, 3, 4.0f);
    r.write(0x0, x.data(), x.size() * 4);
    r.run(softmax(s, 0x0, 0x1000'0000));
    CHECK(r.core.semaphore(rows_done_semaphore) == row_tiles(s));
    std::vector<float> y(x.size());
    std::memcpy(y.data(), r.device.data() + 0x1000'0000, y.size() * 4);
    double worst = 0;
    for (unsigned row = 0; row < s.rows; ++row) {
        const float* xr = &x[static_cast<std::size_t>(row) * s.cols];
        // fp32, in the kernel's order: max, x - max, exp, sum left to right, 1/sum, multiply.
        float mx = xr[0];
        for (unsigned c = 1; c < s.cols; ++c) mx = std::max(mx, xr[c]);
        std::vector<float> e(s.cols);
        float sum = 0;
        for (unsigned c = 0; c < s.cols; ++c) {
            e[c] = std::exp(xr[c] - mx);
            sum = c == 0 ? e[c] : sum + e[c];
        }
        const float inv = 1.0f / sum;
        double mx64 = xr[0], sum64 = 0;
        for (unsigned c = 0; c < s.cols; ++c) mx64 = std::max(mx64, static_cast<double>(xr[c]));
        for (unsigned c = 0; c < s.cols; ++c) sum64 += std::exp(static_cast<double>(xr[c]) - mx64);
        for (unsigned c = 0; c < s.cols; ++c) {
            const float got = y[static_cast<std::size_t>(row) * s.cols + c];
            REQUIRE(got == e[c] * inv);
            const double ref = std::exp(static_cast<double>(xr[c]) - mx64) / sum64;
            worst = std::max(worst, std::fabs(got - ref) / ref);
        }
    }
    INFO("worst relative error against fp64: " << worst);
    CHECK(worst < 1e-5);
}

TEST_CASE("RMSNorm over 128 rows of 512 is bit-exact to its fp32 definition and within 1e-5 of fp64") {
    test::core_rig r;
    const rows_shape s{128, 512};
    const float eps = 1e-6f;
    auto x = random_rows(s.rows, s.cols, 5, 2.0f);
    auto gamma = random_rows(1, s.cols, 6, 1.0f);
    r.write(0x0, x.data(), x.size() * 4);
    r.write(0x100000, gamma.data(), gamma.size() * 4);
    r.run(rmsnorm(s, 0x0, 0x100000, 0x1000'0000, eps));
    std::vector<float> y(x.size());
    std::memcpy(y.data(), r.device.data() + 0x1000'0000, y.size() * 4);
    double worst = 0;
    for (unsigned row = 0; row < s.rows; ++row) {
        const float* xr = &x[static_cast<std::size_t>(row) * s.cols];
        float ss = 0;
        double ss64 = 0;
        for (unsigned c = 0; c < s.cols; ++c) {
            ss = c == 0 ? xr[c] * xr[c] : ss + xr[c] * xr[c];
            ss64 += static_cast<double>(xr[c]) * xr[c];
        }
        const float rs = 1.0f / std::sqrt(ss * (1.0f / static_cast<float>(s.cols)) + eps);
        const double rs64 = 1.0 / std::sqrt(ss64 / s.cols + eps);
        for (unsigned c = 0; c < s.cols; ++c) {
            const float got = y[static_cast<std::size_t>(row) * s.cols + c];
            REQUIRE(got == (xr[c] * rs) * gamma[c]);
            const double ref = xr[c] * rs64 * gamma[c];
            worst = std::max(worst, std::fabs(got - ref) / (std::fabs(ref) + 1e-30));
        }
    }
    INFO("worst relative error against fp64: " << worst);
    CHECK(worst < 1e-5);
}
