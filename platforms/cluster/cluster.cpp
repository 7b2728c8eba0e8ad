#include "cluster.h"

#include <fmt/format.h>

#include <stdexcept>

#include "../ultraserver/ultraserver.h"

namespace trn3 {
namespace {

constexpr double nic_link_gbit_per_s = topology::nic_link_gbps;
constexpr std::uint64_t switch_id_base = 1ull << 40;  // message ids of the switches' ports
constexpr std::uint64_t switch_id_stride = 1 << 12;

}  // namespace

cluster::cluster(const sc_core::sc_module_name& name) : platform(name) {
    const unsigned n = static_cast<unsigned>(ultraservers.get());
    const auto oob = std::make_shared<apps::out_of_band>();
    for (unsigned k = 0; k < n; ++k) {
        ultraserver_network net;
        net.rank = k;
        net.size = n;
        net.oob = oob;
        net.nic_node_base = std::uint64_t{k + 1} << 16;
        net.nic_port_id_base = std::uint64_t{k + 1} << 32;
        servers_.push_back(std::make_unique<ultraserver>(fmt::format("us{}", k).c_str(), ultraserver_sku.get(), net));
        servers_.back()->set_stop([this] {
            if (++servers_done_ == servers_.size()) sc_core::sc_stop();
        });
    }
    topology::cluster_params p;
    p.ultraserver = ultraserver_sku.get();
    p.ultraservers = n;
    p.switch_tbps = switch_capacity.get();
    p.port_gbps = static_cast<unsigned>(port_speed.get());
    p.nic_option = static_cast<unsigned>(servers_[0]->nic_option.get());
    try {
        plan_ = topology::plan_cluster(p);
    } catch (const std::invalid_argument& e) {
        throw config_error(std::string(this->name()) + ": " + e.what());
    }
    for (const auto& s : servers_)
        if (s->nic_option.get() != p.nic_option)
            throw config_error(fmt::format("{}: every UltraServer needs the same nic_option", this->name()));
    build_network();
}

cluster::~cluster() = default;

message_link& cluster::cable(const std::string& name, message_port& a, message_port& b, sc_core::sc_time latency,
                             double gbit_per_s) {
    cables_.push_back(
        std::make_unique<message_link>(name.c_str(), queue_, a, b, latency, bandwidth{gbit_per_s * 1e9 / 8}));
    return *cables_.back();
}

// Both planes: ToRs with the NIC links in UltraServer and NIC order, spines
// above them when one switch's ports do not hold the plane.
void cluster::build_network() {
    if (plan_.tiers > 2)
        throw config_error(fmt::format("{}: {} UltraServers need three tiers; the platform builds one or two "
                                       "(`trn3vp topology --platform cluster` sizes larger clusters)",
                                       name(), servers_.size()));
    struct nic_end {
        nic::nitro_nic* nic;
        std::uint64_t node;
        std::string name;  // us<k>_<nic>
    };
    std::vector<nic_end> ends;
    for (const auto& s : servers_)
        for (const auto& nic : s->nics())
            ends.push_back({nic.get(), nic->node(), std::string(s->basename()) + "_" + nic->basename()});
    nic_links_per_plane_ = static_cast<unsigned>(ends.size());
    // Logical ports a 200 Gb/s NIC link takes; a ToR gives half its radix to NICs when it has uplinks.
    const unsigned radix = plan_.radix;
    const unsigned per_link = std::max(1u, unsigned(nic_link_gbit_per_s) / unsigned(port_speed.get()));
    const unsigned down_ports = plan_.tiers == 1 ? radix : radix / 2;
    const unsigned links_per_tor = std::max(1u, down_ports / per_link);
    tors_per_plane_ = (nic_links_per_plane_ + links_per_tor - 1) / links_per_tor;
    spines_per_plane_ = tors_per_plane_ > 1 ? static_cast<unsigned>(std::max<std::uint64_t>(plan_.spines, 1)) : 0;
    const double uplink_gbit_per_s =
        spines_per_plane_ ? double(radix / 2) * double(port_speed.get()) / spines_per_plane_ : 0;

    auto& registry = param_registry::instance();
    std::uint64_t next_id = switch_id_base;
    auto make_switch = [&](const std::string& sw, unsigned ports) {
        const std::string full = std::string(name()) + "." + sw;
        registry.set_pending_text(full + ".capacity", fmt::format("{}Tb/s", switch_capacity.get()), name());
        registry.set_pending_text(full + ".port_speed", fmt::format("{}Gb/s", port_speed.get()), name());
        auto s = std::make_unique<ethernet::eth_switch>(sw.c_str(), ports, next_id);
        next_id += switch_id_stride;
        return s;
    };
    for (unsigned plane = 0; plane < topology::cluster_planes; ++plane) {
        const std::size_t first_tor = tors_.size();
        for (unsigned t = 0; t < tors_per_plane_; ++t) {
            const unsigned down = std::min(links_per_tor, nic_links_per_plane_ - t * links_per_tor);
            tors_.push_back(make_switch(fmt::format("tor_p{}_{}", plane, t), down + spines_per_plane_));
        }
        const std::size_t first_spine = spines_.size();
        for (unsigned s = 0; s < spines_per_plane_; ++s)
            spines_.push_back(make_switch(fmt::format("spine_p{}_{}", plane, s), tors_per_plane_));
        // NIC links: NIC i's port `plane` to ToR i / links_per_tor.
        for (unsigned i = 0; i < ends.size(); ++i) {
            auto& tor = *tors_[first_tor + i / links_per_tor];
            const unsigned port = i % links_per_tor;
            tor.connect(port, cable(fmt::format("{}_p{}", ends[i].name, plane), ends[i].nic->srd.port(plane),
                                    tor.port(port), tor_cable.get(), nic_link_gbit_per_s));
        }
        // Uplinks: ToR t's port down + s to spine s's port t.
        for (unsigned t = 0; t < tors_per_plane_; ++t) {
            auto& tor = *tors_[first_tor + t];
            const unsigned down = tor.port_count() - spines_per_plane_;
            for (unsigned s = 0; s < spines_per_plane_; ++s) {
                auto& spine = *spines_[first_spine + s];
                auto& l = cable(fmt::format("{}__{}", tor.basename(), spine.basename()), tor.port(down + s),
                                spine.port(t), spine_cable.get(), uplink_gbit_per_s);
                tor.connect(down + s, l);
                spine.connect(t, l);
            }
        }
        // Routes: down to a ToR's own NICs, else up over every uplink; a spine down to the NIC's ToR.
        for (unsigned i = 0; i < ends.size(); ++i) {
            const unsigned home = i / links_per_tor;
            for (unsigned t = 0; t < tors_per_plane_; ++t) {
                auto& tor = *tors_[first_tor + t];
                if (t == home) {
                    tor.set_route(ends[i].node, {i % links_per_tor});
                } else {
                    std::vector<unsigned> up;
                    const unsigned down = tor.port_count() - spines_per_plane_;
                    for (unsigned s = 0; s < spines_per_plane_; ++s) up.push_back(down + s);
                    tor.set_route(ends[i].node, up);
                }
            }
            for (unsigned s = 0; s < spines_per_plane_; ++s) spines_[first_spine + s]->set_route(ends[i].node, {home});
        }
    }
}

std::size_t cluster::chips() const {
    std::size_t n = 0;
    for (const auto& s : servers_)
        for (const auto& node : s->topo().nodes) n += node.kind == topology::node_kind::chip;
    return n;
}

bool cluster::passed() const {
    for (const auto& s : servers_)
        if (!s->passed()) return false;
    return !servers_.empty();
}

void cluster::report(std::ostream& os) const {
    os << fmt::format("cluster: {} x {}, {} chips; EFA network: {} planes of {} ToRs and {} spines "
                      "({} Tb/s switches at {} Gb/s ports, radix {}), {} NIC links of 200 Gb/s per plane\n",
                      servers_.size(), ultraserver_sku.get(), chips(), topology::cluster_planes, tors_per_plane_,
                      spines_per_plane_, switch_capacity.get(), port_speed.get(), plan_.radix, nic_links_per_plane_);
    for (const auto& s : servers_) {
        os << fmt::format("--- {} ---\n", s->basename());
        s->report(os);
    }
}

const platform_registration cluster_registration{
    "cluster",
    "UltraServers (2 x nl72x2 by default) on a dual-ToR Ethernet network of ToRs and spines: each boots as it does "
    "alone",
    [] { return std::make_unique<cluster>("cluster"); }};

}  // namespace trn3
