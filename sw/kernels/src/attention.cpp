#include "trn3/kernels/attention.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace trn3::kernels {
namespace {

// A [128][1] fp32 column in SBUF, broadcast over n elements.
access_pattern column(std::uint64_t off, unsigned n) {
    return with_dims(sbuf(dtype::fp32, 0, 128, off, 1), {{0, static_cast<std::uint16_t>(n)}});
}
// Q^T[d][i] = Q[i][d] into SBUF (partition d at q + 2d, element i every D values).
stream& load_q_transposed(stream& sync, std::uint64_t q, unsigned D, std::uint64_t at) {
    return sync.dma(sbuf(dtype::bf16, 0, D, at, 128),
                    with_dims(hbm(dtype::bf16, q, D, 2, 128), {{static_cast<std::int32_t>(D), 128}}));
}

// Up to 512 keys: one pass, P normalised before P V.
program one_block(const attention_shape& s, std::uint64_t q, std::uint64_t k, std::uint64_t v, std::uint64_t o) {
    const unsigned Sk = s.keys, D = s.head_dim, chunks = Sk / 128;
    using isa::engine;
    const dtype bf = dtype::bf16, f32 = dtype::fp32;
    // SBUF byte offsets per partition; PSUM banks 0 (scores) and 1 (O).
    const std::uint64_t qT = 0, kT = 1024, v_at = 4096, e = 8192, mx = 12288, sum = 12292, P = 16384, PT = 20480,
                        out = 24576, scores = 0, o_bank = 2048;
    auto row = [&](std::uint64_t off) { return column(off, Sk); };

    program p;
    stream& sync = p.on(engine::sync);
    stream& ten = p.on(engine::tensor);
    stream& vec = p.on(engine::vector);
    stream& sca = p.on(engine::scalar);

    // 1. loads: Q^T, K^T (strided), V.
    load_q_transposed(sync, q, D, qT).signal(0, 1);
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

// More keys: blocks of 512 with an online softmax (attention.h).
program flash(const attention_shape& s, std::uint64_t q, std::uint64_t k, std::uint64_t v, std::uint64_t o) {
    const unsigned Sk = s.keys, D = s.head_dim, blocks = (Sk + attention_block_keys - 1) / attention_block_keys;
    using isa::engine;
    const dtype bf = dtype::bf16, f32 = dtype::fp32;
    const float scale = 1.0f / std::sqrt(static_cast<float>(D));
    // Semaphores: K/V loads landed (with Q), scores done, scores read, exps
    // done, O accumulated, 1/l ready, P written, P V done.
    constexpr unsigned s_kv = 0, s_scores = 1, s_sub = 2, s_exp = 3, s_oacc = 4, s_rl = 5, s_p = 6, s_pv = 7;
    // SBUF byte offsets per partition; [2]: by block parity.
    const std::uint64_t qT = 0, kT[2] = {1024, 2048}, v_at[2] = {4096, 5120}, e = 8192, P[2] = {10240, 11264},
                        PT = 12288, o_acc = 13312, out = 13824, m = 14336, mb = 14340, d = 14344,
                        alpha[2] = {14348, 14352}, l = 14356, sum = 14360, rl = 14364;
    // PSUM: scores in banks 0 and 1, each block's P V in banks 2 and 3.
    const std::uint64_t scores[2] = {0, 2048}, o_bank[2] = {4096, 6144};
    auto keys_of = [&](unsigned b) { return std::min(attention_block_keys, Sk - b * attention_block_keys); };
    // Loads counted on s_kv once block b's K and V are in (Q first).
    auto loaded = [&](unsigned b) {
        std::uint32_t n = 1;
        for (unsigned i = 0; i <= b; ++i) n += 1 + keys_of(i) / 128;
        return n;
    };
    auto col = column;

    program p;
    stream& sync = p.on(engine::sync);
    stream& ten = p.on(engine::tensor);
    stream& vec = p.on(engine::vector);
    stream& sca = p.on(engine::scalar);

    // Sync: Q^T once; block b's K^T and V into the buffers of block b - 2,
    // once its P V is done.
    load_q_transposed(sync, q, D, qT).signal(s_kv, 1);
    for (unsigned b = 0; b < blocks; ++b) {
        const unsigned n = keys_of(b), x = b % 2;
        const std::uint64_t first = static_cast<std::uint64_t>(b) * attention_block_keys;
        sync.dma(sbuf(bf, 0, D, kT[x], n), with_dims(hbm(bf, k + first * D * 2, D, 2, n),
                                                     {{static_cast<std::int32_t>(D), static_cast<std::uint16_t>(n)}}))
            .signal(s_kv, 1);
        if (b >= 2) sync.wait(s_pv, b - 1);  // the K load waits; the V loads follow it in order
        for (unsigned c = 0; c < n / 128; ++c)
            sync.dma(sbuf(bf, 0, 128, v_at[x] + c * 256, D), hbm(bf, v + (first + c * 128) * D * 2, 128, D * 2, D))
                .signal(s_kv, 1);
    }
    sync.halt();

    // Tensor: S_{b+1} while the softmax of block b runs, then P_b^T and P_b V.
    auto score = [&](unsigned b) {
        if (b >= 2) ten.nop().wait(s_sub, b - 1);  // its bank read (block b - 2)
        ten.matmul(psum(f32, 0, 128, scores[b % 2], keys_of(b)), sbuf(bf, 0, D, qT, 128),
                   sbuf(bf, 0, D, kT[b % 2], keys_of(b)))
            .wait(s_kv, loaded(b))
            .signal(s_scores, 1);
    };
    score(0);
    for (unsigned b = 0; b < blocks; ++b) {
        if (b + 1 < blocks) score(b + 1);
        const unsigned chunks = keys_of(b) / 128, x = b % 2;
        for (unsigned c = 0; c < chunks; ++c) {
            ten.transpose(sbuf(bf, 0, 128, PT + c * 256, 128), sbuf(bf, 0, 128, P[x] + c * 256, 128));
            if (c == 0) ten.wait(s_p, b + 1);
        }
        if (b >= 2) ten.nop().wait(s_oacc, b - 1);  // its bank read (block b - 2)
        for (unsigned c = 0; c < chunks; ++c)
            ten.matmul(psum(f32, 0, 128, o_bank[x], D), sbuf(bf, 0, 128, PT + c * 256, 128),
                       sbuf(bf, 0, 128, v_at[x] + c * 256, D), c > 0);
        ten.signal(s_pv, 1);
    }
    ten.halt();

    // Scalar: alpha_b = exp(scale (m_{b-1} - m_b)) and e = exp(scale (S - m_b)).
    for (unsigned b = 0; b < blocks; ++b) {
        const unsigned n = keys_of(b);
        sca.nop().wait(s_sub, b + 1);
        if (b > 0)
            sca.activation(sbuf(f32, 0, 128, alpha[b % 2], 1), sbuf(f32, 0, 128, d, 1), isa::function::exp, scale);
        sca.activation(sbuf(f32, 0, 128, e, n), sbuf(f32, 0, 128, e, n), isa::function::exp, scale).signal(s_exp, 1);
    }
    sca.activation(sbuf(f32, 0, 128, rl, 1), sbuf(f32, 0, 128, l, 1), isa::function::reciprocal)
        .wait(s_oacc, blocks)
        .signal(s_rl, 1);
    sca.halt();

    // Vector: the softmax of block b + 1 before O's update by block b.
    auto softmax = [&](unsigned b) {
        const unsigned n = keys_of(b);
        const auto S = psum(f32, 0, 128, scores[b % 2], n);
        if (b == 0) {
            vec.tensor_reduce(sbuf(f32, 0, 128, m, 1), S, isa::alu::max).wait(s_scores, 1);
        } else {
            vec.tensor_reduce(sbuf(f32, 0, 128, mb, 1), S, isa::alu::max).wait(s_scores, b + 1);
            vec.tensor_tensor(sbuf(f32, 0, 128, mb, 1), sbuf(f32, 0, 128, mb, 1), sbuf(f32, 0, 128, m, 1),
                              isa::alu::max);
            vec.tensor_tensor(sbuf(f32, 0, 128, d, 1), sbuf(f32, 0, 128, m, 1), sbuf(f32, 0, 128, mb, 1),
                              isa::alu::subtract);
            vec.tensor_copy(sbuf(f32, 0, 128, m, 1), sbuf(f32, 0, 128, mb, 1));
        }
        vec.tensor_tensor(sbuf(f32, 0, 128, e, n), S, col(m, n), isa::alu::subtract).signal(s_sub, 1);
        if (b == 0) {
            vec.tensor_reduce(sbuf(f32, 0, 128, l, 1), sbuf(f32, 0, 128, e, n), isa::alu::add).wait(s_exp, 1);
        } else {
            vec.tensor_reduce(sbuf(f32, 0, 128, sum, 1), sbuf(f32, 0, 128, e, n), isa::alu::add).wait(s_exp, b + 1);
            vec.tensor_tensor(sbuf(f32, 0, 128, l, 1), sbuf(f32, 0, 128, l, 1), sbuf(f32, 0, 128, alpha[b % 2], 1),
                              isa::alu::multiply);
            vec.tensor_tensor(sbuf(f32, 0, 128, l, 1), sbuf(f32, 0, 128, l, 1), sbuf(f32, 0, 128, sum, 1),
                              isa::alu::add);
        }
        vec.tensor_copy(sbuf(bf, 0, 128, P[b % 2], n), sbuf(f32, 0, 128, e, n)).signal(s_p, 1);
    };
    auto accumulate = [&](unsigned b) {
        const auto ob = psum(f32, 0, 128, o_bank[b % 2], D);
        if (b == 0) {
            vec.tensor_copy(sbuf(f32, 0, 128, o_acc, D), ob).wait(s_pv, 1);
        } else {
            vec.tensor_tensor(sbuf(f32, 0, 128, o_acc, D), sbuf(f32, 0, 128, o_acc, D), col(alpha[b % 2], D),
                              isa::alu::multiply)
                .wait(s_pv, b + 1);
            vec.tensor_tensor(sbuf(f32, 0, 128, o_acc, D), sbuf(f32, 0, 128, o_acc, D), ob, isa::alu::add);
        }
        vec.signal(s_oacc, 1);
    };
    softmax(0);
    for (unsigned b = 0; b < blocks; ++b) {
        if (b + 1 < blocks) softmax(b + 1);
        accumulate(b);
    }
    vec.tensor_tensor(sbuf(f32, 0, 128, out, D), sbuf(f32, 0, 128, o_acc, D), col(rl, D), isa::alu::multiply)
        .wait(s_rl, 1);
    vec.dma(hbm(f32, o, 128, D * 4, D), sbuf(f32, 0, 128, out, D)).signal(attention_done_semaphore, 1);
    vec.nop().wait(attention_done_semaphore, 1).halt();
    return p;
}

}  // namespace

program attention(const attention_shape& s, std::uint64_t q, std::uint64_t k, std::uint64_t v, std::uint64_t o) {
    if (s.keys == 0 || s.keys % 128 || s.keys > attention_max_keys || s.head_dim == 0 || s.head_dim > 128)
        throw std::invalid_argument("attention: keys a multiple of 128 up to " + std::to_string(attention_max_keys) +
                                    "; head_dim 1 to 128");
    return s.keys <= attention_block_keys ? one_block(s, q, k, v, o) : flash(s, q, k, v, o);
}

}  // namespace trn3::kernels
