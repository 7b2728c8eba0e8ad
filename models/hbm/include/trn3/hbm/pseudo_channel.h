// pseudo_channel: the loosely-timed timing engine of one HBM pseudo-channel.
//
// Not cycle by cycle: each request is placed once, when it arrives, on
// timelines kept per bank and per shared resource. Shared resources are
// calendars (core/calendar.h) so a request may take a free gap before an
// older request that waits for its bank, as a reordering (FR-FCFS-like)
// controller does; within one bank, requests keep their order. A request of
// n bursts to (bank group, bank, row):
//
//  1. refresh: the channel refreshes all banks for tRFC every tREFI, starting
//     at its refresh phase; a command that would fall in a refresh window
//     waits for its end, and a refresh closes every row;
//  2. bank: row hit -> column at once; row closed -> ACT; row conflict -> PRE
//     (not before tRAS after the ACT, the bank's last column, or tWR after its
//     write data), tRP, then ACT. An ACT waits tRC after the bank's last ACT
//     and takes an ACT slot: ACTs of a channel are at least
//     max(tRRD_S, tFAW/4) apart (tFAW enforced as its sustained rate of four
//     per window), and ACTs of one bank group at least tRRD_L apart;
//  3. columns: a bank group issues one column per tCCD_L, so the request books
//     n x tCCD_L of its group's column calendar;
//  4. data: n bursts on the channel's data bus (the bandwidth server: one
//     burst per max(t_burst, tCCD_S)), starting no earlier than tCL (read) or
//     tWL (write) after the column. The request completes with its last beat.
//
// Reads wait in a read queue of `read_queue` entries: a read arriving when
// it is full is accepted when the oldest read in it completes (back-pressure,
// which also bounds how far ahead the calendars are booked).
//
// Writes are posted into a write queue and complete for the initiator when
// queued. When the queue reaches its high watermark the oldest writes drain
// down to the low watermark, as one batch on the bus bracketed by the
// read-to-write (tRTW) and write-to-read (tWTR) turnarounds; the write that
// filled the queue waits for that drain (back-pressure). A channel idle for
// `idle_drain` drains its whole queue.
#pragma once

#include <cstdint>
#include <vector>

#include "trn3/core/calendar.h"
#include "trn3/hbm/timing.h"

namespace trn3::hbm {

struct channel_stats {
    std::uint64_t reads = 0, writes = 0, read_queue_full = 0, row_hits = 0, row_closed = 0, row_conflicts = 0,
                  refresh_waits = 0, write_drains = 0, bursts = 0;
};

class pseudo_channel {
public:
    // refresh_phase: time of this channel's first refresh.
    pseudo_channel(const timing& t, unsigned bank_groups, unsigned banks_per_group, ps_t refresh_phase);

    // Places a read of `bursts` bursts arriving at `arrival`; returns the time
    // its last data beat leaves the device.
    ps_t read(ps_t arrival, unsigned bank_group, unsigned bank, std::uint64_t row, unsigned bursts);
    // Posts a write; returns when the controller has accepted it.
    ps_t write(ps_t arrival, unsigned bank_group, unsigned bank, std::uint64_t row, unsigned bursts);
    // Drains every queued write; returns when the last data on the bus is done.
    ps_t flush();

    const channel_stats& stats() const { return stats_; }
    // End of the last booked data on the bus.
    ps_t last_data_end() const { return bus_.last_end(); }

private:
    struct bank_state {
        std::int64_t open_row = -1;
        ps_t act = 0;  // last ACT
        ps_t act_allowed = 0;  // earliest next ACT (after PRE + tRP, after refresh)
        ps_t col_allowed = 0;  // ACT + tRCD
        ps_t pre_allowed = 0;  // earliest PRE (tRAS, last column, tWR)
        bool activated = false;
    };
    struct queued_write {
        unsigned bank_group, bank;
        std::uint64_t row;
        unsigned bursts;
        ps_t arrival;
    };

    ps_t place(ps_t arrival, bool is_write, unsigned bank_group, unsigned bank, std::uint64_t row, unsigned bursts,
               ps_t pad_before, ps_t pad_after);
    // Delays t out of any refresh window; closes all rows when a refresh has
    // begun since the last command.
    ps_t after_refresh(ps_t t);
    void activate(bank_state& b, unsigned bank_group, ps_t t);
    // Places the oldest queued writes until `keep` remain.
    void drain(std::size_t keep, ps_t from);
    void drain_if_idle(ps_t now);
    // Drops calendar history older than the reorder window.
    void advance(ps_t arrival);

    timing t_;
    unsigned banks_per_group_;
    ps_t refresh_phase_;
    ps_t act_spacing_;
    std::uint64_t refresh_epoch_ = 0;  // refreshes begun before the last command
    ps_t quiet_from_ = 0, quiet_until_;  // a span with no refresh and no new epoch: after_refresh's fast path
    std::vector<bank_state> banks_;
    calendar bus_;  // the data bus
    calendar acts_;  // ACT slots of the channel
    std::vector<calendar> group_acts_;  // ACT slots per bank group (tRRD_L)
    std::vector<calendar> group_cols_;  // column slots per bank group (tCCD_L)
    std::vector<ps_t> read_done_;  // completion times of the last read_queue reads, as a ring
    std::size_t read_next_ = 0;
    std::vector<queued_write> write_queue_;
    ps_t drain_end_ = 0;
    ps_t latest_arrival_ = 0;
    channel_stats stats_;
};

}  // namespace trn3::hbm
