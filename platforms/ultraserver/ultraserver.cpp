// The UltraServers as one simulation: nl72x2, nl32x2 (switched, generation
// 1-3) and the torus SKUs, built from the topology graph (platforms/topology)
// so that the wiring and `trn3vp topology` can never disagree.
//
//   every chip node    -> a trn3_chip (8 NeuronCores, 4 HBM stacks, DMA, MCU, PCIe endpoint)
//   every host node    -> a graviton4 with a root port per chip it serves
//   every switch node  -> a pcie_switch of the node's preset (a fabric switch)
//   every edge         -> a pcie::link: host links train themselves; NeuronLink
//                         links (backplane, tray switch, PCB, cross-rack, torus)
//                         are trained by the chip's firmware (a chip-to-chip
//                         link's registers belong to the chip at its first end)
//
// The main job: every MCU boots its firmware (HBM and NeuronLink training),
// every host enumerates its chips, probes them, waits for their firmware,
// shakes hands, and runs a small reference kernel (softmax 128x512) on each
// chip through the runtime, checking it against fp64. The summary counts
// what came up, link widths and failures by medium, the boot phases'
// simulated times, and the wall time of elaboration.
#include <algorithm>
#include <array>
#include <chrono>
#include <iostream>
#include <cmath>
#include <fstream>
#include <memory>
#include <random>
#include <set>

#include "trn3/core/sparse_memory.h"
#include "trn3/core/stats.h"
#include <sstream>

#include <fmt/format.h>

#include "trn3/chip/trn3_chip.h"
#include "trn3/core/message_link.h"
#include "trn3/driver/pci_enum.h"
#include "trn3/driver/trn3_device.h"
#include "trn3/host/graviton4.h"
#include "trn3/kernels/norm.h"
#include "trn3/kernels/reference.h"
#include "trn3/pcie/link.h"
#include "trn3/pcie/pcie_switch.h"
#include "trn3/platforms/host_adapter.h"
#include "trn3/platforms/platform.h"
#include "trn3/runtime/container.h"
#include "trn3/runtime/nrt.h"
#include "trn3/spec/link.h"
#include "trn3/spec/pci.h"
#include "trn3/topology/topology.h"

namespace trn3 {
namespace {

using sc_core::sc_time;
using topology::medium;
using topology::node_kind;

std::string build_digest() {
    std::ifstream in(TRN3_FIRMWARE_DIGEST_FILE);
    std::string d;
    in >> d;
    return d;
}

std::string sc_name(const std::string& node_name) {
    std::string s = node_name;
    for (char& c : s)
        if (c == '.' || c == '-') c = '_';
    return s;
}

class ultraserver final : public platform {
public:
    param<std::uint64_t> switch_gen{this, "switch_gen", 1, "scale-up switch generation: 1, 2 or 3", range<std::uint64_t>{1, 3}};
    param<std::uint64_t> racks{this, "racks", 2, "racks (1, or the pair)", range<std::uint64_t>{1, 2}};
    param<std::uint64_t> trays{this, "trays", 0, "compute/JBOG trays per rack (0: the SKU's)"};
    param<std::uint64_t> switch_trays{this, "switch_trays", 4, "NL32x2 Gen1: 4, or 5 with the hot-swap tray"};
    param<std::uint64_t> nic_gbps{this, "nic_gbps", 400, "NIC per chip, Gb/s (placeholders for now)"};
    param<std::uint64_t> retimers_per_tray{this, "retimers_per_tray", 0, "retimers on each tray (0: the SKU's, 4 or 6)"};
    param<std::uint64_t> tray_switches{this, "tray_switches", 8, "NL72x2: PCIe switches per compute tray (8, 4, 2 or 1)"};
    param<bool> kernels{this, "kernels", true, "run and check a reference kernel on every chip"};
    param<sc_time> boot_timeout{this, "boot_timeout", sc_time(50, sc_core::SC_MS), "longest a host waits for a chip's firmware"};
    param<std::string> fabric_check{this, "fabric_check", "far",
                                    "chip-to-chip writes over NeuronLink after the kernels: far (each chip to one in the other "
                                    "half of the system), all (every pair), off"};
    param<std::uint64_t> faulty_lanes{this, "faulty_lanes", 0,
                                      "lanes that fail on the first chip's backplane links from power-on, spread over its "
                                      "links (each link's spare lanes first)"};

