// A C++ API that writes NeuronCore instruction streams, in the spirit of NKI:
// tiles in sbuf/psum/hbm, matmul, activation, tensor ops, DMA, semaphores and
// sequencer loops. One `program` holds a stream per engine.
//
//   program p;
//   auto& t = p.on(isa::engine::tensor);
//   t.matmul(psum(dtype::fp32, 0, 128, 0, 512), sbuf(dtype::bf16, 0, 128, 0, 128),
//            sbuf(dtype::bf16, 0, 128, 1024, 512)).wait(sem_loaded, 2).signal(sem_done, 1);
//   t.halt();
//   auto pcs = p.load(device_memory_writer, 0x1000);
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "trn3/spec/isa.h"

namespace trn3::kernels {

using isa::access_pattern;
using isa::dtype;

// Tiles. `free` is the number of elements per partition, contiguous (step 1);
// `with_dims` replaces the walk with up to four [step, num] pairs. Values the
// encoding cannot hold (partitions over 255, free over 65535) throw
// std::invalid_argument.
access_pattern sbuf(dtype t, unsigned start_partition, unsigned partitions, std::uint64_t byte_offset, unsigned free);
access_pattern psum(dtype t, unsigned start_partition, unsigned partitions, std::uint64_t byte_offset, unsigned free);
// A 2-D region of device memory: `partitions` rows of `free` elements, rows
// `row_stride_bytes` apart.
access_pattern hbm(dtype t, std::uint64_t address, unsigned partitions, std::uint32_t row_stride_bytes, unsigned free);
access_pattern with_dims(access_pattern ap, std::initializer_list<std::pair<std::int32_t, std::uint16_t>> dims);
access_pattern with_dims(access_pattern ap, const std::vector<std::pair<std::int32_t, std::uint16_t>>& dims);
access_pattern with_base_reg(access_pattern ap, unsigned reg);

class stream {
public:
    explicit stream(isa::engine e) : engine_(e) {}

    // Each call appends one instruction; modifiers apply to the last one.
    stream& matmul(const access_pattern& dst_psum, const access_pattern& stationary, const access_pattern& moving,
                   bool accumulate = false);
    // MX: operands hold 4 K values per partition (free size 4M and 4N); the
    // E8M0 scales of K group g sit in SBUF partition g at byte offsets
    // `scales_a` + m and `scales_b` + n (docs/isa.md).
    stream& matmul_mx(const access_pattern& dst_psum, const access_pattern& stationary, const access_pattern& moving,
                      std::uint32_t scales_a, std::uint32_t scales_b, bool accumulate = false);
    // Makes the last matmul (dense or MX) structured-sparse: its stationary
    // holds only the kept values, their indices in SBUF at `meta` (docs/isa.md;
    // kernels/sparse.h compresses a matrix into that layout).
    stream& sparse(isa::sparsity s, std::uint32_t meta);
    stream& transpose(const access_pattern& dst, const access_pattern& src);
    // Vector: MX-quantise src ([8k partitions][4C]) into dst in the matmul_mx
    // layout, scales to SBUF partition g at `scales` + c.
    stream& quantize_mx(const access_pattern& dst, const access_pattern& src, std::uint32_t scales,
                        bool trn3_rule = false);
    // GpSimd: dst = (partition_coef * p + free_coef * i + offset >= 0) ? src : otherwise.
    stream& affine_select(const access_pattern& dst, const access_pattern& src, float partition_coef, float free_coef,
                          std::int32_t offset, float otherwise);
    stream& activation(const access_pattern& dst, const access_pattern& src, isa::function f, float scale = 1.0f,
                       float bias = 0.0f);
    stream& tensor_tensor(const access_pattern& dst, const access_pattern& a, const access_pattern& b, isa::alu op);
    stream& tensor_scalar(const access_pattern& dst, const access_pattern& a, isa::alu op, float scalar);
    stream& tensor_reduce(const access_pattern& dst, const access_pattern& src, isa::alu op);
    stream& tensor_copy(const access_pattern& dst, const access_pattern& src);
    stream& memset(const access_pattern& dst, float value);
    stream& iota(const access_pattern& dst, std::uint32_t base, float step, float partition_step);
    stream& dma(const access_pattern& dst, const access_pattern& src, unsigned queue = 0);
    stream& set_reg(unsigned reg, std::uint32_t value);
    stream& add_reg(unsigned reg, std::uint32_t value);
    stream& branch_lt(unsigned reg, std::uint32_t bound, std::uint32_t target);
    stream& sem_increment(unsigned sem, std::uint32_t add = 1);
    stream& halt();
    // Does nothing: with wait(), a point where the stream waits for a semaphore.
    stream& nop();

    stream& wait(unsigned sem, std::uint32_t at_least);
    stream& signal(unsigned sem, std::uint32_t add = 1);
    stream& stochastic();
    // Appends an instruction as it is (from a program container or the
    // assembler); its engine must be this stream's (std::invalid_argument).
    stream& raw(const isa::instruction& i);

    // Room for n instructions in all (a generator that knows its length
    // saves the copies of a growing stream).
    void reserve(std::size_t n) { code_.reserve(n); }
    // Index of the next instruction (a branch target).
    std::uint32_t here() const { return static_cast<std::uint32_t>(code_.size()); }
    const std::vector<isa::instruction>& code() const { return code_; }
    isa::engine engine() const { return engine_; }

private:
    isa::instruction& emit(isa::opcode op);
    isa::instruction& last(const char* modifier);
    isa::engine engine_;
    std::vector<isa::instruction> code_;
};

class program {
public:
    program();
    stream& on(isa::engine e) { return streams_[static_cast<unsigned>(e)]; }
    const stream& on(isa::engine e) const { return streams_[static_cast<unsigned>(e)]; }

    using writer = std::function<void(std::uint64_t address, const void* data, std::size_t bytes)>;
    // Writes every non-empty stream to device memory from `base` on; returns
    // each engine's start address (0 for an engine with no stream).
    std::array<std::uint64_t, isa::engine_count> load(const writer& write, std::uint64_t base) const;
    std::size_t instructions() const;

private:
    std::vector<stream> streams_;
};

}  // namespace trn3::kernels
