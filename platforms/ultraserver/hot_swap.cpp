// The hot-swap of an NL32x2 switch tray while the system runs: what the
// fifth switch tray is for.
//
// Orderly (the PCIe hot-plug sequence, an attention button first):
//   hot_swap_at              the tray's attention button is pressed
//   + reprogram_time         the fabric manager has computed routes without
//                            the tray's switches, with the standby switches'
//                            cables (the fifth tray) in their place, and
//                            written them into every switch and every chip's
//                            route table over the management network; the
//                            tray's own switches keep their routes, so what
//                            is already on its cables still arrives
//   drained                  none of the tray's links carries a TLP (polled
//                            every drain_poll; at most drain_timeout)
//   off                      the tray loses power: its links fail
// Surprise (hot_swap_surprise): the tray is pulled at hot_swap_at, its links
// fail at once with what was on them, and the fabric manager reroutes after
// reprogram_time. What was stranded never arrives: a collective that needed
// it ends with its timeout, never with wrong data.
//
// Without the fifth tray (switch_trays = 4) the same happens with nothing
// to take the traffic over: the chips keep 6 of their 8 switches.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <cstdio>

#include <fmt/format.h>

#include "ultraserver.h"

namespace trn3 {
using topology::medium;
using topology::node_kind;

// At elaboration: checks the params and finds the edges that leave the
// routes (the tray's cables) and join them (its rack's standby cables).
void ultraserver::prepare_hot_swap() {
    const std::string& tray = hot_swap_tray.get();
    if (tray.empty()) return;
    auto refuse = [&](const std::string& why) {
        throw config_error(fmt::format("param {} = {}: {}", hot_swap_tray.name(), tray, why));
    };
    if (topo_.params.sku != "nl32x2" || topo_.params.switch_gen != 1)
        refuse("switch trays are hot-swapped on nl32x2 with switch_gen=1");
    unsigned rack = 0, index = 0;
    char tail = 0;
    if (std::sscanf(tray.c_str(), "r%u.st%u%c", &rack, &index, &tail) != 2) refuse("not rR.stN (e.g. r0.st1)");
    if (rack >= topo_.params.racks) refuse(fmt::format("the system has {} rack(s)", topo_.params.racks));
    if (index >= topo_.params.switch_trays)
        refuse(fmt::format("each rack has {} switch trays (st0-st{})", topo_.params.switch_trays,
                           topo_.params.switch_trays - 1));
    if (hot_swap_at.get() == sc_core::SC_ZERO_TIME) refuse(fmt::format("{} must be set", hot_swap_at.name()));
    hot_swap_.tray = tray;
    // Switch tray k holds switches 2k and 2k+1 of each plane ("r0.p1.sw3": tray 1).
    auto tray_of = [](const std::string& name) {
        const auto at = name.rfind(".sw");
        return at == std::string::npos ? -1 : std::stoi(name.substr(at + 3)) / 2;
    };
    for (std::size_t i = 0; i < topo_.nodes.size(); ++i) {
        const topology::node& n = topo_.nodes[i];
        if (n.kind == node_kind::scaleup_switch && n.rack == int(rack) && tray_of(n.name) == int(index))
            ++hot_swap_.switches;
    }
    for (std::size_t e = 0; e < topo_.edges.size(); ++e) {
        const topology::edge& ed = topo_.edges[e];
        const topology::node& sw = topo_.nodes[std::size_t(ed.b)];
        if (ed.m != medium::backplane || sw.rack != int(rack)) continue;
        if (tray_of(sw.name) == int(index)) {
            if (!ed.standby()) hot_swap_.leaving.push_back(e);
        } else if (ed.standby()) {
            hot_swap_.joining.push_back(e);
        }
    }
    // The standby tray itself leaves nothing to take over.
    if (hot_swap_.leaving.empty()) hot_swap_.joining.clear();
    sc_core::sc_spawn([this] { hot_swap(); }, "hot_swap");
}

void ultraserver::hot_swap() {
    sc_core::wait(hot_swap_at.get());
    hot_swap_.pressed = sc_core::sc_time_stamp();
    auto power_off = [&] {
        hot_swap_.off = sc_core::sc_time_stamp();
        for (std::size_t e : hot_swap_.leaving) {
            pcie::link& l = *links_[e];
            std::set<unsigned> all;
            for (unsigned k = 0; k < l.lanes.get() + l.spare_lanes.get(); ++k) all.insert(k);
            l.fail_lanes(all);
        }
    };
    if (hot_swap_surprise.get()) power_off();
    sc_core::wait(hot_swap_reprogram_time.get());
    reprogram_routes();
    hot_swap_.rerouted = sc_core::sc_time_stamp();
    if (!hot_swap_surprise.get()) {
        const sc_core::sc_time give_up = sc_core::sc_time_stamp() + hot_swap_drain_timeout.get();
        for (;;) {
            std::uint64_t on_wire = 0;
            for (std::size_t e : hot_swap_.leaving) on_wire += links_[e]->unsettled();
            hot_swap_.drained = on_wire == 0;
            if (hot_swap_.drained || sc_core::sc_time_stamp() >= give_up) break;
            sc_core::wait(100, sc_core::SC_NS);  // the fabric manager's poll
        }
        power_off();
    }
    hot_swap_.done = true;
    log().info("switch tray {} out: routes reprogrammed at {}, powered off at {}", hot_swap_.tray,
               hot_swap_.rerouted.to_string(), hot_swap_.off.to_string());
}

// The tray's cables leave the routes, the standby ones join, and the fabric
// manager writes the result into every switch and chip (the removed tray's
// switches keep their routes: nothing routes to them any more, and what is
// on their cables still reaches its chip).
void ultraserver::reprogram_routes() {
    for (std::size_t e : hot_swap_.leaving) topo_.edges[e].spare_lanes = topo_.edges[e].lanes;
    for (std::size_t e : hot_swap_.joining) {
        topo_.edges[e].spare_lanes = 0;
        standby_.erase(links_[e].get());
        hot_swap_.joining_bytes_before.push_back(links_[e]->payload_bytes());
    }
    program_routes();
    for (std::size_t n = 0; n < topo_.nodes.size(); ++n)
        if (chip_of_[n] != nullptr)
            for (std::size_t k = 0; k < chip_routes_[n].size(); ++k)
                chip_of_[n]->control->set_route(unsigned(k), chip_routes_[n][k]);
    set_fabric_capacities();
}

void ultraserver::report_hot_swap(std::ostream& os) const {
    if (hot_swap_.tray.empty()) return;
    if (!hot_swap_.done) {
        os << fmt::format("hot-swap: switch tray {}: the run ended before it was out\n", hot_swap_.tray);
        return;
    }
    // What is still on the tray's links will never arrive.
    std::uint64_t stranded = 0;
    for (std::size_t e : hot_swap_.leaving) stranded += links_[e]->unsettled();
    std::uint64_t moved = 0;
    for (std::size_t i = 0; i < hot_swap_.joining.size(); ++i)
        moved += links_[hot_swap_.joining[i]]->payload_bytes() - hot_swap_.joining_bytes_before[i];
    os << fmt::format(
        "hot-swap: switch tray {} ({} switches, {} links) {} at {:.3f} us; routes reprogrammed at {:.3f} us, {} "
        "standby links joined and carried {} B since; {} at {:.3f} us, {} TLPs stranded\n",
        hot_swap_.tray, hot_swap_.switches, hot_swap_.leaving.size(),
        hot_swap_surprise.get() ? "pulled" : "attention button", hot_swap_.pressed.to_seconds() * 1e6,
        hot_swap_.rerouted.to_seconds() * 1e6, hot_swap_.joining.size(), moved,
        hot_swap_surprise.get() ? "links down"
                                : (hot_swap_.drained ? "drained and powered off" : "not drained in time: powered off"),
        hot_swap_.off.to_seconds() * 1e6, stranded);
}

}  // namespace trn3
