#include "trn3/topology/topology.h"

#include <algorithm>
#include <deque>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace trn3::topology {

namespace {

constexpr double pcie_gen6_lane = 8e9;  // bytes per second per lane per direction
constexpr double ualink_lane = 25e9;
constexpr double pcie_gen5_lane = 32e9 * 128 / 130 / 8;  // 128b/130b
constexpr unsigned backplane_lanes = 80, pcb_lanes = 64, cross_rack_lanes = 16;

struct builder {
    topology t;
    int add(node_kind k, std::string name, int rack, int tray, int slot, int plane = -1, std::string model = "") {
        t.nodes.push_back({k, std::move(name), rack, tray, slot, plane, std::move(model)});
        return static_cast<int>(t.nodes.size()) - 1;
    }
    void link(int a, int b, medium m, unsigned lanes, unsigned spare = 0, double rate = pcie_gen6_lane) {
        t.edges.push_back({a, b, m, lanes, spare, rate});
    }
    // Each chip of `chips` to each switch of `switches`: lanes per edge, the
    // last `spare_edges` edges of a chip being its spare lanes.
    void fan(const std::vector<int>& chips, const std::vector<int>& switches, unsigned lanes, unsigned spare_edges,
             double rate) {
        for (int c : chips)
            for (std::size_t i = 0; i < switches.size(); ++i) {
                const bool spare = i + spare_edges >= switches.size();
                link(c, switches[i], medium::backplane, lanes, spare ? lanes : 0, rate);
            }
    }
};

std::string chip_name(int r, int t, int s) { return fmt::format("r{}.t{}.c{}", r, t, s); }

void need(bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument(what);
}

// The lanes of each switch model (models/pcie's presets of the same names).
unsigned switch_lanes(const std::string& model) {
    if (model == "gen1-160") return 160;
    if (model == "pex144-x8") return 144;
    if (model == "gen2-320") return 320;
    if (model == "ualink-72") return 72 * 4;
    if (model.rfind("tray-", 0) == 0) return static_cast<unsigned>(std::stoul(model.substr(5)));
    return 0;
}

// Every switch carries no more lanes (spares included) than its model has.
void check_switch_lanes(const topology& t) {
    std::vector<unsigned> used(t.nodes.size(), 0);
    for (const edge& e : t.edges)
        for (int n : {e.a, e.b})
            if (t.nodes[std::size_t(n)].kind == node_kind::scaleup_switch) used[std::size_t(n)] += e.lanes;
    for (std::size_t i = 0; i < t.nodes.size(); ++i) {
        const node& n = t.nodes[i];
        if (n.kind != node_kind::scaleup_switch) continue;
        need(used[i] <= switch_lanes(n.model), fmt::format("switch {} ({}) would carry {} lanes, more than its {}{}",
                                                           n.name, n.model, used[i], switch_lanes(n.model),
                                                           t.params.sku == "nl32x2" && n.model == "pex144-x8"
                                                               ? " (NL32x2 with 144-lane switches needs switch_trays=5)"
                                                               : ""));
    }
}

void build_switched(builder& b, const topology_params& p, unsigned slots) {
    const bool nl32 = slots == 2;
    const unsigned trays = p.trays;
    std::vector<std::vector<std::vector<int>>> chip(p.racks,
                                                    std::vector<std::vector<int>>(trays, std::vector<int>(slots)));
    for (unsigned r = 0; r < p.racks; ++r)
        for (unsigned t = 0; t < trays; ++t)
            for (unsigned s = 0; s < slots; ++s)
                chip[r][t][s] = b.add(node_kind::chip, chip_name(int(r), int(t), int(s)), int(r), int(t), int(s));
    // Hosts and the board-level counts.
    for (unsigned r = 0; r < p.racks; ++r) {
        if (nl32) {
            // A CPU tray per 8 JBOG trays; each JBOG tray's PCIe 6.0 x16 cable
            // (128 GB/s per direction) bifurcates into x8 per chip.
            for (unsigned h = 0; h < (trays + 7) / 8; ++h) {
                const int host = b.add(node_kind::host, fmt::format("r{}.host{}", r, h), int(r), int(h), -1);
                for (unsigned t = 8 * h; t < std::min(trays, 8 * h + 8); ++t)
                    for (unsigned s = 0; s < slots; ++s)
                        b.link(host, chip[r][t][s], medium::host_link, 8, 0, pcie_gen6_lane);
            }
            b.t.retimers += (p.retimers_per_tray ? p.retimers_per_tray : 4) * trays;
        } else {
            // A Graviton4 on each compute tray, x16 to each of its chips through
            // the Gen6-to-Gen5 converters: the link runs at Gen5.
            for (unsigned t = 0; t < trays; ++t) {
                const int host = b.add(node_kind::host, fmt::format("r{}.t{}.host", r, t), int(r), int(t), -1);
                for (unsigned s = 0; s < slots; ++s)
                    b.link(host, chip[r][t][s], medium::host_link, 16, 0, pcie_gen5_lane);
            }
            b.t.retimers += (p.retimers_per_tray ? p.retimers_per_tray : 6) * trays;
            b.t.converters += 2 * trays;
        }
    }
    // Chip to chip on the board: NL32x2 traces, NL72x2 the tray's eight 32-lane switches.
    for (unsigned r = 0; r < p.racks; ++r)
        for (unsigned t = 0; t < trays; ++t) {
            if (nl32) {
                b.link(chip[r][t][0], chip[r][t][1], medium::pcb, pcb_lanes);
            } else {
                // The 64 PCB lanes of each chip split over the tray's switches
                // (8 x 32-lane "Scorpio P"; or 4 x 64-lane, 2 x 128-lane).
                const unsigned n = p.tray_switches;
                const char* model = n == 8 ? "tray-32" : n == 4 ? "tray-64" : n == 2 ? "tray-128" : "tray-256";
                for (unsigned k = 0; k < n; ++k) {
                    const int sw = b.add(node_kind::scaleup_switch, fmt::format("r{}.t{}.tsw{}", r, t, k), int(r),
                                         int(t), -1, -1, model);
                    for (unsigned s = 0; s < slots; ++s) b.link(chip[r][t][s], sw, medium::tray_switch, pcb_lanes / n);
                }
            }
        }
    // Cross-rack: each chip to the same-position chip of the paired rack.
    if (p.racks == 2)
        for (unsigned t = 0; t < trays; ++t)
            for (unsigned s = 0; s < slots; ++s)
                b.link(chip[0][t][s], chip[1][t][s], medium::cross_rack, cross_rack_lanes);
    // The scale-up switches of each rack, by generation.
    for (unsigned r = 0; r < p.racks; ++r) {
        auto make = [&](unsigned n, int plane, const char* model, unsigned first) {
            std::vector<int> v;
            for (unsigned i = 0; i < n; ++i)
                v.push_back(
                    b.add(node_kind::scaleup_switch,
                          plane >= 0 ? fmt::format("r{}.p{}.sw{}", r, plane, i) : fmt::format("r{}.sw{}", r, first + i),
                          int(r), -1, -1, plane, model));
            return v;
        };
        auto chips_of = [&](const std::vector<unsigned>& slots_wanted) {
            std::vector<int> v;
            for (unsigned t = 0; t < trays; ++t)
                for (unsigned s : slots_wanted) v.push_back(chip[r][t][s]);
            return v;
        };
        if (p.switch_gen == 1) {
            // One plane per chip position: chip s of every tray on plane s.
            const unsigned per_plane = nl32 ? (p.switch_trays == 5 ? 10 : 8) : 10;
            const char* model = p.switch_model == "pex90144" ? "pex144-x8" : "gen1-160";
            for (unsigned s = 0; s < slots; ++s) {
                const auto sw = make(per_plane, int(s), model, 0);
                if (per_plane == 8)
                    b.fan(chips_of({s}), sw, backplane_lanes / 8, 0, pcie_gen6_lane);  // 8 active + 2 spare each
                else b.fan(chips_of({s}), sw, 8, 2, pcie_gen6_lane);  // the last two switches carry the spares
            }
        } else if (p.switch_gen == 2) {
            if (nl32) {
                b.fan(chips_of({0, 1}), make(8, -1, "gen2-320", 0), backplane_lanes / 8, 0, pcie_gen6_lane);
            } else {
                b.fan(chips_of({0, 1}), make(10, 0, "gen2-320", 0), 8, 2, pcie_gen6_lane);
                b.fan(chips_of({2, 3}), make(10, 1, "gen2-320", 0), 8, 2, pcie_gen6_lane);
            }
        } else {
            // UALink: every chip of the rack on every switch, one x4 port each.
            // Per-rack bandwidth stays what Gen1/Gen2 give (64 lanes x 8 GB/s
            // per chip): 5 active x4 ports of 200 Gb/s lanes (500 GB/s) and a
            // spare port, so 6 switches of 72 ports (NL72x2 fills them).
            std::vector<unsigned> all;
            for (unsigned s = 0; s < slots; ++s) all.push_back(s);
            b.fan(chips_of(all), make(6, -1, "ualink-72", 0), 4, 1, ualink_lane);
        }
    }
    // Mark the backplane spare lanes of NL32x2 Gen1 with 4 switch trays and Gen2 (10 lanes per edge: 2 spare).
    for (edge& e : b.t.edges)
        if (e.m == medium::backplane && e.lanes == 10) e.spare_lanes = 2;
}

void build_torus(builder& b, const topology_params& p, unsigned dims) {
    const unsigned n = 4, lanes = dims == 2 ? 36 : 24;  // 144 active lanes over 4 or 6 neighbours
    const unsigned z_count = dims == 2 ? 1 : n;
    auto idx = [&](unsigned x, unsigned y, unsigned z) { return int(z * n * n + y * n + x); };
    // A chip's tray is y x n + x, its slot z (levels() reads them back).
    std::vector<int> chips;
    for (unsigned z = 0; z < z_count; ++z)
        for (unsigned y = 0; y < n; ++y)
            for (unsigned x = 0; x < n; ++x)
                chips.push_back(b.add(node_kind::chip, fmt::format("x{}.y{}.z{}", x, y, z), int(dims == 2 ? 0 : z / 2),
                                      int(y * n + x), int(z)));
    for (unsigned z = 0; z < z_count; ++z)
        for (unsigned y = 0; y < n; ++y)
            for (unsigned x = 0; x < n; ++x) {
                const int c = chips[static_cast<std::size_t>(idx(x, y, z))];
                b.link(c, chips[static_cast<std::size_t>(idx((x + 1) % n, y, z))], medium::torus, lanes);
                b.link(c, chips[static_cast<std::size_t>(idx(x, (y + 1) % n, z))], medium::torus, lanes);
                if (dims == 3) b.link(c, chips[static_cast<std::size_t>(idx(x, y, (z + 1) % n))], medium::torus, lanes);
            }
    // A host per four chips.
    for (std::size_t i = 0; i < chips.size(); i += 4) {
        const int host = b.add(node_kind::host, fmt::format("host{}", i / 4), 0, int(i / 4), -1);
        for (std::size_t k = i; k < i + 4; ++k) b.link(host, chips[k], medium::host_link, 16, 0, pcie_gen5_lane);
    }
    (void)p;
}

}  // namespace

