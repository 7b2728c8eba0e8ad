// mailbox_checks: the first host talks to a management controller through
// its mailbox directly (a bench without PCIe: the mcu platform), as the
// driver's mailbox layer would. After `idle` it sends VERSION, STATUS, an
// unknown command and a malformed VERSION, and checks each answer: status,
// tag, length, protocol version, the commands the firmware counted.
//
// params: mailbox_checks.timeout, mailbox_checks.idle
#include <cstring>
#include <sstream>

#include <fmt/format.h>
#include <systemc>

#include "trn3/apps/host_program.h"
#include "trn3/core/param.h"
#include "trn3/spec/mailbox.h"
#include "trn3/spec/mcu.h"

namespace trn3::apps {
namespace {

constexpr std::uint32_t answer_irq = 0;  // the message data the mailbox's answer interrupt arrives with

class mailbox_checks final : public host_program {
public:
    param<sc_core::sc_time> timeout{nullptr, "mailbox_checks.timeout", sc_core::sc_time(10, sc_core::SC_MS),
                                    "longest the host waits for one mailbox answer"};
    param<sc_core::sc_time> idle{
        nullptr, "mailbox_checks.idle", sc_core::SC_ZERO_TIME,
        "time the host lets pass before its first request (the firmware idles, kicking its watchdog)"};

    explicit mailbox_checks(host_system& s) : sys_(s) {
        if (s.hosts.empty() || s.hosts[0].mailbox == host_info::no_mailbox)
            throw config_error(
                "program mailbox_checks needs a host that reaches a mailbox directly (the mcu platform)");
        s.hosts[0].ops->request_irq(answer_irq, [this] { answered_ = true; });
    }

    bool passed() const override { return failures_.empty() && exchanges_ == 4; }
    void report(std::ostream& os) const override { os << log_.str(); }
    void report_failures(std::ostream& os) const override {
        for (const auto& f : failures_) os << "  FAILED: " << f << "\n";
    }

    void run(unsigned h) override {
        if (h == 0) checks(*sys_.hosts[0].ops, sys_.hosts[0].mailbox);
        if (++hosts_done_ == sys_.hosts.size()) sys_.stop();
    }

private:
    // One exchange: returns false (and records why) when no answer comes.
    bool exchange(driver::host_ops& host, std::uint64_t mbox, std::uint16_t command, const void* payload,
                  std::uint16_t length, trn3_mbox_response& rs) {
        trn3_mbox_request rq{};
        rq.command = command;
        rq.length = length;
        rq.tag = 0x1000 + command;
        if (payload) std::memcpy(rq.payload, payload, length);
        answered_ = false;
        host.mmio_write(mbox + TRN3_MBOX_REQUEST, &rq, sizeof rq);
        const sc_core::sc_time sent = sc_core::sc_time_stamp();
        host.mmio_write32(mbox + TRN3_MBOX_H2M_DOORBELL, TRN3_MBOX_DOORBELL_RING);
        const std::uint64_t wait_ns = static_cast<std::uint64_t>(timeout.get().to_seconds() * 1e9);
        if (!host.wait_until([this] { return answered_; }, wait_ns, wait_ns)) {
            failures_.push_back(fmt::format("command {}: no answer within {}", command, timeout.get().to_string()));
            return false;
        }
        host.mmio_read(mbox + TRN3_MBOX_RESPONSE, &rs, sizeof rs);
        host.mmio_write32(mbox + TRN3_MBOX_M2H_DOORBELL, TRN3_MBOX_DOORBELL_CLEAR);
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

    void checks(driver::host_ops& host, std::uint64_t mbox) {
        host.sleep_ns(static_cast<std::uint64_t>(idle.get().to_seconds() * 1e9));
        trn3_mbox_response rs{};
        if (exchange(host, mbox, TRN3_MBOX_CMD_VERSION, nullptr, 0, rs)) {
            trn3_mbox_version v;
            std::memcpy(&v, rs.payload, sizeof v);
            expect(rs.status == TRN3_MBOX_STATUS_OK && rs.length == sizeof v &&
                       v.protocol_version == TRN3_MBOX_PROTOCOL_VERSION,
                   "VERSION: status, length or protocol version");
            log_ << fmt::format("  firmware {}.{} '{}', protocol {}\n", v.firmware_version >> 16,
                                v.firmware_version & 0xffff, v.build, v.protocol_version);
        }
        if (failures_.empty() && exchange(host, mbox, TRN3_MBOX_CMD_STATUS, nullptr, 0, rs)) {
            trn3_mbox_status st;
            std::memcpy(&st, rs.payload, sizeof st);
            expect(rs.status == TRN3_MBOX_STATUS_OK && st.boot_status == TRN3_BOOT_RUNNING && st.commands_served == 2,
                   "STATUS: status, boot status or commands served");
            log_ << fmt::format("  firmware status: uptime {} us, {} commands served\n", st.uptime_us,
                                st.commands_served);
        }
        if (failures_.empty() && exchange(host, mbox, 0x7777, nullptr, 0, rs))
            expect(rs.status == TRN3_MBOX_STATUS_UNKNOWN_COMMAND, "an unknown command was not refused");
        const std::uint32_t extra = 0;
        if (failures_.empty() && exchange(host, mbox, TRN3_MBOX_CMD_VERSION, &extra, 4, rs))
            expect(rs.status == TRN3_MBOX_STATUS_BAD_LENGTH, "a malformed VERSION was not refused");
    }

    host_system& sys_;
    bool answered_ = false;
    unsigned exchanges_ = 0;
    std::size_t hosts_done_ = 0;
    std::vector<std::string> failures_;
    std::ostringstream log_;
};

const program_registration registration{"mailbox_checks",
                                        "talk to a management controller's mailbox directly: VERSION, STATUS, refusals",
                                        [](host_system& s) { return std::make_unique<mailbox_checks>(s); }};

}  // namespace
}  // namespace trn3::apps