    ultraserver(const sc_core::sc_module_name& name, const std::string& sku) : platform(name) {
        const auto w0 = std::chrono::steady_clock::now();
        topology::topology_params tp;
        tp.sku = sku;
        tp.switch_gen = static_cast<unsigned>(switch_gen.get());
        tp.racks = static_cast<unsigned>(racks.get());
        tp.trays = static_cast<unsigned>(trays.get());
        tp.switch_trays = static_cast<unsigned>(switch_trays.get());
        tp.nic_gbps = static_cast<unsigned>(nic_gbps.get());
        tp.retimers_per_tray = static_cast<unsigned>(retimers_per_tray.get());
        tp.tray_switches = static_cast<unsigned>(tray_switches.get());
        try {
            topo_ = topology::build(tp);
        } catch (const std::invalid_argument& e) {
            throw config_error(std::string(this->name()) + ": " + e.what());
        }
        const mcu::mcu::images images{TRN3_FIRMWARE_ELF, TRN3_BOOT_ROM_ELF, build_digest()};
        // Nodes.
        std::vector<unsigned> host_ports(topo_.nodes.size(), 0), switch_ports(topo_.nodes.size(), 0);
        for (const auto& e : topo_.edges) {
            for (int n : {e.a, e.b}) {
                if (topo_.nodes[std::size_t(n)].kind == node_kind::host) ++host_ports[std::size_t(n)];
                if (topo_.nodes[std::size_t(n)].kind == node_kind::scaleup_switch) ++switch_ports[std::size_t(n)];
            }
        }
        if (fabric_check.get() != "far" && fabric_check.get() != "all" && fabric_check.get() != "off")
            throw config_error(fabric_check.name() + ": '" + fabric_check.get() + "' (far, all or off)");
        chip_of_.assign(topo_.nodes.size(), nullptr);
        port_of_.assign(topo_.nodes.size(), {});
        for (std::size_t i = 0; i < topo_.nodes.size(); ++i) {
            const auto& n = topo_.nodes[i];
            if (n.kind == node_kind::chip) {
                chips_.push_back(std::make_unique<chip::trn3_chip>(sc_name(n.name).c_str(), images));
                chip_of_[i] = chips_.back().get();
            } else if (n.kind == node_kind::host) {
                hosts_.push_back(std::make_unique<host::graviton4>(sc_name(n.name).c_str(), host_ports[i]));
                host_index_[int(i)] = hosts_.size() - 1;
            } else if (n.kind == node_kind::nic) {
                nics_.push_back(std::make_unique<nic_placeholder>(sc_name(n.name).c_str()));
                nic_index_[int(i)] = nics_.size() - 1;
            } else {
                switches_.push_back(
                    std::make_unique<pcie::pcie_switch>(sc_name(n.name).c_str(), n.model, -1, switch_ports[i], 0));
                switch_index_[int(i)] = switches_.size() - 1;
            }
        }
        // Edges.
        std::vector<unsigned> next_port(topo_.nodes.size(), 0);
        const pcie::generation fabric_gen = tp.switch_gen == 3 ? pcie::generation::ualink : pcie::generation::gen6;
        for (std::size_t i = 0; i < topo_.edges.size(); ++i) {
            const auto& e = topo_.edges[i];
            const auto& na = topo_.nodes[std::size_t(e.a)];
            const auto& nb = topo_.nodes[std::size_t(e.b)];
            const std::string lname = sc_name(na.name + "__" + nb.name);
            const std::uint64_t id = 2 * i + 1;
            if (e.m == medium::nic_link) {
                auto& l = add_link(lname, id, pcie::link_of(pcie::generation::gen5, e.lanes));
                hosts_[host_index_.at(e.a)]->rc.attach(next_port[std::size_t(e.a)]++, l.a());
                nics_[nic_index_.at(e.b)]->ep.attach(l.b());
                continue;
            }
            if (e.m == medium::host_link) {
                // Host side: a root port (Gen5, through the tray's converters); chip side: its endpoint.
                auto& l = add_link(lname, id, pcie::link_of(pcie::generation::gen5, e.lanes));
                host::graviton4& h = *hosts_[host_index_.at(e.a)];
                h.rc.attach(next_port[std::size_t(e.a)]++, l.a());
                chip_of_[std::size_t(e.b)]->ep.attach(l.b());
                host_chips_[host_index_.at(e.a)].push_back(e.b);
                continue;
            }
            const bool all_spare = e.spare_lanes >= e.lanes;
            const unsigned active = all_spare ? e.lanes : e.lanes - e.spare_lanes;
            const unsigned spare = all_spare ? 0 : e.spare_lanes;
            const unsigned retimers = e.m == medium::backplane ? 1 : e.m == medium::cross_rack ? 2 : 0;
            const pcie::generation g = e.m == medium::backplane ? fabric_gen : pcie::generation::gen6;
            auto& l = add_link(lname, id, pcie::link_of(g, active, retimers, spare, false));
            links_by_medium_[e.m].push_back(&l);
            // The first end is always a chip: its firmware trains the link.
            const unsigned pa = next_port[std::size_t(e.a)]++, pb = next_port[std::size_t(e.b)]++;
            chip_of_[std::size_t(e.a)]->attach_neuronlink(pa, l);
            if (nb.kind == node_kind::scaleup_switch) switches_[switch_index_.at(e.b)]->attach(pb, l.b());
            else chip_of_[std::size_t(e.b)]->attach_neuronlink(pb, l, false, false);
            port_of_[std::size_t(e.a)][e.b] = pa;
            port_of_[std::size_t(e.b)][e.a] = pb;
        }
        inject_faults();
        program_routes();
        // Host software: one context per host.
        for (std::size_t h = 0; h < hosts_.size(); ++h) {
            adapters_.push_back(std::make_unique<host_adapter>(*hosts_[h]));
            results_.emplace_back();
            hosts_[h]->run(fmt::format("software_{}", h), [this, h] { software(h); });
        }
        elaboration_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    }