const char* medium_name(medium m) {
    switch (m) {
    case medium::backplane: return "backplane";
    case medium::pcb: return "pcb";
    case medium::cross_rack: return "cross-rack";
    case medium::tray_switch: return "pcb (tray switch)";
    case medium::torus: return "torus";
    case medium::host_link: return "host";
    case medium::nic_link: return "nic";
    }
    return "?";
}

void set_param(topology_params& p, const std::string& key_in, const std::string& value) {
    std::string key = key_in;
    const std::size_t dot = key.rfind('.');
    if (dot != std::string::npos) key = key.substr(dot + 1);
    auto number = [&]() -> unsigned {
        try {
            std::size_t used = 0;
            const unsigned long v = std::stoul(value, &used);
            if (used != value.size()) throw std::invalid_argument(value);
            return static_cast<unsigned>(v);
        } catch (const std::logic_error&) {
            throw std::invalid_argument(fmt::format("param {}: '{}' is not a number", key_in, value));
        }
    };
    if (key == "sku") p.sku = value;
    else if (key == "switch_gen") p.switch_gen = number();
    else if (key == "racks") p.racks = number();
    else if (key == "trays") p.trays = number();
    else if (key == "switch_trays") p.switch_trays = number();
    else if (key == "nic_option") p.nic_option = number();
    else if (key == "switch_model") p.switch_model = value;
    else if (key == "retimers_per_tray") p.retimers_per_tray = number();
    else if (key == "tray_switches") p.tray_switches = number();
    else
        throw std::invalid_argument(
            fmt::format("unknown topology param '{}' (sku, switch_gen, racks, trays, switch_trays, "
                        "nic_option, switch_model, retimers_per_tray, tray_switches)",
                        key_in));
}

