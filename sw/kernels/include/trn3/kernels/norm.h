// Row-wise kernels on one NeuronCore: softmax and RMSNorm over the rows of an
// fp32 matrix X[R][C] in device memory (R a multiple of 128, C <= 4096),
// 128 rows per tile (one per partition).
//
//   softmax:  Y[r][c] = exp(X[r][c] - max_c X[r]) / sum_c exp(X[r][c] - max_c X[r])
//   rmsnorm:  Y[r][c] = X[r][c] * rsqrt(mean_c X[r][c]^2 + eps) * gamma[c]
//
// Each step is one engine instruction on the whole tile; per-row values
// ([p][1] tiles) are broadcast along the row by a step-0 access pattern, and
// gamma is broadcast across partitions by a DMA with partition stride 0.
// Semaphores: s0 loaded, s1 computed, s2 stored (counts of tiles).
#pragma once

#include <cstdint>

#include "trn3/kernels/builder.h"

namespace trn3::kernels {

struct rows_shape {
    unsigned rows, cols;
};

program softmax(const rows_shape& s, std::uint64_t x, std::uint64_t y);
program rmsnorm(const rows_shape& s, std::uint64_t x, std::uint64_t gamma, std::uint64_t y, float eps);

constexpr unsigned rows_done_semaphore = 2;
inline unsigned row_tiles(const rows_shape& s) { return s.rows / 128; }

}  // namespace trn3::kernels
