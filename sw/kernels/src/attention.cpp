#include "trn3/kernels/attention.h"

#include <cmath>
#include <stdexcept>

namespace trn3::kernels {

program attention(const attention_shape& s, std::uint64_t q, std::uint64_t k, std::uint64_t v, std::uint64_t o) {
    const unsigned Sk = s.keys, D = s.head_dim, chunks = Sk / 128;
    if (Sk == 0 || Sk % 128 || Sk > 512 || D == 0 || D > 128)
        throw std::invalid_argument("attention: keys 128, 256, 384 or 512; head_dim 1 to 128");
    using isa::engine;
    const dtype bf = dtype::bf16, f32 = dtype::fp32;
    // SBUF byte offsets per partition; PSUM banks 0 (scores) and 1 (O).
    const std::uint64_t qT = 0, kT = 1024, v_at = 4096, e = 8192, mx = 12288, sum = 12292, P = 16384, PT = 20480,
                        out = 24576, scores = 0, o_bank = 2048;
    auto row = [&](std::uint64_t off) {
        return with_dims(sbuf(f32, 0, 128, off, 1), {{0, static_cast<std::uint16_t>(Sk)}});
    };

    program p;
    stream& sync = p.on(engine::sync);
    stream& ten = p.on(engine::tensor);
    stream& vec = p.on(engine::vector);
    stream& sca = p.on(engine::scalar);

    // 1. loads: Q^T[d][i] = Q[i][d] (partition d at q + 2d, element i every D values).
    sync.dma(sbuf(bf, 0, D, qT, 128), with_dims(hbm(bf, q, D, 2, 128), {{static_cast<std::int32_t>(D), 128}}))
        .signal(0, 1);
    sync.dma(sbuf(bf, 0, D, kT, Sk),
             with_dims(hbm(bf, k, D, 2, Sk), {{static_cast<std::int32_t>(D), static_cast<std::uint16_t>(Sk)}}))
        .signal(0, 1);
    for (unsigned c = 0; c < chunks; ++c)
        sync.dma(sbuf(bf, 0, 128, v_at + c * 256, D),
                 hbm(bf, v + static_cast<std::uint64_t>(c) * 128 * D * 2, 128, D * 2, D))
            .signal(0, 1);
    sync.halt();
    // 2. scores
    ten.matmul(psum(f32, 0, 128, scores, Sk), sbuf(bf, 0, D, qT, 128), sbuf(bf, 0, D, kT, Sk))
        .wait(0, 2 + chunks)
        .signal(1, 1);
    // 3. softmax over each row, with the 1/sqrt(D) scale folded into exp.
    vec.tensor_reduce(sbuf(f32, 0, 128, mx, 1), psum(f32, 0, 128, scores, Sk), isa::alu::max).wait(1, 1);
    vec.tensor_tensor(sbuf(f32, 0, 128, e, Sk), psum(f32, 0, 128, scores, Sk), row(mx), isa::alu::subtract)
        .signal(2, 1);
    sca.activation(sbuf(f32, 0, 128, e, Sk), sbuf(f32, 0, 128, e, Sk), isa::function::exp,
                   1.0f / std::sqrt(static_cast<float>(D)))
        .wait(2, 1)
        .signal(3, 1);
    vec.tensor_reduce(sbuf(f32, 0, 128, sum, 1), sbuf(f32, 0, 128, e, Sk), isa::alu::add).wait(3, 1).signal(4, 1);
    sca.activation(sbuf(f32, 0, 128, sum, 1), sbuf(f32, 0, 128, sum, 1), isa::function::reciprocal)
        .wait(4, 1)
        .signal(5, 1);
    sca.halt();
    vec.tensor_tensor(sbuf(bf, 0, 128, P, Sk), sbuf(f32, 0, 128, e, Sk), row(sum), isa::alu::multiply)
        .wait(5, 1)
        .signal(6, 1);
    // 4. P^T chunk by chunk, then O = sum over chunks of P^T_c x V_c.
    for (unsigned c = 0; c < chunks; ++c) {
        ten.transpose(sbuf(bf, 0, 128, PT + c * 256, 128), sbuf(bf, 0, 128, P + c * 256, 128));
        if (c == 0) ten.wait(6, 1);
    }
    for (unsigned c = 0; c < chunks; ++c)
        ten.matmul(psum(f32, 0, 128, o_bank, D), sbuf(bf, 0, 128, PT + c * 256, 128),
                   sbuf(bf, 0, 128, v_at + c * 256, D), c > 0);
    ten.signal(7, 1).halt();
    // 5. out
    vec.tensor_copy(sbuf(f32, 0, 128, out, D), psum(f32, 0, 128, o_bank, D)).wait(7, 1);
    vec.dma(hbm(f32, o, 128, D * 4, D), sbuf(f32, 0, 128, out, D)).signal(attention_done_semaphore, 1);
    vec.nop().wait(attention_done_semaphore, 1).halt();
    return p;
}

}  // namespace trn3::kernels
