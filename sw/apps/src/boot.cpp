// boot: every host brings up its chips, as after power-on, and the fabric is
// checked with traffic.
//
// Each host waits for its root ports' links, enumerates, probes each chip
// (BARs, MSI-X, rings), waits for its firmware (the boot ROM checks the
// image, the firmware trains HBM and NeuronLink), shakes hands over the
// mailbox, programs the chip's fabric id and route table (from the
// platform's fabric manager), and runs a small reference kernel (softmax
// 128x512) on each chip through the runtime, checking it against fp64.
// Then, once every host has put its chips on the fabric (a chip takes and
// forwards fabric traffic only after its host has programmed its routes and
// enabled it), every chip writes a pattern into other chips' HBM over
// NeuronLink (device DMA to fabric addresses: through switches and
// forwarding chips); each host waits until its chips' fabric counters show
// every expected byte landed, then reads the inboxes back.
//
// Cut by rack (host_system::parts), each rack's hosts run an instance; the
// instances meet through the launcher's store where the hosts meet (the
// fabric opened, the inboxes checked) and swap their totals at the end, so
// the report is the system's.
//
// In a cluster, each UltraServer's first host then runs the libfabric
// ping-pong and bandwidth program (fabric_perf) with the first host of its
// partner UltraServer (ranks 0-1, 2-3, ...) over EFA: its own NIC, the ToRs
// and spines, the partner's NIC; addresses swapped through the cluster's
// out-of-band store.
//
// params: boot.kernels, boot.boot_timeout, boot.fabric_check, boot.fabric_timeout, boot.efa_check
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <functional>
#include <iostream>
#include <random>

#include <fmt/format.h>
#include <systemc>

#include "bring_up.h"
#include "cluster_exchange.h"
#include "host_barrier.h"
#include "phase_track.h"
#include "trn3/apps/fabric_perf.h"
#include "trn3/apps/host_program.h"
#include "trn3/core/param.h"
#include "trn3/driver/trn3_device.h"
#include "trn3/kernels/norm.h"
#include "trn3/kernels/reference.h"
#include "trn3/runtime/container.h"
#include "trn3/runtime/nrt.h"
#include "trn3/spec/device.h"
#include "trn3/spec/pci.h"

namespace trn3::apps {
namespace {

// Where the fabric check keeps its data in each chip's HBM (stack 0, far
// from what the runtime allocates first): the pattern a chip sends, and the
// inbox where chip k's write lands at slot k.
constexpr std::uint64_t fabric_scratch = 32ull << 30, fabric_inbox = 33ull << 30, fabric_readback = 34ull << 30,
                        fabric_slot = 4096;

class boot final : public host_program {
public:
    param<bool> kernels{nullptr, "boot.kernels", true, "run and check a reference kernel on every chip"};
    param<sc_core::sc_time> boot_timeout{nullptr, "boot.boot_timeout", sc_core::sc_time(50, sc_core::SC_MS),
                                         "longest a host waits for a chip's firmware"};
    param<std::string> fabric_check{
        nullptr, "boot.fabric_check", "far",
        "chip-to-chip writes over NeuronLink after the kernels: far (each chip to one in the "
        "other half of the system), all (every pair), off",
        one_of<std::string>{{"far", "all", "off"}}};
    param<sc_core::sc_time> link_timeout{nullptr, "boot.link_timeout", sc_core::sc_time(10, sc_core::SC_MS),
                                         "longest a host waits for each root port's link"};
    param<sc_core::sc_time> fabric_timeout{nullptr, "boot.fabric_timeout", sc_core::sc_time(1, sc_core::SC_MS),
                                           "longest a host waits for the fabric check's writes to land in its chips",
                                           range<sc_core::sc_time>{sc_core::sc_time(1, sc_core::SC_US), {}}};

