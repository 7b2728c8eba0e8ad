#include "trn3/kernels/gemm.h"

#include <stdexcept>

namespace trn3::kernels {

program gemm(const gemm_shape& s, const gemm_addresses& at) {
    if (s.M == 0 || s.N == 0 || s.K == 0 || s.M % 128 || s.N % 512 || s.K % 128)
        throw std::invalid_argument("gemm: M and K must be multiples of 128 and N of 512");
    if (s.mx && (s.K % 512 || isa::dtype_bytes(s.operands) != 1))
        throw std::invalid_argument("gemm: MX needs K a multiple of 512 and e4m3fn, e5m2 or e2m1 operands");
    using isa::engine;
    const unsigned k_tile = s.mx ? 512 : 128;
    const unsigned MT = s.M / 128, NT = s.N / 512, KT = s.K / k_tile;
    const unsigned esize = isa::dtype_bytes(s.operands);
    // MX tiles are 4x wider per partition (4 K values per column); their
    // scales go to partitions 0..15 at the scale buffers.
    const std::uint64_t a_buf[2] = {0, 512}, b_buf[2] = {1024, 3072}, out_buf[2] = {8192, 10240};
    const std::uint64_t sa_buf[2] = {12288, 12416}, sb_buf[2] = {12544, 13056};
    const std::uint64_t bank[2] = {0, 2048};

    program p;
    stream& sync = p.on(engine::sync);
    stream& tensor = p.on(engine::tensor);
    stream& vector = p.on(engine::vector);

    unsigned step = 0;
    for (unsigned mt = 0; mt < MT; ++mt) {
        for (unsigned nt = 0; nt < NT; ++nt) {
            const unsigned tile = mt * NT + nt;
            for (unsigned kt = 0; kt < KT; ++kt, ++step) {
                const unsigned b = step % 2;
                // Loads for this step, once the matmul two steps back freed the buffer.
                const std::uint64_t a_addr = at.a + (static_cast<std::uint64_t>(kt) * k_tile * s.M + mt * 128) * esize;
                const std::uint64_t b_addr = at.b + (static_cast<std::uint64_t>(kt) * k_tile * s.N + nt * 512) * esize;
                if (!s.mx) {
                    sync.dma(sbuf(s.operands, 0, 128, a_buf[b], 128), hbm(s.operands, a_addr, 128, s.M * esize, 128), 2 * b)
                        .signal(b, 1);
                    if (step >= 2) sync.wait(2, step - 1);
                    sync.dma(sbuf(s.operands, 0, 128, b_buf[b], 512), hbm(s.operands, b_addr, 128, s.N * esize, 512),
                             2 * b + 1)
                        .signal(b, 1);
                    if (step >= 2) sync.wait(2, step - 1);
                } else {
                    // Partition p takes rows 4p..4p+3: element (col, j) = row 4p + j, column col.
                    sync.dma(sbuf(s.operands, 0, 128, a_buf[b], 512),
                             with_dims(hbm(s.operands, a_addr, 128, 4 * s.M, 1), {{1, 128}, {static_cast<std::int32_t>(s.M), 4}}),
                             2 * b)
                        .signal(b, 1);
                    if (step >= 2) sync.wait(2, step - 1);
                    sync.dma(sbuf(s.operands, 0, 128, b_buf[b], 2048),
                             with_dims(hbm(s.operands, b_addr, 128, 4 * s.N, 1), {{1, 512}, {static_cast<std::int32_t>(s.N), 4}}),
                             2 * b + 1)
                        .signal(b, 1);
                    if (step >= 2) sync.wait(2, step - 1);
                    // Scales of the tile's 16 K groups: rows g of scales_a[K/32][M].
                    const std::uint64_t sa = at.scales_a + static_cast<std::uint64_t>(kt) * 16 * s.M + mt * 128;
                    const std::uint64_t sb = at.scales_b + static_cast<std::uint64_t>(kt) * 16 * s.N + nt * 512;
                    sync.dma(sbuf(dtype::e4m3fn, 0, 16, sa_buf[b], 128), hbm(dtype::e4m3fn, sa, 16, s.M, 128), 6).signal(b, 1);
                    if (step >= 2) sync.wait(2, step - 1);
                    sync.dma(sbuf(dtype::e4m3fn, 0, 16, sb_buf[b], 512), hbm(dtype::e4m3fn, sb, 16, s.N, 512), 7).signal(b, 1);
                    if (step >= 2) sync.wait(2, step - 1);
                }
                // The matmul, once both loads landed (and, for a new output
                // tile, once its PSUM bank was copied out).
                if (kt == 0 && tile >= 2) tensor.nop().wait(3, tile - 1);
                const unsigned loads = s.mx ? 4 : 2;  // DMAs per use of a buffer
                if (!s.mx)
                    tensor.matmul(psum(isa::dtype::fp32, 0, 128, bank[tile % 2], 512), sbuf(s.operands, 0, 128, a_buf[b], 128),
                                  sbuf(s.operands, 0, 128, b_buf[b], 512), kt > 0);
                else
                    tensor.matmul_mx(psum(isa::dtype::fp32, 0, 128, bank[tile % 2], 512), sbuf(s.operands, 0, 128, a_buf[b], 512),
                                     sbuf(s.operands, 0, 128, b_buf[b], 2048), static_cast<std::uint32_t>(sa_buf[b]),
                                     static_cast<std::uint32_t>(sb_buf[b]), kt > 0);
                tensor.wait(b, loads * (step / 2 + 1)).signal(2, 1);
            }
            // Copy the finished bank out and write it to device memory.
            if (tile >= 2) vector.nop().wait(4, tile - 1);
            vector.tensor_copy(sbuf(isa::dtype::fp32, 0, 128, out_buf[tile % 2], 512),
                               psum(isa::dtype::fp32, 0, 128, bank[tile % 2], 512))
                .wait(2, (tile + 1) * KT)
                .signal(3, 1);
            const std::uint64_t c_addr = at.c + (static_cast<std::uint64_t>(mt) * 128 * s.N + nt * 512) * 4;
            vector.dma(hbm(isa::dtype::fp32, c_addr, 128, s.N * 4, 512), sbuf(isa::dtype::fp32, 0, 128, out_buf[tile % 2], 512),
                       4 + tile % 2)
                .signal(gemm_done_semaphore, 1);
        }
    }
    sync.halt();
    tensor.halt();
    vector.nop().wait(gemm_done_semaphore, MT * NT);
    vector.halt();
    return p;
}

} // namespace trn3::kernels