    bool passed() const override {
        if (hosts_done_ != hosts_.size()) return false;
        for (const auto& r : results_)
            if (!r.failures.empty()) return false;
        return true;
    }

    void report(std::ostream& os) const override {
        os << topology::report(topo_);
        unsigned chips_up = 0, kernels_ok = 0, kernels_run = 0, nics = 0;
        double link_up = 0, enumerated = 0, firmware = 0, done = 0;
        for (const auto& r : results_) {
            nics += r.nics;
            chips_up += r.chips_up;
            kernels_ok += r.kernels_ok;
            kernels_run += r.kernels_run;
            link_up = std::max(link_up, r.link_up);
            enumerated = std::max(enumerated, r.enumerated);
            firmware = std::max(firmware, r.firmware);
            done = std::max(done, r.done);
        }
        os << fmt::format("elaboration: {} chips, {} hosts, {} switches, {} links in {:.2f} s of wall time\n", chips_.size(),
                          hosts_.size(), switches_.size(), links_.size(), elaboration_s_);
        os << "boot (slowest host):\n";
        os << fmt::format("  host links up                  {:>10.1f} us\n", link_up * 1e6);
        os << fmt::format("  enumerated                     {:>10.1f} us\n", enumerated * 1e6);
        os << fmt::format("  every chip's firmware running  {:>10.1f} us (HBM and NeuronLink trained)\n", firmware * 1e6);
        os << fmt::format("  kernels verified               {:>10.1f} us\n", done * 1e6);
        os << fmt::format("chips up: {} of {}; kernels verified: {} of {}; NIC placeholders enumerated: {} of {}\n", chips_up,
                          chips_.size(), kernels_ok, kernels_run, nics, nics_.size());
        if (fabric_check.get() != "off") {
            unsigned sent = 0, ok = 0;
            for (const auto& r : results_) {
                sent += r.fabric_sent;
                ok += r.fabric_ok;
            }
            std::uint64_t forwarded = 0;
            for (const auto& c : chips_)
                forwarded += stats_registry::instance().find(std::string(c->name()) + ".fabric_forwarded")->to_json().get<std::uint64_t>();
            os << fmt::format("fabric: {} of {} chip-to-chip writes over NeuronLink verified ({} pairs), {} TLPs forwarded by chips\n",
                              ok, sent, fabric_check.get(), forwarded);
        }
        {
            // The first chip's backplane: what its links carry after training.
            double gbps = 0, full = 0;
            unsigned failed = 0, spared = 0;
            for (const pcie::link* l : first_chip_backplane()) {
                gbps += l->raw_bytes_per_second() / 1e9;
                full += l->phy().lane_bytes_per_second * double(l->lanes.get()) / 1e9;
                failed += static_cast<unsigned>(l->failed().size());
                spared += l->spares_used();
            }
            os << fmt::format("chip {} backplane: {:.0f} of {:.0f} GB/s per direction, {} lanes failed, {} spared{}\n",
                              topo_.nodes[std::size_t(topo_.chips().front())].name, gbps, full, failed, spared,
                              gbps < full ? " -- REDUCED" : "");
        }
        for (const auto& [m, links] : links_by_medium_) {
            unsigned up = 0, degraded = 0, failed = 0;
            std::map<std::string, unsigned> widths;
            for (const pcie::link* l : links) {
                if (l->up()) ++up;
                if (l->up() && l->width() < l->lanes.get()) ++degraded;
                if (l->training_failed()) ++failed;
                ++widths[fmt::format("{} x{}", l->phy().name, l->width())];
            }
            std::string w;
            for (const auto& [k, n] : widths) w += fmt::format("{}{} {}", w.empty() ? "" : ", ", n, k);
            os << fmt::format("links {:<18} {} up of {}, {} degraded, {} failed ({})\n", topology::medium_name(m), up,
                              links.size(), degraded, failed, w);
        }
        for (std::size_t h = 0; h < results_.size(); ++h)
            for (const auto& f : results_[h].failures) os << "  FAILED: host " << h << ": " << f << "\n";
    }

private:
    struct host_result {
        unsigned chips_up = 0, kernels_ok = 0, kernels_run = 0, fabric_sent = 0, fabric_ok = 0, nics = 0;
        double link_up = 0, enumerated = 0, firmware = 0, done = 0;
        std::vector<std::string> failures;
    };

