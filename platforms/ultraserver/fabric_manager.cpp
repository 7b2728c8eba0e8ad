// The UltraServer's fabric manager, at elaboration: it programs the fabric
// switches' routes from the topology, prepares each chip's route table for
// its host to program at boot, and injects the lane faults the params ask for.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "trn3/spec/device.h"
#include "ultraserver.h"

namespace trn3 {

using topology::medium;
using topology::node_kind;

// Switch routes are set now; each chip's route table is handed to its
// host's driver, which programs it at boot.
void ultraserver::program_routes() {
    const auto routes = topo_.routes();
    const auto chips = topo_.chips();
    fabric_id_.assign(topo_.nodes.size(), -1);
    for (std::size_t k = 0; k < chips.size(); ++k) fabric_id_[std::size_t(chips[k])] = int(k);
    chip_routes_.assign(topo_.nodes.size(), {});
    // In place: the hosts' fabric paths read it (a hot-swap reprograms).
    if (!next_hops_) next_hops_ = std::make_shared<std::vector<std::vector<std::vector<int>>>>();
    next_hops_->assign(topo_.nodes.size(), std::vector<std::vector<int>>(chips.size()));
    for (std::size_t n = 0; n < topo_.nodes.size(); ++n) {
        const auto kind = topo_.nodes[n].kind;
        if (kind == node_kind::host) continue;
        for (std::size_t k = 0; k < chips.size(); ++k) {
            if (routes[n][k].empty()) continue;
            std::vector<int>& by_port = (*next_hops_)[n][k];
            by_port = routes[n][k];
            std::sort(by_port.begin(), by_port.end(),
                      [&](int a, int b) { return port_of_[n].at(a) < port_of_[n].at(b); });
            std::vector<unsigned> ports;
            for (int next : by_port) ports.push_back(port_of_[n].at(next));
            if (kind == node_kind::scaleup_switch) {
                if (here(int(n))) switches_[switch_index_.at(int(n))]->set_fabric_route(unsigned(k), ports);
            } else {
                if (chip_routes_[n].empty()) chip_routes_[n].assign(chips.size(), TRN3_ROUTE_NONE);
                for (unsigned port : ports) chip_routes_[n][k] |= TRN3_ROUTE_PORT(port);
            }
        }
    }
}

// Directed link 2e is edge e from its a to its b, 2e + 1 back; a flow's
// path follows the next hops each node picks (TRN3_ROUTE_PICK). A standby
// edge has no capacity and no route crosses it, until a hot-swap makes it
// active (set_fabric_capacities again).
std::shared_ptr<const collectives::fabric_paths> ultraserver::fabric_paths() {
    if (paths_) return paths_;
    paths_ = std::make_shared<collectives::fabric_paths>();
    set_fabric_capacities();
    auto directed = std::make_shared<std::map<std::pair<int, int>, unsigned>>();  // (from, to) -> link
    for (std::size_t e = 0; e < topo_.edges.size(); ++e) {
        const topology::edge& ed = topo_.edges[e];
        directed->emplace(std::make_pair(ed.a, ed.b), unsigned(2 * e));
        directed->emplace(std::make_pair(ed.b, ed.a), unsigned(2 * e + 1));
    }
    paths_->links = [hops = next_hops_, chips = topo_.chips(), directed](unsigned s, unsigned d, unsigned c) {
        std::vector<unsigned> path;
        if (s >= chips.size() || d >= chips.size()) return path;
        for (int at = chips[s]; at != chips[d];) {
            const std::vector<int>& next = (*hops)[std::size_t(at)][d];
            if (next.empty() || path.size() > hops->size()) return std::vector<unsigned>{};
            const int to = next[TRN3_ROUTE_PICK(s, d, c, next.size())];
            path.push_back(directed->at({at, to}));
            at = to;
        }
        return path;
    };
    return paths_;
}

void ultraserver::set_fabric_capacities() {
    paths_->capacity.clear();
    for (const topology::edge& ed : topo_.edges) {
        const double bytes_per_s = (ed.lanes - std::min(ed.lanes, ed.spare_lanes)) * ed.lane_bytes_per_s;
        paths_->capacity.push_back(bytes_per_s);
        paths_->capacity.push_back(bytes_per_s);
    }
}

// The first chip's backplane links, in port order (none where another
// process holds the first chip).
std::vector<pcie::link*> ultraserver::first_chip_backplane() const {
    std::vector<pcie::link*> v;
    const auto it = links_by_medium_.find(medium::backplane);
    if (it == links_by_medium_.end()) return v;
    const chip::trn3_chip* first = chip_of_[std::size_t(topo_.chips().front())];
    if (!first) return v;
    const std::string prefix = std::string(first->basename()) + "__";
    for (pcie::link* l : it->second)
        if (std::string(l->basename()).rfind(prefix, 0) == 0) v.push_back(l);
    return v;
}

// Fails `faulty_lanes` lanes of the first chip's backplane: first its spare
// lanes (every lane of a standby link, the top lanes of a link with spares),
// then active lanes, spread link by link.
void ultraserver::inject_faults() {
    if (!here(topo_.chips().front())) return;  // the first chip's process does it
    std::uint64_t left = faulty_lanes.get();
    const auto backplane = first_chip_backplane();
    std::uint64_t physical = 0;
    for (const pcie::link* l : backplane) physical += l->lanes.get() + l->spare_lanes.get();
    if (left > physical)
        throw config_error(
            fmt::format("param {} = {}: the first chip has {} backplane lanes", faulty_lanes.name(), left, physical));
    std::vector<pcie::link*> active_links;
    for (pcie::link* l : backplane) {
        const auto active = static_cast<unsigned>(l->lanes.get()), spare = static_cast<unsigned>(l->spare_lanes.get());
        const bool standby = standby_.count(l) != 0;
        std::set<unsigned> f;
        for (unsigned k = standby ? 0 : active; k < active + spare && left > 0; ++k, --left) f.insert(k);
        if (!f.empty()) l->fail_lanes(f);
        if (!standby) active_links.push_back(l);
    }
    for (std::size_t i = 0; left > 0 && !active_links.empty(); ++i, --left)
        active_links[i % active_links.size()]->fail_lanes({unsigned(i / active_links.size())});
}

}  // namespace trn3
