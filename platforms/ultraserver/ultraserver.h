// The UltraServers as one simulation: nl72x2, nl32x2 (switched, generation
// 1-3) and the torus SKUs, built from the topology graph (platforms/topology)
// so that the wiring and `trn3vp topology` can never disagree.
//
//   every chip node    -> a trn3_chip (8 NeuronCores, 4 HBM stacks, DMA, MCU, PCIe endpoint)
//   every host node    -> a graviton4 with a root port per chip and NIC it serves
//   every NIC node     -> a NIC on its host's PCIe
//   every switch node  -> a pcie_switch of the node's preset (a fabric switch)
//   every edge         -> a pcie::link: host links train themselves; NeuronLink
//                         links (backplane, tray switch, PCB, cross-rack, torus)
//                         are trained by the chip's firmware (a chip-to-chip
//                         link's registers belong to the chip at its first end)
//
// The fabric manager (fabric_manager.cpp) programs the switches' routes at
// elaboration and hands each chip's route table to its host. The hosts run
// the program `<sku>.app` names (default boot: sw/apps/src/boot.cpp). The
// report (report.cpp) adds what the hardware shows: links by medium and the
// first chip's backplane.
//
// Partitions (partitions.cpp, docs/distributed.md): `partitions = racks`
// cuts it by rack on the cross-rack cables (chip to chip). Those links are
// split (pcie/link.h: their ends meet only through messages), each rack's
// hosts run an instance of the program that meets the other rack's through
// the launcher's store (oob_latency), and the run goes in windows of the
// cables' latency: in one process, or a rack per process under mpirun, with
// the same results. `one` (the default) is the whole system in one process.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "trn3/chip/trn3_chip.h"
#include "trn3/collectives/rings.h"
#include "trn3/core/message_link.h"
#include "trn3/core/window_sync.h"
#include "trn3/host/graviton4.h"
#include "trn3/nic/nitro_nic.h"
#include "trn3/pcie/link.h"
#include "trn3/pcie/pcie_switch.h"
#include "trn3/platforms/host_adapter.h"
#include "trn3/platforms/host_platform.h"
#include "trn3/topology/topology.h"

namespace trn3 {

// Where an UltraServer sits in a cluster's Ethernet network: its NICs'
// addresses are nic_node_base + 1, + 2, ...; their Ethernet ports' message
// ids start at nic_port_id_base (0: after the UltraServer's own link ids).
struct ultraserver_network {
    std::uint64_t nic_node_base = 0;
    std::uint64_t nic_port_id_base = 0;
    // The UltraServer's place in the cluster and the store the programs share (apps::host_system).
    unsigned rank = 0, size = 1;
    std::shared_ptr<apps::out_of_band> oob;
    // Another process of a distributed run elaborates it: only its params
    // and topology here (nic_places), for the cluster's proxies.
    bool shell = false;
};

// Where a NIC of an UltraServer sits on the Ethernet network.
struct nic_place {
    std::string module;  // its module's name in the UltraServer
    std::uint64_t node = 0;  // network address
    std::uint64_t first_port_id = 0;  // its Ethernet port p's message id: + p
};

class ultraserver final : public host_platform {
public:
    param<std::uint64_t> switch_gen{this, "switch_gen", 1, "scale-up switch generation: 1, 2 or 3",
                                    range<std::uint64_t>{1, 3}};
    param<std::uint64_t> racks{this, "racks", 2, "racks (1, or the pair)", range<std::uint64_t>{1, 2}};
    param<std::uint64_t> trays{this, "trays", 0, "compute/JBOG trays per rack (0: the SKU's)"};
    param<std::uint64_t> switch_trays{this, "switch_trays", 4, "NL32x2 Gen1: 4, or 5 with the hot-swap tray"};
    param<std::uint64_t> nic_option{this, "nic_option", 1,
                                    "Nitro-v6 NICs: 1 a 400G NIC per two chips (most racks), 2 one per chip; plus "
                                    "each host's own",
                                    range<std::uint64_t>{1, 2}};
    param<std::string> switch_model{this, "switch_model", "scorpio-x",
                                    "Gen1 switch: scorpio-x (160 lanes, 20 x8 ports) or pex90144 (Broadcom PEX90144, "
                                    "144 lanes as 18 x8: the backup part)",
                                    one_of<std::string>{{"scorpio-x", "pex90144"}}};
    param<std::uint64_t> retimers_per_tray{this, "retimers_per_tray", 0,
                                           "retimers on each tray (0: the SKU's, 4 or 6)"};
    param<std::uint64_t> tray_switches{this, "tray_switches", 8,
                                       "NL72x2: PCIe switches per compute tray (8, 4, 2 or 1)"};
    param<std::string> fabric_arbitration{
        this, "fabric_arbitration", "fifo",
        "every NeuronLink's arbitration among traffic classes (the default of each link's own arbitration param): "
        "fifo, or strict (the highest TC first, at switch egress and at the chips' ports)",
        one_of<std::string>{{"fifo", "strict"}}};
    param<std::uint64_t> faulty_lanes{
        this, "faulty_lanes", 0,
        "lanes that fail on the first chip's backplane links from power-on: its spare lanes first "
        "(standby links, then each link's spares), then active lanes link by link (at most its backplane lanes)"};

