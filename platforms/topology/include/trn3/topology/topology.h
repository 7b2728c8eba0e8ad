// The UltraServers' topology as a graph: chips, hosts and scale-up switches
// as nodes, cables and traces as edges with their lanes, and what follows
// from it (counts, lane and bandwidth budget per chip, hop counts). Every
// count comes from ../shared/docs/trn3-facts.md, sections 2-4, and is a
// field of topology_params. The full-system platforms are built from this
// graph; `trn3vp topology` prints it. No SystemC here.
//
// Hop convention: the hops between two chips are the intermediate nodes on a
// shortest path, switches and forwarding chips alike (a chip forwards other
// chips' traffic on its own: auto-forwarding). It gives all six published
// examples: NL32x2 Gen1 1/2/3, NL72x2 Gen1 1/3/4. Hosts do not forward.
// Two chips joined directly (PCB traces, a cross-rack cable) are 0 hops apart.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace trn3::topology {

enum class node_kind { chip, host, scaleup_switch, nic };
enum class medium { backplane, pcb, cross_rack, tray_switch, torus, host_link, nic_link };
const char* medium_name(medium m);

struct node {
    node_kind kind;
    std::string name;  // "r0.t3.c1" (chip B of tray 4 of rack A), "r1.sw.p2.s7", "r0.t3.host"
    int rack = 0, tray = 0, slot = 0, plane = -1;
    std::string model;  // switches: the pcie_switch preset
};

struct edge {
    int a, b;  // node indices
    medium m;
    unsigned lanes;  // physical lanes of this cable or trace
    unsigned spare_lanes;  // of those, spares (never extra bandwidth)
    double lane_bytes_per_s;  // per direction
    // A spare cable or port as a whole (every lane spare, e.g. the backplane
    // edges to a plane's spare switches): trained and present, carrying no
    // traffic: routes leave it out.
    bool standby() const { return spare_lanes >= lanes; }
};

struct topology_params {
    std::string sku = "nl72x2";  // nl32x2, nl72x2, nl16-torus2d, nl32x2-torus3d
    unsigned switch_gen = 1;  // 1, 2, 3 (switched SKUs)
    unsigned racks = 2;
    unsigned trays = 0;  // compute/JBOG trays per rack (0: the SKU's: 16 or 18)
    unsigned switch_trays = 4;  // NL32x2 Gen1: 4, or 5 with the hot-swap tray
    unsigned nic_option =
        1;  // Nitro-v6 NICs (2 x 200G = 400 Gb/s each): 1 one per two chips (most racks), 2 one per chip;
    // plus one per host (the CPU tray's front-end NIC)
    std::string switch_model =
        "scorpio-x";  // Gen1 switches: scorpio-x (160 lanes, 20 x8) or pex90144 (144 lanes, 18 x8)
    // Per chip (the facts sheet's figures; the models' defaults give the same):
    double chip_mxfp8_tflops = 2516.6;  // 8 cores x 128 x 128 x 2 x 2.4 GHz x 4 (MX runs 4 values per PE)
    double chip_bf16_tflops = 629.1;  // 8 cores x 128 x 128 x 2 x 2.4 GHz (the facts sheet quotes 671)
    double chip_hbm_gib = 144;  // 4 stacks x 36 GiB (HBM's "36 GB" is 12 x 24 Gbit dies: binary)
    double chip_hbm_tbps = 4.9;  // TB/s
    unsigned retimers_per_tray = 0;  // 0: the SKU's (NL32x2 JBOG 4, NL72x2 compute tray 6)
    unsigned tray_switches =
        8;  // NL72x2: 32-lane switches per compute tray (1, 2, 4 or 8; 64 PCB lanes split over them)
};

// Applies "key=value" (keys: sku, switch_gen, racks, trays, switch_trays,
// nic_option, switch_model, retimers_per_tray, tray_switches, with or without a "<sku>."
// prefix); throws std::invalid_argument with a one-line message naming the key.
void set_param(topology_params& p, const std::string& key, const std::string& value);

// The levels of the topology, innermost first, as a hierarchical
// collective steps through them (sw/collectives plan_hierarchical), and
// each chip's position on every level. Switched SKUs: "tray" (the chips of
// a tray, joined by its PCB and tray switches), "rack" (a rack's trays),
// "racks" (the cross-rack cables); torus SKUs: the dimensions x, y (and z).
struct chip_levels {
    std::vector<std::string> names;
    std::vector<std::vector<unsigned>> position;  // per chip, in chips() order: its position on each level
};

struct topology {
    topology_params params;
    std::vector<node> nodes;
    std::vector<edge> edges;
    unsigned retimers = 0;  // on the boards (counted, not nodes)
    unsigned converters = 0;  // Gen6-to-Gen5, beside the hosts

    unsigned count(node_kind k) const;
    unsigned chip_nics() const;  // NICs for the chips' scale-out (the rest are the hosts' own)
    int chip(int rack, int tray, int slot) const;  // node index, -1 if absent
    std::vector<int> chips() const;
    chip_levels levels() const;
    // Adjacency over forwarding nodes (chips and switches), over the edges
    // that carry traffic (not standby ones).
    std::vector<std::vector<int>> forwarding_adjacency() const;
    // Hops between every pair of chips (unreachable: -1), row per chip in chips() order.
    std::vector<std::vector<int>> chip_hops() const;
    // A shortest path from chip a to chip b (node indices, both ends included).
    std::vector<int> path(int a, int b) const;
    // Per chip (the first chip's; every chip has the same budget): lanes by medium.
    std::map<medium, unsigned> chip_lanes(int chip_node, bool spares) const;
    unsigned backplane_cables() const;
    // Routing: for every forwarding node and every destination chip, every
    // neighbour on a minimal-hop path (the equal next hops, ascending), which
    // the fabric programs into chips and switches; each TLP takes one of them
    // by its flow (spec/device.h TRN3_ROUTE_PICK), counting them in the
    // order of the node's ports towards them, not in this list's order.
    // routes()[node][k] = next nodes towards chips()[k] (none: the node itself, or unreachable).
    std::vector<std::vector<std::vector<int>>> routes() const;
};

// Throws std::invalid_argument for an unknown SKU, generation or a count
// the SKU cannot have.
topology build(const topology_params& p);

struct published_example {
    std::string from, to;
    int rack_a, tray_a, slot_a, rack_b, tray_b, slot_b;
    int published_hops;
};
// The facts sheet's examples for this SKU and generation (Gen1 only; empty otherwise).
std::vector<published_example> examples(const topology_params& p);

std::string report(const topology& t);  // text, for people
std::string to_json(const topology& t);  // nodes, edges, counts, hop histogram
std::string to_dot(const topology& t);  // Graphviz

}  // namespace trn3::topology
