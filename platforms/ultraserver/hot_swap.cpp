// The hot-swap of an NL32x2 switch tray while the system runs: what the
// fifth switch tray is for.
//
// Orderly (the PCIe hot-plug sequence, an attention button first):
//   hot_swap_at              the tray's attention button is pressed; the
//                            fabric manager waits, if it must, until every
//                            chip is on the fabric (its host programs the
//                            routes at boot from the elaboration's table)
//   + reprogram_time         it has computed routes without the tray's
//                            cables, with the rack's standby cables (the
//                            fifth tray) in their place
//   held                     it holds the chips' fabric sources (their
//                            accesses wait; forwarding goes on) and polls the
//                            tray's links every 100 ns until none carries a
//                            TLP (at most drain_timeout)
//   rerouted                 it writes the routes into every switch and every
//                            chip's route table over the management network
//                            and lets the sources go: no flow's new path can
//                            overtake its old one (the receivers count bytes
//                            in order), since nothing is left on the old one
//   off                      the tray loses power: its links fail
// Surprise (hot_swap_surprise): the tray is pulled at hot_swap_at, its links
// fail at once with what was on them, and the fabric manager reroutes after
// reprogram_time without holding anything. What was stranded never arrives:
// a collective that needed it ends with its timeout, never with wrong data.
//
// Without the fifth tray (switch_trays = 4) the same happens with nothing
// to take the traffic over: the chips keep 6 of their 8 switches. Taking
// out the fifth tray itself takes only standby cables.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <cctype>

#include <fmt/format.h>

#include "trn3/core/user_file.h"
#include "ultraserver.h"

namespace trn3 {

using topology::medium;
using topology::node_kind;

namespace {

// "r<digits>.st<digits>", nothing else; false otherwise.
bool parse_tray(const std::string& text, unsigned& rack, unsigned& tray) {
    std::size_t at = 0;
    auto number = [&](unsigned& out) {
        const std::size_t first = at;
        std::uint64_t v = 0;
        while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at])) && at - first < 6)
            v = v * 10 + unsigned(text[at++] - '0');
        out = static_cast<unsigned>(v);
        return at > first;
    };
    auto literal = [&](const char* s) {
        for (; *s; ++s, ++at)
            if (at >= text.size() || text[at] != *s) return false;
        return true;
    };
    return literal("r") && number(rack) && literal(".st") && number(tray) && at == text.size();
}

// Switch tray k holds switches 2k and 2k+1 of each plane ("r0.p1.sw3": tray 1).
int tray_of(const topology::node& sw) {
    const auto at = sw.name.rfind(".sw");
    return at == std::string::npos ? -1 : std::stoi(sw.name.substr(at + 3)) / 2;
}

}  // namespace

// At elaboration: checks the params and finds the edges that leave the
// routes (the tray's cables) and join them (its rack's healthy standby
// cables), then starts the fabric manager's thread.
void ultraserver::prepare_hot_swap() {
    const std::string& text = hot_swap_tray.get();
    if (text.empty()) return;
    auto refuse = [&](const std::string& why) {
        throw config_error(fmt::format("param {} = {}: {}", hot_swap_tray.name(), quoted_excerpt(text), why));
    };
    if (topo_.params.sku != "nl32x2" || topo_.params.switch_gen != 1)
        refuse("switch trays are hot-swapped on nl32x2 with switch_gen=1");
    unsigned rack = 0, index = 0;
    if (!parse_tray(text, rack, index)) refuse("not rR.stN (e.g. r0.st1)");
    if (rack >= topo_.params.racks) refuse(fmt::format("the system has {} rack(s)", topo_.params.racks));
    if (index >= topo_.params.switch_trays)
        refuse(fmt::format("each rack has {} switch trays (st0-st{})", topo_.params.switch_trays,
                           topo_.params.switch_trays - 1));
    if (hot_swap_at.get() == sc_core::SC_ZERO_TIME) refuse(fmt::format("{} must be set", hot_swap_at.name()));
    hot_swap_.tray = fmt::format("r{}.st{}", rack, index);
    for (const topology::node& n : topo_.nodes)
        if (n.kind == node_kind::scaleup_switch && n.rack == int(rack) && tray_of(n) == int(index))
            ++hot_swap_.switches;
    bool carries = false;
    for (std::size_t e = 0; e < topo_.edges.size(); ++e) {
        const topology::edge& ed = topo_.edges[e];
        const topology::node& sw = topo_.nodes[std::size_t(ed.b)];
        if (ed.m != medium::backplane || sw.rack != int(rack)) continue;
        if (tray_of(sw) == int(index)) {
            hot_swap_.leaving.push_back(e);
            carries = carries || !ed.standby();
        } else if (ed.standby()) {
            hot_swap_.joining.push_back(e);
        }
    }
    if (!carries) hot_swap_.joining.clear();  // the standby tray: nothing to take over
    sc_core::sc_spawn([this] { hot_swap(); }, "hot_swap");
}

