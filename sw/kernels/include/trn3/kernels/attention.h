// One attention head on one NeuronCore: O = softmax(Q K^T / sqrt(D)) V.
//
// Q [128][D], K [Sk][D], V [Sk][D] (bf16, row-major) and O [128][D] (fp32)
// in device memory; D <= 128, Sk = 128, 256, 384 or 512.
//   1. Sync DMAs Q^T and K^T (strided: d on partitions) and V in 128-row chunks.
//   2. Tensor: scores[i][j] = sum_d Q^T[d][i] K^T[d][j] into PSUM (fp32).
//   3. Vector/Scalar: row max, x - max, exp(x / sqrt(D)), row sum,
//      reciprocal, P = e / sum rounded to bf16.
//   4. Tensor: P^T by 128 x 128 transposes, then O += P^T chunk x V chunk.
//   5. Vector: O from PSUM to SBUF, DMA to device memory.
#pragma once

#include <cstdint>

#include "trn3/kernels/builder.h"

namespace trn3::kernels {

struct attention_shape {
    unsigned keys;  // Sk
    unsigned head_dim;  // D
};

program attention(const attention_shape& s, std::uint64_t q, std::uint64_t k, std::uint64_t v, std::uint64_t o);
constexpr unsigned attention_done_semaphore = 8;

}  // namespace trn3::kernels