topology build(const topology_params& in) {
    topology_params p = in;
    builder b;
    const bool switched = p.sku == "nl32x2" || p.sku == "nl72x2";
    need(switched || p.sku == "nl16-torus2d" || p.sku == "nl32x2-torus3d",
         fmt::format("unknown SKU '{}' (nl32x2, nl72x2, nl16-torus2d, nl32x2-torus3d)", p.sku));
    need(p.nic_option == 1 || p.nic_option == 2,
         fmt::format("nic_option {}: 1 (a 400G NIC per two chips) or 2 (one per chip)", p.nic_option));
    need(p.switch_model == "scorpio-x" || p.switch_model == "pex90144",
         fmt::format("switch_model '{}': scorpio-x or pex90144", p.switch_model));
    auto add_nics = [&] {
        // Nitro-v6 NICs on the PCIe
        // of the chips' host: one per two chips (option 1) or per chip
        // (option 2), named after the first chip they serve; and each host's
        // own front-end NIC.
        std::map<int, std::vector<int>> chips_of_host;
        for (const edge& e : b.t.edges)
            if (e.m == medium::host_link) chips_of_host[e.a].push_back(e.b);
        const unsigned per_nic = p.nic_option == 1 ? 2 : 1;
        for (const auto& [h, cs] : chips_of_host) {
            for (std::size_t i = 0; i < cs.size(); i += per_nic) {
                const node& cn = b.t.nodes[std::size_t(cs[i])];
                const int nic = b.add(node_kind::nic, cn.name + ".nic", cn.rack, cn.tray, cn.slot);
                b.link(h, nic, medium::nic_link, 16, 0, pcie_gen5_lane);
            }
            const node& hn = b.t.nodes[std::size_t(h)];
            const int own = b.add(node_kind::nic, hn.name + ".nic", hn.rack, hn.tray, -1);
            b.link(h, own, medium::nic_link, 16, 0, pcie_gen5_lane);
        }
    };
    if (switched) {
        need(p.switch_gen >= 1 && p.switch_gen <= 3, fmt::format("switch_gen {}: 1, 2 or 3", p.switch_gen));
        need(p.racks == 1 || p.racks == 2, fmt::format("racks {}: 1 or 2 (a pair)", p.racks));
        const unsigned full = p.sku == "nl32x2" ? 16 : 18;
        if (p.trays == 0) p.trays = full;
        need(p.trays >= 1 && p.trays <= full, fmt::format("trays {}: 1 to {}", p.trays, full));
        need(p.tray_switches == 1 || p.tray_switches == 2 || p.tray_switches == 4 || p.tray_switches == 8,
             fmt::format("tray_switches {}: 1, 2, 4 or 8", p.tray_switches));
        need(p.sku != "nl32x2" || p.switch_trays == 4 || p.switch_trays == 5,
             fmt::format("switch_trays {}: 4, or 5 with the hot-swap tray", p.switch_trays));
        b.t.params = p;
        build_switched(b, p, p.sku == "nl32x2" ? 2 : 4);
        check_switch_lanes(b.t);
    } else {
        b.t.params = p;
        build_torus(b, p, p.sku == "nl16-torus2d" ? 2 : 3);
    }
    add_nics();
    return std::move(b.t);
}

