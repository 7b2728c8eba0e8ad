// A cluster of UltraServers on the EFA network: N UltraServers (nl32x2 or
// nl72x2), each booting as it does alone, their Nitro NICs cabled to a
// dual-ToR Clos network of Ethernet switches built from the cluster plan
// (platforms/topology cluster.h, the same arithmetic `trn3vp topology
// --platform cluster` prints).
//
//   us<k>            an ultraserver (its params: cluster.us<k>.*, or all of
//                    them at once: -p 'cluster.*.trays=1')
//   plane p          every NIC's port p goes to a ToR of plane p (dual ToR)
//   tor_p<p>_<i>     NIC links down, one uplink to each spine of its plane
//   spine_p<p>_<j>   one link to each ToR of its plane (two tiers)
//
// A NIC link is 200 Gb/s; a ToR's uplinks carry its half of the radix,
// split evenly over the spines. Routes: a ToR sends a NIC's frames down its
// link, every other destination up over every uplink (ECMP on the SRD
// entropy); a spine sends down to the destination's ToR. NIC addresses:
// UltraServer k's are (k + 1) << 16 + 1, + 2, ...
//
// params: ultraserver, ultraservers, switch_capacity (Tb/s), port_speed
// (Gb/s), tor_cable, spine_cable; the switches' own under their names.
#pragma once

#include <memory>
#include <vector>

#include "trn3/core/message_link.h"
#include "trn3/ethernet/eth_switch.h"
#include "trn3/platforms/platform.h"
#include "trn3/topology/cluster.h"

namespace trn3 {

class ultraserver;

class cluster final : public platform {
public:
    param<std::string> ultraserver_sku{this, "ultraserver", "nl72x2", "the UltraServers' SKU",
                                       one_of<std::string>{{"nl72x2", "nl32x2"}}};
    param<std::uint64_t> ultraservers{this, "ultraservers", 2, "UltraServers in the cluster",
                                      range<std::uint64_t>{1, 64}};
    param<double> switch_capacity{this, "switch_capacity", 12.8, "Ethernet switch capacity in Tb/s: 12.8, 25.6 or 51.2",
                                  range<double>{1, 1000}};
    param<std::uint64_t> port_speed{this, "port_speed", 100,
                                    "the switches' logical port speed in Gb/s: 100, 200 or 400",
                                    range<std::uint64_t>{1, 1000}};
    param<sc_core::sc_time> tor_cable{this, "tor_cable", sc_core::sc_time(10, sc_core::SC_NS),
                                      "NIC to ToR cable latency (about 5 ns per metre)"};
    param<sc_core::sc_time> spine_cable{this, "spine_cable", sc_core::sc_time(100, sc_core::SC_NS),
                                        "ToR to spine cable latency"};

    explicit cluster(const sc_core::sc_module_name& name);
    ~cluster() override;
    bool passed() const override;
    void report(std::ostream& os) const override;

private:
    void build_network();
    std::size_t chips() const;
    message_link& cable(const std::string& name, message_port& a, message_port& b, sc_core::sc_time latency,
                        double gbit_per_s);

    topology::cluster_network plan_;
    delivery_queue queue_{"queue"};
    std::vector<std::unique_ptr<ultraserver>> servers_;
    std::vector<std::unique_ptr<ethernet::eth_switch>> tors_, spines_;  // plane by plane
    std::vector<std::unique_ptr<message_link>> cables_;
    unsigned tors_per_plane_ = 0, spines_per_plane_ = 0, nic_links_per_plane_ = 0;
    unsigned servers_done_ = 0;
};

}  // namespace trn3
