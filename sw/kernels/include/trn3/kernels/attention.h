// One attention head on one NeuronCore: O = softmax(Q K^T / sqrt(D)) V.
//
// Q [128][D], K [Sk][D], V [Sk][D] (bf16, row-major) and O [128][D] (fp32)
// in device memory; D <= 128, Sk a multiple of 128 up to attention_max_keys.
// Up to 512 keys, one pass:
//   1. Sync DMAs Q^T and K^T (strided: d on partitions) and V in 128-row chunks.
//   2. Tensor: scores[i][j] = sum_d Q^T[d][i] K^T[d][j] into PSUM (fp32).
//   3. Vector/Scalar: row max, x - max, exp(x / sqrt(D)), row sum,
//      reciprocal, P = e / sum rounded to bf16.
//   4. Tensor: P^T by 128 x 128 transposes, then O += P^T chunk x V chunk.
//   5. Vector: O from PSUM to SBUF, DMA to device memory.
// More keys, flash-style: blocks of 512 keys (the last may be shorter) with
// an online softmax, so SBUF holds two blocks whatever Sk is. Per block b,
// with m the running row maximum, l the running row sum and O in SBUF:
//   m_b = max(m_{b-1}, rowmax S_b); alpha = exp((m_{b-1} - m_b) / sqrt(D));
//   E = exp((S_b - m_b) / sqrt(D)); l = l alpha + rowsum E;
//   O = O alpha + bf16(E) V_b;   and at the end O = O / l.
// Scores, P and the K/V buffers are double-buffered: Tensor computes
// S_{b+1} while Vector and Scalar run block b's softmax, and Sync loads
// block b + 2 once block b's P V is done. P is rounded to bf16 unnormalised
// (E <= 1), so errors stay those of the one-pass kernel.
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
constexpr unsigned attention_block_keys = 512;
constexpr unsigned attention_max_keys = 1u << 17;

}  // namespace trn3::kernels
