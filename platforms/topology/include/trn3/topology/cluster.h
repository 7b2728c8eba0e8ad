// The scale-out network of a cluster of UltraServers, as arithmetic (no
// SystemC): the switches' radix from capacity and port speed, the tiers a
// cluster needs, switch counts per plane, and the largest cluster per
// switch generation (../shared/docs/trn3-facts.md section 5). `trn3vp
// topology --platform cluster` prints it.
//
// The network has two planes (dual ToR: each NIC has one 200 Gb/s link to a
// ToR of each plane), each a folded Clos (fat tree) of switches of radix
// k = capacity / port speed: one tier holds k endpoint ports, two tiers
// k^2 / 2 (ToRs with k/2 ports down and k/2 up, spines), three tiers
// k^3 / 4 (pods of k/2 ToRs and k/2 leaves, spines).
//
// Largest clusters count one logical port per chip per plane, as the facts
// sheet does (12.8T: 8,192 chips in two tiers at 100G ports, 524,288 in
// three; 512 in two tiers at 400G ports). A concrete cluster counts the
// ports its links take: a 200 Gb/s NIC link takes 200 / port speed logical
// ports (two at 100G; one at 200G; one at 400G, half of it unused), and the
// hosts' own NICs take ports too.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace trn3::topology {

struct cluster_params {
    std::string ultraserver = "nl72x2";  // nl32x2 or nl72x2
    unsigned ultraservers = 2;
    double switch_tbps = 12.8;  // 12.8, 25.6 or 51.2
    unsigned port_gbps = 100;  // logical ports: 100, 200 or 400
    unsigned nic_option = 1;  // 1: a 400G NIC per two chips; 2: one per chip
};

// Applies "key=value" (ultraserver, ultraservers, switch_capacity in Tb/s,
// port_speed in Gb/s, nic_option; with or without a "cluster." prefix);
// throws std::invalid_argument with a one-line message naming the key.
void set_param(cluster_params& p, const std::string& key, const std::string& value);

constexpr unsigned cluster_planes = 2;
constexpr unsigned nic_link_gbps = 200;  // each of a Nitro-v6's two links

// Endpoint ports one plane of `tiers` tiers holds with switches of radix k.
std::uint64_t plane_ports(unsigned radix, unsigned tiers);

struct cluster_network {
    cluster_params params;
    unsigned radix = 0;
    std::uint64_t chips = 0, chip_nics = 0, host_nics = 0;
    std::uint64_t ports_per_plane = 0;  // endpoint ports the NICs' links take in one plane
    unsigned tiers = 0;  // 1, 2 or 3
    std::uint64_t tors = 0, leaves = 0, spines = 0;  // per plane (two tiers: no leaves)
    std::uint64_t switches() const { return cluster_planes * (tors + leaves + spines); }
    // The largest cluster, in chips, with one, two and three tiers (the facts sheet's counting).
    std::array<std::uint64_t, 3> largest_chips{};
};

// Throws std::invalid_argument for an unknown UltraServer, a capacity or port
// speed no switch has, or a cluster larger than three tiers hold.
cluster_network plan_cluster(const cluster_params& p);

std::string report(const cluster_network& c);  // text, for people
std::string to_json(const cluster_network& c);

}  // namespace trn3::topology