    // The hot-swap of a switch tray while the system runs (hot_swap.cpp).
    param<std::string> hot_swap_tray{
        this, "hot_swap_tray", "",
        "NL32x2 Gen1: the switch tray taken out while the system runs, rR.stN (rack R, tray N: switches 2N and 2N+1 of "
        "both planes; with switch_trays=5, st4 holds the standby switches that take the traffic over); empty: none"};
    param<sc_core::sc_time> hot_swap_at{this, "hot_swap_at", sc_core::SC_ZERO_TIME,
                                        "when the tray's attention button is pressed (or, surprise, it is pulled)"};
    param<sc_core::sc_time> hot_swap_reprogram_time{
        this, "hot_swap_reprogram_time", sc_core::sc_time(10, sc_core::SC_US),
        "the fabric manager's time to compute the new routes and write them into every switch and chip over the "
        "management network"};
    param<sc_core::sc_time> hot_swap_drain_timeout{
        this, "hot_swap_drain_timeout", sc_core::sc_time(100, sc_core::SC_US),
        "how long the fabric manager, with the chips' fabric sources held, waits for the tray's links to carry "
        "nothing before it moves the routes and powers the tray off anyway (what is still on them is stranded, "
        "and reported)"};
    param<bool> hot_swap_surprise{this, "hot_swap_surprise", false,
                                  "the tray is pulled without warning: its links go down at hot_swap_at, before the "
                                  "routes change, and what was on them is stranded"};

    param<std::string> partitions{
        this, "partitions", "one",
        "how a distributed run may cut it: one (whole, one process) or racks (a partition per rack, cut on the "
        "cross-rack cables; the cut model runs in one process too, so any number of processes gives the same "
        "results: docs/distributed.md)",
        one_of<std::string>{{"one", "racks"}}};
    param<sc_core::sc_time> oob_latency{
        this, "oob_latency", sc_core::sc_time(10, sc_core::SC_US),
        "partitions = racks: the launcher's key-value store the racks' host programs meet through (a value put is "
        "visible this much later)",
        range<sc_core::sc_time>{sc_core::sc_time(1, sc_core::SC_NS), sc_core::sc_time(1, sc_core::SC_SEC)}};

    param<sc_core::sc_time> fail_at{
        this, "fail_at", sc_core::SC_ZERO_TIME,
        "a test of how a run ends: a model error in this UltraServer at this simulated time (0: never)"};
    ultraserver(const sc_core::sc_module_name& name, const std::string& sku, const ultraserver_network& net = {});
    ~ultraserver() override;
    // Cut by rack, these are collective over the processes: every rank calls them.
    void report(std::ostream& os) const override;
    bool passed() const override;
    window_sync* windows() override { return sync_.get(); }
    std::optional<sc_core::sc_time> finished_at() const override { return finished_at_; }