void ultraserver::hot_swap() {
    sc_core::wait(hot_swap_at.get());
    hot_swap_.pressed = sc_core::sc_time_stamp();
    auto power_off = [&] {
        hot_swap_.off = sc_core::sc_time_stamp();
        for (std::size_t e : hot_swap_.leaving) {
            pcie::link& l = *links_[e];
            removed_.insert(&l);
            std::set<unsigned> all;
            for (unsigned k = 0; k < l.lanes.get() + l.spare_lanes.get(); ++k) all.insert(k);
            l.fail_lanes(all);
        }
    };
    const bool surprise = hot_swap_surprise.get();
    if (surprise) power_off();
    // Not before every chip is on the fabric: a host's boot would write the
    // elaboration's routes over the new ones.
    auto all_enabled = [&] {
        for (const auto& c : chips_)
            if (!c->control->fabric_enabled()) return false;
        return true;
    };
    while (!all_enabled()) sc_core::wait(10, sc_core::SC_US);
    sc_core::wait(hot_swap_reprogram_time.get());
    hot_swap_.held = sc_core::sc_time_stamp();
    if (!surprise) {
        for (const auto& c : chips_) c->hold_fabric(true);
        const sc_core::sc_time give_up = sc_core::sc_time_stamp() + hot_swap_drain_timeout.get();
        for (;;) {
            std::uint64_t on_wire = 0;
            for (std::size_t e : hot_swap_.leaving) on_wire += links_[e]->unsettled();
            hot_swap_.drained = on_wire == 0;
            if (hot_swap_.drained || sc_core::sc_time_stamp() >= give_up) break;
            sc_core::wait(100, sc_core::SC_NS);  // the fabric manager's poll
        }
    }
    reprogram_routes();
    hot_swap_.rerouted = sc_core::sc_time_stamp();
    for (const auto& c : chips_) c->hold_fabric(false);
    if (!surprise) power_off();
    hot_swap_.done = true;
    log().info("switch tray {} out: routes reprogrammed at {}, powered off at {}", hot_swap_.tray,
               hot_swap_.rerouted.to_string(), hot_swap_.off.to_string());
}

// The tray's cables leave the routes, the healthy standby ones join, and
// the fabric manager writes the result into every switch and chip (the
// removed tray's switches keep their routes: nothing routes to them any
// more).
void ultraserver::reprogram_routes() {
    for (std::size_t e : hot_swap_.leaving) topo_.edges[e].spare_lanes = topo_.edges[e].lanes;
    std::vector<std::size_t> joined;
    for (std::size_t e : hot_swap_.joining) {
        if (!links_[e]->up()) continue;  // a standby cable with failed lanes stays out
        topo_.edges[e].spare_lanes = 0;
        standby_.erase(links_[e].get());
        hot_swap_.joining_bytes_before.push_back(links_[e]->payload_bytes());
        joined.push_back(e);
    }
    hot_swap_.joining = joined;
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
    // What is still on the tray's links (TLPs, a train counting once) will never arrive.
    std::uint64_t stranded = 0;
    for (std::size_t e : hot_swap_.leaving) stranded += links_[e]->unsettled();
    std::uint64_t moved = 0;
    for (std::size_t i = 0; i < hot_swap_.joining.size(); ++i)
        moved += links_[hot_swap_.joining[i]]->payload_bytes() - hot_swap_.joining_bytes_before[i];
    const double us = 1e6;
    if (hot_swap_surprise.get()) {
        os << fmt::format("hot-swap: switch tray {} ({} switches, {} links) pulled at {:.3f} us: links down; routes "
                          "reprogrammed at {:.3f} us, {} standby links joined and carried {} B since; {} TLPs "
                          "stranded\n",
                          hot_swap_.tray, hot_swap_.switches, hot_swap_.leaving.size(),
                          hot_swap_.pressed.to_seconds() * us, hot_swap_.rerouted.to_seconds() * us,
                          hot_swap_.joining.size(), moved, stranded);
        return;
    }
    os << fmt::format("hot-swap: switch tray {} ({} switches, {} links) attention button at {:.3f} us; sources held "
                      "at {:.3f} us, {} at {:.3f} us: routes reprogrammed, {} standby links joined and carried {} B "
                      "since; powered off, {} TLPs stranded\n",
                      hot_swap_.tray, hot_swap_.switches, hot_swap_.leaving.size(), hot_swap_.pressed.to_seconds() * us,
                      hot_swap_.held.to_seconds() * us, hot_swap_.drained ? "drained" : "not drained in time",
                      hot_swap_.rerouted.to_seconds() * us, hot_swap_.joining.size(), moved, stranded);
}

}  // namespace trn3
