#include "trn3/kernels/mx_quantize.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace trn3::kernels {

program mx_quantize(const mx_quantize_shape& s, std::uint64_t x, std::uint64_t codes, std::uint64_t scales) {
    if (s.K == 0 || s.K % 512 || s.M == 0 || s.M % 128 || s.M > (1u << 24))
        throw std::invalid_argument("mx_quantize: K a multiple of 512 and M a multiple of 128 (up to 2^24)");
    if (s.codes != dtype::e4m3fn && s.codes != dtype::e5m2 && s.codes != dtype::e2m1)
        throw std::invalid_argument("mx_quantize: codes are e4m3fn, e5m2 or e2m1");
    using isa::engine;
    constexpr unsigned max_cols = 512;
    constexpr unsigned s_loaded = 0, s_quantized = 1, s_stored = mx_quantize_done_semaphore;
    const unsigned KT = s.K / 512, C = std::min(s.M, max_cols), MT = (s.M + C - 1) / C, T = KT * MT;
    // SBUF bytes per partition, by tile parity: bf16 input 8 x C, codes 4 x C, scales C (partitions 0..15).
    const auto in_at = [&](unsigned t) { return std::uint64_t(t % 2) * 8 * max_cols; };
    const auto out_at = [&](unsigned t) { return 16 * max_cols + std::uint64_t(t % 2) * 4 * max_cols; };
    const auto scales_at = [&](unsigned t) { return 24 * max_cols + std::uint64_t(t % 2) * max_cols; };
    const std::int32_t M = static_cast<std::int32_t>(s.M);

    program p;
    stream& sync = p.on(engine::sync);
    stream& vec = p.on(engine::vector);
    for (unsigned t = 0; t < T; ++t) {
        const unsigned kt = t / MT, mt = t % MT, cols = std::min(C, s.M - mt * C);
        const std::uint64_t first = std::uint64_t(kt) * 512 * s.M + std::uint64_t(mt) * C;  // element (512 kt, C mt)
        // Partition p takes rows 4p..4p+3: element 4c + j = row 4p + j, column c.
        const auto layout = [&](access_pattern ap) {
            return with_dims(ap, {{1, static_cast<std::uint16_t>(cols)}, {M, 4}});
        };
        // The input buffer is free once tile t - 2 is quantized.
        sync.dma(sbuf(dtype::bf16, 0, 128, in_at(t), 4 * cols),
                 layout(hbm(dtype::bf16, x + first * 2, 128, 8 * s.M, 1)))
            .signal(s_loaded, 1);
        if (t >= 2) sync.wait(s_quantized, t - 1);
        // The output buffers are free once tile t - 2's two stores are done.
        if (t >= 2) vec.nop().wait(s_stored, 2 * (t - 1));
        vec.quantize_mx(sbuf(s.codes, 0, 128, out_at(t), 4 * cols), sbuf(dtype::bf16, 0, 128, in_at(t), 4 * cols),
                        static_cast<std::uint32_t>(scales_at(t)), s.trn3_scale)
            .wait(s_loaded, t + 1)
            .signal(s_quantized, 1);
        vec.dma(layout(hbm(s.codes, codes + first, 128, 4 * s.M, 1)), sbuf(s.codes, 0, 128, out_at(t), 4 * cols), 1)
            .signal(s_stored, 1);
        const std::uint64_t scale_row = std::uint64_t(kt) * 16 * s.M + std::uint64_t(mt) * C;
        vec.dma(hbm(dtype::e4m3fn, scales + scale_row, 16, s.M, cols), sbuf(dtype::e4m3fn, 0, 16, scales_at(t), cols),
                1)
            .signal(s_stored, 1);
    }
    sync.halt();
    vec.nop().wait(s_stored, 2 * T).halt();
    return p;
}

}  // namespace trn3::kernels
