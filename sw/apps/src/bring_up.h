// A host's chips brought up, as every program over an UltraServer starts:
// the root ports' links up, enumeration, each Trainium3 probed, its firmware
// running and answering, its fabric id and routes programmed. Used by boot
// and by the programs that run traffic after it (collectives).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "trn3/apps/host_program.h"
#include "trn3/driver/nic_device.h"
#include "trn3/driver/trn3_device.h"

namespace trn3::apps {

using device_list = std::vector<std::unique_ptr<driver::trn3_device>>;

struct bring_up_settings {
    sc_core::sc_time link_timeout, boot_timeout;
};

struct brought_up {
    device_list devices;  // in root-port order, as host_info::chips
    unsigned chips_up = 0;  // firmware running and answering
    std::vector<std::unique_ptr<driver::nic_device>> nic_devices;  // the NICs on the host's buses, probed
    std::vector<driver::pci_function> nic_functions;  // theirs, in the same order
    unsigned nics = 0;  // of those, the ones that answered (ID and network address)
    double link_up = 0, enumerated = 0, firmware = 0;  // simulated seconds each phase ended
    std::vector<std::string> failures;
};

// Phases reported to `on_phase` as each ends: 0 links up, 1 enumerated,
// 2 firmware running and routes programmed. False when it could not go on
// (a link that did not come up, enumeration failed); failures say why.
bool bring_up(const host_info& hi, const bring_up_settings& settings, brought_up& out,
              const std::function<void(unsigned phase)>& on_phase);

}  // namespace trn3::apps
