// A write that reduces into its destination instead of overwriting it
// (spec/device.h TRN3_DESC_REDUCE): the DMA engine attaches it to a write
// bound for another chip's memory; the chip carries it in the write TLPs and
// the destination chip reduces as the data lands (numerics/reduce.h).
#pragma once

#include <tlm>

#include "trn3/numerics/reduce.h"

namespace trn3::dma {

struct reduce_extension : tlm::tlm_extension<reduce_extension> {
    numerics::reduction reduction;

    explicit reduce_extension(numerics::reduction r = {}) : reduction(r) {}
    tlm::tlm_extension_base* clone() const override { return new reduce_extension(reduction); }
    void copy_from(const tlm::tlm_extension_base& other) override {
        reduction = static_cast<const reduce_extension&>(other).reduction;
    }
};

// The byte a write TLP carries for it: 0 for a plain write, else
// 0x80 | type << 4 | op.
inline std::uint8_t tlp_code(const numerics::reduction& r) {
    return static_cast<std::uint8_t>(0x80u | (static_cast<unsigned>(r.type) << 4) | static_cast<unsigned>(r.op));
}
inline numerics::reduction reduction_of_tlp_code(std::uint8_t code) {
    return {static_cast<numerics::reduce_op>(code & 0xFu), static_cast<numerics::reduce_type>((code >> 4) & 0x7u)};
}

}  // namespace trn3::dma
