// What ties a host program's libfabric calls to a simulated NIC.
//
// A host program written against libfabric runs in one of its host's
// software contexts; the provider (libtrn3vp-fi.so, loaded by the real
// libfabric) asks the simulator which host and NIC the calling context has.
// The simulator answers through the C function below, which its executable
// exports; a process that is not a trn3vp simulation has none, and the
// provider then offers nothing (fi_getinfo: -FI_ENODATA).
//
//   attach(binding)  in the software context, before its first libfabric call
//                    (platforms/common fabric_binding.h)
#pragma once

#include <cstdint>
#include <vector>

#include "trn3/driver/host_ops.h"
#include "trn3/driver/pci_enum.h"

namespace trn3::fabric {

// A NIC the context uses: enumerated, BARs assigned.
struct nic_binding {
    driver::pci_function function;
    std::uint32_t msi_data_base = 0;  // MSI-X data of its vector 0 (driver::nic_device::msi_data_of)
};

struct binding {
    driver::host_ops* host = nullptr;  // the calling context's host
    // Its NICs: fi_getinfo answers with a domain for each, in this order
    // (domain name "trn3vp_nic_<bdf>").
    std::vector<nic_binding> nics;
    // The host's Trainium3 chips as FI_HMEM_NEURON devices: device d's
    // memory is its BAR2, at this bus address (device address a at
    // neuron_bar2[d] + a, reached by the NIC peer to peer through the root
    // complex). Empty: no device memory can be registered.
    std::vector<std::uint64_t> neuron_bar2;
};

}  // namespace trn3::fabric

// The calling software context's binding, or nullptr.
extern "C" const trn3::fabric::binding* trn3vp_fabric_binding(void);