    // The fabric manager: switch routes are set now; each chip's route table
    // is handed to its host's driver, which programs it at boot.
    void program_routes() {
        const auto routes = topo_.routes();
        const auto chips = topo_.chips();
        fabric_id_.assign(topo_.nodes.size(), -1);
        for (std::size_t k = 0; k < chips.size(); ++k) fabric_id_[std::size_t(chips[k])] = int(k);
        chip_routes_.assign(topo_.nodes.size(), {});
        for (std::size_t n = 0; n < topo_.nodes.size(); ++n) {
            const auto kind = topo_.nodes[n].kind;
            if (kind == node_kind::host) continue;
            for (std::size_t k = 0; k < chips.size(); ++k) {
                const int next = routes[n][k];
                if (next < 0) continue;
                const unsigned port = port_of_[n].at(next);
                if (kind == node_kind::scaleup_switch) switches_[switch_index_.at(int(n))]->set_fabric_route(unsigned(k), port);
                else {
                    if (chip_routes_[n].empty()) chip_routes_[n].assign(chips.size(), TRN3_ROUTE_NONE);
                    chip_routes_[n][k] = static_cast<std::uint8_t>(port);
                }
            }
        }
    }

    // The first chip's backplane links, in port order.
    std::vector<pcie::link*> first_chip_backplane() const {
        std::vector<pcie::link*> v;
        const std::string prefix = sc_name(topo_.nodes[std::size_t(topo_.chips().front())].name) + "__";
        for (pcie::link* l : links_by_medium_.count(medium::backplane) ? links_by_medium_.at(medium::backplane)
                                                                       : std::vector<pcie::link*>{})
            if (std::string(l->basename()).rfind(prefix, 0) == 0) v.push_back(l);
        return v;
    }

    // Fails `faulty_lanes` lanes of the first chip's backplane: first every
    // link's spare lanes (the top lane numbers), then active lanes, link by link.
    void inject_faults() {
        std::uint64_t left = faulty_lanes.get();
        const auto links = first_chip_backplane();
        for (pcie::link* l : links) {
            const unsigned active = static_cast<unsigned>(l->lanes.get()), spare = static_cast<unsigned>(l->spare_lanes.get());
            std::set<unsigned> f;
            for (unsigned k = 0; k < spare && left > 0; ++k, --left) f.insert(active + k);
            if (!f.empty()) l->fail_lanes(f);
        }
        for (std::size_t i = 0; left > 0 && !links.empty(); ++i, --left) links[i % links.size()]->fail_lanes({unsigned(i / links.size())});
    }

    pcie::link& add_link(const std::string& name, std::uint64_t id, const pcie::link_config& c) {
        links_.push_back(std::make_unique<pcie::link>(name.c_str(), queue_, id, id + 1, c));
        return *links_.back();
    }

