// Standalone testbench of the systolic array: random tiles (bf16-valued,
// with a sprinkling of specials) through the verilated array, every result
// checked against the C++ chain acc = fma(w, x, acc) in row order (rule 18),
// with back-to-back matmuls whose weights load into the other bank while
// the current one streams (needs N >= R + C - 1); prints cycle counts and
// simulation speed.
//
//   rtl_array_tb [matmuls] [columns] [seed]
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "Vtrn3_systolic_array.h"
#include "fp32_bits.h"
#include "verilated.h"

#ifndef TRN3_RTL_ROWS
#error "TRN3_RTL_ROWS and TRN3_RTL_COLS give the verilated array's size"
#endif

using namespace trn3::rtl_tb;

namespace {
constexpr unsigned R = TRN3_RTL_ROWS, C = TRN3_RTL_COLS;

struct bench {
    VerilatedContext context;
    Vtrn3_systolic_array top{&context};
    std::uint64_t cycles = 0;

    void tick() {
        top.clk = 0;
        top.eval();
        top.clk = 1;
        top.eval();
        ++cycles;
    }
};
}  // namespace

int main(int argc, char** argv) {
    const unsigned matmuls = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 8;
    const unsigned N = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 512;
    const unsigned seed = argc > 3 ? static_cast<unsigned>(std::atoi(argv[3])) : 1;
    bench b;
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    auto pick = [&]() -> std::uint32_t {
        const unsigned r = rng() % 64;
        if (r == 0) return 0x7f800000u;  // +inf
        if (r == 1) return 0x80000000u;  // -0
        if (r == 2) return 0x00010000u;  // bf16 subnormal
        return bits(nd(rng)) & 0xffff0000u;
    };
    auto& top = b.top;
    top.rst_n = 0;
    top.out_ready = 1;
    top.in_valid = 0;
    top.w_valid = 0;
    top.in_mx = 0;
    b.tick();
    top.rst_n = 1;

    std::vector<std::vector<std::uint32_t>> W(matmuls, std::vector<std::uint32_t>(R * C)),
        X(matmuls, std::vector<std::uint32_t>(static_cast<std::size_t>(R) * N));
    for (unsigned i = 0; i < matmuls; ++i) {
        for (auto& w : W[i]) w = pick();
        for (auto& x : X[i]) x = pick();
    }
    // Weights of matmul 0 first (R cycles), then each matmul streams N columns
    // while the next one's weights load into the other bank.
    auto load_row = [&](unsigned i, unsigned r) {
        top.w_valid = 1;
        top.w_bank = i % 2;
        top.w_row = static_cast<std::uint8_t>(r);
        for (unsigned c = 0; c < C; ++c) top.w_data[c] = W[i][r * C + c];
    };
    const auto wall0 = std::chrono::steady_clock::now();
    for (unsigned r = 0; r < R; ++r) {
        load_row(0, r);
        b.tick();
    }
    top.w_valid = 0;
    const std::uint64_t stream_start = b.cycles;
    std::vector<std::uint32_t> out;
    out.reserve(static_cast<std::size_t>(matmuls) * N * C);
    const std::uint64_t total_columns = static_cast<std::uint64_t>(matmuls) * N;
    std::uint64_t fed = 0;
    std::uint64_t first_out_cycle = 0;
    while (out.size() < total_columns * C) {
        if (fed < total_columns) {
            const unsigned i = static_cast<unsigned>(fed / N), n = static_cast<unsigned>(fed % N);
            top.in_valid = 1;
            top.in_bank = i % 2;
            top.in_select = 0;
            top.in_rows = R;
            for (unsigned r = 0; r < R; ++r) top.in_data[r] = X[i][static_cast<std::size_t>(r) * N + n];
            for (unsigned c = 0; c < C; ++c) top.in_psum[c] = 0;
            // Row r of the other bank is free once the previous matmul's last
            // column has passed row r: load it at column C - 1 + r.
            if (i + 1 < matmuls && n >= C - 1 && n < C - 1 + R) load_row(i + 1, n - (C - 1));
            else top.w_valid = 0;
            ++fed;
        } else {
            top.in_valid = 0;
            top.w_valid = 0;
        }
        b.tick();
        if (top.out_valid) {
            if (out.empty()) first_out_cycle = b.cycles - stream_start;
            for (unsigned c = 0; c < C; ++c) out.push_back(top.out_data[c]);
        }
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    unsigned long mismatches = 0;
    for (unsigned i = 0; i < matmuls; ++i)
        for (unsigned n = 0; n < N; ++n)
            for (unsigned c = 0; c < C; ++c) {
                float acc = 0.0f;
                for (unsigned r = 0; r < R; ++r)
                    acc = std::fma(value(W[i][r * C + c]), value(X[i][static_cast<std::size_t>(r) * N + n]), acc);
                const std::uint32_t want = std::isnan(acc) ? 0x7fc00000u : bits(acc);
                const std::uint32_t got = out[(static_cast<std::size_t>(i) * N + n) * C + c];
                if (got != want && ++mismatches <= 10)
                    std::printf("mismatch: matmul %u column %u output %u: %08x, want %08x\n", i, n, c, got, want);
            }
    const std::uint64_t stream_cycles = b.cycles - stream_start;
    std::printf("array %ux%u: %u matmuls of %u columns, %lu mismatches\n", R, C, matmuls, N, mismatches);
    std::printf("cycles: weights %u, first result after %lu, stream %lu (formula R + C - 2 + matmuls x N = %lu)\n", R,
                static_cast<unsigned long>(first_out_cycle), static_cast<unsigned long>(stream_cycles),
                static_cast<unsigned long>(R + C - 2 + total_columns));
    std::printf("speed: %.0f cycles/s, %.2f M PE-cycles/s (wall %.3f s)\n", b.cycles / wall,
                b.cycles * double(R) * C / wall / 1e6, wall);
    return mismatches ? 1 : 0;
}
