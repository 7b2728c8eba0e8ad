// Tiled GEMM on one NeuronCore: C[M][N] (fp32) = A^T B with A[K][M] and
// B[K][N] in device memory (row-major, bf16 or fp8; or MX codes with E8M0
// scales), as nc_matmul computes stationary^T x moving.
//
// Tiles: K by 128 (partitions; MX: by 512, four K values per partition), M
// by 128 (stationary free / PSUM partitions), N by 512 (one 2 KiB PSUM bank
// of fp32). The loop runs over B panels (K x 512): a panel stays resident in
// SBUF while every M tile of A streams through it, and the next panel loads
// meanwhile (two panel buffers), so each B element crosses DMA once and A
// tiles, 4x smaller, carry the per-step traffic. For each output tile the K
// tiles accumulate in PSUM; the Vector engine copies the finished bank to
// SBUF and DMAs it out. A tiles are double-buffered and PSUM banks
// alternate, so DMA, Tensor and Vector overlap; they synchronise only
// through semaphores, each counting the DMAs of one queue (in order):
//   s0, s1   A tile in buffer 0/1 loaded     s10, s11  its MX scales
//   s5       B panel tiles loaded            s6        their MX scales
//   s2       matmuls done                    s3        output banks copied out
//   s4       output tiles written to device memory
#pragma once

#include <cstdint>

#include "trn3/kernels/builder.h"

namespace trn3::kernels {

struct gemm_shape {
    unsigned M, N, K;  // multiples of 128, 512, 128 (MX: K a multiple of 512)
    dtype operands = dtype::bf16;
    bool mx = false;  // MXFP8/MXFP4: operands are MX codes with E8M0 scales
    bool resident_a = true;  // keep all of A in SBUF when it fits; false: stream A tiles always
};

// MX operands in device memory: codes row-major like the others (A[K][M],
// B[K][N], one byte each) and E8M0 scales row-major per 32-row group
// (scales_a[K/32][M], scales_b[K/32][N]).
struct gemm_addresses {
    std::uint64_t a, b, c;
    std::uint64_t scales_a = 0, scales_b = 0;
};

// Throws std::invalid_argument for a shape it cannot tile.
program gemm(const gemm_shape& shape, const gemm_addresses& at);

// SBUF bytes per partition the kernel may use (the default SBUF): two B
// panels must fit, which bounds K (bf16: 15,872; fp8 and MX: more).
constexpr std::uint64_t gemm_sbuf_bytes = 256 * 1024;

// Semaphore that counts finished output tiles, and how many there are.
constexpr unsigned gemm_done_semaphore = 4;
inline unsigned gemm_tiles(const gemm_shape& s) { return (s.M / 128) * (s.N / 512); }

}  // namespace trn3::kernels
