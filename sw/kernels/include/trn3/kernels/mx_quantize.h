// MX quantization on one NeuronCore: X [K][M] (bf16, K-major, as the GEMM's
// operands lie) into OCP MX codes [K][M] (e4m3fn, e5m2 or e2m1, one byte
// each) and their E8M0 scales [K/32][M], in device memory, the layout
// gemm.h reads for an MX GEMM (blocks of 32 along K).
//
// Tiles of 512 K values (128 partitions x 4 rows) by up to 512 columns:
// Sync loads a tile in the MX SBUF layout (value (k, m) at partition k/4,
// element 4m + k%4), Vector quantizes it (quantize_mx, scales to partitions
// 0..15) and stores codes and scales. Two buffers: loads, quantizing and
// stores overlap. K a multiple of 512; M a multiple of 128.
#pragma once

#include <cstdint>

#include "trn3/kernels/builder.h"

namespace trn3::kernels {

struct mx_quantize_shape {
    unsigned K, M;
    dtype codes = dtype::e4m3fn;  // e4m3fn, e5m2 or e2m1
    bool trn3_scale = false;  // Trainium3's scale rule (docs/numerics.md)
};

program mx_quantize(const mx_quantize_shape& s, std::uint64_t x, std::uint64_t codes, std::uint64_t scales);
// Counts the stores: two per tile (codes, scales), 2 x tiles at the end.
constexpr unsigned mx_quantize_done_semaphore = 2;

}  // namespace trn3::kernels
