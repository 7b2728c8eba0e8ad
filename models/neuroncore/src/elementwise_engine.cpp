#include "elementwise_engine.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace trn3::neuroncore {
namespace {
using sc_core::sc_time;
using namespace isa;

float apply_alu(alu a, float x, float y) {
    switch (a) {
    case alu::add: return x + y;
    case alu::subtract: return x - y;
    case alu::multiply: return x * y;
    case alu::max: return std::max(x, y);
    case alu::min: return std::min(x, y);
    case alu::bypass: return x;
    }
    return x;
}

// The activation functions, in fp32 (the Neuron docs: engines compute in
// fp32). Each is the plain mathematical function evaluated with the host's
// float libm; gelu is the tanh approximation. Documented in docs/isa.md.
float apply_function(function f, float x) {
    switch (f) {
    case function::copy: return x;
    case function::exp: return std::exp(x);
    case function::relu: return x > 0 ? x : 0.0f;
    case function::gelu: return 0.5f * x * (1.0f + std::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
    case function::silu: return x / (1.0f + std::exp(-x));
    case function::tanh: return std::tanh(x);
    case function::sigmoid: return 1.0f / (1.0f + std::exp(-x));
    case function::square: return x * x;
    case function::rsqrt: return 1.0f / std::sqrt(x);
    case function::reciprocal: return 1.0f / x;
    }
    return x;
}
}  // namespace

elementwise_engine::elementwise_engine(const neuroncore& core, sbuf_psum& memory, engine id,
                                       const param<std::uint64_t>& narrow_rate, const param<std::uint64_t>& wide_rate)
    : core_(core), memory_(memory), reaches_psum_(id != engine::gpsimd), narrow_rate_(narrow_rate),
      wide_rate_(wide_rate) {}

sc_time elementwise_engine::streaming_time(std::uint64_t elements, std::uint64_t rate) const {
    return cycles_at(core_.instruction_overhead_cycles + (elements + rate - 1) / rate, core_.engine_clock);
}

tile elementwise_engine::reachable_tile(const engine_state& es, const access_pattern& ap, const char* verb) const {
    const tile t = memory_.check_tile(es.regs, ap, true);
    if (t.space == space::hbm) throw fault{err_unreachable, std::string("engines ") + verb + " SBUF or PSUM, not hbm"};
    if (!reaches_psum_ && t.space == space::psum) throw fault{err_unreachable, "GpSimd cannot reach PSUM"};
    return t;
}

sc_time elementwise_engine::elementwise(const engine_state& es, const instruction& ins) {
    const opcode op = static_cast<opcode>(ins.op);
    const bool stochastic = ins.flags & flag_stochastic;
    const tile dst = reachable_tile(es, ins.dst, "write");
    const unsigned parts = ins.dst.partitions;
    const std::uint64_t n = free_elements(ins.dst);
    auto source = [&](const access_pattern& ap) {
        tile s = reachable_tile(es, ap, "read");
        if (ap.partitions != parts) throw fault{err_shape, "source and destination partitions differ"};
        if (op != opcode::tensor_reduce && free_elements(ap) != n)
            throw fault{err_shape, "source and destination sizes differ"};
        return s;
    };
    // Timing: elements over the engine's rate, plus a fixed overhead.
    const sc_time busy = streaming_time(n * parts, rate_for(dst.type));
    if (core_.timing_only.get()) {  // the data mode's checks, in its order; no elements
        switch (op) {
        case opcode::memset:
        case opcode::iota: break;
        case opcode::tensor_tensor:
            source(ins.src0);
            source(ins.src1);
            break;
        case opcode::tensor_copy:
        case opcode::tensor_scalar:
        case opcode::activation:
        case opcode::affine_select:
        case opcode::tensor_reduce: source(ins.src0); break;
        default: throw fault{err_illegal, "not an elementwise opcode"};
        }
        return busy;
    }
    const std::vector<std::int64_t> dst_off = sbuf_psum::offsets(ins.dst);
    switch (op) {
    case opcode::memset:
        for (unsigned p = 0; p < parts; ++p)
            for (std::uint64_t i = 0; i < n; ++i) memory_.store(dst, p, dst_off[i], ins.scalar, stochastic);
        break;
    case opcode::iota:
        for (unsigned p = 0; p < parts; ++p)
            for (std::uint64_t i = 0; i < n; ++i)
                memory_.store(dst, p, dst_off[i],
                              static_cast<float>(ins.imm) + static_cast<float>(p) * ins.scalar2 +
                                  static_cast<float>(i) * ins.scalar,
                              stochastic);
        break;
    case opcode::tensor_copy:
    case opcode::tensor_scalar:
    case opcode::activation: {
        const tile s = source(ins.src0);
        const std::vector<std::int64_t> so = sbuf_psum::offsets(ins.src0);
        const alu a = static_cast<alu>(ins.alu);
        const function f = static_cast<function>(ins.function);
        for (unsigned p = 0; p < parts; ++p)
            for (std::uint64_t i = 0; i < n; ++i) {
                float x = memory_.load(s, p, so[i]);
                if (op == opcode::tensor_scalar) x = apply_alu(a, x, ins.scalar);
                if (op == opcode::activation) x = apply_function(f, x * ins.scalar + ins.scalar2);
                memory_.store(dst, p, dst_off[i], x, stochastic);
            }
        break;
    }
    case opcode::tensor_tensor: {
        const tile s0 = source(ins.src0), s1 = source(ins.src1);
        const std::vector<std::int64_t> o0 = sbuf_psum::offsets(ins.src0), o1 = sbuf_psum::offsets(ins.src1);
        const alu a = static_cast<alu>(ins.alu);
        for (unsigned p = 0; p < parts; ++p)
            for (std::uint64_t i = 0; i < n; ++i)
                memory_.store(dst, p, dst_off[i], apply_alu(a, memory_.load(s0, p, o0[i]), memory_.load(s1, p, o1[i])),
                              stochastic);
        break;
    }
    case opcode::affine_select: {
        // A mask from an affine function of (partition, element index):
        // keep src where scalar2*p + scalar*i + imm >= 0, else the value whose
        // bits are in target (for example -inf for a causal mask).
        const tile s = source(ins.src0);
        const std::vector<std::int64_t> so = sbuf_psum::offsets(ins.src0);
        float otherwise;
        std::memcpy(&otherwise, &ins.target, 4);
        const double base = static_cast<double>(static_cast<std::int32_t>(ins.imm));
        for (unsigned p = 0; p < parts; ++p)
            for (std::uint64_t i = 0; i < n; ++i) {
                const double v = static_cast<double>(ins.scalar2) * (ins.dst.start_partition + p) +
                                 static_cast<double>(ins.scalar) * static_cast<double>(i) + base;
                memory_.store(dst, p, dst_off[i], v >= 0 ? memory_.load(s, p, so[i]) : otherwise, stochastic);
            }
        break;
    }
    case opcode::tensor_reduce: {
        // dst[p][0] = src[p][0] <alu> src[p][1] <alu> ... in walk order, in fp32.
        const tile s = source(ins.src0);
        const alu a = static_cast<alu>(ins.alu);
        for (unsigned p = 0; p < parts; ++p) {
            bool first = true;
            float acc = 0;
            sbuf_psum::walk(ins.src0, [&](std::uint64_t, std::int64_t off) {
                const float x = memory_.load(s, p, off);
                acc = first ? x : apply_alu(a, acc, x);
                first = false;
            });
            memory_.store(dst, p, dst_off[0], acc, stochastic);
        }
        break;
    }
    default: throw fault{err_illegal, "not an elementwise opcode"};
    }
    return busy;
}

}  // namespace trn3::neuroncore
