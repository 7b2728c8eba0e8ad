#include "tensor_engine.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "trn3/numerics/mx.h"

namespace trn3::neuroncore {
namespace {
using sc_core::sc_time;
using namespace isa;

// Whether every product a x b of the two operand sets is exact in fp32: true
// for fp16 and fp8 operands (at most 11 x 11 significant bits, exponents well
// inside the normal range), and for bf16 operands whose non-zero finite
// values keep every product between 2^-126 and 2^127.
bool products_exact(dtype t, const std::vector<float>& a, const std::vector<float>& b) {
    if (t == dtype::fp16 || t == dtype::e4m3fn || t == dtype::e5m2) return true;
    if (t != dtype::bf16) return false;
    auto range = [](const std::vector<float>& v) {
        // Biased exponent fields; a subnormal counts as below every normal.
        int lo = 255, hi = 0;
        for (float x : v) {
            std::uint32_t bits;
            std::memcpy(&bits, &x, 4);
            const int field = static_cast<int>((bits >> 23) & 0xff);
            if (field == 0xff || (bits << 1) == 0) continue;  // inf, NaN, zero
            lo = std::min(lo, field == 0 ? -30 : field);
            hi = std::max(hi, field);
        }
        return std::pair<int, int>{lo - 127, hi - 127};
    };
    const auto [alo, ahi] = range(a);
    const auto [blo, bhi] = range(b);
    return alo + blo >= -126 && ahi + bhi <= 126;
}

// Every code of an MX element format as its exact integer (value x 2^shift)
// and whether it is finite: built once per format.
struct mx_codes {
    std::array<std::int64_t, 256> integer{};
    std::array<bool, 256> finite{};
};
const mx_codes& mx_code_table(numerics::format f) {
    static std::map<numerics::format, mx_codes> tables;
    static std::mutex lock;
    std::lock_guard<std::mutex> guard(lock);
    auto [it, added] = tables.try_emplace(f);
    if (added)
        for (unsigned c = 0; c < 256; ++c) {
            it->second.integer[c] = numerics::mx_element_integer(c, f);
            it->second.finite[c] = std::isfinite(numerics::decode(c, f));
        }
    return it->second;
}
}  // namespace

tensor_engine::tensor_engine(const neuroncore& core, sbuf_psum& memory, tensor_array& array)
    : core_(core), memory_(memory), array_(array),
      matmul_flops_(&core, "matmul_flops", "floating-point operations of matmuls (2 per multiply-add)") {}

std::uint64_t tensor_engine::tensor_fill() const {
    return core_.tensor_fill_cycles.get() ? core_.tensor_fill_cycles.get() : 3 * core_.partitions.get() - 2;
}

sc_time tensor_engine::tensor_time(const engine_state& es, std::uint64_t cycles) {
    // The next pass's R rows of weights load through the array's one weight
    // port, a row per cycle, into the other bank while the pass before
    // streams: hidden when that pass streamed for at least R cycles; a
    // shorter one leaves the difference to wait (docs/rtl.md).
    const std::uint64_t pass = cycles;
    if (!es.back_to_back()) cycles += tensor_fill();
    else if (last_pass_cycles_ < core_.partitions.get()) cycles += core_.partitions.get() - last_pass_cycles_;
    last_pass_cycles_ = pass;
    return cycles_at(cycles, core_.tensor_clock);
}

sc_time tensor_engine::matmul(const engine_state& es, const instruction& ins) {
    // psum dst[m][n] (+)= sum over k of stationary src0[k][m] x moving src1[k][n]
    const tile dst = memory_.check_tile(es.regs, ins.dst, true);
    const tile a = memory_.check_tile(es.regs, ins.src0, true);
    const tile b = memory_.check_tile(es.regs, ins.src1, true);
    if (dst.space != space::psum) throw fault{err_unreachable, "matmul writes PSUM"};
    if (a.space != space::sbuf || b.space != space::sbuf) throw fault{err_unreachable, "matmul reads SBUF"};
    if (dst.type != dtype::fp32 && dst.type != dtype::bf16) throw fault{err_dtype, "matmul output is fp32 or bf16"};
    if (ins.sparsity > static_cast<std::uint8_t>(sparsity::s4_16)) throw fault{err_illegal, "unknown sparsity"};
    // Geometry (docs/isa.md): each stationary partition holds V values of
    // every column (MX: 4), each moving partition D dense K values of every
    // column (D = V dense; V x G/4 with 4 of every G kept).
    const bool mx = ins.flags & flag_mx;
    const unsigned G = sparsity_group(static_cast<sparsity>(ins.sparsity));
    matmul_shape s;
    s.V = mx ? 4 : 1;
    s.D = G ? s.V * G / 4 : s.V;
    s.P = ins.src0.partitions;
    s.Kc = s.V * s.P;
    s.K = s.D * s.P;
    s.M = static_cast<unsigned>(free_elements(ins.src0) / s.V);
    s.N = static_cast<unsigned>(free_elements(ins.src1) / s.D);
    if (ins.src1.partitions != s.P) throw fault{err_shape, "stationary and moving have different partition counts"};
    if (free_elements(ins.src0) != static_cast<std::uint64_t>(s.V) * s.M ||
        free_elements(ins.src1) != static_cast<std::uint64_t>(s.D) * s.N)
        throw fault{err_shape,
                    fmt::format("operand free sizes must be multiples of {} (stationary) and {} (moving)", s.V, s.D)};
    // The array is partitions x partitions: K and M are bounded by it.
    if (s.M > core_.partitions.get() || ins.dst.partitions != s.M)
        throw fault{err_shape,
                    fmt::format("stationary columns (M) must equal dst partitions, <= {}", core_.partitions.get())};
    if (s.N > core_.max_moving_free.get() || free_elements(ins.dst) != s.N)
        throw fault{err_shape,
                    fmt::format("moving columns (N) must equal dst free size, <= {}", core_.max_moving_free.get())};
    // Timing only: the metadata is data (not read, not checked).
    if (G && !core_.timing_only.get()) s.k_of = sparse_indices(ins, s, G);
    if (mx) return matmul_mx(es, ins, s, dst, a, b);
    if (a.type != b.type || a.type == dtype::int32 || a.type == dtype::e2m1)
        throw fault{err_dtype, "matmul operands: one float type (e2m1 only in MX mode)"};
    const unsigned M = s.M, N = s.N, Kc = s.Kc;
    matmul_flops_ += 2ull * s.K * M * N;  // dense-equivalent
    const unsigned cadence =
        a.type == dtype::fp32 ? static_cast<unsigned>(core_.tensor_fp32_cycles_per_column.get()) : 1;
    // Timing: one moving column per cycle (fp32: tensor_fp32_cycles_per_column),
    // plus the array fill when the engine was idle before this matmul.
    if (core_.timing_only.get()) return tensor_time(es, static_cast<std::uint64_t>(N) * cadence);
    // Operands decoded once (exact), then the defined order: for each output,
    // acc = +0; for each kept k in increasing order: acc = fl32(acc + a[k][m] x
    // b[k][n]) with one rounding, a fused multiply-add (docs/numerics.md rule
    // 18). A sparse matmul multiplies only the kept values.
    std::vector<float> A(static_cast<std::size_t>(Kc) * M), B(static_cast<std::size_t>(s.K) * N),
        acc(static_cast<std::size_t>(M) * N, 0.0f);
    const std::vector<std::int64_t> ao = sbuf_psum::offsets(ins.src0), bo = sbuf_psum::offsets(ins.src1),
                                    dof = sbuf_psum::offsets(ins.dst);
    for (unsigned p = 0; p < s.P; ++p) {
        for (unsigned m = 0; m < M; ++m) A[static_cast<std::size_t>(p) * M + m] = memory_.load(a, p, ao[m]);
        for (unsigned j = 0; j < s.D * N; ++j)
            B[static_cast<std::size_t>(s.D * p + j % s.D) * N + j / s.D] = memory_.load(b, p, bo[j]);
    }
    tensor_array::operands op{Kc, M, N, A.data(), B.data()};
    op.cadence = cadence;
    op.k_of = s.k_of.empty() ? nullptr : s.k_of.data();
    op.b_rows = s.K;
    // When every product is exact in fp32, multiply-then-add rounds once and
    // vectorises; otherwise (fp32 operands, bf16 products that leave the
    // normal range) each step is a std::fma.
    op.fused = !products_exact(a.type, A, B);
    array_.compute(op, acc);
    write_psum(ins, dst, acc, M, N, dof);
    return tensor_time(es, static_cast<std::uint64_t>(N) * cadence);
}

std::vector<std::uint16_t> tensor_engine::sparse_indices(const instruction& ins, const matmul_shape& s, unsigned G) {
    // Metadata byte j of stationary partition p (SBUF partition start + p, at
    // meta + j) is the position, within its group of G K values, of the
    // stationary's j-th element: column j / V, kept value c = V p + j % V of
    // group c / 4. Positions in a group strictly increase.
    if (s.Kc % 4) throw fault{err_shape, "a sparse stationary holds whole groups of 4 kept values"};
    const std::uint64_t row = static_cast<std::uint64_t>(s.V) * s.M;
    if (ins.meta + row > core_.sbuf_partition_size.get().bytes)
        throw fault{err_out_of_bounds, "sparsity metadata outside SBUF"};
    std::vector<std::uint16_t> k_of(static_cast<std::size_t>(s.M) * s.Kc);
    for (unsigned p = 0; p < s.P; ++p) {
        const unsigned char* meta = memory_.sbuf(ins.src0.start_partition + p) + ins.meta;
        for (unsigned j = 0; j < row; ++j) {
            const unsigned m = j / s.V, c = s.V * p + j % s.V, pos = meta[j];
            std::uint16_t& k = k_of[static_cast<std::size_t>(m) * s.Kc + c];
            k = static_cast<std::uint16_t>(c / 4 * G + pos);
            if (pos >= G || (c % 4 && k <= (&k)[-1]))
                throw fault{err_sparsity,
                            fmt::format("sparsity metadata of column {}, kept value {}: position {} ({})", m, c, pos,
                                        pos >= G ? fmt::format("group of {}", G) : "not increasing")};
        }
    }
    return k_of;
}

void tensor_engine::write_psum(const instruction& ins, const tile& dst, const std::vector<float>& acc, unsigned M,
                               unsigned N, const std::vector<std::int64_t>& dof) {
    const bool accumulate = ins.flags & flag_accumulate, stochastic = ins.flags & flag_stochastic;
    for (unsigned m = 0; m < M; ++m)
        for (unsigned n = 0; n < N; ++n) {
            float v = acc[static_cast<std::size_t>(m) * N + n];
            if (accumulate) v = memory_.load(dst, m, dof[n]) + v;
            if (std::isnan(v)) v = std::numeric_limits<float>::quiet_NaN();  // rule 24: one NaN, 0x7FC00000
            memory_.store(dst, m, dof[n], v, stochastic);
        }
}

sc_time tensor_engine::matmul_mx(const engine_state& es, const instruction& ins, const matmul_shape& s, const tile& dst,
                                 const tile& a, const tile& b) {
    // MX (OCP MX v1.0 blocks of 32 along K): the E8M0 scale of K block g
    // (dense K values 32g..32g+31) and column m sits in SBUF partition g at
    // byte imm + m (src0), target + n (src1). dst[m][n] = fl32 sum over
    // blocks, in order, of the block's dot product over its kept values
    // (exact, rounded once to fp32: docs/numerics.md rules 16, 22 and 23).
    auto mx_type = [](dtype t) { return t == dtype::e4m3fn || t == dtype::e5m2 || t == dtype::e2m1; };
    if (!mx_type(a.type) || !mx_type(b.type)) throw fault{err_dtype, "MX operands are e4m3fn, e5m2 or e2m1"};
    const unsigned M = s.M, N = s.N, K = s.K, Kc = s.Kc, blocks = K / 32, per_block = 32 * Kc / K;
    if (K % 32 || ins.src0.start_partition || ins.src1.start_partition)
        throw fault{err_shape, "MX K must be a multiple of 32, from partition 0"};
    const std::uint64_t part_bytes = core_.sbuf_partition_size.get().bytes;
    if (ins.imm + M > part_bytes || ins.target + N > part_bytes)
        throw fault{err_out_of_bounds, "MX scales outside SBUF"};
    matmul_flops_ += 2ull * K * M * N;  // dense-equivalent
    // Four multiplies per element of the array per cycle: N cycles per pass.
    if (core_.timing_only.get()) return tensor_time(es, N);
    const auto fa = format_of(a.type), fb = format_of(b.type);
    const std::vector<std::int64_t> ao = sbuf_psum::offsets(ins.src0), bo = sbuf_psum::offsets(ins.src1),
                                    dof = sbuf_psum::offsets(ins.dst);
    std::vector<float> acc(static_cast<std::size_t>(M) * N);
    auto model = [&](std::vector<float>& out) {
        // Elements as exact integers (value x 2^shift), transposed so each
        // column's K run is contiguous; non-finite elements flagged per block (and
        // per element of the moving operand, which a sparse matmul reads only
        // where it keeps). Unless an operand is e5m2, every product is below 2^36
        // and a block's sum below 2^41: exact in a double, whose sum can then run
        // in any order (vectorised); e5m2 products reach 2^64 and take int128.
        const bool wide = a.type == dtype::e5m2 || b.type == dtype::e5m2;
        const mx_codes& ca = mx_code_table(fa);
        const mx_codes& cb = mx_code_table(fb);
        std::vector<double> ad(static_cast<std::size_t>(M) * Kc), bd(static_cast<std::size_t>(N) * K);
        std::vector<std::int64_t> ai(wide ? ad.size() : 0), bi(wide ? bd.size() : 0);
        std::vector<std::uint8_t> a_nan(static_cast<std::size_t>(M) * blocks, 0),
            b_nan(static_cast<std::size_t>(N) * blocks, 0);
        std::vector<std::uint8_t> b_bad(s.k_of.empty() ? 0 : static_cast<std::size_t>(N) * K, 0);
        for (unsigned p = 0; p < s.P; ++p) {
            for (unsigned j = 0; j < s.V * M; ++j) {
                const std::uint8_t code = *memory_.element(a, p, ao[j]);
                const std::size_t at = static_cast<std::size_t>(j / s.V) * Kc + s.V * p + j % s.V;
                ad[at] = static_cast<double>(ca.integer[code]);
                if (wide) ai[at] = ca.integer[code];
                if (!ca.finite[code])
                    a_nan[static_cast<std::size_t>(j / s.V) * blocks + (s.V * p + j % s.V) / per_block] = 1;
            }
            for (unsigned j = 0; j < s.D * N; ++j) {
                const std::uint8_t code = *memory_.element(b, p, bo[j]);
                const unsigned n = j / s.D, k = s.D * p + j % s.D;
                const std::size_t at = static_cast<std::size_t>(n) * K + k;
                bd[at] = static_cast<double>(cb.integer[code]);
                if (wide) bi[at] = cb.integer[code];
                if (!cb.finite[code]) {
                    b_nan[static_cast<std::size_t>(n) * blocks + k / 32] = 1;
                    if (!b_bad.empty()) b_bad[at] = 1;
                }
            }
        }
        const int shift = numerics::mx_element_shift(fa) + numerics::mx_element_shift(fb);
        for (unsigned m = 0; m < M; ++m) {
            const std::uint16_t* kk = s.k_of.empty() ? nullptr : &s.k_of[static_cast<std::size_t>(m) * Kc];
            for (unsigned n = 0; n < N; ++n) {
                float sum_blocks = 0;
                for (unsigned g = 0; g < blocks; ++g) {
                    const std::uint8_t sa = memory_.sbuf(g)[ins.imm + m], sb = memory_.sbuf(g)[ins.target + n];
                    const std::size_t xa = static_cast<std::size_t>(m) * Kc + g * per_block,
                                      yb = static_cast<std::size_t>(n) * K;
                    const std::uint16_t* ks = kk ? kk + g * per_block : nullptr;
                    bool nan = sa == numerics::e8m0_nan || sb == numerics::e8m0_nan ||
                               a_nan[static_cast<std::size_t>(m) * blocks + g];
                    if (!nan && b_nan[static_cast<std::size_t>(n) * blocks + g]) {
                        if (!ks) nan = true;
                        for (unsigned i = 0; ks && i < per_block; ++i) nan = nan || b_bad[yb + ks[i]];
                    }
                    float d;
                    if (nan) {
                        d = std::numeric_limits<float>::quiet_NaN();
                    } else {
                        numerics::mx_int128 sum = 0;
                        if (wide) {
                            for (unsigned i = 0; i < per_block; ++i)
                                sum +=
                                    static_cast<numerics::mx_int128>(ai[xa + i]) * bi[yb + (ks ? ks[i] : 32 * g + i)];
                        } else {
                            const double* x = &ad[xa];
                            double exact = 0;
                            if (ks) {
                                for (unsigned i = 0; i < per_block; ++i) exact += x[i] * bd[yb + ks[i]];
                            } else {
                                const double* y = &bd[yb + 32 * g];
#pragma omp simd reduction(+ : exact)
                                for (unsigned i = 0; i < 32; ++i) exact += x[i] * y[i];
                            }
                            sum = static_cast<std::int64_t>(exact);
                        }
                        d = numerics::round_scaled(sum, (sa - 127) + (sb - 127) - shift);
                    }
                    sum_blocks = g == 0 ? d : sum_blocks + d;
                }
                out[static_cast<std::size_t>(m) * N + n] = sum_blocks;
            }
        }
    };
    // The same job for the RTL: codes K x columns, scales per block.
    auto job = [&] {
        rtl::array_job j;
        j.K = K;
        j.M = M;
        j.N = N;
        j.mx = true;
        auto format = [](dtype t) {
            return t == dtype::e5m2   ? rtl::mx_format::e5m2
                   : t == dtype::e2m1 ? rtl::mx_format::e2m1
                                      : rtl::mx_format::e4m3fn;
        };
        j.format_a = format(a.type);
        j.format_b = format(b.type);
        j.a.resize(static_cast<std::size_t>(K) * M);
        j.b.resize(static_cast<std::size_t>(K) * N);
        // Sparse: kept values at their dense K (holes elsewhere), as the
        // RTL's weights would be decompressed when they load.
        if (!s.k_of.empty()) j.holes.assign(j.a.size(), 1);
        for (unsigned p = 0; p < s.P; ++p) {
            for (unsigned e = 0; e < 4 * M; ++e) {
                const unsigned m = e / 4, c = 4 * p + e % 4;
                const unsigned k = s.k_of.empty() ? c : s.k_of[static_cast<std::size_t>(m) * Kc + c];
                j.a[static_cast<std::size_t>(k) * M + m] = *memory_.element(a, p, ao[e]);
                if (!j.holes.empty()) j.holes[static_cast<std::size_t>(k) * M + m] = 0;
            }
            for (unsigned e = 0; e < s.D * N; ++e)
                j.b[static_cast<std::size_t>(s.D * p + e % s.D) * N + e / s.D] = *memory_.element(b, p, bo[e]);
        }
        for (unsigned g = 0; g < blocks; ++g) {
            for (unsigned m = 0; m < M; ++m) j.scales_a.push_back(memory_.sbuf(g)[ins.imm + m]);
            for (unsigned n = 0; n < N; ++n) j.scales_b.push_back(memory_.sbuf(g)[ins.target + n]);
        }
        return j;
    };
    array_.run(model, job, acc);
    write_psum(ins, dst, acc, M, N, dof);
    return tensor_time(es, N);
}

sc_time tensor_engine::transpose(const engine_state& es, const instruction& ins) {
    // dst[j][i] = src[i][j] for a partitions x free tile (<= 128 x 128),
    // through the array: the tile is the stationary (K = P, M = F), the
    // moving operand the P x P identity, the PEs select (docs/rtl.md).
    const sbuf_psum::transpose_tiles t =
        memory_.read_for_transpose(es.regs, ins, static_cast<unsigned>(core_.partitions.get()));
    const unsigned P = t.P, F = t.F;
    if (core_.timing_only.get()) return tensor_time(es, P);
    std::vector<float> identity(static_cast<std::size_t>(P) * P, 0.0f), out(static_cast<std::size_t>(F) * P);
    for (unsigned i = 0; i < P; ++i) identity[static_cast<std::size_t>(i) * P + i] = 1.0f;
    tensor_array::operands op{P, F, P, t.values.data(), identity.data()};
    op.select = true;
    array_.compute(op, out);
    for (unsigned j = 0; j < F; ++j)
        for (unsigned i = 0; i < P; ++i)
            memory_.store(t.dst, j, t.dst_offsets[i], out[static_cast<std::size_t>(j) * P + i], false);
    return tensor_time(es, P);
}

}  // namespace trn3::neuroncore