unsigned topology::chip_nics() const {
    return static_cast<unsigned>(std::count_if(nodes.begin(), nodes.end(),
                                               [](const node& n) { return n.kind == node_kind::nic && n.slot >= 0; }));
}

unsigned topology::count(node_kind k) const {
    return static_cast<unsigned>(std::count_if(nodes.begin(), nodes.end(), [k](const node& n) { return n.kind == k; }));
}

int topology::chip(int rack, int tray, int slot) const {
    for (std::size_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].kind == node_kind::chip && nodes[i].rack == rack && nodes[i].tray == tray && nodes[i].slot == slot)
            return static_cast<int>(i);
    return -1;
}

std::vector<int> topology::chips() const {
    std::vector<int> v;
    for (std::size_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].kind == node_kind::chip) v.push_back(static_cast<int>(i));
    return v;
}

std::vector<std::vector<int>> topology::forwarding_adjacency() const {
    std::vector<std::vector<int>> adj(nodes.size());
    for (const edge& e : edges) {
        const auto ka = nodes[std::size_t(e.a)].kind, kb = nodes[std::size_t(e.b)].kind;
        if (ka == node_kind::host || kb == node_kind::host || ka == node_kind::nic || kb == node_kind::nic) continue;
        if (e.standby()) continue;
        adj[std::size_t(e.a)].push_back(e.b);
        adj[std::size_t(e.b)].push_back(e.a);
    }
    for (auto& v : adj) {
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
    }
    return adj;
}

