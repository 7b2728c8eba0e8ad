// The Tensor engine: matmuls (dense, MX, structured-sparse) and transposes
// through its 128 x 128 systolic array, which computes on the back end the
// tensor_array chooses. Timing: one moving column per cycle at tensor_clock
// (fp32 operands: tensor_fp32_cycles_per_column), plus the array fill unless
// the engine streams on back to back (docs/isa.md "Timing", docs/rtl.md).
#pragma once

#include <cstdint>
#include <vector>

#include "engine_common.h"
#include "sbuf_psum.h"
#include "tensor_array.h"
#include "trn3/core/stats.h"

namespace trn3::neuroncore {

class tensor_engine {
public:
    tensor_engine(const neuroncore& core, sbuf_psum& memory, tensor_array& array);

    // Each returns the instruction's engine time, or throws fault.
    sc_core::sc_time matmul(const engine_state& es, const isa::instruction& ins);
    sc_core::sc_time transpose(const engine_state& es, const isa::instruction& ins);

private:
    // A matmul's geometry: P partitions, V stationary values and D dense K
    // values per partition per column, Kc = V P kept and K = D P dense K
    // values, M x N outputs; k_of[m Kc + c]: the dense K of kept value c (sparse).
    struct matmul_shape {
        unsigned V = 1, D = 1, P = 0, Kc = 0, K = 0, M = 0, N = 0;
        std::vector<std::uint16_t> k_of;
    };
    std::vector<std::uint16_t> sparse_indices(const isa::instruction& ins, const matmul_shape& s, unsigned group);
    sc_core::sc_time matmul_mx(const engine_state& es, const isa::instruction& ins, const matmul_shape& s,
                               const tile& dst, const tile& a, const tile& b);
    void write_psum(const isa::instruction& ins, const tile& dst, const std::vector<float>& acc, unsigned M, unsigned N,
                    const std::vector<std::int64_t>& dof);
    // Tensor engine time of an array pass streaming for `cycles`: plus the
    // fill unless back to back, plus the wait for the weights when the
    // previous pass was too short to hide their load.
    sc_core::sc_time tensor_time(const engine_state& es, std::uint64_t cycles);
    std::uint64_t tensor_fill() const;

    const neuroncore& core_;
    sbuf_psum& memory_;
    tensor_array& array_;
    std::uint64_t last_pass_cycles_ = 0;  // streaming cycles of the last array pass
    counter matmul_flops_;
};

}  // namespace trn3::neuroncore