    // For a cluster's builder: the NICs (topology node order) and the topology.
    const std::vector<std::unique_ptr<nic::nitro_nic>>& nics() const { return nics_; }
    // The NICs' places, in the same order; a shell's too.
    std::vector<nic_place> nic_places() const;
    bool shell() const { return net_.shell; }
    const topology::topology& topo() const { return topo_; }

private:
    // Partitions (partitions.cpp): each rack's rank, the windows.
    void plan_partitions();
    void start_windows();
    bool cut() const { return !rack_owner_.empty(); }
    bool here(int node) const { return !cut() || rack_owner_[std::size_t(topo_.nodes[std::size_t(node)].rack)] == me_; }
    unsigned owner_of(int node) const {
        return cut() ? rack_owner_[std::size_t(topo_.nodes[std::size_t(node)].rack)] : 0;
    }
    bool crosses_racks(const topology::edge& e) const {
        return topo_.nodes[std::size_t(e.a)].rack != topo_.nodes[std::size_t(e.b)].rack;
    }
    std::vector<unsigned> rack_owner_;  // partitions = racks: each rack's rank (empty: not cut)
    unsigned me_ = 0;
    struct remote_end {
        pcie::link* link;
        int end;
        unsigned owner;
    };
    std::vector<remote_end> remote_ends_;  // cut links' ends another rank elaborates
    std::vector<message_port*> cut_ports_;  // cut links' ends here whose far end is elsewhere
    sc_core::sc_time lookahead_ = sc_core::sc_max_time();  // of the cut directions sent on here
    std::shared_ptr<apps::out_of_band> oob_;  // the racks' programs' store
    std::unique_ptr<window_sync> sync_;
    std::optional<sc_core::sc_time> finished_at_;

    // Elaboration (ultraserver.cpp).
    void build_nodes();
    void build_edges();
    void start_hosts();
    pcie::link& add_link(const std::string& name, std::uint64_t id, const pcie::link_config& c);
    // The fabric manager (fabric_manager.cpp).
    void program_routes();
    // What the hosts' runtime knows of the fabric: its directed links and
    // each flow's path (for the collectives' ring search).
    // Made once; a hot-swap rewrites it in place (the hosts hold it).
    std::shared_ptr<const collectives::fabric_paths> fabric_paths();
    void set_fabric_capacities();
    std::shared_ptr<collectives::fabric_paths> paths_;
    void inject_faults();
    std::vector<pcie::link*> first_chip_backplane() const;
    // The hot-swap (hot_swap.cpp): which edges leave and join the routes, the
    // fabric manager's thread, and what it did (for the report).
    void prepare_hot_swap();
    void hot_swap();
    void reprogram_routes();
    void report_hot_swap(std::ostream& os) const;
    struct hot_swap_record {
        std::string tray;
        std::vector<std::size_t> leaving, joining;  // edge indices
        std::vector<std::uint64_t> joining_bytes_before;
        unsigned switches = 0;
        sc_core::sc_time pressed, held, rerouted, off;  // held: the chips' fabric sources held from then
        bool done = false, drained = false;
    };
    hot_swap_record hot_swap_;
    std::set<const pcie::link*> removed_;  // links of a tray taken out: their bytes count, their capacity not

    topology::topology topo_;
    delivery_queue queue_{"queue"};
    std::vector<std::unique_ptr<chip::trn3_chip>> chips_;
    std::vector<chip::trn3_chip*> chip_of_;  // by node (nullptr: not a chip)
    std::vector<std::unique_ptr<host::graviton4>> hosts_;  // the hosts here, in node order
    std::vector<int> host_node_;  // by host here: its node
    std::vector<std::unique_ptr<pcie::pcie_switch>> switches_;
    std::vector<std::unique_ptr<nic::nitro_nic>> nics_;
    std::map<int, std::size_t> host_index_, switch_index_, nic_index_;  // node -> index
    std::vector<std::unique_ptr<pcie::link>> links_;
    std::map<topology::medium, std::vector<pcie::link*>> links_by_medium_;
    apps::activity activity_now() const;  // host_system::activity_now
    std::set<const pcie::link*> standby_;  // whole spare links: present, trained, not routed
    std::vector<std::unique_ptr<host_adapter>> adapters_;
    std::vector<std::map<int, unsigned>> port_of_;  // node -> neighbour -> its port towards it
    std::map<std::size_t, std::vector<int>> host_chips_;  // host -> chip nodes, in root port order
    std::vector<int> fabric_id_;  // by node (-1: not a chip)
    std::vector<std::vector<std::uint32_t>> chip_routes_;  // by node: the route table its host programs
    // By node and destination chip: the equal next hops in the order the
    // node picks among them (its ports ascending: TRN3_ROUTE_PICK).
    std::shared_ptr<std::vector<std::vector<std::vector<int>>>> next_hops_;
    ultraserver_network net_;
    double elaboration_s_ = 0;
};

}  // namespace trn3
