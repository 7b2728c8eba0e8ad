#include "trn3/kernels/gemm.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace trn3::kernels {

namespace {
// Semaphores (gemm.h explains the scheme).
constexpr unsigned a_buffers = 3;
constexpr unsigned sem_a[a_buffers] = {0, 1, 7};  // A tile in buffer 0/1/2 loaded
constexpr unsigned sem_matmuls = 2;  // matmuls done
constexpr unsigned sem_copied = 3;  // output banks copied out of PSUM
constexpr unsigned sem_b = 5;  // B panel tiles loaded, in order
constexpr unsigned sem_b_scales = 6;  // MX: B scale tiles loaded, in order
constexpr unsigned sem_a_scales[a_buffers] = {10, 11, 12};  // MX: A scales in buffer 0/1/2 loaded
// DMA queues: one per stream of loads, so each semaphore counts in order.
constexpr unsigned q_a[a_buffers] = {0, 1, 6}, q_a_scales[a_buffers] = {2, 3, 7}, q_out = 4, q_b = 8, q_b_scales = 9;
// Output tiles leave in this many DMAs, spread over the next tile's steps so
// no single transfer holds the DMA bus long enough to starve the A loads.
constexpr unsigned out_pieces = 4;
}  // namespace

program gemm(const gemm_shape& s, const gemm_addresses& at) {
    if (s.M == 0 || s.N == 0 || s.K == 0 || s.M % 128 || s.N % 512 || s.K % 128)
        throw std::invalid_argument("gemm: M and K must be multiples of 128 and N of 512");
    if (s.mx && (s.K % 512 || isa::dtype_bytes(s.operands) != 1))
        throw std::invalid_argument("gemm: MX needs K a multiple of 512 and e4m3fn, e5m2 or e2m1 operands");
    using isa::engine;
    const unsigned k_tile = s.mx ? 512 : 128;
    const unsigned MT = s.M / 128, NT = s.N / 512, KT = s.K / k_tile;
    const unsigned esize = isa::dtype_bytes(s.operands);
    // SBUF, bytes per partition. MX tiles are 4x wider per partition (4 K
    // values per column); their scales sit in partitions 0..15.
    const std::uint64_t out_buf[2] = {0, 2048}, a_buf[a_buffers] = {4096, 4608, 5120},
                        sa_buf[a_buffers] = {5632, 5760, 5888};
    const std::uint64_t b_tile_bytes = 512ull * (s.mx ? 4 : esize);
    const std::uint64_t panel_bytes = KT * b_tile_bytes;
    const std::uint64_t b_panel[2] = {8192, 8192 + panel_bytes};
    const std::uint64_t sb_panel[2] = {8192 + 2 * panel_bytes, 8192 + 2 * panel_bytes + KT * 512ull};
    const std::uint64_t sbuf_used = s.mx ? sb_panel[1] + KT * 512ull : b_panel[1] + panel_bytes;
    if (sbuf_used > gemm_sbuf_bytes)
        throw std::invalid_argument("gemm: K = " + std::to_string(s.K) + " needs " + std::to_string(sbuf_used) +
                                    " bytes per SBUF partition for two resident B panels (at most " +
                                    std::to_string(gemm_sbuf_bytes) + ")");
    const std::uint64_t bank[2] = {0, 2048};
    // A resident too when all of it fits beside the panels: each A tile then
    // loads once (during the first panel) instead of once per panel.
    const std::uint64_t a_tile_bytes = s.mx ? 512 : 128ull * esize;
    const std::uint64_t a_region = sbuf_used, sa_region = a_region + MT * KT * a_tile_bytes;
    const bool a_resident = s.resident_a && sa_region + (s.mx ? MT * KT * 128ull : 0) <= gemm_sbuf_bytes;
    struct a_slot {
        std::uint64_t at, scales_at;
        unsigned buffer;
        std::uint32_t loaded;  // sem_a[buffer] value once this tile is in
        bool load;  // this step loads it
    };
    auto slot_of = [&](unsigned step, unsigned nt, unsigned mt, unsigned kt) -> a_slot {
        if (a_resident) {
            const unsigned t = mt * KT + kt;
            return {a_region + t * a_tile_bytes, sa_region + t * 128ull, 0, t + 1, nt == 0};
        }
        const unsigned b = step % a_buffers;
        return {a_buf[b], sa_buf[b], b, step / a_buffers + 1, true};
    };

    program p;
    stream& sync = p.on(engine::sync);
    stream& tensor = p.on(engine::tensor);
    stream& vector = p.on(engine::vector);
    {
        // Each stream's length, at most (a large GEMM runs to millions of
        // instructions: growing them costs more than writing them).
        const std::size_t steps = std::size_t{MT} * NT * KT, per_load = s.mx ? 2 : 1;
        tensor.reserve(steps * per_load + std::size_t{MT} * NT + std::size_t{NT} * KT * per_load + 1);
        const std::size_t a_loads = a_resident ? std::size_t{MT} * KT : steps;
        sync.reserve(a_loads * per_load + std::size_t{NT} * KT * per_load + 1);
        vector.reserve(std::size_t{MT} * NT * (2 + out_pieces) + 2);
    }

    // B panel nt (K x 512, all its K tiles) stays in SBUF buffer nt % 2 while
    // every M tile passes through; the next panel loads during this one.
    auto load_b_tile = [&](unsigned nt, unsigned kt) {
        const unsigned buf = nt % 2;
        // The buffer's previous panel (nt - 2) must be done with.
        const std::uint32_t free_after = nt >= 2 ? (nt - 1) * MT * KT : 0;
        const std::uint64_t b_addr = at.b + (static_cast<std::uint64_t>(kt) * k_tile * s.N + nt * 512ull) * esize;
        const std::uint64_t dst = b_panel[buf] + kt * b_tile_bytes;
        if (!s.mx) {
            sync.dma(sbuf(s.operands, 0, 128, dst, 512), hbm(s.operands, b_addr, 128, s.N * esize, 512), q_b);
        } else {
            // Partition p takes rows 4p..4p+3: element (col, j) = row 4p + j, column col.
            sync.dma(
                sbuf(s.operands, 0, 128, dst, 2048),
                with_dims(hbm(s.operands, b_addr, 128, 4 * s.N, 1), {{1, 512}, {static_cast<std::int32_t>(s.N), 4}}),
                q_b);
        }
        sync.signal(sem_b, 1);
        if (free_after) sync.wait(sem_matmuls, free_after);
        if (s.mx) {
            // Scales of the tile's 16 K groups: rows of scales_b[K/32][N].
            const std::uint64_t sb = at.scales_b + static_cast<std::uint64_t>(kt) * 16 * s.N + nt * 512ull;
            sync.dma(sbuf(dtype::e4m3fn, 0, 16, sb_panel[buf] + kt * 512ull, 512), hbm(dtype::e4m3fn, sb, 16, s.N, 512),
                     q_b_scales)
                .signal(sem_b_scales, 1);
            if (free_after) sync.wait(sem_matmuls, free_after);
        }
    };
    // Where panel nt + 1's tiles load while panel nt runs: spread over the
    // steps after the first M tile (or with the first when there is one).
    auto prefetch_at = [&](unsigned kt) { return MT > 1 ? KT + kt * (MT - 1) : kt; };

    for (unsigned kt = 0; kt < KT; ++kt) load_b_tile(0, kt);
    unsigned step = 0;
    for (unsigned nt = 0; nt < NT; ++nt) {
        unsigned next_b = 0;  // next tile of panel nt + 1 to load
        for (unsigned mt = 0; mt < MT; ++mt) {
            const unsigned tile = nt * MT + mt;
            for (unsigned kt = 0; kt < KT; ++kt, ++step) {
                const a_slot a = slot_of(step, nt, mt, kt);
                const unsigned i = mt * KT + kt;
                while (nt + 1 < NT && next_b < KT && prefetch_at(next_b) == i) load_b_tile(nt + 1, next_b++);
                // A tile (mt, kt); a streamed buffer is free once the matmul
                // a_buffers steps back is done with it. Resident tiles keep
                // the same pace: loads booked far ahead would hold the DMA
                // bus and delay the output writes.
                const std::uint32_t free_after = step >= a_buffers ? step - a_buffers + 1 : 0;
                if (a.load) {
                    const std::uint64_t a_addr =
                        at.a + (static_cast<std::uint64_t>(kt) * k_tile * s.M + mt * 128ull) * esize;
                    if (!s.mx)
                        sync.dma(sbuf(s.operands, 0, 128, a.at, 128), hbm(s.operands, a_addr, 128, s.M * esize, 128),
                                 q_a[a.buffer]);
                    else
                        sync.dma(sbuf(s.operands, 0, 128, a.at, 512),
                                 with_dims(hbm(s.operands, a_addr, 128, 4 * s.M, 1),
                                           {{1, 128}, {static_cast<std::int32_t>(s.M), 4}}),
                                 q_a[a.buffer]);
                    sync.signal(sem_a[a.buffer], 1);
                    if (free_after) sync.wait(sem_matmuls, free_after);
                    if (s.mx) {
                        const std::uint64_t sa = at.scales_a + static_cast<std::uint64_t>(kt) * 16 * s.M + mt * 128ull;
                        sync.dma(sbuf(dtype::e4m3fn, 0, 16, a.scales_at, 128), hbm(dtype::e4m3fn, sa, 16, s.M, 128),
                                 q_a_scales[a.buffer])
                            .signal(sem_a_scales[a.buffer], 1);
                        if (free_after) sync.wait(sem_matmuls, free_after);
                    }
                }

                // The matmul, once its operands landed and (for a new output
                // tile) its PSUM bank was copied out.
                if (kt == 0 && tile >= 2) tensor.nop().wait(sem_copied, tile - 1);
                if (mt == 0) {
                    tensor.nop().wait(sem_b, nt * KT + kt + 1);
                    if (s.mx) tensor.nop().wait(sem_b_scales, nt * KT + kt + 1);
                }
                if (s.mx) tensor.nop().wait(sem_a_scales[a.buffer], a.loaded);
                const auto dst = psum(isa::dtype::fp32, 0, 128, bank[tile % 2], 512);
                const std::uint64_t b_at = b_panel[nt % 2] + kt * b_tile_bytes;
                if (!s.mx)
                    tensor.matmul(dst, sbuf(s.operands, 0, 128, a.at, 128), sbuf(s.operands, 0, 128, b_at, 512),
                                  kt > 0);
                else
                    tensor.matmul_mx(dst, sbuf(s.operands, 0, 128, a.at, 512), sbuf(s.operands, 0, 128, b_at, 2048),
                                     static_cast<std::uint32_t>(a.scales_at),
                                     static_cast<std::uint32_t>(sb_panel[nt % 2] + kt * 512ull), kt > 0);
                tensor.wait(sem_a[a.buffer], a.loaded).signal(sem_matmuls, 1);
            }
            // Copy the finished bank out (once the buffer's last write is
            // done) and write it to device memory.
            if (tile >= 2) vector.nop().wait(gemm_done_semaphore, tile - 1);
            vector
                .tensor_copy(sbuf(isa::dtype::fp32, 0, 128, out_buf[tile % 2], 512),
                             psum(isa::dtype::fp32, 0, 128, bank[tile % 2], 512))
                .wait(sem_matmuls, (tile + 1) * KT)
                .signal(sem_copied, 1);
            const std::uint32_t total = MT * NT * KT;
            for (unsigned piece = 0; piece < out_pieces; ++piece) {
                const unsigned rows = 128 / out_pieces, row0 = piece * rows;
                const std::uint64_t c_addr =
                    at.c + ((static_cast<std::uint64_t>(mt) * 128 + row0) * s.N + nt * 512ull) * 4;
                const std::uint32_t after = std::min(total, (tile + 1) * KT + piece * KT / out_pieces);
                vector
                    .dma(hbm(isa::dtype::fp32, c_addr, rows, s.N * 4, 512),
                         sbuf(isa::dtype::fp32, row0, rows, out_buf[tile % 2], 512), q_out)
                    .wait(sem_matmuls, after);
                if (piece + 1 == out_pieces) vector.signal(gemm_done_semaphore, 1);
            }
        }
    }
    sync.halt();
    tensor.halt();
    vector.nop().wait(gemm_done_semaphore, MT * NT);
    vector.halt();
    return p;
}

}  // namespace trn3::kernels
