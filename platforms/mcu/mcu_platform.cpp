// mcu: one chip's management controller booting its firmware, and a host
// that talks to it through the mailbox.
//
//      host (mailbox driver) ── mailbox.host ─┐
//                                             mcu0: boot ROM ── SHA-256 check ── firmware (SRAM)
//                                                   UART, timer, intc, sysctl, mailbox
//
// The boot ROM checks the firmware image against the provisioned digest
// (param mcu.mcu0.fuse_digest; default: the build's image) and starts it;
// the host then sends VERSION, STATUS, an unknown command and a malformed
// one, and checks each answer. The run passes when the boot was verified and
// every answer is the protocol's; a refused image fails it, with no hang.
#include <cstring>
#include <sstream>

#include <fmt/format.h>

#include "trn3/core/payload.h"
#include "trn3/mcu/mcu.h"
#include "trn3/platforms/firmware_images.h"
#include "trn3/platforms/platform.h"
#include "trn3/spec/mailbox.h"
#include "trn3/spec/mcu.h"

namespace trn3 {
namespace {

class mcu_platform final : public platform {
public:
    param<sc_core::sc_time> timeout{this, "timeout", sc_core::sc_time(10, sc_core::SC_MS),
                                    "longest the host waits for one mailbox answer"};
    param<sc_core::sc_time> idle{
        this, "idle", sc_core::SC_ZERO_TIME,
        "time the host lets pass before its first request (the firmware idles, kicking its watchdog)"};
    tlm_utils::simple_initiator_socket<mcu_platform> host{"host"};
    mcu::mcu mcu0{"mcu0", build_firmware_images()};

    explicit mcu_platform(const sc_core::sc_module_name& name) : platform(name) {
        host.bind(mcu0.mailbox0.host);
        mcu0.mailbox0.host_irq.on_change([this](bool level) {
            if (level) answered_.notify(sc_core::SC_ZERO_TIME);
        });
        SC_HAS_PROCESS(mcu_platform);
        SC_THREAD(driver);
    }

    bool passed() const override { return failures_.empty() && exchanges_ == 4 && mcu0.watchdog0.resets() == 0; }

    void report(std::ostream& os) const override {
        os << fmt::format("boot status {} ({}), {} instructions, {} mailbox requests, {} watchdog resets\n",
                          boot_name(mcu0.boot_status()), mcu0.boot_status(), mcu0.instructions(),
                          mcu0.mailbox0.requests(), mcu0.watchdog0.resets());
        os << log_.str();
        std::istringstream console(mcu0.console());
        for (std::string line; std::getline(console, line);) os << "  mcu0 console: " << line << "\n";
        for (const auto& f : failures_) os << "  FAILED: " << f << "\n";
    }

private:
    static const char* boot_name(std::uint32_t s) {
        switch (s) {
        case TRN3_BOOT_RESET: return "reset";
        case TRN3_BOOT_CHECKING: return "checking";
        case TRN3_BOOT_VERIFIED: return "verified";
        case TRN3_BOOT_REFUSED: return "refused";
        case TRN3_BOOT_RUNNING: return "running";
        default: return "?";
        }
    }
    void access(tlm::tlm_command cmd, std::uint64_t address, void* data, unsigned bytes) {
        tlm::tlm_generic_payload tx;
        sc_core::sc_time delay;
        set_access(tx, cmd, address, static_cast<unsigned char*>(data), bytes);
        host->b_transport(tx, delay);
        wait(delay);
    }
    // One exchange: returns false (and records why) when no answer comes.
    bool exchange(std::uint16_t command, const void* payload, std::uint16_t length, trn3_mbox_response& rs) {
        trn3_mbox_request rq{};
        rq.command = command;
        rq.length = length;
        rq.tag = 0x1000 + command;
        if (payload) std::memcpy(rq.payload, payload, length);
        access(tlm::TLM_WRITE_COMMAND, TRN3_MBOX_REQUEST, &rq, sizeof rq);
        std::uint32_t one = 1;
        const sc_core::sc_time sent = sc_core::sc_time_stamp();
        access(tlm::TLM_WRITE_COMMAND, TRN3_MBOX_H2M_DOORBELL, &one, 4);
        if (!mcu0.mailbox0.host_irq.level()) wait(timeout.get(), answered_);
        if (!mcu0.mailbox0.host_irq.level()) {
            failures_.push_back(fmt::format("command {}: no answer within {} (boot status {})", command,
                                            timeout.get().to_string(), boot_name(mcu0.boot_status())));
            return false;
        }
        access(tlm::TLM_READ_COMMAND, TRN3_MBOX_RESPONSE, &rs, sizeof rs);
        access(tlm::TLM_WRITE_COMMAND, TRN3_MBOX_M2H_DOORBELL, &one, 4);
        ++exchanges_;
        log_ << fmt::format("  mailbox command {} answered with status {} after {}\n", command, rs.status,
                            (sc_core::sc_time_stamp() - sent).to_string());
        if (rs.tag != rq.tag)
            failures_.push_back(fmt::format("command {}: tag {:#x}, sent {:#x}", command, rs.tag, rq.tag));
        return true;
    }
    void expect(bool ok, const std::string& what) {
        if (!ok) failures_.push_back(what);
    }

    void driver() {
        wait(idle.get());
        trn3_mbox_response rs{};
        if (exchange(TRN3_MBOX_CMD_VERSION, nullptr, 0, rs)) {
            trn3_mbox_version v;
            std::memcpy(&v, rs.payload, sizeof v);
            expect(rs.status == TRN3_MBOX_STATUS_OK && rs.length == sizeof v &&
                       v.protocol_version == TRN3_MBOX_PROTOCOL_VERSION,
                   "VERSION: status, length or protocol version");
            log_ << fmt::format("  firmware {}.{} '{}', protocol {}\n", v.firmware_version >> 16,
                                v.firmware_version & 0xffff, v.build, v.protocol_version);
        }
        if (failures_.empty() && exchange(TRN3_MBOX_CMD_STATUS, nullptr, 0, rs)) {
            trn3_mbox_status st;
            std::memcpy(&st, rs.payload, sizeof st);
            expect(rs.status == TRN3_MBOX_STATUS_OK && st.boot_status == TRN3_BOOT_RUNNING && st.commands_served == 2,
                   "STATUS: status, boot status or commands served");
            log_ << fmt::format("  firmware status: uptime {} us, {} commands served\n", st.uptime_us,
                                st.commands_served);
        }
        if (failures_.empty() && exchange(0x7777, nullptr, 0, rs))
            expect(rs.status == TRN3_MBOX_STATUS_UNKNOWN_COMMAND, "an unknown command was not refused");
        const std::uint32_t extra = 0;
        if (failures_.empty() && exchange(TRN3_MBOX_CMD_VERSION, &extra, 4, rs))
            expect(rs.status == TRN3_MBOX_STATUS_BAD_LENGTH, "a malformed VERSION was not refused");
        sc_core::sc_stop();
    }

    sc_core::sc_event answered_;
    unsigned exchanges_ = 0;
    std::vector<std::string> failures_;
    std::ostringstream log_;
};

const platform_registration registration{
    "mcu", "the chip's management controller: boot ROM, firmware, and a host talking to it through the mailbox",
    [] { return std::make_unique<mcu_platform>("mcu"); }};

}  // namespace
}  // namespace trn3