namespace {
// Breadth-first distances (in edges) and parents from `from` over forwarding nodes.
void bfs(const std::vector<std::vector<int>>& adj, int from, std::vector<int>& dist, std::vector<int>& parent) {
    dist.assign(adj.size(), -1);
    parent.assign(adj.size(), -1);
    std::deque<int> q{from};
    dist[std::size_t(from)] = 0;
    while (!q.empty()) {
        const int u = q.front();
        q.pop_front();
        for (int v : adj[std::size_t(u)])
            if (dist[std::size_t(v)] < 0) {
                dist[std::size_t(v)] = dist[std::size_t(u)] + 1;
                parent[std::size_t(v)] = u;
                q.push_back(v);
            }
    }
}
}  // namespace

std::vector<std::vector<std::vector<int>>> topology::routes() const {
    const auto adj = forwarding_adjacency();
    const auto c = chips();
    std::vector<std::vector<std::vector<int>>> table(nodes.size(), std::vector<std::vector<int>>(c.size()));
    std::vector<int> dist, parent;
    for (std::size_t k = 0; k < c.size(); ++k) {
        bfs(adj, c[k], dist, parent);  // distances to destination k (the graph is undirected)
        for (std::size_t u = 0; u < nodes.size(); ++u) {
            if (int(u) == c[k] || dist[u] <= 0) continue;
            std::vector<int>& next = table[u][k];
            for (int v : adj[u])
                if (dist[std::size_t(v)] == dist[u] - 1) next.push_back(v);
            std::sort(next.begin(), next.end());
        }
    }
    return table;
}

