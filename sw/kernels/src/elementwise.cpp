#include "trn3/kernels/elementwise.h"

#include <stdexcept>

namespace trn3::kernels {

program swiglu(const rows_shape& s, std::uint64_t g, std::uint64_t u, std::uint64_t y) {
    if (s.rows == 0 || s.rows % 128 || s.cols == 0 || s.cols > 4096)
        throw std::invalid_argument("rows must be a multiple of 128 and cols 1 to 4096");
    using isa::engine;
    constexpr dtype f32 = dtype::fp32;
    const unsigned C = s.cols, T = row_tiles(s);
    const std::uint32_t row = C * 4;
    // Per-partition byte offsets: buffer b's G at b x 32 KiB, U 16 KiB after it.
    const auto g_at = [](unsigned t) { return std::uint64_t(t % 2) * 32768; };
    const auto u_at = [](unsigned t) { return std::uint64_t(t % 2) * 32768 + 16384; };
    program p;
    stream& sync = p.on(engine::sync);
    stream& act = p.on(engine::scalar);
    stream& vec = p.on(engine::vector);
    for (unsigned t = 0; t < T; ++t) {
        const std::uint64_t rows = std::uint64_t(t) * 128 * row;
        // Buffer t % 2 is free once tile t - 2 is stored: G's load waits (a
        // wait modifies the last instruction emitted), U's follows it.
        sync.dma(sbuf(f32, 0, 128, g_at(t), C), hbm(f32, g + rows, 128, row, C)).signal(0, 1);
        if (t >= 2) sync.wait(rows_done_semaphore, t - 1);
        sync.dma(sbuf(f32, 0, 128, u_at(t), C), hbm(f32, u + rows, 128, row, C)).signal(0, 1);
        act.activation(sbuf(f32, 0, 128, g_at(t), C), sbuf(f32, 0, 128, g_at(t), C), isa::function::silu)
            .wait(0, 2 * (t + 1))
            .signal(4, 1);
        vec.tensor_tensor(sbuf(f32, 0, 128, u_at(t), C), sbuf(f32, 0, 128, g_at(t), C), sbuf(f32, 0, 128, u_at(t), C),
                          isa::alu::multiply)
            .wait(4, t + 1);
        vec.dma(hbm(f32, y + rows, 128, row, C), sbuf(f32, 0, 128, u_at(t), C)).signal(rows_done_semaphore, 1);
    }
    sync.halt();
    act.halt();
    vec.nop().wait(rows_done_semaphore, T).halt();
    return p;
}

}  // namespace trn3::kernels
