// firmware_recovery: the host program of the firmware-fault campaign. Each
// host brings its chips up, then runs `firmware_recovery.items` work items
// on each of its chips, `gap` apart. An item:
//   1. a seeded block of `bytes` written to device memory,
//   2. copied on the chip (a DMA descriptor) and read back: exact, or the
//      item fails,
//   3. NeuronCore 0 reset by the firmware (RESET_CORE, a mailbox command),
//   4. the firmware's telemetry: its uptime must have gone on with the
//      host's clock since the last item (within a millisecond).
// A firmware fault shows as a mailbox call that times out (the firmware
// hung) or an uptime that fell behind (the watchdog reset the MCU behind
// the driver's back: the firmware started again). Either way the driver recovers the chip (MCU reset from
// the host, probe, boot, handshake: trn3_device::recover) and the item runs
// again from its first step. More than `max_recoveries` on one chip fails
// the run. The report: items done, faults by how they were noticed,
// recoveries, items run again, simulated time from each fault's notice to
// the chip answering again.
//
// params: firmware_recovery.items, .bytes, .gap, .boot_timeout, .max_recoveries, .seed
#include <cstring>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "bring_up.h"
#include "trn3/apps/host_program.h"
#include "trn3/core/param.h"

namespace trn3::apps {
namespace {

class firmware_recovery final : public host_program {
public:
    param<std::uint64_t> items{nullptr, "firmware_recovery.items", 8, "work items per chip",
                               range<std::uint64_t>{1, 100000}};
    param<byte_count> bytes{nullptr, "firmware_recovery.bytes", byte_count{64 << 10},
                            "bytes each item writes, copies and reads back",
                            range<byte_count>{byte_count{4}, byte_count{4 << 20}}};
    param<sc_core::sc_time> gap{nullptr, "firmware_recovery.gap", sc_core::sc_time(2, sc_core::SC_MS),
                                "host time between two items"};
    param<sc_core::sc_time> boot_timeout{nullptr, "firmware_recovery.boot_timeout",
                                         sc_core::sc_time(50, sc_core::SC_MS),
                                         "longest the driver waits for the firmware after a reset"};
    param<std::uint64_t> max_recoveries{nullptr, "firmware_recovery.max_recoveries", 3,
                                        "recoveries one chip may need before the run fails",
                                        range<std::uint64_t>{0, 1000}};
    param<std::uint64_t> seed{nullptr, "firmware_recovery.seed", 1, "seed of the items' data", seed_range()};

    explicit firmware_recovery(host_system& s) : sys_(s), hosts_(s.hosts.size()) {}

    bool passed() const override {
        if (hosts_done_ != hosts_.size()) return false;
        for (const auto& h : hosts_)
            if (!h.failures.empty()) return false;
        return true;
    }
    void report(std::ostream& os) const override {
        for (const auto& h : hosts_) os << h.log.str();
    }
    void report_failures(std::ostream& os) const override {
        for (std::size_t h = 0; h < hosts_.size(); ++h)
            for (const auto& f : hosts_[h].failures) os << "  FAILED: host " << h << ": " << f << "\n";
    }

    void run(unsigned h) override {
        work(h);
        if (++hosts_done_ == hosts_.size()) sys_.stop();
    }

private:
    struct host_state {
        std::ostringstream log;
        std::vector<std::string> failures;
    };
    enum class outcome { done, fault, failed };
    static constexpr std::uint64_t restart_slack_us = 1000;

    // One item on one chip; `why` says what went wrong.
    // The firmware's uptime when the host last read it, and the host's clock then.
    struct seen {
        std::uint64_t uptime_us = 0, host_ns = 0;
    };
    outcome item(driver::host_ops& host, driver::trn3_device& d, std::uint64_t src, std::uint64_t dst, std::uint64_t k,
                 seen& last, std::string& why) {
        const std::size_t n = static_cast<std::size_t>(bytes.get().bytes);
        std::vector<std::uint8_t> data(n), back(n);
        std::mt19937_64 rng(seed.get() * 1000003 + k);
        for (auto& b : data) b = static_cast<std::uint8_t>(rng());
        driver::status s = d.write(src, data.data(), n);
        if (s == driver::status::ok) s = d.device_copy(src, dst, n);
        if (s == driver::status::ok) s = d.read(back.data(), dst, n);
        if (s != driver::status::ok) {
            why = fmt::format("moving the data: {}", driver::status_name(s));
            return outcome::failed;
        }
        if (back != data) {
            why = "the data read back differs from what was written";
            return outcome::failed;
        }
        s = d.firmware_reset_core(0);
        trn3_mbox_telemetry t{};
        if (s == driver::status::ok) s = d.telemetry(t);
        if (s == driver::status::firmware_timeout) {
            why = "a mailbox call timed out";
            return outcome::fault;
        }
        if (s != driver::status::ok) {
            why = fmt::format("the firmware's answer: {}", driver::status_name(s));
            return outcome::failed;
        }
        const std::uint64_t now_ns = host.now_ns(), expected_us = last.uptime_us + (now_ns - last.host_ns) / 1000;
        const bool restarted = t.uptime_us + restart_slack_us < expected_us;
        last = {t.uptime_us, now_ns};
        if (restarted) {
            why = fmt::format("the firmware restarted (uptime {} us where {} us was due)", t.uptime_us, expected_us);
            return outcome::fault;
        }
        return outcome::done;
    }

