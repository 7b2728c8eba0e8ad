// What an UltraServer run reports: the topology, the elaboration, the host
// program's report, then what the hardware shows after the run (the first
// chip's backplane, every medium's links: up, degraded, failed, widths),
// then the program's failures.
#include <algorithm>

#include <fmt/format.h>

#include "ultraserver.h"

namespace trn3 {

void ultraserver::report(std::ostream& os) const {
    os << topology::report(topo_);
    os << fmt::format("elaboration: {} chips, {} hosts, {} switches, {} links in {:.2f} s of wall time\n",
                      chips_.size(), hosts_.size(), switches_.size(), links_.size(), elaboration_s_);
    program().report(os);
    report_hot_swap(os);
    if (!first_chip_backplane().empty()) {
        // The first chip's backplane: what its active links carry after
        // training, and how much of its spare capacity (lanes standing in for
        // failed ones, and spare lanes that failed themselves) is used up.
        double gbps = 0, full = 0;
        unsigned failed = 0, spare_used = 0, spare_total = 0;
        for (const pcie::link* l : first_chip_backplane()) {
            if (removed_.count(l)) continue;  // a switch tray taken out (hot_swap.cpp)
            const auto active = static_cast<unsigned>(l->lanes.get());
            const bool standby = standby_.count(l) != 0;
            failed += static_cast<unsigned>(l->failed().size());
            if (standby) {
                spare_total += active;
                spare_used += static_cast<unsigned>(l->failed().size());
                continue;
            }
            // Any healthy lane of a link with spares stands in for any failed
            // one, so its failures use up its spares first.
            const auto spares = static_cast<unsigned>(l->spare_lanes.get());
            spare_total += spares;
            spare_used += std::min(static_cast<unsigned>(l->failed().size()), spares);
            gbps += l->raw_bytes_per_second() / 1e9;
            full += l->phy().lane_bytes_per_second * double(active) / 1e9;
        }
        os << fmt::format("chip {} backplane: {:.0f} of {:.0f} GB/s per direction, {} lanes failed, {} of {} spare "
                          "lanes used{}\n",
                          topo_.nodes[std::size_t(topo_.chips().front())].name, gbps, full, failed, spare_used,
                          spare_total, gbps < full ? " -- REDUCED" : "");
    }
    for (const auto& [m, links] : links_by_medium_) {
        unsigned up = 0, degraded = 0, failed = 0;
        std::map<std::string, unsigned> widths;
        for (const pcie::link* l : links) {
            if (l->up()) ++up;
            if (l->up() && l->width() < l->lanes.get()) ++degraded;
            if (l->training_failed()) ++failed;
            ++widths[fmt::format("{} x{}", l->phy().name, l->width())];
        }
        std::string w;
        for (const auto& [k, n] : widths) w += fmt::format("{}{} {}", w.empty() ? "" : ", ", n, k);
        os << fmt::format("links {:<18} {} up of {}, {} degraded, {} failed ({})\n", topology::medium_name(m), up,
                          links.size(), degraded, failed, w);
    }
    for (const auto& c : chips_)
        if (const std::string d = c->mcu0.diagnosis(); !d.empty()) os << "  " << c->basename() << " mcu: " << d << "\n";
    program().report_failures(os);
}

}  // namespace trn3