    param<std::string> efa_check{nullptr, "boot.efa_check", "pingpong",
                                 "in a cluster: ping-pong and bandwidth over EFA between partner UltraServers' first "
                                 "hosts (libfabric), or off",
                                 one_of<std::string>{{"pingpong", "off"}}};

    explicit boot(host_system& s) : sys_(s), results_(s.hosts.size()) {
        for (std::size_t h = 0; h < s.hosts.size(); ++h)
            tracks_.emplace_back(s.instance_name(), fmt::format("host{} software", s.first_host + h));
        for (const auto& h : s.hosts)
            if (h.chips.empty())
                throw config_error("program boot needs hosts with Trainium3 chips (" + s.name + " has none)");
    }

    void run(unsigned h) override { software(h); }

    bool passed() const override {
        if (hosts_done_ != sys_.hosts.size() || (sys_.parts > 1 && !totals_.valid)) return false;
        for (const auto& r : results_)
            if (!r.failures.empty()) return false;
        return true;
    }

    void report(std::ostream& os) const override {
        // Cut into parts, the system's (this part's own, if the swap failed: its failures say so).
        const summary t = sys_.parts > 1 && totals_.valid ? totals_ : summed();
        const std::uint64_t chips_up = t.counts[0], kernels_ok = t.counts[1], kernels_run = t.counts[2],
                            nics = t.counts[3], chips = t.counts[4], expected_nics = t.counts[5];
        const double link_up = t.times[0], enumerated = t.times[1], firmware = t.times[2], done = t.times[3];
        os << "boot (slowest host):\n";
        os << fmt::format("  host links up                  {:>10.1f} us\n", link_up * 1e6);
        os << fmt::format("  enumerated                     {:>10.1f} us\n", enumerated * 1e6);
        os << fmt::format("  every chip's firmware running  {:>10.1f} us (HBM and NeuronLink trained)\n",
                          firmware * 1e6);
        os << fmt::format("  kernels verified               {:>10.1f} us\n", done * 1e6);
        os << fmt::format("chips up: {} of {}; kernels verified: {} of {}; NICs probed: {} of {}\n", chips_up, chips,
                          kernels_ok, kernels_run, nics, expected_nics);
        if (fabric_check.get() != "off") {
            const std::uint64_t sent = t.counts[6], ok = t.counts[7], read_ok = t.counts[8], dropped = t.counts[9],
                                forwarded = t.counts[10];
            os << fmt::format("fabric: {} of {} chip-to-chip writes over NeuronLink verified ({} pairs), {} of {} read "
                              "back by their writers, {} TLPs forwarded by chips, {} dropped\n",
                              ok, sent, fabric_check.get(), read_ok, sent, forwarded, dropped);
        }
        if (!efa_.points.empty()) {
            unsigned messages = 0, exact = 0;
            std::string figures;
            for (const auto& p : efa_.points) {
                messages += p.messages;
                exact += p.exact;
                figures += efa_initiator_ ? fmt::format(", {} B {:.3f} us", p.bytes, p.latency_us)
                                          : fmt::format(", {} B {:.1f} Gb/s", p.bytes, p.gbit_per_s);
            }
            os << fmt::format("EFA: with {} over libfabric (trn3vp), {} of {} messages exact; {}{}\n", efa_peer_, exact,
                              messages, efa_initiator_ ? "half round trip" : "bandwidth", figures);
        }
    }

