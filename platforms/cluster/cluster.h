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
// (Gb/s), tor_cable, spine_cable, oob_latency; the switches' own under
// their names.
//
// Partitions (a distributed run, docs/distributed.md): one per UltraServer,
// the Ethernet switches with UltraServer 0; the cut links are the other
// UltraServers' NIC cables. Rank r of R elaborates UltraServers
// [r n / R, (r + 1) n / R), or those `placement` gives it, and, as shells,
// the params and topology of the rest. Every run, distributed or not, goes in the same windows (at most
// the cut links' lookahead and the launcher's latency) and ends at the
// first boundary at which every UltraServer is done.
#pragma once

#include <memory>
#include <vector>

#include "trn3/apps/out_of_band.h"
#include "trn3/core/message_link.h"
#include "trn3/core/ranks.h"
#include "trn3/core/window_sync.h"
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
    param<std::string> placement{
        this, "placement", "",
        "a distributed run: each UltraServer's rank, comma-separated (\"0,1,1,0\"; one process ignores it); "
        "empty: blocks of consecutive UltraServers, rank 0 the first"};
    param<std::string> partition_file{
        this, "partition_file", "",
        "a distributed run's partitions as a JSON file (docs/distributed.md): {\"partitions\": [{\"rank\": 0, "
        "\"ultraservers\": [0, 3]}, ...]}; instead of placement"};
    param<sc_core::sc_time> oob_latency{
        this, "oob_latency", sc_core::sc_time(10, sc_core::SC_US),
        "the launcher's key-value store (apps/out_of_band.h): a value put is visible this much later",
        range<sc_core::sc_time>{sc_core::sc_time(1, sc_core::SC_NS), sc_core::sc_time(1, sc_core::SC_SEC)}};

    explicit cluster(const sc_core::sc_module_name& name);

private:
    // Each UltraServer's rank, from placement or partition_file (empty: neither given).
    std::vector<unsigned> placement_owners(unsigned n, const ranks& r) const;
    std::vector<unsigned> partition_file_owners(unsigned n, const ranks& r) const;

public:
    ~cluster() override;
    // Collective over the ranks: every rank calls them.
    bool passed() const override;
    void report(std::ostream& os) const override;
    window_sync* windows() override { return sync_.get(); }
    std::optional<sc_core::sc_time> finished_at() const override { return finished_at_; }

private:
    void build_network();
    std::size_t chips() const;
    message_link& cable(const std::string& name, message_port& a, message_port& b, sc_core::sc_time latency,
                        double gbit_per_s);
    // The far end of a cut link, elaborated by rank `owner`.
    message_port& proxy(const std::string& name, std::uint64_t id, unsigned owner);
    bool local(unsigned ultraserver) const { return owner_[ultraserver] == me_; }

    topology::cluster_network plan_;
    delivery_queue queue_{"queue"};
    std::vector<std::unique_ptr<ultraserver>> servers_;
    std::vector<std::unique_ptr<ethernet::eth_switch>> tors_, spines_;  // plane by plane
    std::vector<std::unique_ptr<message_link>> cables_;
    unsigned tors_per_plane_ = 0, spines_per_plane_ = 0, nic_links_per_plane_ = 0;
    // The distributed run: each UltraServer's rank, this one, the proxies
    // and local ends of cut links, the smallest lookahead of the cut links'
    // directions this rank sends on.
    std::vector<unsigned> owner_;
    unsigned me_ = 0;
    std::vector<std::unique_ptr<message_port>> proxies_;
    std::vector<std::pair<message_port*, unsigned>> proxy_owners_;
    std::vector<message_port*> cut_ends_;
    sc_core::sc_time lookahead_ = sc_core::sc_max_time();
    std::unique_ptr<window_sync> sync_;
    std::shared_ptr<apps::out_of_band> oob_;
    unsigned servers_done_ = 0, local_servers_ = 0;
    std::optional<sc_core::sc_time> finished_at_;  // when the last of this rank's UltraServers finished
};

}  // namespace trn3