std::vector<std::vector<int>> topology::chip_hops() const {
    const auto adj = forwarding_adjacency();
    const auto c = chips();
    std::vector<std::vector<int>> hops(c.size(), std::vector<int>(c.size(), -1));
    std::vector<int> dist, parent;
    for (std::size_t i = 0; i < c.size(); ++i) {
        bfs(adj, c[i], dist, parent);
        for (std::size_t j = 0; j < c.size(); ++j) {
            const int d = dist[std::size_t(c[j])];
            hops[i][j] = d < 0 ? -1 : (d == 0 ? 0 : d - 1);  // intermediate nodes
        }
    }
    return hops;
}

std::vector<int> topology::path(int a, int b) const {
    std::vector<int> dist, parent;
    bfs(forwarding_adjacency(), a, dist, parent);
    if (dist[std::size_t(b)] < 0) return {};
    std::vector<int> p;
    for (int v = b; v >= 0; v = parent[std::size_t(v)]) p.push_back(v);
    std::reverse(p.begin(), p.end());
    return p;
}

std::map<medium, unsigned> topology::chip_lanes(int c, bool spares) const {
    std::map<medium, unsigned> m;
    for (const edge& e : edges) {
        if (e.m == medium::host_link || e.m == medium::nic_link || (e.a != c && e.b != c)) continue;
        m[e.m] += spares ? e.lanes : e.lanes - e.spare_lanes;
    }
    return m;
}

unsigned topology::backplane_cables() const {
    unsigned n = 0;
    for (const edge& e : edges)
        if (e.m == medium::backplane) n += e.lanes;  // a copper cable per lane
    return n;
}

std::vector<published_example> examples(const topology_params& p) {
    if (p.switch_gen != 1) return {};
    if (p.sku == "nl32x2")
        return {{"rack A node 1 chip A", "rack A node 16 chip A", 0, 0, 0, 0, 15, 0, 1},
                {"rack A node 1 chip A", "rack A node 2 chip B", 0, 0, 0, 0, 1, 1, 2},
                {"rack A node 1 chip A", "rack B node 2 chip B", 0, 0, 0, 1, 1, 1, 3}};
    if (p.sku == "nl72x2")
        return {{"rack A node 1 chip A", "rack A node 2 chip A", 0, 0, 0, 0, 1, 0, 1},
                {"rack A node 1 chip A", "rack A node 2 chip C", 0, 0, 0, 0, 1, 2, 3},
                {"rack A node 1 chip A", "rack B node 2 chip C", 0, 0, 0, 1, 1, 2, 4}};
    return {};
}

namespace {

std::map<int, std::uint64_t> histogram(const topology& t, int& unreachable) {
    std::map<int, std::uint64_t> h;
    unreachable = 0;
    const auto hops = t.chip_hops();
    for (std::size_t i = 0; i < hops.size(); ++i)
        for (std::size_t j = i + 1; j < hops.size(); ++j) {
            if (hops[i][j] < 0) ++unreachable;
            else ++h[hops[i][j]];
        }
    return h;
}

std::string path_text(const topology& t, const std::vector<int>& p) {
    std::string s;
    for (int v : p) s += (s.empty() ? "" : " -> ") + t.nodes[std::size_t(v)].name;
    return s;
}

}  // namespace

