#include "sbuf_psum.h"

#include <cmath>
#include <cstring>
#include <string>

#include <fmt/format.h>

namespace trn3::neuroncore {

using namespace isa;

sbuf_psum::sbuf_psum(const neuroncore& core)
    : core_(core), sbuf_(std::string(core.name()) + ".sbuf", core.partitions * core.sbuf_partition_size.get().bytes),
      psum_(std::string(core.name()) + ".psum", core.partitions * core.psum_partition_size.get().bytes),
      rng_(core.rounding_seed) {}

std::vector<std::int64_t> sbuf_psum::offsets(const access_pattern& ap) {
    std::vector<std::int64_t> out(free_elements(ap));
    walk(ap, [&](std::uint64_t i, std::int64_t off) { out[i] = off; });
    return out;
}

tile sbuf_psum::check_tile(const sequencer_registers& regs, const access_pattern& ap, bool engine_rules) const {
    tile t{&ap, static_cast<space>(ap.space), static_cast<dtype>(ap.dtype), ap.address, 0};
    if (ap.space > 2 || ap.dtype > 6) throw fault{err_illegal, "bad space or dtype field"};
    t.bytes = dtype_bytes(t.type);
    if (ap.base_reg != no_reg) {
        if (ap.base_reg >= registers) throw fault{err_illegal, "base register out of range"};
        t.address += regs[ap.base_reg];
    }
    const std::uint64_t partitions = core_.partitions.get();
    if (ap.partitions == 0 || ap.start_partition + ap.partitions > partitions)
        throw fault{err_partition,
                    fmt::format("partitions {}+{} beyond {}", ap.start_partition, ap.partitions, partitions)};
    if (engine_rules && t.space != space::hbm) {
        // NKI tile rule: > 64 partitions start at 0; 33-64 at 0 or 64; <= 32 at 0, 32, 64 or 96.
        const unsigned n = ap.partitions, s = ap.start_partition;
        const bool ok = n > 64 ? s == 0 : n > 32 ? (s == 0 || s == 64) : (s % 32 == 0);
        if (!ok) throw fault{err_partition, fmt::format("a {}-partition tile may not start at partition {}", n, s)};
    }
    // Extent of the free walk, in elements.
    std::int64_t lo = 0, hi = 0;
    for (unsigned d = 0; d < std::min<unsigned>(ap.dims, max_free_dims); ++d) {
        if (ap.num[d] == 0) throw fault{err_shape, "a free dimension of size 0"};
        const std::int64_t span = static_cast<std::int64_t>(ap.step[d]) * (ap.num[d] - 1);
        (span < 0 ? lo : hi) += span;
    }
    if (ap.dims == 0 || ap.dims > max_free_dims) throw fault{err_shape, "free dimensions must be 1 to 4"};
    if (t.space != space::hbm) {
        const std::uint64_t size =
            t.space == space::sbuf ? core_.sbuf_partition_size.get().bytes : core_.psum_partition_size.get().bytes;
        const std::int64_t first = static_cast<std::int64_t>(t.address) + lo * t.bytes;
        const std::int64_t last = static_cast<std::int64_t>(t.address) + (hi + 1) * t.bytes;
        if (first < 0 || last > static_cast<std::int64_t>(size))
            throw fault{err_out_of_bounds, fmt::format("{} tile bytes [{}, {}) outside a {}-byte partition",
                                                       isa::name(t.space), first, last, size)};
    }
    return t;
}

float sbuf_psum::load(const tile& t, unsigned p, std::uint64_t off) {
    const unsigned char* e = element(t, p, off);
    std::uint32_t code = 0;
    std::memcpy(&code, e, t.bytes);
    if (t.type == dtype::int32) return static_cast<float>(static_cast<std::int32_t>(code));
    return numerics::decode(code, format_of(t.type));
}

void sbuf_psum::store(const tile& t, unsigned p, std::uint64_t off, float v, bool stochastic) {
    unsigned char* e = element(t, p, off);
    std::uint32_t code;
    if (t.type == dtype::int32) {
        code = static_cast<std::uint32_t>(static_cast<std::int32_t>(std::nearbyint(v)));
    } else {
        numerics::convert_options o;
        if (stochastic) {
            o.mode = numerics::rounding::stochastic;
            o.random = rng_.next();  // one draw per element written
        }
        code = numerics::encode(v, format_of(t.type), o);
    }
    std::memcpy(e, &code, t.bytes);
}

sbuf_psum::transpose_tiles sbuf_psum::read_for_transpose(const sequencer_registers& regs, const instruction& ins,
                                                         unsigned limit) {
    transpose_tiles t{check_tile(regs, ins.dst, true), ins.src0.partitions, 0, {}, {}};
    const tile s = check_tile(regs, ins.src0, true);
    t.F = static_cast<unsigned>(free_elements(ins.src0));
    if (t.F > limit || t.P > limit || ins.dst.partitions != t.F || free_elements(ins.dst) != t.P)
        throw fault{err_shape, fmt::format("transpose shape (up to {} x {} on this engine)", limit, limit)};
    const std::vector<std::int64_t> so = offsets(ins.src0);
    t.dst_offsets = offsets(ins.dst);
    t.values.resize(static_cast<std::size_t>(t.P) * t.F);
    for (unsigned i = 0; i < t.P; ++i)
        for (unsigned j = 0; j < t.F; ++j) t.values[static_cast<std::size_t>(i) * t.F + j] = load(s, i, so[j]);
    return t;
}

}  // namespace trn3::neuroncore
