// The program container the runtime loads (docs/runtime.md): one program
// per NeuronCore of a logical core, each as five instruction streams.
//
//   0   "TRN3PROG"                 magic
//   8   u32 version (1)
//   12  u32 cores (1 or 2)
//   16  cores x 5 x {u32 offset, u32 instructions}   (offset from the start; 0 = no stream)
//   ... the streams: 192-byte instructions (isa.h), each stream 64-byte aligned
//
// Instructions address device memory absolutely (tensors are placed before
// the program is built); branch targets are stream indices, so the runtime
// may put the code anywhere.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trn3/kernels/builder.h"

namespace trn3::runtime {

constexpr char container_magic[8] = {'T', 'R', 'N', '3', 'P', 'R', 'O', 'G'};
constexpr std::uint32_t container_version = 1;

std::vector<std::uint8_t> pack(const std::vector<const kernels::program*>& per_core);

struct stream_ref {
    std::uint32_t offset = 0, instructions = 0;
};
struct container_view {
    std::uint32_t cores = 0;
    std::vector<std::array<stream_ref, 5>> streams;
};
// Checks the container; returns an empty string, or what is wrong.
std::string parse(const std::uint8_t* data, std::size_t bytes, container_view& out);
// Core `core`'s program back from a parsed container (std::invalid_argument
// for an instruction in the wrong engine's stream).
kernels::program unpack(const std::uint8_t* data, const container_view& view, unsigned core);

}  // namespace trn3::runtime