std::string report(const topology& t) {
    const topology_params& p = t.params;
    std::string s;
    const bool switched = p.sku == "nl32x2" || p.sku == "nl72x2";
    s += switched ? fmt::format("{}, switch generation {}\n", p.sku, p.switch_gen) : fmt::format("{}\n", p.sku);
    s += fmt::format("  chips               {}\n", t.count(node_kind::chip));
    s += fmt::format("  hosts               {}\n", t.count(node_kind::host));
    const unsigned chips = t.count(node_kind::chip), chip_nics = t.chip_nics(),
                   host_nics = t.count(node_kind::nic) - chip_nics;
    s += fmt::format(
        "  NICs                {} Nitro-v6 x 400 Gb/s for the chips (option {}: {} Gb/s per chip) + {} on the "
        "hosts: {:.1f} Tb/s of chip scale-out\n",
        chip_nics, p.nic_option, chips ? chip_nics * 400 / chips : 0, host_nics, chip_nics * 0.4);
    s += fmt::format("  per chip            {:.1f} TFLOP/s dense MXFP8 and MXFP4 ({:.1f} with 4:8 or 4:16 sparsity), "
                     "{:.1f} TFLOP/s BF16, {:.0f} GiB of HBM at {:.1f} TB/s\n",
                     p.chip_mxfp8_tflops, 4 * p.chip_mxfp8_tflops, p.chip_bf16_tflops, p.chip_hbm_gib, p.chip_hbm_tbps);
    s += fmt::format(
        "  system              {:.1f} PFLOP/s dense MXFP8 ({:.1f} sparse), {:.1f} PFLOP/s BF16, {:.0f} GiB "
        "of HBM (published as {:.1f} TB: binary GB), {:.1f} TB/s\n",
        chips * p.chip_mxfp8_tflops / 1000, chips * 4 * p.chip_mxfp8_tflops / 1000, chips * p.chip_bf16_tflops / 1000,
        chips * p.chip_hbm_gib, chips * p.chip_hbm_gib / 1000, chips * p.chip_hbm_tbps);
    std::map<std::string, unsigned> models;
    for (const node& n : t.nodes)
        if (n.kind == node_kind::scaleup_switch) ++models[n.model];
    std::string by_model;
    for (const auto& [m, n] : models) by_model += fmt::format("{}{} x {}", by_model.empty() ? "" : ", ", n, m);
    s += fmt::format("  scale-up switches   {}{}\n", t.count(node_kind::scaleup_switch),
                     by_model.empty() ? "" : " (" + by_model + ")");
    s += fmt::format("  retimers            {}, Gen6-to-Gen5 converters {}\n", t.retimers, t.converters);
    if (switched)
        s += fmt::format("  backplane cables    {} (one per backplane lane; chips x {})\n", t.backplane_cables(),
                         t.backplane_cables() / t.count(node_kind::chip));
    const int c0 = t.chips().front();
    const auto all = t.chip_lanes(c0, true), active = t.chip_lanes(c0, false);
    std::string lanes, bw;
    unsigned total_active = 0;
    double total_bw = 0;
    for (const auto& [m, n] : all) {
        const unsigned a = active.at(m);
        lanes += fmt::format("{}{} {}{}", lanes.empty() ? "" : ", ", medium_name(m), n,
                             n != a ? fmt::format(" ({} active + {} spare)", a, n - a) : "");
        double rate = 0;
        for (const edge& e : t.edges)
            if (e.m == m && (e.a == c0 || e.b == c0)) rate = e.lane_bytes_per_s;
        bw += fmt::format("{}{} {:.0f} GB/s", bw.empty() ? "" : ", ", medium_name(m), a * rate / 1e9);
        total_active += a;
        total_bw += a * rate;
    }
    s += fmt::format("  lanes per chip      {}: {} active\n", lanes, total_active);
    s += fmt::format("  bandwidth per chip  {}: {:.0f} GB/s per direction\n", bw, total_bw / 1e9);
    int unreachable = 0;
    const auto h = histogram(t, unreachable);
    std::uint64_t pairs = 0;
    std::string hist;
    for (const auto& [k, n] : h) {
        pairs += n;
        hist += fmt::format("{}{}{}: {}", hist.empty() ? "" : ", ", k, k == 0 ? " (direct link)" : "", n);
    }
    s += fmt::format("  hops over {} chip pairs: {}; {}\n", pairs + std::uint64_t(unreachable), hist,
                     unreachable ? fmt::format("{} pairs UNREACHABLE", unreachable) : "every pair reachable");
    s += "  hop convention: intermediate nodes (switches and forwarding chips) on a shortest path\n";
    for (const published_example& e : examples(p)) {
        const int a = t.chip(e.rack_a, e.tray_a, e.slot_a), b = t.chip(e.rack_b, e.tray_b, e.slot_b);
        if (a < 0 || b < 0) continue;  // a reduced system without those chips
        const auto path = t.path(a, b);
        const int hops = path.empty() ? -1 : int(path.size()) - 2;
        s += fmt::format("  {} -> {}: {} hops (published {}){}\n    {}\n", e.from, e.to, hops, e.published_hops,
                         hops == e.published_hops ? "" : "  MISMATCH", path_text(t, path));
    }
    return s;
}

