// The Vector engine: the elementwise instructions, plus the two only it
// runs: quantize_mx (MX codes and block scales for the Tensor engine's MX
// matmul) and a transpose of up to vector_transpose_size squared elements.
#pragma once

#include "elementwise_engine.h"

namespace trn3::neuroncore {

class vector_engine : public elementwise_engine {
public:
    vector_engine(const neuroncore& core, sbuf_psum& memory);

    sc_core::sc_time quantize_mx(const engine_state& es, const isa::instruction& ins);
    sc_core::sc_time transpose(const engine_state& es, const isa::instruction& ins);
};

}  // namespace trn3::neuroncore