    void report_failures(std::ostream& os) const override {
        for (std::size_t h = 0; h < results_.size(); ++h)
            for (const auto& f : results_[h].failures)
                os << "  FAILED: host " << sys_.first_host + h << ": " << f << "\n";
    }

private:
    // What the report adds up: chips up, kernels verified and run, NICs
    // probed and expected, chips, fabric writes sent, verified, read back,
    // dropped, TLPs forwarded; the slowest host's link-up, enumeration,
    // firmware and kernel times (seconds).
    struct summary {
        std::array<std::uint64_t, 11> counts{};
        std::array<double, 4> times{};
        bool valid = false;
    };
    summary summed() const {
        summary t;
        for (std::size_t h = 0; h < results_.size(); ++h) {
            const host_result& r = results_[h];
            const std::array<std::uint64_t, 11> c{r.chips_up,
                                                  r.kernels_ok,
                                                  r.kernels_run,
                                                  r.nics,
                                                  sys_.hosts[h].chips.size(),
                                                  sys_.hosts[h].nics,
                                                  r.fabric_sent,
                                                  r.fabric_ok,
                                                  r.fabric_read_ok,
                                                  r.fabric_dropped,
                                                  0};
            for (std::size_t k = 0; k < c.size(); ++k) t.counts[k] += c[k];
            const std::array<double, 4> times{r.link_up, r.enumerated, r.firmware, r.done};
            for (std::size_t k = 0; k < times.size(); ++k) t.times[k] = std::max(t.times[k], times[k]);
        }
        for (const counter* c : sys_.fabric_forwarded) t.counts[10] += c->value();
        t.valid = true;
        return t;
    }
    // Cut into parts: every instance's summary, swapped once every part is
    // done with the fabric (times in picoseconds).
    void swap_totals(unsigned h) {
        if (!everywhere(h, {})) return;
        if (!everywhere(h, [this] {
                const summary mine = summed();
                std::vector<std::uint64_t> v(mine.counts.begin(), mine.counts.end());
                for (double t : mine.times) v.push_back(std::uint64_t(std::llround(t * 1e12)));
                return v;
            }))
            return;
        if (h != 0) return;
        summary all;
        for (const auto& v : exchange_.gathered()) {
            for (std::size_t k = 0; k < all.counts.size(); ++k) all.counts[k] += v.at(k);
            for (std::size_t k = 0; k < all.times.size(); ++k)
                all.times[k] = std::max(all.times[k], double(v.at(all.counts.size() + k)) / 1e12);
        }
        all.valid = true;
        totals_ = all;
    }
    // The hosts of every part meet (a part's own first, then through the store).
    bool everywhere(unsigned h, const std::function<std::vector<std::uint64_t>()>& values) {
        constexpr std::uint64_t timeout_ns = 100'000'000, poll_ns = 10'000;
        std::string why;
        const auto none = [] { return std::vector<std::uint64_t>{}; };
        if (exchange_.everywhere(
                h, [&] { return barrier_.arrive(h, timeout_ns, poll_ns); }, values ? values : none, timeout_ns, poll_ns,
                why))
            return true;
        results_[h].failures.push_back(why.empty() ? "the system's other hosts did not reach a barrier in time" : why);
        return false;
    }

    struct host_result {
        unsigned chips_up = 0, kernels_ok = 0, kernels_run = 0, fabric_sent = 0, fabric_ok = 0, fabric_read_ok = 0,
                 nics = 0;
        std::uint64_t fabric_dropped = 0;
        double link_up = 0, enumerated = 0, firmware = 0, done = 0;
        std::vector<std::string> failures;
    };
    static double now() { return sc_core::sc_time_stamp().to_seconds(); }

