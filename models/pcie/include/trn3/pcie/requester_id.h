// The PCIe requester id of a device's access into host memory, carried on
// the TLM payload from the root complex to the host's IOMMU.
#pragma once

#include <cstdint>

#include <tlm>

namespace trn3::pcie {

struct requester_id : tlm::tlm_extension<requester_id> {
    std::uint16_t bdf = 0;
    tlm::tlm_extension_base* clone() const override { return new requester_id(*this); }
    void copy_from(const tlm::tlm_extension_base& other) override { bdf = static_cast<const requester_id&>(other).bdf; }
};

}  // namespace trn3::pcie