std::string to_json(const topology& t) {
    nlohmann::json j;
    j["sku"] = t.params.sku;
    j["switch_gen"] = t.params.switch_gen;
    j["nic_option"] = t.params.nic_option;
    const double chips = t.count(node_kind::chip);
    j["system"] = {{"dense_mxfp8_pflops", chips * t.params.chip_mxfp8_tflops / 1000},
                   {"sparse_mxfp8_pflops", chips * 4 * t.params.chip_mxfp8_tflops / 1000},
                   {"bf16_pflops", chips * t.params.chip_bf16_tflops / 1000},
                   {"hbm_gib", chips * t.params.chip_hbm_gib},
                   {"hbm_tbytes_per_s", chips * t.params.chip_hbm_tbps}};
    j["counts"] = {{"chips", t.count(node_kind::chip)},
                   {"hosts", t.count(node_kind::host)},
                   {"nics", t.count(node_kind::nic)},
                   {"chip_nics", t.chip_nics()},
                   {"scaleup_switches", t.count(node_kind::scaleup_switch)},
                   {"retimers", t.retimers},
                   {"converters", t.converters},
                   {"backplane_cables", t.backplane_cables()}};
    for (const node& n : t.nodes)
        j["nodes"].push_back({{"name", n.name},
                              {"kind", n.kind == node_kind::chip   ? "chip"
                                       : n.kind == node_kind::host ? "host"
                                       : n.kind == node_kind::nic  ? "nic"
                                                                   : "switch"},
                              {"rack", n.rack},
                              {"tray", n.tray},
                              {"slot", n.slot},
                              {"plane", n.plane},
                              {"model", n.model}});
    for (const edge& e : t.edges)
        j["edges"].push_back({{"a", t.nodes[std::size_t(e.a)].name},
                              {"b", t.nodes[std::size_t(e.b)].name},
                              {"medium", medium_name(e.m)},
                              {"lanes", e.lanes},
                              {"spare_lanes", e.spare_lanes},
                              {"gbytes_per_s", (e.lanes - e.spare_lanes) * e.lane_bytes_per_s / 1e9}});
    int unreachable = 0;
    for (const auto& [k, n] : histogram(t, unreachable)) j["hops"][std::to_string(k)] = n;
    j["unreachable_pairs"] = unreachable;
    for (const published_example& e : examples(t.params)) {
        const int a = t.chip(e.rack_a, e.tray_a, e.slot_a), b = t.chip(e.rack_b, e.tray_b, e.slot_b);
        if (a < 0 || b < 0) continue;
        const auto path = t.path(a, b);
        j["examples"].push_back(
            {{"from", e.from}, {"to", e.to}, {"hops", int(path.size()) - 2}, {"published", e.published_hops}});
    }
    return j.dump(1) + "\n";
}

std::string to_dot(const topology& t) {
    std::string s =
        fmt::format("graph \"{} gen{}\" {{\n  layout=neato; overlap=false;\n", t.params.sku, t.params.switch_gen);
    for (const node& n : t.nodes)
        s += fmt::format("  \"{}\" [shape={}];\n", n.name,
                         n.kind == node_kind::chip   ? "box"
                         : n.kind == node_kind::host ? "house"
                         : n.kind == node_kind::nic  ? "diamond"
                                                     : "ellipse");
    for (const edge& e : t.edges)
        s += fmt::format("  \"{}\" -- \"{}\" [label=\"x{} {}\"];\n", t.nodes[std::size_t(e.a)].name,
                         t.nodes[std::size_t(e.b)].name, e.lanes, medium_name(e.m));
    return s + "}\n";
}

}  // namespace trn3::topology
