// An element-wise kernel on one NeuronCore, the shape of a gated MLP's
// activation (SwiGLU): Y[r][c] = silu(G[r][c]) x U[r][c] over fp32 matrices
// G, U and Y [R][C] in device memory (R a multiple of 128, C <= 4096), 128
// rows per tile. Sync loads G and U (s0 counts both), Scalar applies silu (s4),
// Vector multiplies and stores (s2 counts stored tiles); two tile buffers,
// so loads, the two engines and stores overlap.
#pragma once

#include <cstdint>

#include "trn3/kernels/norm.h"

namespace trn3::kernels {

program swiglu(const rows_shape& s, std::uint64_t g, std::uint64_t u, std::uint64_t y);

}  // namespace trn3::kernels
