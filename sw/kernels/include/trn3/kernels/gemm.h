// Tiled GEMM on one NeuronCore: C[M][N] (fp32) = A^T B with A[K][M] and
// B[K][N] in device memory (row-major, bf16 or fp8), as nc_matmul computes
// stationary^T x moving.
//
// Tiles: K by 128 (partitions), M by 128 (stationary free / PSUM
// partitions), N by 512 (one 2 KiB PSUM bank of fp32). For each output tile
// the K tiles accumulate in PSUM; the Vector engine copies the finished bank
// to SBUF and DMAs it out. Loads are double-buffered in SBUF and PSUM banks
// alternate, so DMA, Tensor and Vector overlap; they synchronise only through
// semaphores:
//   s0, s1  SBUF buffer 0/1 loaded (two DMAs per use)
//   s2      matmuls done        s3  output tiles copied out of PSUM
//   s4      output tiles written to device memory
#pragma once

#include <cstdint>

#include "trn3/kernels/builder.h"

namespace trn3::kernels {

struct gemm_shape {
    unsigned M, N, K;        // multiples of 128, 512, 128
    dtype operands = dtype::bf16;
};

struct gemm_addresses {
    std::uint64_t a, b, c;
};

// Throws std::invalid_argument for a shape it cannot tile.
program gemm(const gemm_shape& shape, const gemm_addresses& at);

// Semaphore that counts finished output tiles, and how many there are.
constexpr unsigned gemm_done_semaphore = 4;
inline unsigned gemm_tiles(const gemm_shape& s) { return (s.M / 128) * (s.N / 512); }

} // namespace trn3::kernels
