// The host's IOMMU: per-device translation of DMA bus addresses to host
// physical addresses, 4 KiB pages, read/write permissions.
//
//   root complex host_mem ── in (target) ─ iommu ─ out (initiator) ── host memory
//
// Each access carries its requester id (pcie::requester_id). A page the
// device has no mapping for, or no permission on, is a fault: nothing is
// read or written, the access gets TLM_ADDRESS_ERROR_RESPONSE (the device
// sees an Unsupported Request), the fault is recorded and the `fault`
// handler (the driver's) runs. An access with no requester id (the host's
// own) passes untranslated.
//
// params: enabled
// stats:  translations, faults
#pragma once

#include <cstdint>
#include <functional>
#include <map>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "trn3/core/component.h"
#include "trn3/core/stats.h"

namespace trn3::host {

class iommu : public component {
public:
    tlm_utils::simple_target_socket<iommu> in{"in"};
    tlm_utils::simple_initiator_socket<iommu> out{"out"};

    param<bool> enabled{this, "enabled", true, "translate device accesses (false: bus address = physical)"};
    param<sc_core::sc_time> latency{this, "latency", sc_core::sc_time(20, sc_core::SC_NS),
                                    "translation cost per access (IOTLB hit)"};

    std::function<void(std::uint16_t device, std::uint64_t bus_address, bool write)> fault;

    static constexpr std::uint64_t page = 4096;

    explicit iommu(const sc_core::sc_module_name& name);

    // Maps [bus, bus + bytes) of `device` onto [physical, ...), page granular.
    void map(std::uint16_t device, std::uint64_t bus, std::uint64_t physical, std::uint64_t bytes, bool writable);
    void unmap(std::uint16_t device, std::uint64_t bus, std::uint64_t bytes);
    std::uint64_t faults() const { return faults_.value(); }

private:
    struct entry {
        std::uint64_t physical_page;
        bool writable;
    };
    void transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay);
    std::map<std::pair<std::uint16_t, std::uint64_t>, entry> pages_;  // (device, bus page) -> physical page
    counter translations_, faults_;
};

}  // namespace trn3::host