    void work(unsigned h) {
        host_state& me = hosts_[h];
        const host_info& hi = sys_.hosts[h];
        driver::host_ops& host = *hi.ops;
        brought_up up;
        if (!bring_up(hi, {sc_core::sc_time(10, sc_core::SC_MS), boot_timeout.get()}, up, [](unsigned) {}) ||
            up.chips_up != up.devices.size()) {
            me.failures = up.failures;
            if (me.failures.empty()) me.failures.push_back("not every chip came up");
            return;
        }
        const std::size_t n = static_cast<std::size_t>(bytes.get().bytes);
        const auto boot_ns = static_cast<std::uint64_t>(boot_timeout.get().to_seconds() * 1e9);
        const auto gap_ns = static_cast<std::uint64_t>(gap.get().to_seconds() * 1e9);
        std::vector<std::uint64_t> src(up.devices.size()), dst(up.devices.size());
        std::vector<seen> last(up.devices.size());
        std::vector<std::uint64_t> recovered(up.devices.size(), 0);
        for (std::size_t c = 0; c < up.devices.size(); ++c)
            if (up.devices[c]->alloc(n, src[c]) != driver::status::ok ||
                up.devices[c]->alloc(n, dst[c]) != driver::status::ok) {
                me.failures.push_back(fmt::format("chip {}: device memory for the items", c));
                return;
            }
        std::uint64_t done = 0, again = 0, timeouts = 0, restarts = 0;
        for (std::uint64_t k = 0; k < items.get(); ++k) {
            if (k) host.sleep_ns(gap_ns);
            for (std::size_t c = 0; c < up.devices.size(); ++c) {
                driver::trn3_device& d = *up.devices[c];
                for (;;) {
                    std::string why;
                    const outcome o = item(host, d, src[c], dst[c], k * up.devices.size() + c, last[c], why);
                    if (o == outcome::done) {
                        ++done;
                        break;
                    }
                    const std::string where = fmt::format("chip {} item {}", c, k);
                    if (o == outcome::failed) {
                        me.failures.push_back(fmt::format("{}: {}", where, why));
                        return;
                    }
                    (why.rfind("a mailbox", 0) == 0 ? timeouts : restarts)++;
                    if (recovered[c] == max_recoveries.get()) {
                        me.failures.push_back(
                            fmt::format("{}: {}, after {} recoveries: gave up", where, why, recovered[c]));
                        return;
                    }
                    const std::uint64_t noticed = host.now_ns();
                    driver::firmware_info info;
                    const driver::status s = d.recover(info, boot_ns);
                    ++recovered[c];
                    if (s != driver::status::ok) {
                        me.failures.push_back(
                            fmt::format("{}: {}; the recovery: {}", where, why, driver::status_name(s)));
                        return;
                    }
                    last[c] = {info.uptime_us, host.now_ns()};
                    ++again;
                    me.log << fmt::format(
                        "  firmware_recovery: host {} {}: {} at {:.3f} ms; MCU reset, probed, firmware {}.{} "
                        "answering {:.3f} ms later; the item runs again\n",
                        h, where, why, noticed / 1e6, info.version >> 16, info.version & 0xffff,
                        (host.now_ns() - noticed) / 1e6);
                }
            }
        }
        for (std::size_t c = 0; c < up.devices.size(); ++c) {
            up.devices[c]->free(src[c]);
            up.devices[c]->free(dst[c]);
        }
        std::uint64_t recoveries = 0;
        for (const auto& d : up.devices) recoveries += d->recoveries();
        me.log << fmt::format(
            "firmware_recovery: host {}: {} of {} items exact on {} chip(s), {} B each; faults noticed: {} by a "
            "mailbox timeout, {} by a restarted firmware; {} recoveries, {} items run again\n",
            h, done, items.get() * up.devices.size(), up.devices.size(), n, timeouts, restarts, recoveries, again);
    }

    host_system& sys_;
    std::vector<host_state> hosts_;
    std::size_t hosts_done_ = 0;
};

const program_registration registration{
    "firmware_recovery",
    "work items on every chip while its firmware may hang: the driver notices, resets the MCU, probes again, and "
    "the item runs again",
    [](host_system& s) { return std::make_unique<firmware_recovery>(s); }};

}  // namespace
}  // namespace trn3::apps
