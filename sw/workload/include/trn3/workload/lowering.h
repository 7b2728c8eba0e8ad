// A workload kernel (graph.h kernel_spec) lowered onto a chip's NeuronCores:
// the programs the cores run (the kernel library of sw/kernels), as
// launches. A launch starts up to `cores` programs at once, one per core,
// and is repeated `repeat` times (blocks of the same shape one after
// another); the kernel's time on the chip is the sum of its launches'.
//
//   gemm         tiles padded to the kernel's (M 128, N 512, K 128; MX K 512);
//                the output tiles split over the cores along N (or M when it
//                has more tiles); a K too deep for two B panels in SBUF runs in
//                equal parts one after another (each accumulating its share);
//                batch: repeats
//   attention    blocks of one head, 128 queries and all its keys (the
//                attention kernel: flash-style past 512 keys), spread over the
//                cores: batch x ceil(m/128) x ceil(k/128) blocks (and x the
//                parts of a key count past attention_max_keys)
//   mx_quantize  the MX quantize kernel, K = n padded to 512, the m rows split
//                over the cores 128 at a time (Trainium3's scale rule)
//   softmax, rmsnorm, elementwise (SwiGLU)
//                rows split over the cores (128 at a time), columns in parts of
//                at most 4096
// Operands lie in an arena of device memory from `arena`, `arena_stride`
// bytes per core (the programs are timed: their addresses only need to be
// memory).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trn3/kernels/builder.h"
#include "trn3/workload/graph.h"

namespace trn3::workload {

struct launch {
    std::vector<kernels::program> cores;  // core c runs cores[c]
    std::uint64_t repeat = 1;
};

struct lowered_kernel {
    std::vector<launch> launches;
    std::string text;  // what runs, for reports ("gemm 1024x512x7168 bf16 on 8 cores, K in 1 part")
    // The programs' identity: kernels whose lowerings share it run the same
    // programs (shapes that pad to the same tiles) and take the same time.
    std::string key;
};

// Throws config_error (naming the kernel) for a shape the library cannot run.
lowered_kernel lower(const kernel_spec& k, unsigned cores, std::uint64_t arena, std::uint64_t arena_stride);

}  // namespace trn3::workload
