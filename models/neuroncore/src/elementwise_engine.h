// An engine that streams elements: Vector, Scalar or GpSimd (docs/isa.md).
// Each computes in fp32 and rounds to the destination type; they differ in
// rate (elements per cycle at engine_clock, narrow for 1- and 2-byte
// types), in the instructions they take (the sequencer's dispatch checks
// those) and in reach: GpSimd cannot reach PSUM. Vector adds quantize_mx and
// its small transpose (vector_engine.h).
#pragma once

#include <cstdint>

#include "engine_common.h"
#include "sbuf_psum.h"

namespace trn3::neuroncore {

class elementwise_engine {
public:
    // `narrow_rate` and `wide_rate`: elements per cycle with 1- or 2-byte
    // destination types and with the others (the same param for GpSimd).
    elementwise_engine(const neuroncore& core, sbuf_psum& memory, isa::engine id,
                       const param<std::uint64_t>& narrow_rate, const param<std::uint64_t>& wide_rate);

    // memset, tensor_copy, iota, tensor_tensor, tensor_scalar, tensor_reduce,
    // activation, affine_select: returns the engine time, or throws fault.
    sc_core::sc_time elementwise(const engine_state& es, const isa::instruction& ins);

protected:
    // The engine time of `elements` at `rate` per cycle, plus the fixed
    // overhead of an instruction (dispatch and pipeline).
    sc_core::sc_time streaming_time(std::uint64_t elements, std::uint64_t rate) const;
    std::uint64_t rate_for(isa::dtype destination) const { return narrow(destination) ? narrow_rate_ : wide_rate_; }

    const neuroncore& core_;
    sbuf_psum& memory_;

private:
    // A tile an instruction of this engine may touch: SBUF or PSUM (not
    // hbm), and not PSUM from GpSimd.
    tile reachable_tile(const engine_state& es, const isa::access_pattern& ap, const char* reads_or_writes) const;

    const bool reaches_psum_;
    const param<std::uint64_t>& narrow_rate_;
    const param<std::uint64_t>& wide_rate_;
};

}  // namespace trn3::neuroncore
