// Rigs around one Trainium3 chip (models/chip):
//
//   chip_rig   the chip alone; a test initiator on its register space (what
//              BAR0 reaches) and one on its network (device addresses)
//   host_rig   the chip behind a Graviton4 as trn3-dev wires it:
//              host0 ══ Gen5 x16 ══ bridge ══ Gen6 x16 ══ chip0.ep, with the
//              driver (sw/driver) on host_ops over the host model; the test's
//              body runs as the host's software
//
// Firmware: the build's images. Without the boot ROM the MCU starts the
// firmware at once (it trains HBM and reports RUNNING in tens of
// microseconds); with it the ROM first checks the image's SHA-256 against
// the fuse digest (about 1.3 ms of simulated time).
#pragma once

#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "../common/test_initiator.h"
#include "trn3/chip/trn3_chip.h"
#include "trn3/core/message_link.h"
#include "trn3/driver/pci_enum.h"
#include "trn3/driver/trn3_device.h"
#include "trn3/host/graviton4.h"
#include "trn3/pcie/link.h"
#include "trn3/pcie/rate_bridge.h"
#include "trn3/platforms/host_adapter.h"
#include "trn3/spec/device.h"
#include "trn3/spec/mcu.h"

namespace trn3::test {

enum class boot { firmware_only, through_boot_rom };

inline mcu::mcu::images build_images(boot b) {
    std::ifstream in(TRN3_FIRMWARE_DIGEST_FILE);
    std::string digest;
    in >> digest;
    return {TRN3_FIRMWARE_ELF, b == boot::through_boot_rom ? TRN3_BOOT_ROM_ELF : "", digest};
}

struct chip_rig {
    chip::trn3_chip chip{"chip0", build_images(boot::firmware_only)};
    initiator bar0{"bar0"};  // the register space at BAR0 offsets
    initiator noc{"noc"};  // device addresses

    // `wire` attaches what the test adds (NeuronLink links) before elaboration.
    explicit chip_rig(const std::function<void(chip::trn3_chip&)>& wire = {}) {
        if (wire) wire(chip);
        bar0.out.bind(chip.regs.in);
        noc.out.bind(chip.noc.in);
        sc_core::sc_start(sc_core::SC_ZERO_TIME);
    }
    std::uint64_t rd(std::uint64_t offset, unsigned bytes = 4) {
        std::uint64_t v = 0;
        REQUIRE(bar0.access(tlm::TLM_READ_COMMAND, offset, &v, bytes) == tlm::TLM_OK_RESPONSE);
        return v;
    }
    void wr(std::uint64_t offset, std::uint64_t v, unsigned bytes = 4) {
        REQUIRE(bar0.access(tlm::TLM_WRITE_COMMAND, offset, &v, bytes) == tlm::TLM_OK_RESPONSE);
    }
    // Runs until the firmware reports RUNNING (it has trained the HBM stacks).
    void boot() {
        for (int i = 0; i < 1000 && rd(TRN3_CHIP_BOOT_STATUS) != TRN3_BOOT_RUNNING; ++i)
            sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_US));
        REQUIRE(rd(TRN3_CHIP_BOOT_STATUS) == TRN3_BOOT_RUNNING);
    }
};

struct host_rig {
    delivery_queue queue{"queue"};
    host::graviton4 host0{"host0"};
    pcie::link host_link{"host_link", queue, 1, 2, pcie::link_config{pcie::generation::gen5, 16}};
    pcie::rate_bridge bridge{"bridge"};
    pcie::link chip_link{"chip_link", queue, 3, 4, pcie::link_config{pcie::generation::gen6, 16}};
    chip::trn3_chip chip;
    host_adapter adapter{host0};
    driver::trn3_device device{adapter};
    std::vector<driver::pci_function> functions;

    explicit host_rig(boot b = boot::firmware_only) : chip("chip0", build_images(b)) {
        host0.rc.attach(0, host_link.a());
        bridge.attach(host_link.b(), chip_link.a());
        chip.ep.attach(chip_link.b());
    }

    // Runs `body` as the host's software and the simulation until it
    // returns (at most `limit` of simulated time).
    void run(const std::function<void()>& body, sc_core::sc_time limit = sc_core::sc_time(20, sc_core::SC_MS)) {
        bool done = false;
        host0.run("software", [&] {
            body();
            done = true;
            sc_core::sc_stop();
        });
        sc_core::sc_start(limit);
        REQUIRE(done);
    }

    // ---- steps of the host's software ----
    // Waits for the root port's link, then enumerates (the pools of trn3-dev).
    void enumerate() {
        auto& cfg = adapter.config();
        while (!(cfg.read(0, TRN3_PCI_PCIE_CAP + TRN3_PCIE_LINK_STATUS, 2) & TRN3_PCIE_LINK_DL_ACTIVE))
            adapter.sleep_ns(1000);
        functions = driver::enumerate(cfg, {0xE0000000ull, 0x10000000ull, 0x100000000000ull, 1ull << 40});
    }
    // Enumerates and probes the chip; both must succeed.
    void probe() {
        enumerate();
        REQUIRE(device.probe(functions) == driver::status::ok);
    }
    // ... and waits for the firmware.
    void bring_up() {
        probe();
        REQUIRE(device.wait_boot(5'000'000) == driver::status::ok);
    }
    std::uint32_t bar0_read(std::uint32_t offset) { return adapter.mmio_read32(device.bar0() + offset); }
    std::uint64_t now_ns() const { return adapter.now_ns(); }
};

}  // namespace trn3::test
