// A scale-out NIC's place on its host's PCIe (1d0f:7a00, class network),
// until the Nitro-v6 model lands: it enumerates, with its BARs, and does
// nothing else.
//
//   PCIe link ══ ep ── bar0: regs (1 MiB)   bar2: window (1 MiB)
#pragma once

#include "trn3/core/sparse_memory.h"
#include "trn3/pcie/endpoint.h"
#include "trn3/spec/pci.h"

namespace trn3::nic {

struct nic_placeholder : sc_core::sc_module {
    pcie::endpoint ep;
    sparse_memory regs{"regs", byte_count{1 << 20}}, window{"window", byte_count{1 << 20}};
    explicit nic_placeholder(const sc_core::sc_module_name& n)
        : sc_core::sc_module(n), ep("ep", TRN3_PCI_DEVICE_NIC, 1 << 20, 1 << 20, TRN3_PCI_CLASS_NETWORK) {
        ep.bar0.bind(regs.in);
        ep.bar2.bind(window.in);
    }
};

}  // namespace trn3::nic
