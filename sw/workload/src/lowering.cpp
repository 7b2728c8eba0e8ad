#include "trn3/workload/lowering.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "trn3/core/error.h"
#include "trn3/kernels/attention.h"
#include "trn3/kernels/elementwise.h"
#include "trn3/kernels/gemm.h"
#include "trn3/kernels/mx_quantize.h"
#include "trn3/kernels/norm.h"

namespace trn3::workload {

namespace {

std::uint64_t up_to(std::uint64_t v, std::uint64_t multiple) { return (v + multiple - 1) / multiple * multiple; }
std::uint64_t parts_of(std::uint64_t v, std::uint64_t most) { return (v + most - 1) / most; }

// An operand of a core's program must fit its share of the core's arena.
void fits(const kernel_spec& k, const char* operand, std::uint64_t bytes, std::uint64_t room) {
    if (bytes > room)
        throw config_error(fmt::format("workload: {} {}x{}x{} {}: a core's {} takes {} B, over the {} B its arena "
                                       "gives it",
                                       k.kind, k.m, k.n, k.k, k.dtype, operand, bytes, room));
}

// Tiles t split over `cores` as evenly as whole tiles go: core c's count.
std::uint64_t share(std::uint64_t tiles, unsigned cores, unsigned c) {
    return tiles * (c + 1) / cores - tiles * c / cores;
}

lowered_kernel lower_gemm(const kernel_spec& k, unsigned cores, std::uint64_t arena, std::uint64_t stride) {
    const bool mx = k.dtype == "mxfp8" || k.dtype == "mxfp4";
    const isa::dtype operands = k.dtype == "bf16"    ? isa::dtype::bf16
                                : k.dtype == "fp16"  ? isa::dtype::fp16
                                : k.dtype == "mxfp4" ? isa::dtype::e2m1
                                                     : isa::dtype::e4m3fn;  // fp8, mxfp8
    const std::uint64_t k_tile = mx ? 512 : 128;
    const std::uint64_t M = up_to(k.m, 128), N = up_to(k.n, 512), K = up_to(k.k, k_tile);
    const bool along_n = N / 512 >= M / 128;
    const std::uint64_t tiles = along_n ? N / 512 : M / 128;
    const unsigned used = static_cast<unsigned>(std::min<std::uint64_t>(cores, tiles));
    // K in the fewest equal parts (of whole K tiles) whose B panels fit in SBUF.
    for (std::uint64_t parts = 1; parts <= K / k_tile; ++parts) {
        const std::uint64_t k_part = up_to(parts_of(K, parts), k_tile);
        lowered_kernel out;
        launch l;
        l.repeat = parts * k.batch;
        try {
            for (unsigned c = 0; c < used; ++c) {
                const std::uint64_t mine = share(tiles, used, c);
                kernels::gemm_shape s;
                s.M = static_cast<unsigned>(along_n ? M : mine * 128);
                s.N = static_cast<unsigned>(along_n ? mine * 512 : N);
                s.K = static_cast<unsigned>(k_part);
                s.operands = operands;
                s.mx = mx;
                const std::uint64_t base = arena + c * stride, third = stride / 4;
                const std::uint64_t e = isa::dtype_bytes(operands);
                fits(k, "C (fp32)", std::uint64_t(s.M) * s.N * 4, third);
                // A or B past its share: more K parts make them smaller.
                if (std::uint64_t(s.K) * std::max(s.M, s.N) * e > third) throw std::invalid_argument("too deep");
                if (mx) fits(k, "MX scales", std::uint64_t(s.K) / 32 * std::max(s.M, s.N), third / 2);
                kernels::gemm_addresses at{base, base + third, base + 2 * third, base + 3 * third,
                                           base + 3 * third + third / 2};
                l.cores.push_back(kernels::gemm(s, at));
            }
        } catch (const std::invalid_argument&) {
            continue;  // K too deep for SBUF or the arena: more parts
        }
        out.text =
            fmt::format("gemm {}x{}x{} {} as {} x {} tiles split over {} cores along {}, K in {} part{}", k.m, k.n, k.k,
                        k.dtype, M / 128, N / 512, used, along_n ? "N" : "M", parts, parts == 1 ? "" : "s");
        out.key = fmt::format("gemm {}x{}x{} {} {} cores along {} K/{} x{}", M, N, K, k.dtype, used,
                              along_n ? "N" : "M", parts, k.batch);
        out.launches.push_back(std::move(l));
        return out;
    }
    throw config_error(
        fmt::format("workload: gemm {}x{}x{} {}: no split of K fits the kernel", k.m, k.n, k.k, k.dtype));
}

lowered_kernel lower_attention(const kernel_spec& k, unsigned cores, std::uint64_t arena, std::uint64_t stride) {
    // Each block is one head's 128 queries over all its keys (flash-style past
    // 512); keys beyond the kernel's reach, and head dimensions past 128, in
    // parts one after another.
    const std::uint64_t key_parts = parts_of(k.n, kernels::attention_max_keys);
    const std::uint64_t keys = up_to(parts_of(k.n, key_parts), 128), dim = std::min<std::uint64_t>(k.k, 128);
    const std::uint64_t blocks = k.batch * parts_of(k.m, 128) * key_parts * parts_of(k.k, 128);
    lowered_kernel out;
    const unsigned used = static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(cores, blocks)));
    launch l;
    for (unsigned c = 0; c < used; ++c) {
        const std::uint64_t base = arena + c * stride, q = stride / 4;
        fits(k, "K (bf16)", keys * dim * 2, q);
        l.cores.push_back(kernels::attention({static_cast<unsigned>(keys), static_cast<unsigned>(dim)}, base, base + q,
                                             base + 2 * q, base + 3 * q));
    }
    l.repeat = blocks / used;
    out.launches.push_back(std::move(l));
    if (blocks % used) {  // the last blocks, on fewer cores
        launch rest;
        for (unsigned c = 0; c < blocks % used; ++c) rest.cores.push_back(out.launches[0].cores[c]);
        out.launches.push_back(std::move(rest));
    }
    out.key = fmt::format("attention {}x{} x{} blocks on {} cores", keys, dim, blocks, used);
    const char* how = keys > kernels::attention_block_keys ? "flash, blocks of 512 keys; " : "";
    out.text =
        fmt::format("attention {} heads x {} queries x {} keys x {} dims: {} blocks of 128 x {} x {} ({}on {} cores)",
                    k.batch, k.m, k.n, k.k, blocks, keys, dim, how, used);
    return out;
}

