// sc_spawn for the fail_at thread.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "ultraserver.h"

#include <set>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "trn3/core/ranks.h"
#include "trn3/driver/nic_device.h"
#include "trn3/platforms/fabric_binding.h"
#include "trn3/platforms/firmware_images.h"
#include "trn3/spec/host.h"
#include "trn3/topology/cluster.h"

namespace trn3 {
namespace {

using topology::medium;
using topology::node_kind;

std::string sc_name(const std::string& node_name) {
    std::string s = node_name;
    for (char& c : s)
        if (c == '.' || c == '-') c = '_';
    return s;
}

// The PCIe generation of a host or NIC edge, from its lane rate.
pcie::generation generation_of(const topology::edge& e) {
    return e.lane_bytes_per_s > 7e9 ? pcie::generation::gen6 : pcie::generation::gen5;
}

topology::topology_params params_of(const ultraserver& u, const std::string& sku) {
    topology::topology_params tp;
    tp.sku = sku;
    tp.switch_gen = static_cast<unsigned>(u.switch_gen.get());
    tp.racks = static_cast<unsigned>(u.racks.get());
    tp.trays = static_cast<unsigned>(u.trays.get());
    tp.switch_trays = static_cast<unsigned>(u.switch_trays.get());
    tp.nic_option = static_cast<unsigned>(u.nic_option.get());
    tp.switch_model = u.switch_model.get();
    tp.retimers_per_tray = static_cast<unsigned>(u.retimers_per_tray.get());
    tp.tray_switches = static_cast<unsigned>(u.tray_switches.get());
    return tp;
}

}  // namespace

ultraserver::ultraserver(const sc_core::sc_module_name& name, const std::string& sku, const ultraserver_network& net)
    : host_platform(name, "boot"), net_(net) {
    const auto w0 = std::chrono::steady_clock::now();
    try {
        topo_ = topology::build(params_of(*this, sku));
    } catch (const std::invalid_argument& e) {
        throw config_error(std::string(this->name()) + ": " + e.what());
    }
    if (net_.shell) return;
    plan_partitions();
    const auto elaborate = [this] {
        build_nodes();
        build_edges();
        inject_faults();
        program_routes();
        start_hosts();
        prepare_hot_swap();
    };
    if (cut()) {
        // A user error one rack's process finds (a param of its chips) ends every process, with the message.
        on_every_rank(process_ranks(), elaborate);
        start_windows();
    } else {
        elaborate();
    }
    if (fail_at.get() > sc_core::SC_ZERO_TIME && here(topo_.chips().front()))  // cut: in the first rack's process
        sc_core::sc_spawn(
            [this] {
                sc_core::wait(fail_at.get());
                throw std::runtime_error(
                    fmt::format("{}: fail_at: a model error at {}", this->name(), fail_at.value_string()));
            },
            "fail_at");
    elaboration_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
}

// Network address: the base + the NIC's number + 1. Its Ethernet ports'
// ids follow the links' (build_edges: 2 per edge from 1).
std::vector<nic_place> ultraserver::nic_places() const {
    std::vector<nic_place> places;
    const std::uint64_t first_id = net_.nic_port_id_base ? net_.nic_port_id_base : 2 * topo_.edges.size() + 1;
    for (const auto& n : topo_.nodes) {
        if (n.kind != node_kind::nic) continue;
        const std::uint64_t k = places.size();
        places.push_back({sc_name(n.name), net_.nic_node_base + k + 1, first_id + 2 * k});
    }
    return places;
}

ultraserver::~ultraserver() = default;

// A model per node here, in node order.
void ultraserver::build_nodes() {
    std::vector<unsigned> host_ports(topo_.nodes.size(), 0), switch_ports(topo_.nodes.size(), 0);
    std::vector<pcie::generation> host_gen(topo_.nodes.size(), pcie::generation::gen5);
    for (const auto& e : topo_.edges) {
        if (e.m == medium::host_link) host_gen[std::size_t(e.a)] = generation_of(e);
        for (int n : {e.a, e.b}) {
            if (topo_.nodes[std::size_t(n)].kind == node_kind::host) ++host_ports[std::size_t(n)];
            if (topo_.nodes[std::size_t(n)].kind == node_kind::scaleup_switch) ++switch_ports[std::size_t(n)];
        }
    }
    chip_of_.assign(topo_.nodes.size(), nullptr);
    port_of_.assign(topo_.nodes.size(), {});
    const std::vector<nic_place> places = nic_places();
    std::size_t nic_k = 0;  // the NIC's place among every NIC, here or not
    for (std::size_t i = 0; i < topo_.nodes.size(); ++i) {
        const auto& n = topo_.nodes[i];
        const std::string module = sc_name(n.name);
        if (n.kind == node_kind::nic) ++nic_k;
        if (!here(int(i))) continue;
        switch (n.kind) {
        case node_kind::chip:
            chips_.push_back(std::make_unique<chip::trn3_chip>(module.c_str(), build_firmware_images()));
            chip_of_[i] = chips_.back().get();
            break;
        case node_kind::host:
            hosts_.push_back(std::make_unique<host::graviton4>(module.c_str(), host_ports[i], host_gen[i]));
            host_index_[int(i)] = hosts_.size() - 1;
            host_node_.push_back(int(i));
            break;
        case node_kind::nic: {
            const nic_place& place = places[nic_k - 1];
            nics_.push_back(std::make_unique<nic::nitro_nic>(module.c_str(), place.node, place.first_port_id));
            nic_index_[int(i)] = nics_.size() - 1;
            break;
        }
        case node_kind::scaleup_switch:
            switches_.push_back(std::make_unique<pcie::pcie_switch>(
                module.c_str(), pcie::switch_config{n.model}.fabric().with_ports(switch_ports[i])));
            switch_index_[int(i)] = switches_.size() - 1;
            break;
        }
    }
}

// A link per edge with an end here; link end ids follow the edge order
// (2i + 1, 2i + 2). Cut by rack, a cross-rack link is split, and an end in
// another rack's process is made remote once the windows exist.
void ultraserver::build_edges() {
    std::vector<unsigned> next_port(topo_.nodes.size(), 0);
    // Each NeuronLink end buffers 64 KiB of TLPs it forwards (flow control;
    // no public figure: the order of a switch port's buffer). Param: <link>.rx_buffer.
    constexpr std::uint64_t fabric_rx_buffer_bytes = 64 << 10;
    const pcie::generation fabric_gen =
        topo_.params.switch_gen == 3 ? pcie::generation::ualink : pcie::generation::gen6;
    for (std::size_t i = 0; i < topo_.edges.size(); ++i) {
        const auto& e = topo_.edges[i];
        const auto& nb = topo_.nodes[std::size_t(e.b)];
        const std::string lname = sc_name(topo_.nodes[std::size_t(e.a)].name + "__" + nb.name);
        const std::uint64_t id = 2 * i + 1;
        if (e.m == medium::nic_link || e.m == medium::host_link) {
            if (!here(e.a)) continue;  // a host and what it serves share a rack (plan_partitions)
            // Host side: a root port; device side: the NIC's or chip's endpoint. The edge's lane rate
            // says Gen5 (NL72x2: through the tray's Gen6-to-Gen5 converters) or Gen6 (NL32x2's JBOG cables).
            auto& l = add_link(lname, id, pcie::link_config{generation_of(e), e.lanes});
            hosts_[host_index_.at(e.a)]->rc.attach(next_port[std::size_t(e.a)]++, l.a());
            links_by_medium_[e.m].push_back(&l);
            if (e.m == medium::nic_link) {
                nics_[nic_index_.at(e.b)]->ep.attach(l.b());
            } else {
                chip_of_[std::size_t(e.b)]->ep.attach(l.b());
                host_chips_[host_index_.at(e.a)].push_back(e.b);
            }
            continue;
        }
        // The first end is always a chip: its firmware trains the link.
        const unsigned pa = next_port[std::size_t(e.a)]++, pb = next_port[std::size_t(e.b)]++;
        port_of_[std::size_t(e.a)][e.b] = pa;
        port_of_[std::size_t(e.b)][e.a] = pb;
        const bool a_here = here(e.a), b_here = here(e.b);
        if (!a_here && !b_here) continue;
        // A standby cable or port is a whole link of its own (trained, not
        // routed); otherwise the spare lanes belong to the link.
        const unsigned active = e.standby() ? e.lanes : e.lanes - e.spare_lanes;
        const unsigned spare = e.standby() ? 0 : e.spare_lanes;
        const unsigned retimers = e.m == medium::backplane ? 1 : e.m == medium::cross_rack ? 2 : 0;
        const pcie::generation g = e.m == medium::backplane ? fabric_gen : pcie::generation::gen6;
        auto& l = add_link(lname, id,
                           pcie::link_config{g, active}
                               .with_retimers(retimers)
                               .with_spares(spare)
                               .trained_by_firmware()
                               .with_rx_buffer(fabric_rx_buffer_bytes)
                               .with_strict_priority(fabric_arbitration.get() == "strict"));
        links_by_medium_[e.m].push_back(&l);
        if (e.standby()) standby_.insert(&l);
        if (cut() && crosses_racks(e)) {
            l.split();
            for (const auto& [end, end_here, node] : {std::tuple{0, a_here, e.a}, std::tuple{1, b_here, e.b}}) {
                if (!end_here) {
                    remote_ends_.push_back({&l, end, owner_of(node)});
                    continue;
                }
                // This end sends here: its direction's lookahead (a link's sender has no lead).
                lookahead_ = std::min(lookahead_, l.port(end).lead() + l.wire_latency());
                if (!(a_here && b_here)) cut_ports_.push_back(&l.port(end));
            }
        }
        if (a_here) chip_of_[std::size_t(e.a)]->attach_neuronlink(pa, l);
        if (!b_here) continue;
        if (nb.kind == node_kind::scaleup_switch) switches_[switch_index_.at(e.b)]->attach(pb, l.b());
        else chip_of_[std::size_t(e.b)]->attach_neuronlink_far_end(pb, l);
    }
}

pcie::link& ultraserver::add_link(const std::string& name, std::uint64_t id, const pcie::link_config& c) {
    links_.push_back(std::make_unique<pcie::link>(name.c_str(), queue_, id, id + 1, c));
    return *links_.back();
}

// The hosts and what they should find, handed to the program; a software
// context per host runs it. Cut by rack, each rack here gets an instance of
// its own over the rack's hosts.
void ultraserver::start_hosts() {
    std::map<unsigned, std::vector<std::size_t>> by_part;  // part -> hosts here
    for (std::size_t h = 0; h < hosts_.size(); ++h)
        by_part[cut() ? unsigned(topo_.nodes[std::size_t(host_node_[h])].rack) : 0].push_back(h);
    std::map<int, unsigned> global_host;  // host node -> its place among every host
    for (std::size_t i = 0; i < topo_.nodes.size(); ++i)
        if (topo_.nodes[i].kind == node_kind::host) global_host.emplace(int(i), unsigned(global_host.size()));
    for (const auto& [part, members] : by_part) {
        apps::host_system s;
        for (std::size_t h : members) {
            adapters_.push_back(std::make_unique<host_adapter>(*hosts_[h]));
            apps::host_info hi;
            hi.ops = adapters_.back().get();
            hi.root_ports = static_cast<unsigned>(hosts_[h]->rc.root_ports.get());
            hi.pci_windows = {TRN3_TRAY_MMIO32_BASE, TRN3_TRAY_MMIO32_SIZE, TRN3_TRAY_MMIO64_BASE,
                              TRN3_TRAY_MMIO64_SIZE};
            for (int node : host_chips_[h])
                hi.chips.push_back({topo_.nodes[std::size_t(node)].name, fabric_id_[std::size_t(node)],
                                    chip_routes_[std::size_t(node)]});
            hi.nics = hi.root_ports - static_cast<unsigned>(hi.chips.size());
            // The chips' NICs come first on the root ports, each serving the next
            // chips in order (one or two: the NIC option); the host's own NIC last.
            const unsigned chip_nics = hi.nics > 1 ? hi.nics - 1 : 0;
            for (unsigned c = 0; chip_nics && c < hi.chips.size(); ++c)
                hi.nic_of_chip.push_back(c / ((static_cast<unsigned>(hi.chips.size()) + chip_nics - 1) / chip_nics));
            hi.use_fabric = [ops = hi.ops](const std::vector<driver::pci_function>& nics,
                                           const std::vector<std::uint64_t>& neuron_bar2) {
                fabric::binding b{ops, {}, neuron_bar2};
                for (std::size_t k = 0; k < nics.size(); ++k)
                    b.nics.push_back({nics[k], driver::nic_device::msi_data_of(static_cast<unsigned>(k))});
                fabric::attach(b);
            };
            s.hosts.push_back(std::move(hi));
        }
        s.fabric_chips = static_cast<unsigned>(topo_.chips().size());
        s.cluster_rank = net_.rank;
        s.cluster_size = net_.size;
        s.oob = net_.oob;
        s.fabric = fabric_paths();
        const topology::chip_levels levels = topo_.levels();
        s.level_names = levels.names;
        s.fabric_levels = levels.position;  // chips() order: by fabric id
        if (cut()) {
            s.part = part;
            s.parts = static_cast<unsigned>(rack_owner_.size());
            s.first_host = global_host.at(host_node_[members.front()]);
            s.oob = oob_;
            for (std::size_t i = 0; i < topo_.nodes.size(); ++i)  // this rack's chips
                if (chip_of_[i] && topo_.nodes[i].rack == int(part))
                    s.fabric_forwarded.push_back(&chip_of_[i]->fabric_forwarded());
        } else {
            for (const auto& c : chips_) s.fabric_forwarded.push_back(&c->fabric_forwarded());
            s.activity_now = [this] { return activity_now(); };
        }
        apps::host_program& prog = make_program(std::move(s));
        for (unsigned j = 0; j < members.size(); ++j)
            hosts_[members[j]]->run(fmt::format("software_{}", global_host.at(host_node_[members[j]])),
                                    [&prog, j] { prog.run(j); });
    }
}

apps::activity ultraserver::activity_now() const {
    apps::activity a;
    std::set<medium> switched;  // media whose links end at a switch
    for (const auto& e : topo_.edges)
        if (topo_.nodes[std::size_t(e.b)].kind == node_kind::scaleup_switch) switched.insert(e.m);
    for (const auto& [m, links] : links_by_medium_) {
        apps::activity::medium& out = a.media[topology::medium_name(m)];
        out.switched = switched.count(m) != 0;
        for (const pcie::link* l : links) {
            if (standby_.count(l)) continue;
            out.bytes += l->payload_bytes();
            if (removed_.count(l)) continue;  // what it carried counts, its capacity is gone
            out.capacity += 2 * l->raw_bytes_per_second();
            out.retimers += m == medium::backplane ? 1 : m == medium::cross_rack ? 2 : 0;
            ++out.links;
        }
        a.retimers += out.retimers;
    }
    // In a cluster, the NICs' Ethernet links (EFA): two each, one per plane.
    if (net_.size > 1 && !nics_.empty()) {
        apps::activity::medium& out = a.media["efa"];
        for (const auto& n : nics_) {
            out.bytes += n->network_bytes();
            out.capacity += 2 * 2 * topology::nic_link_gbps * 1e9 / 8;
            out.links += 2;
        }
    }
    for (const auto& c : chips_) {
        std::uint64_t bytes = 0;
        for (const auto& stack : c->hbm) bytes += stack->bytes_moved();
        a.hbm_bytes.push_back(bytes);
    }
    a.chips = static_cast<unsigned>(chips_.size());
    a.switches = static_cast<unsigned>(switches_.size());
    a.nics = static_cast<unsigned>(nics_.size());
    a.hosts = static_cast<unsigned>(hosts_.size());
    return a;
}

const platform_registration nl72x2{
    "nl72x2", "144 chips in two racks (switch_gen 1-3): every MCU boots, every link trains, every chip runs a kernel",
    [] { return std::make_unique<ultraserver>("nl72x2", "nl72x2"); }};
const platform_registration nl32x2{"nl32x2", "64 chips in two racks (switch_gen 1-3): the same full-system boot",
                                   [] { return std::make_unique<ultraserver>("nl32x2", "nl32x2"); }};
const platform_registration torus2d{"nl16-torus2d", "16 chips in a 4x4 torus (the Trainium2-style SKU): the same boot",
                                    [] { return std::make_unique<ultraserver>("nl16_torus2d", "nl16-torus2d"); }};
const platform_registration torus3d{"nl32x2-torus3d", "64 chips in a 4x4x4 torus, four 16-chip servers: the same boot",
                                    [] { return std::make_unique<ultraserver>("nl32x2_torus3d", "nl32x2-torus3d"); }};

}  // namespace trn3
