// SBUF and PSUM: the core's two on-chip memories, partitions x bytes each,
// and the tiles the engines and DMA address in them (docs/isa.md, "Tile
// rules"). Every element an engine reads or writes goes through load() and
// store(): the conversion to and from the tile's type, and stochastic
// rounding with the core's one generator (param rounding_seed).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine_common.h"
#include "trn3/core/sparse_store.h"
#include "trn3/numerics/xorwow.h"

namespace trn3::neuroncore {

// An access pattern, checked, with its memory resolved.
struct tile {
    const isa::access_pattern* ap;
    isa::space space;
    isa::dtype type;
    std::uint64_t address;  // with the base register applied
    unsigned bytes;  // per element
};

class sbuf_psum {
public:
    explicit sbuf_psum(const neuroncore& core);

    unsigned char* sbuf(unsigned partition) { return sbuf_.data() + partition * core_.sbuf_partition_size.get().bytes; }
    unsigned char* psum(unsigned partition) { return psum_.data() + partition * core_.psum_partition_size.get().bytes; }

    // Checks an access pattern (throws fault): fields, partitions, the NKI
    // tile rule (engine_rules; DMA is exempt), the extent of its free walk
    // inside one partition of SBUF or PSUM.
    tile check_tile(const sequencer_registers& regs, const isa::access_pattern& ap, bool engine_rules) const;
    unsigned char* element(const tile& t, unsigned partition, std::uint64_t offset_elements) {
        const std::uint64_t byte = t.address + offset_elements * t.bytes;
        return (t.space == isa::space::sbuf ? sbuf(t.ap->start_partition + partition)
                                            : psum(t.ap->start_partition + partition)) +
               byte;
    }
    float load(const tile& t, unsigned partition, std::uint64_t offset_elements);
    void store(const tile& t, unsigned partition, std::uint64_t offset_elements, float v, bool stochastic);

    // Offsets (in elements) of the free-dimension walk, in order.
    template <typename F>
    static void walk(const isa::access_pattern& ap, F&& f);
    // The same offsets as a vector, one per element of the walk.
    static std::vector<std::int64_t> offsets(const isa::access_pattern& ap);

    // A transpose's tiles (dst[j][i] = src0[i][j], up to limit x limit),
    // checked, and its source read row by row: values[i F + j] = src0[i][j].
    struct transpose_tiles {
        tile dst;
        unsigned P, F;  // source partitions and free size
        std::vector<std::int64_t> dst_offsets;
        std::vector<float> values;
    };
    transpose_tiles read_for_transpose(const sequencer_registers& regs, const isa::instruction& ins, unsigned limit);

private:
    const neuroncore& core_;
    sparse_store sbuf_, psum_;
    numerics::xorwow rng_;
};

template <typename F>
void sbuf_psum::walk(const isa::access_pattern& ap, F&& f) {
    // Dimensions outermost first; missing outer dimensions have size 1.
    constexpr unsigned D = isa::max_free_dims;
    const unsigned dims = std::max<unsigned>(1, std::min<unsigned>(ap.dims, D));
    std::uint16_t num[D] = {1, 1, 1, 1};
    std::int64_t step[D] = {0, 0, 0, 0};
    for (unsigned d = 0; d < dims; ++d) {
        num[D - dims + d] = ap.num[d];
        step[D - dims + d] = ap.step[d];
    }
    std::uint64_t i = 0;
    for (unsigned a = 0; a < num[0]; ++a)
        for (unsigned b = 0; b < num[1]; ++b)
            for (unsigned c = 0; c < num[2]; ++c)
                for (unsigned e = 0; e < num[3]; ++e, ++i)
                    f(i, static_cast<std::int64_t>(a) * step[0] + static_cast<std::int64_t>(b) * step[1] +
                             static_cast<std::int64_t>(c) * step[2] + static_cast<std::int64_t>(e) * step[3]);
}

}  // namespace trn3::neuroncore
