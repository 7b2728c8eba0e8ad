#include "bring_up.h"

#include <fmt/format.h>

#include "root_port.h"
#include "trn3/spec/pci.h"

namespace trn3::apps {
namespace {
double now() { return sc_core::sc_time_stamp().to_seconds(); }
std::uint64_t ns(const sc_core::sc_time& t) { return static_cast<std::uint64_t>(t.to_seconds() * 1e9); }
}  // namespace

bool bring_up(const host_info& hi, const bring_up_settings& settings, brought_up& r,
              const std::function<void(unsigned phase)>& on_phase) {
    driver::host_ops& hw = *hi.ops;
    for (unsigned p = 0; p < hi.root_ports; ++p)
        if (!wait_root_port_link(hw, static_cast<std::uint16_t>(TRN3_PCI_BDF(0, p, 0)), ns(settings.link_timeout))) {
            r.failures.push_back(
                fmt::format("root port {}: link not up within {}", p, settings.link_timeout.to_string()));
            return false;
        }
    r.link_up = now();
    on_phase(0);
    std::vector<driver::pci_function> fns;
    try {
        fns = driver::enumerate(hw.config(), hi.pci_windows);
    } catch (const std::exception& e) {
        r.failures.push_back(std::string("enumeration: ") + e.what());
        return false;
    }
    r.enumerated = now();
    on_phase(1);
    for (const auto& f : fns)
        if (f.vendor == TRN3_PCI_VENDOR_AMAZON && f.device == TRN3_PCI_DEVICE_TRN3) {
            const auto index = static_cast<unsigned>(r.devices.size());
            r.devices.push_back(std::make_unique<driver::trn3_device>(hw, driver::trn3_device::msi_data_of(index)));
            if (r.devices.back()->probe(f) != driver::status::ok)
                r.failures.push_back("probe " + driver::bdf_name(f.bdf));
        }
    if (r.devices.size() != hi.chips.size())
        r.failures.push_back(fmt::format("found {} chips, expected {}", r.devices.size(), hi.chips.size()));
    for (const auto& f : fns)
        if (f.vendor == TRN3_PCI_VENDOR_AMAZON && f.device == TRN3_PCI_DEVICE_NIC) {
            const auto index = static_cast<unsigned>(r.nic_devices.size());
            r.nic_devices.push_back(std::make_unique<driver::nic_device>(hw, driver::nic_device::msi_data_of(index)));
            r.nic_functions.push_back(f);
            if (r.nic_devices.back()->probe(f) == driver::status::ok && r.nic_devices.back()->node() != 0) ++r.nics;
            else r.failures.push_back("probe NIC " + driver::bdf_name(f.bdf));
        }
    for (std::size_t i = 0; i < r.devices.size(); ++i) {
        driver::trn3_device& d = *r.devices[i];
        const driver::status s = d.wait_boot(ns(settings.boot_timeout));
        driver::firmware_info fw;
        if (s == driver::status::ok && d.handshake(fw) == driver::status::ok) ++r.chips_up;
        else r.failures.push_back(fmt::format("chip {}: {}", driver::bdf_name(d.bdf()), driver::status_name(s)));
        const expected_chip& c = hi.chips.at(i);  // root port order = enumeration order
        if (c.fabric_id >= 0 && d.program_fabric(unsigned(c.fabric_id), c.routes) != driver::status::ok)
            r.failures.push_back("program the fabric routes of " + c.name);
    }
    r.firmware = now();
    on_phase(2);
    return true;
}

}  // namespace trn3::apps
