// pseudo_channel: the loosely-timed timing engine of one HBM pseudo-channel.
//
// Not cycle by cycle: each request is placed once, in arrival order, on a
// timeline kept per bank and per channel. A request of n bursts to (bank
// group, bank, row):
//
//  1. refresh: the channel refreshes all banks for tRFC every tREFI (each
//     channel at its own phase); a command that would fall in a refresh
//     window waits for its end, and a refresh closes every row;
//  2. bank state: row hit -> column at once; row closed -> ACT; row conflict
//     -> PRE (not before tRAS after the ACT, nor tWR after write data), tRP,
//     then ACT. An ACT respects tRC (same bank), tRRD_S/tRRD_L (other bank,
//     other/same group) and tFAW (at most four ACTs in any window);
//  3. column commands respect tCCD_S/tCCD_L and the turnaround of the data
//     bus when the direction changes (tWTR after write data, tRTW after
//     read data);
//  4. data: n bursts of t_burst on the data bus, tCL (read) or tWL (write)
//     after the column command, once the bus is free. The request completes
//     at the end of its data.
//
// Writes are posted: they wait in a write queue and complete for the
// initiator when queued. When the queue reaches its high watermark it is
// drained to the low watermark (the request that filled it waits for the
// drain: back-pressure); a channel idle for `idle_drain` drains it all, as
// a controller drains writes in idle time.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "trn3/hbm/timing.h"

namespace trn3::hbm {

enum class row_result { hit, closed, conflict };

struct channel_stats {
    std::uint64_t reads = 0, writes = 0, row_hits = 0, row_closed = 0, row_conflicts = 0, refresh_waits = 0,
                  write_drains = 0, bursts = 0;
};

class pseudo_channel {
public:
    pseudo_channel(const timing& t, unsigned bank_groups, unsigned banks_per_group, unsigned index, unsigned count);

    // Places a read of `bursts` bursts arriving at `arrival`; returns the time
    // its last data beat leaves the device.
    ps_t read(ps_t arrival, unsigned bank_group, unsigned bank, std::uint64_t row, unsigned bursts);
    // Posts a write; returns when the controller has accepted it.
    ps_t write(ps_t arrival, unsigned bank_group, unsigned bank, std::uint64_t row, unsigned bursts);
    // Drains every queued write; returns when the last write's data is done.
    ps_t flush();

    const channel_stats& stats() const { return stats_; }
    ps_t bus_free() const { return bus_free_; }

private:
    struct bank_state {
        std::int64_t open_row = -1;
        ps_t act = 0;           // last ACT
        ps_t act_allowed = 0;   // earliest next ACT (after PRE + tRP)
        ps_t col_allowed = 0;   // ACT + tRCD
        ps_t pre_allowed = 0;   // earliest PRE (tRAS, tWR)
        bool activated = false;
    };
    struct queued_write {
        unsigned bank_group, bank;
        std::uint64_t row;
        unsigned bursts;
        ps_t arrival;
    };

    ps_t place(ps_t arrival, bool is_write, unsigned bank_group, unsigned bank, std::uint64_t row, unsigned bursts);
    // Delays t out of any refresh window; closes all rows when a refresh has
    // happened since the last command.
    ps_t after_refresh(ps_t t);
    ps_t activate(bank_state& b, unsigned bank_group, ps_t t);
    // Places the oldest queued writes until `keep` remain.
    void drain(std::size_t keep, ps_t from);
    void drain_if_idle(ps_t now);

    timing t_;
    unsigned banks_per_group_;
    ps_t refresh_phase_;
    std::uint64_t refresh_epoch_ = 0;   // refreshes done before the last command
    std::vector<bank_state> banks_;
    std::vector<ps_t> group_col_free_;  // next column command allowed, per bank group (tCCD_L)
    std::vector<ps_t> act_ok_in_group_; // next ACT allowed, per bank group (tRRD_L)
    ps_t act_ok_any_ = 0;               // next ACT allowed in any group (tRRD_S)
    std::array<ps_t, 4> faw_{};         // the last four ACTs, as a ring
    std::uint64_t acts_ = 0;
    ps_t bus_free_ = 0;                 // data bus free (the channel's bandwidth server)
    ps_t drain_end_ = 0;
    bool last_was_write_ = false;
    std::vector<queued_write> write_queue_;
    channel_stats stats_;
};

} // namespace trn3::hbm