    void software(std::size_t h) {
        host_adapter& hw = *adapters_[h];
        host::graviton4& host = *hosts_[h];
        host_result& r = results_[h];
        auto now = [] { return sc_core::sc_time_stamp().to_seconds(); };
        // Every root port's link up.
        for (unsigned p = 0; p < host.rc.root_ports.get(); ++p)
            while (!(hw.config().read(TRN3_PCI_BDF(0, p, 0), TRN3_PCI_PCIE_CAP + TRN3_PCIE_LINK_STATUS, 2) &
                     TRN3_PCIE_LINK_DL_ACTIVE))
                hw.sleep_ns(1000);
        r.link_up = now();
        milestone(0, "host links up");
        std::vector<driver::pci_function> fns;
        try {
            fns = driver::enumerate(hw.config(), {0x80000000ull, 0x70000000ull, 0x100000000000ull, 1ull << 44});
        } catch (const std::exception& e) {
            r.failures.push_back(std::string("enumeration: ") + e.what());
            return finish();
        }
        r.enumerated = now();
        milestone(1, "hosts enumerated their chips");
        std::vector<std::unique_ptr<driver::trn3_device>> devices;
        for (const auto& f : fns)
            if (f.vendor == TRN3_PCI_VENDOR_AMAZON && f.device == TRN3_PCI_DEVICE_TRN3) {
                devices.push_back(std::make_unique<driver::trn3_device>(hw, 0x7300 + 0x100 * std::uint32_t(devices.size())));
                if (devices.back()->probe(f) != driver::status::ok) r.failures.push_back("probe " + driver::bdf_name(f.bdf));
            }
        if (devices.size() != host_chips_[h].size())
            r.failures.push_back(fmt::format("found {} chips, expected {}", devices.size(), host_chips_[h].size()));
        for (const auto& f : fns)
            if (f.vendor == TRN3_PCI_VENDOR_AMAZON && f.device == TRN3_PCI_DEVICE_NIC) ++r.nics;
        const auto& my_chips = host_chips_[h];  // root port order = enumeration order
        for (std::size_t i = 0; i < devices.size(); ++i) {
            driver::trn3_device& d = *devices[i];
            const driver::status s = d.wait_boot(static_cast<std::uint64_t>(boot_timeout.get().to_seconds() * 1e9));
            driver::firmware_info fw;
            if (s == driver::status::ok && d.handshake(fw) == driver::status::ok) ++r.chips_up;
            else r.failures.push_back(fmt::format("chip {}: {}", driver::bdf_name(d.bdf()), driver::status_name(s)));
            const int node = my_chips.at(i);
            if (d.program_fabric(unsigned(fabric_id_[std::size_t(node)]), chip_routes_[std::size_t(node)]) != driver::status::ok)
                r.failures.push_back("program the fabric routes of " + topo_.nodes[std::size_t(node)].name);
        }
        r.firmware = now();
        milestone(2, "chips' firmware running (HBM and NeuronLink trained), routes programmed");
        if (kernels.get())
            for (std::size_t i = 0; i < devices.size(); ++i) run_kernel(*devices[i], r, h * 1000 + i);
        r.done = now();
        milestone(3, "kernels verified");
        if (fabric_check.get() != "off") fabric_traffic(h, devices, r);
        finish();
    }

