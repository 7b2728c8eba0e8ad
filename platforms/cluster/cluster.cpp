#include "cluster.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "../ultraserver/ultraserver.h"
#include "trn3/core/ranks.h"
#include "trn3/core/user_file.h"

namespace trn3 {
namespace {

constexpr double nic_link_gbit_per_s = topology::nic_link_gbps;
constexpr std::uint64_t switch_id_base = 1ull << 40;  // message ids of the switches' ports
constexpr std::uint64_t switch_id_stride = 1 << 12;

}  // namespace

std::vector<unsigned> cluster::placement_owners(unsigned n, const ranks& r) const {
    std::vector<unsigned> owners;
    if (placement.get().empty()) return owners;
    std::istringstream in(placement.get());
    std::string item;
    while (std::getline(in, item, ',')) {
        std::size_t used = 0;
        unsigned long v = 0;
        try {
            v = std::stoul(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || used != item.size() || (!r.single() && v >= r.size()))
            throw config_error(fmt::format("{}: placement '{}': '{}' is not a rank below {}", placement.name(),
                                           placement.get(), item, r.size()));
        owners.push_back(r.single() ? 0 : static_cast<unsigned>(v));  // one process holds everything
    }
    if (owners.size() != n)
        throw config_error(fmt::format("{}: placement '{}' gives {} ranks for {} UltraServers", placement.name(),
                                       placement.get(), owners.size(), n));
    return owners;
}

// {"partitions": [{"rank": r, "ultraservers": [k, ...]}, ...]}: every
// UltraServer in one partition, every rank below the job's size (one process
// takes them all, as with placement).
std::vector<unsigned> cluster::partition_file_owners(unsigned n, const ranks& r) const {
    const std::string& path = partition_file.get();
    auto bad = [&](const std::string& why) { return config_error("partition file '" + path + "': " + why); };
    constexpr unsigned none = ~0u;
    std::vector<unsigned> owners(n, none);
    try {
        const nlohmann::json j = nlohmann::json::parse(read_user_text(path, "partition file"));
        if (!j.is_object() || j.size() != 1 || !j.contains("partitions") || !j["partitions"].is_array())
            throw bad("expected {\"partitions\": [...]} and nothing else");
        for (const auto& part : j["partitions"]) {
            if (!part.is_object() || part.size() != 2 || !part.contains("rank") || !part.contains("ultraservers"))
                throw bad("each partition is {\"rank\": r, \"ultraservers\": [...]}, not " + part.dump());
            const nlohmann::json& rank = part["rank"];
            if (!rank.is_number_unsigned() || (!r.single() && rank.get<std::uint64_t>() >= r.size()))
                throw bad(fmt::format("rank {} is not a rank below {}", rank.dump(), r.size()));
            if (!part["ultraservers"].is_array() || part["ultraservers"].empty())
                throw bad("a partition's ultraservers are a non-empty list, not " + part["ultraservers"].dump());
            for (const auto& k : part["ultraservers"]) {
                if (!k.is_number_unsigned() || k.get<std::uint64_t>() >= n)
                    throw bad(fmt::format("UltraServer {} is not one of the {}", k.dump(), n));
                unsigned& owner = owners[k.get<std::size_t>()];
                if (owner != none) throw bad(fmt::format("UltraServer {} is in two partitions", k.dump()));
                owner = r.single() ? 0 : rank.get<unsigned>();
            }
        }
    } catch (const nlohmann::json::exception& e) {
        throw bad(e.what());
    }
    for (unsigned k = 0; k < n; ++k)
        if (owners[k] == none) throw bad(fmt::format("UltraServer {} is in no partition", k));
    return owners;
}

cluster::cluster(const sc_core::sc_module_name& name) : platform(name) {
    const unsigned n = static_cast<unsigned>(ultraservers.get());
    ranks& r = process_ranks();
    if (r.size() > n)
        throw config_error(fmt::format("{}: {} processes for {} partitions (one per UltraServer): run at most {}",
                                       this->name(), r.size(), n, n));
    me_ = r.rank();
    if (!placement.get().empty() && !partition_file.get().empty())
        throw config_error(fmt::format("{} and {}: give one of them", placement.name(), partition_file.name()));
    owner_ = !partition_file.get().empty() ? partition_file_owners(n, r) : placement_owners(n, r);
    if (owner_.empty()) {
        for (unsigned k = 0; k < n; ++k) {
            unsigned owner = 0;
            while (owner + 1 < r.size() && (owner + 1) * n / r.size() <= k) ++owner;
            owner_.push_back(owner);
        }
    }
    const std::string given = !partition_file.get().empty()
                                  ? fmt::format("{} '{}'", partition_file.name(), partition_file.get())
                                  : fmt::format("{}: placement '{}'", placement.name(), placement.get());
    for (unsigned rank = 0; rank < r.size(); ++rank)
        if (std::find(owner_.begin(), owner_.end(), rank) == owner_.end())
            throw config_error(fmt::format("{} gives rank {} nothing", given, rank));
    // A user error one process finds in its UltraServers ends every process, with the message.
    on_every_rank(r, [&] {
        oob_ = std::make_shared<apps::out_of_band>(oob_latency.get());
        for (unsigned k = 0; k < n; ++k) {
            ultraserver_network net;
            net.rank = k;
            net.size = n;
            net.oob = oob_;
            net.nic_node_base = std::uint64_t{k + 1} << 16;
            net.nic_port_id_base = std::uint64_t{k + 1} << 32;
            net.shell = !local(k);
            servers_.push_back(
                std::make_unique<ultraserver>(fmt::format("us{}", k).c_str(), ultraserver_sku.get(), net));
            if (!local(k)) continue;
            ++local_servers_;
            // The run ends at the next window boundary; its time is when the last one finished.
            servers_.back()->set_stop([this] {
                if (++servers_done_ == local_servers_) finished_at_ = sc_core::sc_time_stamp();
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
    });
    // The window: the smallest lookahead of any cut link's direction (each
    // rank knows the directions it sends on; agreed by all), and no longer
    // than the launcher's latency, so out-of-band values cross at a
    // boundary before they are visible (apps/out_of_band.h).
    const sc_core::sc_time window =
        std::min(sc_core::sc_time::from_value(min_of(r, lookahead_.value())), oob_latency.get());
    sync_ = std::make_unique<window_sync>(r, window);
    for (const auto& [port, owner] : proxy_owners_) sync_->add_proxy(*port, owner);
    for (message_port* end : cut_ends_) sync_->add_local(*end, queue_);
    sync_->add_channel([this] { return oob_->take_new(); },
                       [this](unsigned, const byte_buffer& b) { oob_->add_remote(b); });
}

cluster::~cluster() = default;

message_link& cluster::cable(const std::string& name, message_port& a, message_port& b, sc_core::sc_time latency,
                             double gbit_per_s) {
    cables_.push_back(
        std::make_unique<message_link>(name.c_str(), queue_, a, b, latency, bandwidth{gbit_per_s * 1e9 / 8}));
    return *cables_.back();
}

message_port& cluster::proxy(const std::string& name, std::uint64_t id, unsigned owner) {
    proxies_.push_back(std::make_unique<message_port>(name, id));
    proxy_owners_.emplace_back(proxies_.back().get(), owner);
    return *proxies_.back();
}

// Both planes: ToRs with the NIC links in UltraServer and NIC order, spines
// above them when one switch's ports do not hold the plane. The switches
// are elaborated with UltraServer 0; a NIC cable between ranks gets a proxy
// for its far end.
void cluster::build_network() {
    if (plan_.tiers > 2)
        throw config_error(fmt::format("{}: {} UltraServers need three tiers; the platform builds one or two "
                                       "(`trn3vp topology --platform cluster` sizes larger clusters)",
                                       name(), servers_.size()));
    struct nic_end {
        unsigned ultraserver;
        nic_place place;
        nic::nitro_nic* nic;  // null: another rank's
        std::string name;  // us<k>_<nic>
    };
    std::vector<nic_end> ends;
    for (unsigned k = 0; k < servers_.size(); ++k) {
        const auto places = servers_[k]->nic_places();
        for (std::size_t i = 0; i < places.size(); ++i)
            ends.push_back({k, places[i], local(k) ? servers_[k]->nics()[i].get() : nullptr,
                            std::string(servers_[k]->basename()) + "_" + places[i].module});
    }
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
    const bool network_here = local(0);
    const unsigned network_owner = owner_[0];

    // Switch i (planes in order; in each, its ToRs, then its spines) has port ids from switch_id_base + i x stride.
    auto switch_ports = [&](unsigned plane, unsigned index_in_plane) {
        return switch_id_base +
               switch_id_stride * (std::uint64_t{plane} * (tors_per_plane_ + spines_per_plane_) + index_in_plane);
    };
    auto& registry = param_registry::instance();
    auto make_switch = [&](const std::string& sw, unsigned ports, std::uint64_t first_id) {
        const std::string full = std::string(name()) + "." + sw;
        registry.set_pending_text(full + ".capacity", fmt::format("{}Tb/s", switch_capacity.get()), name());
        registry.set_pending_text(full + ".port_speed", fmt::format("{}Gb/s", port_speed.get()), name());
        return std::make_unique<ethernet::eth_switch>(sw.c_str(), ports, first_id);
    };
    for (unsigned plane = 0; plane < topology::cluster_planes; ++plane) {
        const std::size_t first_tor = tors_.size();
        const std::size_t first_spine = spines_.size();
        if (network_here) {
            for (unsigned t = 0; t < tors_per_plane_; ++t) {
                const unsigned down = std::min(links_per_tor, nic_links_per_plane_ - t * links_per_tor);
                tors_.push_back(
                    make_switch(fmt::format("tor_p{}_{}", plane, t), down + spines_per_plane_, switch_ports(plane, t)));
            }
            for (unsigned s = 0; s < spines_per_plane_; ++s)
                spines_.push_back(make_switch(fmt::format("spine_p{}_{}", plane, s), tors_per_plane_,
                                              switch_ports(plane, tors_per_plane_ + s)));
        }
        // NIC links: NIC i's port `plane` to ToR i / links_per_tor. A link to
        // another UltraServer's partition is cut: its ends' owners each see
        // the direction they send on.
        for (unsigned i = 0; i < ends.size(); ++i) {
            const nic_end& e = ends[i];
            const unsigned t = i / links_per_tor, port = i % links_per_tor;
            if (!e.nic && !network_here) continue;
            message_port& nic_port =
                e.nic ? e.nic->srd.port(plane)
                      : proxy(fmt::format("{}.{}.srd.port{}", servers_[e.ultraserver]->name(), e.place.module, plane),
                              e.place.first_port_id + plane, owner_[e.ultraserver]);
            message_port& tor_port = network_here ? tors_[first_tor + t]->port(port)
                                                  : proxy(fmt::format("{}.tor_p{}_{}.port{}", name(), plane, t, port),
                                                          switch_ports(plane, t) + port, network_owner);
            auto& l =
                cable(fmt::format("{}_p{}", e.name, plane), nic_port, tor_port, tor_cable.get(), nic_link_gbit_per_s);
            if (network_here) tors_[first_tor + t]->connect(port, l);
            if (e.ultraserver == 0) continue;  // one partition with the network: not cut
            for (auto [end, here] : {std::pair{&nic_port, e.nic != nullptr}, std::pair{&tor_port, network_here}}) {
                if (!here) continue;  // a proxy: its owner counts the direction it sends on
                lookahead_ = std::min(lookahead_, end->lead() + l.latency.get());
                if (!(e.nic && network_here)) cut_ends_.push_back(end);
            }
        }
        if (!network_here) continue;
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
                    tor.set_route(ends[i].place.node, {i % links_per_tor});
                } else {
                    std::vector<unsigned> up;
                    const unsigned down = tor.port_count() - spines_per_plane_;
                    for (unsigned s = 0; s < spines_per_plane_; ++s) up.push_back(down + s);
                    tor.set_route(ends[i].place.node, up);
                }
            }
            for (unsigned s = 0; s < spines_per_plane_; ++s)
                spines_[first_spine + s]->set_route(ends[i].place.node, {home});
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
    bool ok = true;
    for (const auto& s : servers_)
        if (!s->shell() && !s->passed()) ok = false;
    return all_of(process_ranks(), ok && !servers_.empty());
}

void cluster::report(std::ostream& os) const {
    // Each rank writes its UltraServers' reports; the leader prints them in UltraServer order.
    nlohmann::json mine = nlohmann::json::object();
    for (std::size_t k = 0; k < servers_.size(); ++k) {
        if (servers_[k]->shell()) continue;
        std::ostringstream text;
        text << fmt::format("--- {} ---\n", servers_[k]->basename());
        servers_[k]->report(text);
        mine[std::to_string(k)] = text.str();
    }
    const std::vector<std::string> all = gather_text(process_ranks(), mine.dump());
    if (!process_ranks().leader()) return;
    std::vector<std::string> texts(servers_.size());
    for (const std::string& part : all) {
        const nlohmann::json reports = nlohmann::json::parse(part);  // named: items() refers into it
        for (const auto& [k, text] : reports.items()) texts[std::stoul(k)] = text.get<std::string>();
    }
    os << fmt::format("cluster: {} x {}, {} chips; EFA network: {} planes of {} ToRs and {} spines "
                      "({} Tb/s switches at {} Gb/s ports, radix {}), {} NIC links of 200 Gb/s per plane\n",
                      servers_.size(), ultraserver_sku.get(), chips(), topology::cluster_planes, tors_per_plane_,
                      spines_per_plane_, switch_capacity.get(), port_speed.get(), plan_.radix, nic_links_per_plane_);
    for (const std::string& text : texts) os << text;
}

const platform_registration cluster_registration{
    "cluster",
    "UltraServers (2 x nl72x2 by default) on a dual-ToR Ethernet network of ToRs and spines: each boots as it does "
    "alone",
    [] { return std::make_unique<cluster>("cluster"); }};

}  // namespace trn3
