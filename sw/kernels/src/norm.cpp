#include "trn3/kernels/norm.h"

#include <stdexcept>

namespace trn3::kernels {
namespace {
using isa::engine;
constexpr dtype f32 = dtype::fp32;

void check(const rows_shape& s) {
    if (s.rows == 0 || s.rows % 128 || s.cols == 0 || s.cols > 4096)
        throw std::invalid_argument("rows must be a multiple of 128 and cols 1 to 4096");
}

// Loads row tile t of X into SBUF (signalling s0) once tile t-1 is stored.
void load_rows(stream& sync, const rows_shape& s, unsigned t, std::uint64_t x, std::uint64_t at) {
    const std::uint64_t row0 = x + static_cast<std::uint64_t>(t) * 128 * s.cols * 4;
    sync.dma(sbuf(f32, 0, 128, at, s.cols), hbm(f32, row0, 128, s.cols * 4, s.cols)).signal(0, 1);
    if (t > 0) sync.wait(rows_done_semaphore, t);
}

// Stores row tile t of Y from SBUF, counting it on rows_done_semaphore.
void store_rows(stream& vec, const rows_shape& s, unsigned t, std::uint64_t y, std::uint64_t at) {
    vec.dma(hbm(f32, y + static_cast<std::uint64_t>(t) * 128 * s.cols * 4, 128, s.cols * 4, s.cols),
            sbuf(f32, 0, 128, at, s.cols))
        .signal(rows_done_semaphore, 1);
}

// The end of every stream: Vector waits for the last store.
void finish(stream& sync, stream& act, stream& vec, unsigned tiles) {
    sync.halt();
    act.halt();
    vec.nop().wait(rows_done_semaphore, tiles).halt();
}

// [p][1] per-row value broadcast along `cols`: step 0.
access_pattern broadcast(std::uint64_t offset, unsigned cols) {
    return with_dims(sbuf(f32, 0, 128, offset, 1), {{0, static_cast<std::uint16_t>(cols)}});
}
}  // namespace

program softmax(const rows_shape& s, std::uint64_t x, std::uint64_t y) {
    check(s);
    const unsigned C = s.cols, T = row_tiles(s);
    const std::uint64_t xin = 0, tmp = 16384, stat = 32768, stat2 = 32772;  // per-partition byte offsets
    program p;
    stream& sync = p.on(engine::sync);
    stream& vec = p.on(engine::vector);
    stream& act = p.on(engine::scalar);
    for (unsigned t = 0; t < T; ++t) {
        load_rows(sync, s, t, x, xin);  // one tile in flight
        // max, x - max, exp, sum, 1/sum, scale
        vec.tensor_reduce(sbuf(f32, 0, 128, stat, 1), sbuf(f32, 0, 128, xin, C), isa::alu::max).wait(0, t + 1);
        vec.tensor_tensor(sbuf(f32, 0, 128, tmp, C), sbuf(f32, 0, 128, xin, C), broadcast(stat, C), isa::alu::subtract)
            .signal(3, 1);
        act.activation(sbuf(f32, 0, 128, tmp, C), sbuf(f32, 0, 128, tmp, C), isa::function::exp)
            .wait(3, t + 1)
            .signal(4, 1);
        vec.tensor_reduce(sbuf(f32, 0, 128, stat2, 1), sbuf(f32, 0, 128, tmp, C), isa::alu::add)
            .wait(4, t + 1)
            .signal(5, 1);
        act.activation(sbuf(f32, 0, 128, stat2, 1), sbuf(f32, 0, 128, stat2, 1), isa::function::reciprocal)
            .wait(5, t + 1)
            .signal(6, 1);
        vec.tensor_tensor(sbuf(f32, 0, 128, xin, C), sbuf(f32, 0, 128, tmp, C), broadcast(stat2, C), isa::alu::multiply)
            .wait(6, t + 1)
            .signal(1, 1);
        store_rows(vec, s, t, y, xin);
    }
    finish(sync, act, vec, T);
    return p;
}

program rmsnorm(const rows_shape& s, std::uint64_t x, std::uint64_t gamma, std::uint64_t y, float eps) {
    check(s);
    const unsigned C = s.cols, T = row_tiles(s);
    const std::uint64_t xin = 0, sq = 16384, g = 32768, stat = 49152;
    program p;
    stream& sync = p.on(engine::sync);
    stream& vec = p.on(engine::vector);
    stream& act = p.on(engine::scalar);
    // gamma[c] to every partition (partition stride 0).
    sync.dma(sbuf(f32, 0, 128, g, C), hbm(f32, gamma, 128, 0, C)).signal(7, 1);
    for (unsigned t = 0; t < T; ++t) {
        load_rows(sync, s, t, x, xin);
        // x^2, mean + eps, rsqrt, x * r * gamma
        act.activation(sbuf(f32, 0, 128, sq, C), sbuf(f32, 0, 128, xin, C), isa::function::square)
            .wait(0, t + 1)
            .signal(3, 1);
        vec.tensor_reduce(sbuf(f32, 0, 128, stat, 1), sbuf(f32, 0, 128, sq, C), isa::alu::add).wait(3, t + 1);
        vec.tensor_scalar(sbuf(f32, 0, 128, stat, 1), sbuf(f32, 0, 128, stat, 1), isa::alu::multiply,
                          1.0f / static_cast<float>(C));
        vec.tensor_scalar(sbuf(f32, 0, 128, stat, 1), sbuf(f32, 0, 128, stat, 1), isa::alu::add, eps).signal(4, 1);
        act.activation(sbuf(f32, 0, 128, stat, 1), sbuf(f32, 0, 128, stat, 1), isa::function::rsqrt)
            .wait(4, t + 1)
            .signal(5, 1);
        vec.tensor_tensor(sbuf(f32, 0, 128, sq, C), sbuf(f32, 0, 128, xin, C), broadcast(stat, C), isa::alu::multiply)
            .wait(5, t + 1);
        vec.tensor_tensor(sbuf(f32, 0, 128, xin, C), sbuf(f32, 0, 128, sq, C), sbuf(f32, 0, 128, g, C),
                          isa::alu::multiply)
            .wait(7, 1)
            .signal(1, 1);
        store_rows(vec, s, t, y, xin);
    }
    finish(sync, act, vec, T);
    return p;
}

}  // namespace trn3::kernels
