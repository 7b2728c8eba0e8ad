#include "vector_engine.h"

#include <vector>

#include "trn3/numerics/mx.h"

namespace trn3::neuroncore {

using sc_core::sc_time;
using namespace isa;

vector_engine::vector_engine(const neuroncore& core, sbuf_psum& memory)
    : elementwise_engine(core, memory, engine::vector, core.vector_elements_per_cycle_narrow,
                         core.vector_elements_per_cycle_wide) {}

sc_time vector_engine::quantize_mx(const engine_state& es, const instruction& ins) {
    // src0 [Kp partitions][4C] (fp32/bf16/fp16) -> dst [Kp][4C] MX codes, in
    // the layout matmul_mx reads: 4 K values per partition per column, blocks
    // of 32 K values (8 partitions) per column; the block's E8M0 scale goes to
    // SBUF partition g at byte imm + c. OCP scale rule, or Trainium3's
    // (one power of two larger) with flag_mx_trn3_scale.
    const tile dst = memory_.check_tile(es.regs, ins.dst, true);
    const tile s = memory_.check_tile(es.regs, ins.src0, true);
    if (dst.space != space::sbuf || s.space == space::hbm) throw fault{err_unreachable, "quantize_mx writes SBUF"};
    if (dst.type != dtype::e4m3fn && dst.type != dtype::e5m2 && dst.type != dtype::e2m1)
        throw fault{err_dtype, "quantize_mx writes e4m3fn, e5m2 or e2m1"};
    const unsigned Kp = ins.src0.partitions;
    const std::uint64_t F = free_elements(ins.src0);
    if (Kp % 8 || ins.src0.start_partition || ins.dst.start_partition || ins.dst.partitions != Kp ||
        free_elements(ins.dst) != F || F % 4)
        throw fault{err_shape, "quantize_mx: 8k partitions from 0, free size 4 x columns, dst the same shape"};
    const unsigned C = static_cast<unsigned>(F / 4), G = Kp / 8;
    if (ins.imm + C > core_.sbuf_partition_size.get().bytes) throw fault{err_out_of_bounds, "MX scales outside SBUF"};
    const sc_time busy = streaming_time(static_cast<std::uint64_t>(Kp) * F, core_.vector_elements_per_cycle_wide);
    if (core_.timing_only.get()) return busy;
    const std::vector<std::int64_t> so = sbuf_psum::offsets(ins.src0), dof = sbuf_psum::offsets(ins.dst);
    const auto rule = ins.flags & flag_mx_trn3_scale ? numerics::mx_scale_rule::trn3 : numerics::mx_scale_rule::ocp;
    for (unsigned c = 0; c < C; ++c)
        for (unsigned g = 0; g < G; ++g) {
            float block[numerics::mx_block_size];
            for (unsigned i = 0; i < 32; ++i) block[i] = memory_.load(s, 8 * g + i / 4, so[4 * c + i % 4]);
            const numerics::mx_block b = numerics::quantize_mx(block, format_of(dst.type), rule);
            for (unsigned i = 0; i < 32; ++i) *memory_.element(dst, 8 * g + i / 4, dof[4 * c + i % 4]) = b.elements[i];
            memory_.sbuf(g)[ins.imm + c] = b.scale;
        }
    return busy;
}

sc_time vector_engine::transpose(const engine_state& es, const instruction& ins) {
    // dst[j][i] = src[i][j] for a partitions x free tile, element by element.
    const sbuf_psum::transpose_tiles t =
        memory_.read_for_transpose(es.regs, ins, static_cast<unsigned>(core_.vector_transpose_size.get()));
    const unsigned P = t.P, F = t.F;
    for (unsigned i = 0; i < P && !core_.timing_only.get(); ++i)
        for (unsigned j = 0; j < F; ++j)
            memory_.store(t.dst, j, t.dst_offsets[i], t.values[static_cast<std::size_t>(i) * F + j], false);
    return streaming_time(static_cast<std::uint64_t>(P) * F, rate_for(t.dst.type));
}

}  // namespace trn3::neuroncore
