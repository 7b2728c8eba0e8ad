// An UltraServer cut by rack (partitions = racks, docs/distributed.md): each
// rack's process, the checks that the cut can be made, and the windows.
//
// The cut is on the cross-rack cables, which join chip [0][t][s] to chip
// [1][t][s] with no switch: NeuronLink links, split (pcie/link.h), whose
// lookahead is their latency. A host and what it serves (its chips' host
// links, its NICs) are in one rack, so nothing else crosses. The racks'
// programs meet through the launcher's store, whose values cross at the
// window boundaries (the window is no longer than its latency).
#include <algorithm>

#include <fmt/format.h>

#include "trn3/core/ranks.h"
#include "ultraserver.h"

namespace trn3 {

using topology::node_kind;

void ultraserver::plan_partitions() {
    if (partitions.get() == "one") return;
    const std::string why = fmt::format("{} = racks", partitions.name());
    if (net_.size > 1 || net_.oob)  // in a cluster
        throw config_error(
            fmt::format("{}: cuts an UltraServer run alone; a cluster cuts between its UltraServers", why));
    int racks_total = 0;
    for (const auto& n : topo_.nodes) racks_total = std::max(racks_total, n.rack + 1);
    if (racks_total < 2) throw config_error(fmt::format("{}: {} has one rack", why, name()));
    for (const auto& e : topo_.edges) {
        const auto &a = topo_.nodes[std::size_t(e.a)], &b = topo_.nodes[std::size_t(e.b)];
        if (a.rack != b.rack && (a.kind != node_kind::chip || b.kind != node_kind::chip))
            throw config_error(fmt::format("{}: the {} link {} -- {} joins the racks and not two chips: it cannot be "
                                           "cut",
                                           why, topology::medium_name(e.m), a.name, b.name));
    }
    if (!hot_swap_tray.get().empty())
        throw config_error(fmt::format("{} and {}: a hot-swap rewrites every chip's routes at one instant, which a "
                                       "system cut by rack does not do (yet)",
                                       why, hot_swap_tray.name()));
    ranks& r = process_ranks();
    if (r.size() > unsigned(racks_total))
        throw config_error(fmt::format("{}: {} processes for {} partitions (one per rack): run at most {}", name(),
                                       r.size(), racks_total, racks_total));
    for (unsigned k = 0; k < unsigned(racks_total); ++k) rack_owner_.push_back(k * r.size() / unsigned(racks_total));
    me_ = r.rank();
    oob_ = std::make_shared<apps::out_of_band>(oob_latency.get());
}

// The window: the smallest lookahead of any cut direction (each rank knows
// those it sends on; agreed by all), and no longer than the store's latency.
// One process takes the same windows, so its results are every count's.
void ultraserver::start_windows() {
    ranks& r = process_ranks();
    const sc_core::sc_time window =
        std::min(sc_core::sc_time::from_value(min_of(r, lookahead_.value())), oob_latency.get());
    sync_ = std::make_unique<window_sync>(r, window);
    for (const remote_end& e : remote_ends_) e.link->make_remote(e.end, sync_->forward_to(e.owner));
    for (message_port* p : cut_ports_) sync_->add_local(*p, queue_);
    sync_->add_channel([this] { return oob_->take_new(); },
                       [this](unsigned, const byte_buffer& b) { oob_->add_remote(b); });
    // The run ends at the next window boundary; its time is when the racks here finished.
    set_stop([this] { finished_at_ = sc_core::sc_time_stamp(); });
}

bool ultraserver::passed() const {
    const bool mine = host_platform::passed();
    return sync_ ? all_of(process_ranks(), mine) : mine;
}

}  // namespace trn3
