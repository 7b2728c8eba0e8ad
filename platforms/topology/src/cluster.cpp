#include "trn3/topology/cluster.h"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "trn3/topology/topology.h"

namespace trn3::topology {
namespace {

void need(bool ok, const std::string& why) {
    if (!ok) throw std::invalid_argument(why);
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// Radix from capacity and port speed: the capacities and speeds switches have.
unsigned radix_of(double tbps, unsigned gbps) {
    need(tbps == 12.8 || tbps == 25.6 || tbps == 51.2,
         fmt::format("switch_capacity {} Tb/s: switches have 12.8, 25.6 or 51.2", tbps));
    need(gbps == 100 || gbps == 200 || gbps == 400,
         fmt::format("port_speed {} Gb/s: logical ports are 100, 200 or 400", gbps));
    return static_cast<unsigned>(std::llround(tbps * 1000 / gbps));
}

}  // namespace

void set_param(cluster_params& p, const std::string& key_in, const std::string& value) {
    std::string key = key_in;
    const std::size_t dot = key.rfind('.');
    if (dot != std::string::npos) key = key.substr(dot + 1);
    auto number = [&]() -> double {
        try {
            std::size_t used = 0;
            const double v = std::stod(value, &used);
            if (used != value.size() || !std::isfinite(v) || v < 0 || v > 1e9) throw std::invalid_argument(value);
            return v;
        } catch (const std::logic_error&) {
            throw std::invalid_argument(fmt::format("param {}: '{}' is not a number", key_in, value));
        }
    };
    auto whole = [&]() -> unsigned {
        const double v = number();
        need(v == std::floor(v), fmt::format("param {}: '{}' is not a whole number", key_in, value));
        return static_cast<unsigned>(v);
    };
    if (key == "ultraserver") p.ultraserver = value;
    else if (key == "ultraservers") p.ultraservers = whole();
    else if (key == "switch_capacity") p.switch_tbps = number();
    else if (key == "port_speed") p.port_gbps = whole();
    else if (key == "nic_option") p.nic_option = whole();
    else
        throw std::invalid_argument(fmt::format(
            "unknown cluster param '{}' (ultraserver, ultraservers, switch_capacity, port_speed, nic_option)", key_in));
}

std::uint64_t plane_ports(unsigned radix, unsigned tiers) {
    const std::uint64_t k = radix;
    switch (tiers) {
    case 1: return k;
    case 2: return k * k / 2;
    case 3: return k * k * k / 4;
    default: return 0;
    }
}

cluster_network plan_cluster(const cluster_params& p) {
    need(p.ultraserver == "nl32x2" || p.ultraserver == "nl72x2",
         fmt::format("ultraserver '{}': nl32x2 or nl72x2", p.ultraserver));
    need(p.ultraservers >= 1, "ultraservers must be at least 1");
    cluster_network c;
    c.params = p;
    c.radix = radix_of(p.switch_tbps, p.port_gbps);
    topology_params tp;
    tp.sku = p.ultraserver;
    tp.nic_option = p.nic_option;
    const topology one = build(tp);  // checks nic_option
    c.chips = std::uint64_t{one.count(node_kind::chip)} * p.ultraservers;
    c.chip_nics = std::uint64_t{one.chip_nics()} * p.ultraservers;
    c.host_nics = std::uint64_t{one.count(node_kind::nic) - one.chip_nics()} * p.ultraservers;
    // Each NIC has one link per plane; a link takes its bandwidth's worth of logical ports (at least one).
    const std::uint64_t ports_per_link = std::max<std::uint64_t>(1, nic_link_gbps / p.port_gbps);
    c.ports_per_plane = (c.chip_nics + c.host_nics) * ports_per_link;
    for (unsigned t = 1; t <= 3; ++t) c.largest_chips[t - 1] = plane_ports(c.radix, t);
    c.tiers = 1;
    while (c.tiers <= 3 && plane_ports(c.radix, c.tiers) < c.ports_per_plane) ++c.tiers;
    need(c.tiers <= 3, fmt::format("{} x {} need {} ports per plane; three tiers of radix {} hold {}", p.ultraservers,
                                   p.ultraserver, c.ports_per_plane, c.radix, plane_ports(c.radix, 3)));
    const std::uint64_t half = c.radix / 2;
    if (c.tiers == 1) {
        c.tors = 1;
    } else {
        c.tors = ceil_div(c.ports_per_plane, half);
        if (c.tiers == 3) c.leaves = c.tors;  // pods of k/2 ToRs and k/2 leaves
        c.spines = ceil_div((c.tiers == 3 ? c.leaves : c.tors) * half, c.radix);
    }
    return c;
}

std::string report(const cluster_network& c) {
    const cluster_params& p = c.params;
    std::string s;
    s += fmt::format("cluster: {} x {} ({} chips), NIC option {}, {} Tb/s switches, {} Gb/s ports (radix {}), "
                     "{} planes (dual ToR)\n",
                     p.ultraservers, p.ultraserver, c.chips, p.nic_option, p.switch_tbps, p.port_gbps, c.radix,
                     cluster_planes);
    s += fmt::format("  NICs                {} for the chips + {} on the hosts, 2 x {} Gb/s each (a link per plane)\n",
                     c.chip_nics, c.host_nics, nic_link_gbps);
    s += fmt::format("  ports per plane     {} ({} per {} Gb/s link)\n", c.ports_per_plane,
                     std::max(1u, nic_link_gbps / p.port_gbps), nic_link_gbps);
    s += fmt::format("  tiers               {} (a plane of {} tier{} holds {} ports)\n", c.tiers, c.tiers,
                     c.tiers == 1 ? "" : "s", plane_ports(c.radix, c.tiers));
    s += fmt::format("  switches per plane  {} ToR, {} leaf, {} spine\n", c.tors, c.leaves, c.spines);
    s += fmt::format("  switches            {} (both planes)\n", c.switches());
    s += "largest clusters, in chips (one logical port per chip per plane, as the facts sheet counts):\n";
    s += "  capacity  port   radix        1 tier      2 tiers      3 tiers\n";
    for (double tbps : {12.8, 25.6, 51.2})
        for (unsigned gbps : {100u, 200u, 400u}) {
            const unsigned k = radix_of(tbps, gbps);
            s += fmt::format("  {:>5.1f}T   {:>3}G   {:>5}   {:>11}  {:>11}  {:>11}\n", tbps, gbps, k,
                             plane_ports(k, 1), plane_ports(k, 2), plane_ports(k, 3));
        }
    return s;
}

std::string to_json(const cluster_network& c) {
    nlohmann::json j = {
        {"ultraserver", c.params.ultraserver},
        {"ultraservers", c.params.ultraservers},
        {"switch_capacity_tbps", c.params.switch_tbps},
        {"port_speed_gbps", c.params.port_gbps},
        {"nic_option", c.params.nic_option},
        {"radix", c.radix},
        {"chips", c.chips},
        {"chip_nics", c.chip_nics},
        {"host_nics", c.host_nics},
        {"planes", cluster_planes},
        {"ports_per_plane", c.ports_per_plane},
        {"tiers", c.tiers},
        {"per_plane", {{"tor", c.tors}, {"leaf", c.leaves}, {"spine", c.spines}}},
        {"switches", c.switches()},
        {"largest_chips",
         {{"1_tier", c.largest_chips[0]}, {"2_tiers", c.largest_chips[1]}, {"3_tiers", c.largest_chips[2]}}},
    };
    return j.dump(2) + "\n";
}

}  // namespace trn3::topology
