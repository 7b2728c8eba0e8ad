// Host programs: what the hosts of a platform do, as software.
//
// A platform with hosts builds the system (chips, hosts, switches, links) and
// hands the program a `host_system`: each host's bus (driver::host_ops) and
// what the host should find on it. The program runs in every host's software
// context; its device accesses go through host_ops, the driver and the
// runtime, so they cost the simulated time they cost on the hardware. A
// platform picks its program by the param `<platform>.app`; every platform
// with hosts can run every program whose needs it meets.
//
// A program registers itself by name in its own file:
//   const trn3::apps::program_registration reg{"boot", "what it does",
//       [](trn3::apps::host_system& s) { return std::make_unique<boot>(s); }};
// Its settings are params named after it ("boot.fabric_check").
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "trn3/apps/out_of_band.h"
#include "trn3/collectives/rings.h"
#include "trn3/core/registry.h"
#include "trn3/core/stats.h"
#include "trn3/driver/host_ops.h"
#include "trn3/driver/pci_enum.h"

namespace trn3::apps {

class pcie_bench;

// A chip a host should find, in the order of its root ports.
struct expected_chip {
    std::string name;  // the topology's name ("r0.t3.c1") or the module's
    int fabric_id = -1;  // its id on the NeuronLink fabric; -1: not on one
    std::vector<std::uint32_t> routes;  // NeuronLink ports towards each fabric chip (TRN3_CHIP_ROUTE; 0: none)
};

// One host as a program sees it.
struct host_info {
    driver::host_ops* ops = nullptr;
    unsigned root_ports = 1;
    driver::address_pool pci_windows{};  // what the host's firmware gives the enumerator
    std::vector<expected_chip> chips;
    unsigned nics = 0;  // scale-out NICs on its root ports
    // For each chip, the NIC that serves it: its place among the NICs the
    // host enumerates (root-port order); empty where the platform does not say.
    std::vector<unsigned> nic_of_chip;
    // A management controller's mailbox the host reaches directly at this
    // MMIO address, its answers as interrupt data 0 (a bench without PCIe);
    // no_mailbox: none.
    static constexpr std::uint64_t no_mailbox = ~0ull;
    std::uint64_t mailbox = no_mailbox;
    // Makes libfabric calls of the calling software context use these NICs
    // (the trn3vp provider, docs/fabric.md: a domain each; the k-th's
    // interrupts are driver::nic_device::msi_data_of(k) on), with these
    // chips' memory (their BAR2 bus addresses, by FI_HMEM_NEURON device
    // index) open to registration; empty where the platform has no
    // Ethernet network.
    std::function<void(const std::vector<driver::pci_function>& nics, const std::vector<std::uint64_t>& neuron_bar2)>
        use_fabric;
};

// What a platform gives its program.
// What the platform's counters say its hardware has moved so far (for
// reports: link utilisation, energy): per medium of the fabric (topology's
// names: "backplane", "pcb", "cross-rack", ...), the payload bytes its links
// carried both ways, their capacity (bytes/s, both ways, every link), the
// retimers on them and whether a switch ends each link; per fabric chip, the
// bytes its HBM stacks read and wrote; and how many of each component.
struct activity {
    struct medium {
        std::uint64_t bytes = 0;
        double capacity = 0;
        unsigned links = 0, retimers = 0;  // retimers: on all its links together
        bool switched = false;  // every byte also crosses a switch
    };
    std::map<std::string, medium> media;
    std::vector<std::uint64_t> hbm_bytes;
    unsigned chips = 0, switches = 0, retimers = 0, nics = 0, hosts = 0;
};

struct host_system {
    std::string name;  // the platform, for progress lines
    std::vector<host_info> hosts;
    unsigned fabric_chips = 0;  // chips reachable over NeuronLink (fabric ids 0..n-1)
    // The fabric's links and each flow's path, as the runtime knows them
    // (the collectives' ring search); null where the platform gives none.
    std::shared_ptr<const collectives::fabric_paths> fabric;
    // The topology's levels, innermost first ("tray", "rack", "racks"; a
    // torus's "x", "y", "z"), and each fabric chip's position on them (by
    // fabric id): the hierarchical collectives' grid. Empty where the
    // platform gives none.
    std::vector<std::string> level_names;
    std::vector<std::vector<unsigned>> fabric_levels;
    // Hardware counters a report may quote (typed handles, read after the run).
    std::vector<const counter*> fabric_forwarded;  // per chip: TLPs it forwarded for others
    pcie_bench* pcie = nullptr;  // exercisers and an analyzer, where the platform has them
    std::function<activity()> activity_now;  // null where the platform gives none
    std::function<void()> stop;  // ends the run (every host is done)
    // In a cluster: this system's place among its systems and the store they share.
    unsigned cluster_rank = 0, cluster_size = 1;
    std::shared_ptr<out_of_band> oob;
    // An UltraServer cut by rack (<sku>.partitions = racks, docs/distributed.md):
    // a program instance per rack, this one part `part` of `parts`. Its
    // hosts are the rack's (the first is the system's host `first_host`);
    // the fabric's chips are every rack's. The instances share no memory:
    // they meet through `oob` (cluster_exchange.h), as a cluster's do.
    unsigned part = 0, parts = 1, first_host = 0;
    // What names this instance's own things (its timeline process, its
    // barrier): the system's name, or its part's ("nl72x2.r1").
    std::string instance_name() const { return parts > 1 ? name + ".r" + std::to_string(part) : name; }
};

class host_program {
public:
    virtual ~host_program() = default;
    // Host h's software: runs in its software context from power-on.
    virtual void run(unsigned h) = 0;
    // After the run.
    virtual bool passed() const = 0;
    virtual void report(std::ostream& os) const = 0;
    // Failures, after whatever the platform reports of its hardware.
    virtual void report_failures(std::ostream&) const {}
};

struct program_info {
    std::string name;
    std::string description;
    std::function<std::unique_ptr<host_program>(host_system&)> make;
    bool runs_in_parts = false;  // it runs as an instance per part of a cut system (host_system::parts)
};

class program_registry : public named_registry<program_info> {
public:
    static program_registry& instance();

private:
    program_registry() : named_registry("host program") {}
};

struct program_registration {
    program_registration(std::string name, std::string description,
                         std::function<std::unique_ptr<host_program>(host_system&)> make, bool runs_in_parts = false) {
        program_registry::instance().add({std::move(name), std::move(description), std::move(make), runs_in_parts});
    }
};

// Builds program `name` over `system`; throws config_error for an unknown
// name or a system the program cannot run on (a part of a cut system, for a
// program that does not run in parts).
std::unique_ptr<host_program> make_program(const std::string& name, host_system& system);

}  // namespace trn3::apps