    // Who writes to whom: each chip to the one half the system away, or every pair.
    std::vector<unsigned> targets(unsigned k) const {
        const unsigned n = static_cast<unsigned>(topo_.chips().size());
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
    static constexpr std::uint64_t fabric_scratch = 32ull << 30, fabric_inbox = 33ull << 30, fabric_slot = 4096;

    // Every chip writes its pattern into other chips' HBM over NeuronLink
    // (its DMA engine, device to fabric address); once every host has sent,
    // each host reads its chips' inboxes back and checks them.
    void fabric_traffic(std::size_t h, std::vector<std::unique_ptr<driver::trn3_device>>& devices, host_result& r) {
        const auto& my_chips = host_chips_[h];
        for (std::size_t i = 0; i < devices.size(); ++i) {
            const unsigned k = unsigned(fabric_id_[std::size_t(my_chips[i])]);
            const auto p = pattern_of(k);
            if (devices[i]->write(fabric_scratch, p.data(), p.size()) != driver::status::ok) r.failures.push_back("fabric scratch");
            for (unsigned d : targets(k)) {
                ++r.fabric_sent;
                if (devices[i]->device_copy(fabric_scratch, TRN3_FABRIC_ADDR(d, fabric_inbox + k * fabric_slot), fabric_slot) !=
                    driver::status::ok)
                    r.failures.push_back(fmt::format("fabric write {} -> {}", k, d));
            }
        }
        ++hosts_sent_;
        adapters_[h]->wait_until([this] { return hosts_sent_ == hosts_.size(); }, 100'000'000, 10'000);
        adapters_[h]->sleep_ns(20'000);  // the last posted writes land
        const unsigned n = static_cast<unsigned>(topo_.chips().size());
        for (std::size_t i = 0; i < devices.size(); ++i) {
            const unsigned d = unsigned(fabric_id_[std::size_t(my_chips[i])]);
            for (unsigned k = 0; k < n; ++k) {
                const auto t = targets(k);
                if (std::find(t.begin(), t.end(), d) == t.end()) continue;
                std::vector<std::uint8_t> got(fabric_slot);
                if (devices[i]->read(got.data(), fabric_inbox + k * fabric_slot, fabric_slot) == driver::status::ok &&
                    got == pattern_of(k))
                    ++r.fabric_ok;
                else r.failures.push_back(fmt::format("fabric: chip {}'s write did not arrive at chip {}", k, d));
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
        if (++phase_hosts_[phase] != hosts_.size()) return;
        std::cerr << fmt::format("[{}] {}: {} of {} hosts at {:.1f} us simulated, {:.1f} s wall\n", name(), what, hosts_.size(),
                                 hosts_.size(), sc_core::sc_time_stamp().to_seconds() * 1e6,
                                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
    }

    void finish() {
        if (++hosts_done_ == hosts_.size()) sc_core::sc_stop();
    }

    topology::topology topo_;
    delivery_queue queue_{"queue"};
    std::vector<std::unique_ptr<chip::trn3_chip>> chips_;
    std::vector<chip::trn3_chip*> chip_of_;
    std::vector<std::unique_ptr<host::graviton4>> hosts_;
    std::map<int, std::size_t> host_index_, switch_index_;
    std::vector<std::unique_ptr<pcie::pcie_switch>> switches_;
    // A scale-out NIC's place on its host's PCIe (1d0f:7a00, class network),
    // until the NIC model lands: enumerated, with BARs, doing nothing.
    struct nic_placeholder : sc_core::sc_module {
        pcie::endpoint ep;
        sparse_memory regs{"regs", byte_count{1 << 20}}, window{"window", byte_count{1 << 20}};
        explicit nic_placeholder(const sc_core::sc_module_name& n)
            : sc_core::sc_module(n), ep("ep", TRN3_PCI_DEVICE_NIC, 1 << 20, 1 << 20, TRN3_PCI_CLASS_NETWORK) {
            ep.bar0.bind(regs.in);
            ep.bar2.bind(window.in);
        }
    };
    std::vector<std::unique_ptr<nic_placeholder>> nics_;
    std::map<int, std::size_t> nic_index_;
    std::vector<std::unique_ptr<pcie::link>> links_;
    std::map<medium, std::vector<pcie::link*>> links_by_medium_;
    std::vector<std::unique_ptr<host_adapter>> adapters_;
    std::vector<host_result> results_;
    std::size_t hosts_done_ = 0, hosts_sent_ = 0;
    std::array<std::size_t, 4> phase_hosts_{};
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
    std::vector<std::map<int, unsigned>> port_of_;   // node -> neighbour -> its port towards it
    std::map<std::size_t, std::vector<int>> host_chips_;  // host -> chip nodes, in root port order
    std::vector<int> fabric_id_;
    std::vector<std::vector<std::uint8_t>> chip_routes_;
    double elaboration_s_ = 0;
};

const platform_registration nl72x2{"nl72x2", "144 chips in two racks (switch_gen 1-3): every MCU boots, every link trains, every chip runs a kernel",
                                   [] { return std::make_unique<ultraserver>("nl72x2", "nl72x2"); }};
const platform_registration nl32x2{"nl32x2", "64 chips in two racks (switch_gen 1-3): the same full-system boot",
                                   [] { return std::make_unique<ultraserver>("nl32x2", "nl32x2"); }};
const platform_registration torus2d{"nl16-torus2d", "16 chips in a 4x4 torus (the Trainium2-style SKU): the same boot",
                                    [] { return std::make_unique<ultraserver>("nl16_torus2d", "nl16-torus2d"); }};
const platform_registration torus3d{"nl32x2-torus3d", "64 chips in a 4x4x4 torus, four 16-chip servers: the same boot",
                                    [] { return std::make_unique<ultraserver>("nl32x2_torus3d", "nl32x2-torus3d"); }};

} // namespace
} // namespace trn3
