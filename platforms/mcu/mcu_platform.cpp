// mcu: one chip's management controller booting its firmware, and a host
// that talks to it through the mailbox.
//
//      host (bare: mmio) ── mailbox.host ─┐
//                                         mcu0: boot ROM ── SHA-256 check ── firmware (SRAM)
//                                               UART, timer, intc, sysctl, mailbox
//      mailbox.host_irq ──> host interrupt 0
//
// The boot ROM checks the firmware image against the provisioned digest
// (param mcu.mcu0.fuse_digest; default: the build's image) and starts it.
// The host runs the program `mcu.app` names (default mailbox_checks:
// VERSION, STATUS, an unknown command and a malformed one, each answer
// checked). The run passes when the program does and the watchdog never
// reset the MCU; a refused image fails it, with no hang. The report gives the
// MCU's boot status, instructions, requests and resets, and its console.
#include <sstream>

#include <fmt/format.h>

#include "trn3/mcu/mcu.h"
#include "trn3/platforms/bare_host.h"
#include "trn3/platforms/firmware_images.h"
#include "trn3/platforms/host_platform.h"
#include "trn3/spec/mcu.h"

namespace trn3 {
namespace {

class mcu_platform final : public host_platform {
public:
    bare_host host{"host"};
    mcu::mcu mcu0{"mcu0", build_firmware_images()};

    explicit mcu_platform(const sc_core::sc_module_name& name) : host_platform(name, "mailbox_checks") {
        host.cpu_mmio.bind(mcu0.mailbox0.host);
        mcu0.mailbox0.host_irq.on_change([this](bool level) {
            if (level) host.deliver_interrupt(0);
        });
        apps::host_info h;
        h.ops = &host;
        h.mailbox = 0;
        apps::host_system s;
        s.hosts.push_back(std::move(h));
        make_program(std::move(s));
        sc_core::sc_spawn([this] { program().run(0); }, "host_software");
    }

    bool passed() const override { return host_platform::passed() && mcu0.watchdog0.resets() == 0; }

    void report(std::ostream& os) const override {
        os << fmt::format("boot status {} ({}), {} instructions, {} mailbox requests, {} watchdog resets\n",
                          mcu::boot_status_name(mcu0.boot_status()), mcu0.boot_status(), mcu0.instructions(),
                          mcu0.mailbox0.requests(), mcu0.watchdog0.resets());
        if (const std::string d = mcu0.diagnosis(); !d.empty()) os << "  mcu0: " << d << "\n";
        program().report(os);
        std::istringstream console(mcu0.console());
        for (std::string line; std::getline(console, line);) os << "  mcu0 console: " << line << "\n";
        program().report_failures(os);
    }
};

const platform_registration registration{
    "mcu", "the chip's management controller: boot ROM, firmware, and a host talking to it through the mailbox",
    [] { return std::make_unique<mcu_platform>("mcu"); }};

}  // namespace
}  // namespace trn3
