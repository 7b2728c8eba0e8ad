// What every host program does first: wait, like an OS, for a root port's
// link (Data Link Layer Link Active), polling its PCIe capability every
// microsecond, for at most `timeout_ns` of simulated time (a link that never
// trains ends the program with a failure, not a simulation that runs forever).
#pragma once

#include <cstdint>

#include "trn3/driver/host_ops.h"
#include "trn3/spec/pci.h"

namespace trn3::apps {

inline bool wait_root_port_link(driver::host_ops& host, std::uint16_t port_bdf, std::uint64_t timeout_ns) {
    const std::uint64_t deadline = host.now_ns() + timeout_ns;
    while (!(host.config().read(port_bdf, TRN3_PCI_PCIE_CAP + TRN3_PCIE_LINK_STATUS, 2) & TRN3_PCIE_LINK_DL_ACTIVE)) {
        if (host.now_ns() >= deadline) return false;
        host.sleep_ns(1000);
    }
    return true;
}

}  // namespace trn3::apps
