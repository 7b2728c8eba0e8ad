// What a DMA engine's write tells the chip beyond address and data: the
// channel it belongs to (the DMA queue that made it; the destination counts
// the bytes that land per channel, and a queue's waits count its own), its
// traffic class (TRN3_DESC_TRAFFIC_CLASS: the TLPs' TC) and, for a reducing
// write (spec/device.h TRN3_DESC_REDUCE), the reduction the
// destination applies as the data lands (numerics/reduce.h), and whether
// it takes its other operand from elsewhere in the destination's memory
// (TRN3_DESC_REDUCE_OPERAND: the landing chip's FABRIC_OPERAND(channel)
// says where). The chip carries them in each NeuronLink write TLP.
#pragma once

#include <cstdint>

#include <tlm>

#include "trn3/numerics/reduce.h"

namespace trn3::dma {

struct fabric_write : tlm::tlm_extension<fabric_write> {
    std::uint8_t channel = 0;
    bool reduce = false;
    bool operand = false;  // with reduce: dst = operand op data (TRN3_DESC_REDUCE_OPERAND)
    numerics::reduction reduction;
    std::uint8_t traffic_class = 0;

    fabric_write() = default;
    fabric_write(std::uint8_t c, const numerics::reduction* r, std::uint8_t tc = 0, bool with_operand = false)
        : channel(c), reduce(r != nullptr), operand(r != nullptr && with_operand), traffic_class(tc) {
        if (r) reduction = *r;
    }
    tlm::tlm_extension_base* clone() const override { return new fabric_write(*this); }
    void copy_from(const tlm::tlm_extension_base& other) override { *this = static_cast<const fabric_write&>(other); }
};

// The byte a write TLP carries for the reduction: 0 for a plain write, else
// 0x80 | type << 4 | operand << 3 | op (ops 0-3, types 0-5).
constexpr std::uint8_t tlp_operand_bit = 0x08u;
inline std::uint8_t tlp_code(const numerics::reduction& r, bool operand = false) {
    return static_cast<std::uint8_t>(0x80u | (static_cast<unsigned>(r.type) << 4) | (operand ? tlp_operand_bit : 0u) |
                                     static_cast<unsigned>(r.op));
}
inline numerics::reduction reduction_of_tlp_code(std::uint8_t code) {
    return {static_cast<numerics::reduce_op>(code & 0x7u), static_cast<numerics::reduce_type>((code >> 4) & 0x7u)};
}
inline bool operand_of_tlp_code(std::uint8_t code) { return (code & tlp_operand_bit) != 0; }

}  // namespace trn3::dma