lowered_kernel lower_rows(const kernel_spec& k, unsigned cores, std::uint64_t arena, std::uint64_t stride) {
    const std::uint64_t pieces = parts_of(k.n, 4096), cols = parts_of(k.n, pieces);
    const std::uint64_t row_tiles = parts_of(k.m, 128);
    const unsigned used = static_cast<unsigned>(std::min<std::uint64_t>(cores, row_tiles));
    lowered_kernel out;
    launch l;
    l.repeat = pieces * k.batch;
    for (unsigned c = 0; c < used; ++c) {
        const kernels::rows_shape s{static_cast<unsigned>(share(row_tiles, used, c) * 128),
                                    static_cast<unsigned>(cols)};
        const std::uint64_t base = arena + c * stride, q = stride / 4;
        fits(k, "rows (fp32)", std::uint64_t(s.rows) * s.cols * 4, q);
        if (k.kind == "softmax") l.cores.push_back(kernels::softmax(s, base, base + q));
        else if (k.kind == "rmsnorm") l.cores.push_back(kernels::rmsnorm(s, base, base + q, base + 2 * q, 1e-6f));
        else l.cores.push_back(kernels::swiglu(s, base, base + q, base + 2 * q));
    }
    out.launches.push_back(std::move(l));
    out.key =
        fmt::format("{} {} row tiles x {} columns x{} on {} cores", k.kind, row_tiles, cols, pieces * k.batch, used);
    out.text = fmt::format("{} {} rows x {} columns: {} row tiles on {} cores, {} column part{}", k.kind, k.m, k.n,
                           row_tiles, used, pieces, pieces == 1 ? "" : "s");
    return out;
}

lowered_kernel lower_mx_quantize(const kernel_spec& k, unsigned cores, std::uint64_t arena, std::uint64_t stride) {
    // The kernel quantizes X [K][M] along K: K = the spec's n (blocked), M =
    // its m rows, split over the cores 128 at a time.
    const std::uint64_t K = up_to(k.n, 512), col_tiles = parts_of(k.m, 128);
    const unsigned used = static_cast<unsigned>(std::min<std::uint64_t>(cores, col_tiles));
    const kernels::dtype codes = k.dtype == "mxfp4" ? kernels::dtype::e2m1 : kernels::dtype::e4m3fn;
    lowered_kernel out;
    launch l;
    l.repeat = k.batch;
    for (unsigned c = 0; c < used; ++c) {
        const std::uint64_t M = share(col_tiles, used, c) * 128, base = arena + c * stride, q = stride / 4;
        fits(k, "values (bf16)", K * M * 2, q);  // before the casts: validate() bounds both to 2^24
        const kernels::mx_quantize_shape s{static_cast<unsigned>(K), static_cast<unsigned>(M), codes, true};
        l.cores.push_back(kernels::mx_quantize(s, base, base + q, base + 2 * q));
    }
    out.launches.push_back(std::move(l));
    out.key = fmt::format("mx_quantize {} {}x{} x{} on {} cores", k.dtype, K, col_tiles * 128, k.batch, used);
    out.text = fmt::format("mx_quantize {} rows x {} values to {} (blocks of 32 along the values): {} column tiles on "
                           "{} cores",
                           k.m, k.n, k.dtype, col_tiles, used);
    return out;
}

}  // namespace

lowered_kernel lower(const kernel_spec& k, unsigned cores, std::uint64_t arena, std::uint64_t arena_stride) {
    if (cores == 0) throw config_error("workload: a kernel needs at least one core");
    if (k.kind == "gemm") return lower_gemm(k, cores, arena, arena_stride);
    if (k.kind == "attention") return lower_attention(k, cores, arena, arena_stride);
    if (k.kind == "softmax" || k.kind == "rmsnorm" || k.kind == "elementwise")
        return lower_rows(k, cores, arena, arena_stride);
    if (k.kind == "mx_quantize") return lower_mx_quantize(k, cores, arena, arena_stride);
    throw config_error(fmt::format("workload: kernel '{}' has no lowering onto the NeuronCores", k.kind));
}

}  // namespace trn3::workload