    void software(unsigned h) {
        const host_info& hi = sys_.hosts[h];
        host_result& r = results_[h];
        static const char* const phases[] = {"host links up", "enumerated",
                                             "chips probed, firmware running, routes programmed"};
        static const char* const milestones[] = {
            "host links up", "hosts enumerated their chips",
            "chips' firmware running (HBM and NeuronLink trained), routes programmed"};
        brought_up b;
        const bool went_on = bring_up(hi, {link_timeout.get(), boot_timeout.get()}, b, [&](unsigned phase) {
            tracks_[h].mark(phases[phase]);
            milestone(phase, milestones[phase]);
        });
        r.chips_up = b.chips_up;
        r.nics = b.nics;
        r.link_up = b.link_up;
        r.enumerated = b.enumerated;
        r.firmware = b.firmware;
        r.failures = b.failures;
        if (!went_on) {
            // Cut into parts, it still meets the others, so that they do not wait for it in vain.
            if (sys_.parts > 1) {
                if (fabric_check.get() != "off") {
                    everywhere(h, {});
                    everywhere(h, {});
                }
                swap_totals(h);
            }
            return finish();
        }
        device_list& devices = b.devices;
        if (kernels.get())
            for (std::size_t i = 0; i < devices.size(); ++i)
                run_kernel(*devices[i], r, (sys_.first_host + h) * 1000 + i);
        r.done = now();
        tracks_[h].mark("kernels verified");
        milestone(3, "kernels verified");
        if (fabric_check.get() != "off") {
            fabric_traffic(h, devices, r);
            tracks_[h].mark("fabric checked");
        }
        if (h == 0 && sys_.cluster_size > 1 && efa_check.get() != "off") {
            efa_traffic(hi, b, r);
            tracks_[h].mark("EFA checked");
        }
        if (sys_.parts > 1) swap_totals(h);
        finish();
    }

