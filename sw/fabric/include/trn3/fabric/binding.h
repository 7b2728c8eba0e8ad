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

#include "trn3/driver/host_ops.h"
#include "trn3/driver/pci_enum.h"

namespace trn3::fabric {

struct binding {
    driver::host_ops* host = nullptr;  // the calling context's host
    driver::pci_function nic;  // the NIC it uses (enumerated, BARs assigned)
    std::uint32_t msi_data_base = 0;  // MSI-X data of the NIC's vector 0 (driver::nic_device::msi_data_of)
};

}  // namespace trn3::fabric

// The calling software context's binding, or nullptr.
extern "C" const trn3::fabric::binding* trn3vp_fabric_binding(void);
