// What an UltraServer run reports: the topology, the elaboration, the host
// program's report, then what the hardware shows after the run (the first
// chip's backplane, every medium's links: up, degraded, failed, widths),
// then the program's failures.
#include <algorithm>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "trn3/core/ranks.h"
#include "ultraserver.h"

namespace trn3 {

using topology::node_kind;

namespace {

// What one process sees of the hardware after the run, to be summed over
// the processes of a system cut by rack: links by medium (counted where
// their owning end is), the MCUs' diagnoses by chip node, the programs'
// failures.
struct medium_tally {
    unsigned up = 0, degraded = 0, failed = 0, links = 0;
    std::map<std::string, unsigned> widths;
};

nlohmann::json to_json(const std::map<int, medium_tally>& media, const std::map<int, std::string>& mcu,
                       const std::string& failures) {
    nlohmann::json j;
    for (const auto& [m, t] : media)
        j["media"][std::to_string(m)] = {
            {"up", t.up}, {"degraded", t.degraded}, {"failed", t.failed}, {"links", t.links}, {"widths", t.widths}};
    for (const auto& [node, text] : mcu) j["mcu"][std::to_string(node)] = text;
    j["failures"] = failures;
    return j;
}

}  // namespace

void ultraserver::report(std::ostream& os) const {
    std::map<int, medium_tally> media;
    for (const auto& [m, links] : links_by_medium_) {
        medium_tally& t = media[int(m)];
        for (const pcie::link* l : links) {
            if (l->owner_remote()) continue;  // its owner's process counts it
            ++t.links;
            if (l->up()) ++t.up;
            if (l->up() && l->width() < l->lanes.get()) ++t.degraded;
            if (l->training_failed()) ++t.failed;
            ++t.widths[fmt::format("{} x{}", l->phy().name, l->width())];
        }
    }
    std::map<int, std::string> mcu;
    for (std::size_t i = 0; i < chip_of_.size(); ++i)
        if (chip_of_[i])
            if (const std::string d = chip_of_[i]->mcu0.diagnosis(); !d.empty())
                mcu[int(i)] = fmt::format("  {} mcu: {}\n", chip_of_[i]->basename(), d);
    std::ostringstream failures;
    for (const auto& p : programs()) p->report_failures(failures);
    if (sync_) {
        // Cut by rack: every process's part, summed; the leader prints.
        const auto all = gather_text(process_ranks(), to_json(media, mcu, failures.str()).dump());
        if (!process_ranks().leader()) return;
        media.clear();
        mcu.clear();
        failures.str("");
        for (const std::string& text : all) {
            const nlohmann::json j = nlohmann::json::parse(text);
            if (j.contains("media"))
                for (const auto& [m, v] : j["media"].items()) {
                    medium_tally& t = media[std::stoi(m)];
                    t.up += v["up"].get<unsigned>();
                    t.degraded += v["degraded"].get<unsigned>();
                    t.failed += v["failed"].get<unsigned>();
                    t.links += v["links"].get<unsigned>();
                    for (const auto& [w, n] : v["widths"].items()) t.widths[w] += n.get<unsigned>();
                }
            if (j.contains("mcu"))
                for (const auto& [node, d] : j["mcu"].items()) mcu[std::stoi(node)] = d.get<std::string>();
            failures << j["failures"].get<std::string>();
        }
    }
    os << topology::report(topo_);
    std::map<node_kind, unsigned> nodes;
    for (const auto& n : topo_.nodes) ++nodes[n.kind];
    os << fmt::format("elaboration: {} chips, {} hosts, {} switches, {} links in {:.2f} s of wall time\n",
                      nodes[node_kind::chip], nodes[node_kind::host], nodes[node_kind::scaleup_switch],
                      topo_.edges.size(), elaboration_s_);
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
    for (const auto& [m, t] : media) {
        std::string w;
        for (const auto& [k, n] : t.widths) w += fmt::format("{}{} {}", w.empty() ? "" : ", ", n, k);
        os << fmt::format("links {:<18} {} up of {}, {} degraded, {} failed ({})\n",
                          topology::medium_name(topology::medium(m)), t.up, t.links, t.degraded, t.failed, w);
    }
    for (const auto& [node, text] : mcu) os << text;
    os << failures.str();
}

}  // namespace trn3