    // The ping-pong and bandwidth program with the partner UltraServer's first host, on this host's first NIC.
    void efa_traffic(const host_info& hi, const brought_up& b, host_result& r) {
        const unsigned rank = sys_.cluster_rank, peer = rank ^ 1u;
        if (peer >= sys_.cluster_size) return;  // the odd one out of an odd count
        if (b.nic_functions.empty() || !hi.use_fabric || !sys_.oob) {
            r.failures.push_back("EFA check: no NIC on the host, or no network");
            return;
        }
        hi.use_fabric({b.nic_functions[0]}, {});
        fabric_perf::options o;
        o.initiator = rank < peer;
        o.sizes = {8, 8192, 1 << 20};
        o.iterations = 10;
        o.window = 16;
        o.windows = 2;
        o.now_us = [] { return now() * 1e6; };
        out_of_band& values = *sys_.oob;
        const std::string mine = fmt::format("efa/{}", rank), theirs = fmt::format("efa/{}", peer);
        fabric_perf::exchange x;
        x.publish = [&](const std::vector<std::uint8_t>& a) { values.put(mine, a); };
        x.fetch = [&] {
            hi.ops->wait_until([&] { return values.has(theirs); }, 100'000'000, 1'000);
            const std::vector<std::uint8_t>* v = values.find(theirs);
            return v ? *v : std::vector<std::uint8_t>{};
        };
        x.barrier = [&] {
            values.put(mine + "/done", {});
            hi.ops->wait_until([&] { return values.has(theirs + "/done"); }, 100'000'000, 1'000);
        };
        efa_ = fabric_perf::run(o, x);
        efa_initiator_ = o.initiator;
        efa_peer_ = fmt::format("system {}", peer);
        if (!efa_.error.empty()) r.failures.push_back("EFA check: " + efa_.error);
        for (const auto& p : efa_.points)
            if (p.exact != p.messages)
                r.failures.push_back(
                    fmt::format("EFA check: {} of {} messages of {} B exact", p.exact, p.messages, p.bytes));
    }

    // Who writes to whom: each chip to the one half the system away, or every pair.
    std::vector<unsigned> targets(unsigned k) const {
        const unsigned n = sys_.fabric_chips;
        std::vector<unsigned> v;
        if (fabric_check.get() == "all") {
            for (unsigned d = 0; d < n; ++d)
                if (d != k) v.push_back(d);
        } else if (n > 1) {
            // Half the system away and a few trays over: the other rack, another
            // tray and position, so the write crosses switches and forwarding chips.
            const unsigned d = (k + n / 2 + 5) % n;
            v.push_back(d == k ? (k + 1) % n : d);
        }
        return v;
    }
    static std::vector<std::uint8_t> pattern_of(unsigned k) {
        std::vector<std::uint8_t> v(fabric_slot);
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::uint8_t>(k * 131 + i * 7 + 1);
        return v;
    }

    // Every chip writes its pattern into other chips' HBM over NeuronLink
    // (its DMA engine, device to fabric address); each host then waits until
    // its chips have taken every byte meant for them and checks the inboxes.
    void fabric_traffic(unsigned h, device_list& devices, host_result& r) {
        const host_info& hi = sys_.hosts[h];
        // The fabric is open once every host has put its chips on it.
        if (sys_.parts > 1) everywhere(h, {});
        else {
            ++hosts_on_fabric_;
            hi.ops->wait_until([this] { return hosts_on_fabric_ == sys_.hosts.size(); }, 100'000'000, 10'000);
        }
        for (std::size_t i = 0; i < devices.size(); ++i) {
            if (hi.chips[i].fabric_id < 0) continue;
            const auto k = static_cast<unsigned>(hi.chips[i].fabric_id);
            const auto p = pattern_of(k);
            if (devices[i]->write(fabric_scratch, p.data(), p.size()) != driver::status::ok)
                r.failures.push_back("fabric scratch");
            for (unsigned d : targets(k)) {
                ++r.fabric_sent;
                if (devices[i]->device_copy(fabric_scratch, TRN3_FABRIC_ADDR(d, fabric_inbox + k * fabric_slot),
                                            fabric_slot) != driver::status::ok)
                    r.failures.push_back(fmt::format("fabric write {} -> {}", k, d));
            }
        }
        const auto timeout_ns = static_cast<std::uint64_t>(fabric_timeout.get().to_seconds() * 1e9);
        for (std::size_t i = 0; i < devices.size(); ++i) {
            if (hi.chips[i].fabric_id < 0) continue;
            const auto d = static_cast<unsigned>(hi.chips[i].fabric_id);
            std::vector<unsigned> senders;
            for (unsigned k = 0; k < sys_.fabric_chips; ++k) {
                const auto t = targets(k);
                if (std::find(t.begin(), t.end(), d) != t.end()) senders.push_back(k);
            }
            // Wait for the writes to land (the chip counts what it takes), not for a guessed time.
            const std::uint64_t expected = senders.size() * fabric_slot;
            std::uint64_t landed = 0;
            std::uint32_t dropped = 0;
            hi.ops->wait_until(
                [&] {
                    return devices[i]->fabric_counters(landed, dropped) != driver::status::ok || landed >= expected;
                },
                timeout_ns, 1000);
            if (landed < expected)
                r.failures.push_back(fmt::format("fabric: chip {} took {} of {} bytes within {}", d, landed, expected,
                                                 fabric_timeout.get().to_string()));
            for (unsigned k : senders) {
                std::vector<std::uint8_t> got(fabric_slot);
                if (devices[i]->read(got.data(), fabric_inbox + k * fabric_slot, fabric_slot) == driver::status::ok &&
                    got == pattern_of(k))
                    ++r.fabric_ok;
                else r.failures.push_back(fmt::format("fabric: chip {}'s write did not arrive at chip {}", k, d));
            }
            r.fabric_dropped += dropped;
        }
        // Once every host has checked its inboxes, every writer reads its
        // block back from each target (remote reads: the completions return
        // through the same switches and forwarding chips) and compares.
        if (sys_.parts > 1) everywhere(h, {});
        else {
            ++hosts_checked_fabric_;
            hi.ops->wait_until([this] { return hosts_checked_fabric_ == sys_.hosts.size(); }, 100'000'000, 10'000);
        }
        for (std::size_t i = 0; i < devices.size(); ++i) {
            if (hi.chips[i].fabric_id < 0) continue;
            const auto k = static_cast<unsigned>(hi.chips[i].fabric_id);
            for (unsigned d : targets(k)) {
                std::vector<std::uint8_t> got(fabric_slot);
                if (devices[i]->device_copy(TRN3_FABRIC_ADDR(d, fabric_inbox + k * fabric_slot), fabric_readback,
                                            fabric_slot) == driver::status::ok &&
                    devices[i]->read(got.data(), fabric_readback, fabric_slot) == driver::status::ok &&
                    got == pattern_of(k))
                    ++r.fabric_read_ok;
                else
                    r.failures.push_back(
                        fmt::format("fabric: chip {} could not read its write back from chip {}", k, d));
            }
        }
    }

    void run_kernel(driver::trn3_device& d, host_result& r, std::uint64_t seed) {
        ++r.kernels_run;
        nrt_runtime_t* rt = nullptr;
        if (nrt_init(&d, &rt) != NRT_SUCCESS) return r.failures.push_back("runtime init");
        const kernels::rows_shape s{128, 512};
        std::mt19937_64 rng(seed);
        std::normal_distribution<float> nd(0.0f, 2.0f);
        std::vector<float> x(std::size_t(s.rows) * s.cols), y(x.size());
        for (auto& v : x) v = nd(rng);
        nrt_tensor_t *tx = nullptr, *ty = nullptr;
        nrt_model_t* m = nullptr;
        bool ok = nrt_tensor_allocate(rt, x.size() * 4, "x", &tx) == NRT_SUCCESS &&
                  nrt_tensor_allocate(rt, y.size() * 4, "y", &ty) == NRT_SUCCESS &&
                  nrt_tensor_write(tx, x.data(), 0, x.size() * 4) == NRT_SUCCESS;
        if (ok) {
            const kernels::program p =
                kernels::softmax(s, nrt_tensor_get_device_address(tx), nrt_tensor_get_device_address(ty));
            const auto c = runtime::pack({&p});
            ok = nrt_load(rt, c.data(), c.size(), 0, 1, &m) == NRT_SUCCESS && nrt_execute(m) == NRT_SUCCESS &&
                 nrt_tensor_read(ty, y.data(), 0, y.size() * 4) == NRT_SUCCESS &&
                 kernels::reference::max_relative_error(y, kernels::reference::softmax(x, s.rows, s.cols), 0.0) <= 1e-4;
        }
        if (m) nrt_unload(m);
        nrt_tensor_free(&tx);
        nrt_tensor_free(&ty);
        nrt_close(rt);
        if (ok) ++r.kernels_ok;
        else r.failures.push_back(fmt::format("kernel on chip {}", driver::bdf_name(d.bdf())));
    }

    // The progress of a long boot: a line on stderr when every host has
    // passed a phase, with the simulated and wall time.
    void milestone(unsigned phase, const char* what) {
        if (++phase_hosts_[phase] != sys_.hosts.size()) return;
        std::cerr << fmt::format("[{}] {}: {} of {} hosts at {:.1f} us simulated, {:.1f} s wall\n", sys_.name, what,
                                 sys_.hosts.size(), sys_.hosts.size(), sc_core::sc_time_stamp().to_seconds() * 1e6,
                                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
    }

    void finish() {
        if (++hosts_done_ == sys_.hosts.size()) sys_.stop();
    }

    host_system& sys_;
    std::vector<host_result> results_;
    std::vector<phase_track> tracks_;
    fabric_perf::result efa_;  // first host's, in a cluster
    bool efa_initiator_ = false;
    std::string efa_peer_;
    std::size_t hosts_done_ = 0, hosts_on_fabric_ = 0, hosts_checked_fabric_ = 0;
    host_barrier barrier_{sys_};
    cluster_exchange exchange_{sys_, "boot"};
    summary totals_;  // cut into parts: the system's (swap_totals)
    std::array<std::size_t, 4> phase_hosts_{};
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

const program_registration registration{
    "boot", "every host enumerates, probes and boots its chips, runs a verified kernel on each, and checks the fabric",
    [](host_system& s) { return std::make_unique<boot>(s); }, /*runs_in_parts=*/true};

}  // namespace
}  // namespace trn3::apps
