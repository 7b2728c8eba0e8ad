// trn3-dev: one Trainium3 and its host.
//
//   host0 (Graviton4: rc, iommu, ddr) ══ Gen5 x16 ══ bridge (Gen6-to-Gen5) ══ Gen6 x16, 2 retimers ══ chip0.ep
//   chip0: 8 NeuronCores, 4 HBM3E stacks, DMA engine, MCU (boot ROM + firmware), PCIe endpoint
//   chip0 NeuronLink ports 0 and 1: a backplane bundle and a cross-rack cable whose far ends are off the platform
//
// The host runs the program `trn3dev.app` names (default chip_checks: from
// power-on to verified kernels and the error paths, sw/apps); the report
// ends with the MCU's console.
//
//   trn3vp run --platform trn3-dev [--timeline run.json]
#include <sstream>

#include "trn3/chip/trn3_chip.h"
#include "trn3/core/message_link.h"
#include "trn3/host/graviton4.h"
#include "trn3/pcie/link.h"
#include "trn3/pcie/rate_bridge.h"
#include "trn3/platforms/firmware_images.h"
#include "trn3/platforms/host_adapter.h"
#include "trn3/platforms/host_platform.h"
#include "trn3/spec/host.h"

namespace trn3 {
namespace {

using pcie::generation;
using pcie::link_config;

class trn3_dev final : public host_platform {
public:
    delivery_queue queue{"queue"};
    host::graviton4 host0{"host0"};
    pcie::link host_link{"host_link", queue, 1, 2, link_config{generation::gen5, 16}};
    pcie::rate_bridge bridge{"bridge"};
    pcie::link chip_link{"chip_link", queue, 3, 4, link_config{generation::gen6, 16}.with_retimers(2)};
    chip::trn3_chip chip0{"chip0", build_firmware_images()};
    // Two of the chip's NeuronLink ports, trained by its firmware: a backplane
    // bundle (x64 + 16 spare lanes, a retimer) and a cross-rack x16 cable
    // (two retimers: the AEC).
    pcie::link nl0{"nl0", queue, 5, 6,
                   link_config{generation::gen6, 64}.with_retimers(1).with_spares(16).trained_by_firmware()};
    pcie::link nl1{"nl1", queue, 7, 8, link_config{generation::gen6, 16}.with_retimers(2).trained_by_firmware()};

    explicit trn3_dev(const sc_core::sc_module_name& name) : host_platform(name, "chip_checks"), adapter_(host0) {
        host0.rc.attach(0, host_link.a());
        bridge.attach(host_link.b(), chip_link.a());
        chip0.ep.attach(chip_link.b());
        chip0.attach_neuronlink(0, nl0);
        chip0.attach_neuronlink(1, nl1);

        apps::host_info h;
        h.ops = &adapter_;
        h.pci_windows = {TRN3_DEVHOST_MMIO32_BASE, TRN3_DEVHOST_MMIO32_SIZE, TRN3_DEVHOST_MMIO64_BASE,
                         TRN3_DEVHOST_MMIO64_SIZE};
        h.chips.push_back({"chip0", -1, {}});
        apps::host_system s;
        s.hosts.push_back(std::move(h));
        s.fabric_forwarded.push_back(&chip0.fabric_forwarded());
        make_program(std::move(s));
        host0.run("software", [this] { program().run(0); });
    }

    void report(std::ostream& os) const override {
        host_platform::report(os);
        std::istringstream console(chip0.mcu0.console());
        for (std::string line; std::getline(console, line);) os << "  mcu0 console: " << line << "\n";
        if (const std::string d = chip0.mcu0.diagnosis(); !d.empty()) os << "  mcu0: " << d << "\n";
    }

private:
    host_adapter adapter_;
};

const platform_registration registration{
    "trn3-dev", "one Trainium3 and its host: power-on, firmware, driver, runtime, reference kernels verified",
    [] { return std::make_unique<trn3_dev>("trn3dev"); }};

}  // namespace
}  // namespace trn3
