#include "trn3/hbm/pseudo_channel.h"

#include <algorithm>

namespace trn3::hbm {

pseudo_channel::pseudo_channel(const timing& t, unsigned bank_groups, unsigned banks_per_group, ps_t refresh_phase)
    : t_(t), banks_per_group_(banks_per_group), refresh_phase_(refresh_phase),
      act_spacing_(std::max(t.t_rrd_s, (t.t_faw + 3) / 4)), quiet_until_(refresh_phase),
      banks_(static_cast<std::size_t>(bank_groups) * banks_per_group), group_acts_(bank_groups),
      group_cols_(bank_groups), read_done_(std::max(1u, t.read_queue), 0) {
    write_queue_.reserve(t.write_queue_high + 1);
}

void pseudo_channel::advance(ps_t arrival) {
    // Forgetting is batched: once a quarter of the reorder window has passed.
    if (arrival < latest_arrival_ + t_.reorder_window / 4) return;
    latest_arrival_ = arrival;
    if (arrival < t_.reorder_window) return;
    const ps_t horizon = arrival - t_.reorder_window;
    bus_.forget_before(horizon);
    acts_.forget_before(horizon);
    for (calendar& c : group_acts_) c.forget_before(horizon);
    for (calendar& c : group_cols_) c.forget_before(horizon);
}

ps_t pseudo_channel::after_refresh(ps_t t) {
    // Fast path: t lies between the end of the latest refresh already seen
    // and the start of the next one.
    if (t >= quiet_from_ && t < quiet_until_) return t;
    if (t < refresh_phase_) return t;
    const std::uint64_t k = (t - refresh_phase_) / t_.t_refi;
    const ps_t start = refresh_phase_ + k * t_.t_refi;
    const ps_t end = start + t_.t_rfc;
    if (k + 1 > refresh_epoch_) {
        // A refresh began since the last command: every row is closed, and
        // no bank activates before the refresh ends.
        refresh_epoch_ = k + 1;
        for (bank_state& b : banks_) {
            b.open_row = -1;
            b.act_allowed = std::max(b.act_allowed, end);
        }
    }
    if (k + 1 == refresh_epoch_) {
        quiet_from_ = end;
        quiet_until_ = start + t_.t_refi;
    }
    if (t < end) {
        ++stats_.refresh_waits;
        return end;
    }
    return t;
}

void pseudo_channel::activate(bank_state& b, unsigned bank_group, ps_t t) {
    ps_t act = std::max(t, b.act_allowed);
    if (b.activated) act = std::max(act, b.act + t_.t_rc);
    // The first time that is free in both the channel's and the group's ACT slots.
    calendar& group = group_acts_[bank_group];
    calendar::slot in_channel{}, in_group{};
    for (;;) {
        act = after_refresh(act);
        in_channel = acts_.find_slot(act, act_spacing_);
        in_group = group.find_slot(in_channel.start, t_.t_rrd_l);
        act = in_group.start;
        if (in_group.start == in_channel.start && after_refresh(act) == act) break;
    }
    acts_.book(in_channel, act_spacing_);
    group.book(in_group, t_.t_rrd_l);
    b.act = act;
    b.activated = true;
    b.col_allowed = act + t_.t_rcd;
    b.pre_allowed = act + t_.t_ras;
}

ps_t pseudo_channel::place(ps_t arrival, bool is_write, unsigned bank_group, unsigned bank, std::uint64_t row,
                           unsigned bursts, ps_t pad_before, ps_t pad_after) {
    advance(arrival);
    bank_state& b = banks_[bank_group * banks_per_group_ + bank];
    calendar& cols = group_cols_[bank_group];
    const ps_t col_length = static_cast<ps_t>(bursts) * t_.t_ccd_l;
    const ps_t beat = std::max(t_.t_burst, t_.t_ccd_s);
    const ps_t latency = is_write ? t_.t_wl : t_.t_cl;
    const ps_t bus_length = bursts * beat + pad_before + pad_after;
    ps_t t = after_refresh(arrival);
    ps_t col = 0, data = 0;
    calendar::slot col_slot{};
    // At most one retry: a column pushed past a refresh finds its row closed.
    for (int attempt = 0; attempt < 2; ++attempt) {
        if (b.open_row == static_cast<std::int64_t>(row)) {
            if (attempt == 0) ++stats_.row_hits;
            col = std::max(t, b.col_allowed);
        } else {
            if (b.open_row < 0) {
                if (attempt == 0) ++stats_.row_closed;
            } else {
                if (attempt == 0) ++stats_.row_conflicts;
                const ps_t pre = std::max(t, b.pre_allowed);
                b.act_allowed = std::max(b.act_allowed, pre + t_.t_rp);
            }
            b.open_row = static_cast<std::int64_t>(row);
            activate(b, bank_group, t);
            col = b.col_allowed;
        }
        // The column is issued `latency` before its data. The bus is the
        // scarcer resource and its free time is one search away (a saturated
        // bus is one merged interval), so find the data slot first, then the
        // column slot that feeds it; two rounds settle almost every request,
        // after which the data may trail its column slightly (it waits in the
        // PHY's output buffer).
        ps_t want = col;
        for (int i = 0; i < 2; ++i) {
            data = bus_.find(want + latency - std::min(pad_before, want + latency), bus_length) + pad_before;
            col_slot = cols.find_slot(data - latency, col_length);
            col = col_slot.start;
            if (col + latency == data) break;
            want = col;
        }
        const ps_t moved = after_refresh(col);
        if (moved == col) break;
        t = moved;
    }
    cols.book(col_slot, col_length);
    data = bus_.book(std::max(data, col + latency) - pad_before, bus_length) + pad_before;
    const ps_t last_col = col + static_cast<ps_t>(bursts - 1) * t_.t_ccd_l;
    const ps_t end = std::max(data + bursts * beat, last_col + latency + t_.t_burst);
    // The bank may not precharge before its last column (reads) or before
    // tWR after its write data.
    b.pre_allowed = std::max(b.pre_allowed, is_write ? end + t_.t_wr : last_col + t_.t_ccd_l);
    stats_.bursts += bursts;
    return end;
}

void pseudo_channel::drain(std::size_t keep, ps_t from) {
    const std::size_t n = write_queue_.size() - keep;
    for (std::size_t i = 0; i < n; ++i) {
        const queued_write& w = write_queue_[i];
        // The batch is bracketed by the bus turnarounds.
        const ps_t before = i == 0 ? t_.t_rtw : 0;
        const ps_t after = i + 1 == n ? t_.t_wtr : 0;
        drain_end_ = std::max(
            drain_end_, place(std::max(w.arrival, from), true, w.bank_group, w.bank, w.row, w.bursts, before, after));
    }
    write_queue_.erase(write_queue_.begin(), write_queue_.begin() + static_cast<long>(n));
    ++stats_.write_drains;
}

void pseudo_channel::drain_if_idle(ps_t now) {
    if (!write_queue_.empty() && now > bus_.last_end() + t_.idle_drain) drain(0, bus_.last_end() + t_.idle_drain);
}

ps_t pseudo_channel::read(ps_t arrival, unsigned bank_group, unsigned bank, std::uint64_t row, unsigned bursts) {
    drain_if_idle(arrival);
    ++stats_.reads;
    // The slot this read takes was freed when the read placed read_queue
    // reads ago completed.
    ps_t& slot = read_done_[read_next_];
    if (++read_next_ == read_done_.size()) read_next_ = 0;
    if (slot > arrival) {
        ++stats_.read_queue_full;
        arrival = slot;
    }
    slot = place(arrival, false, bank_group, bank, row, bursts, 0, 0);
    return slot;
}

ps_t pseudo_channel::write(ps_t arrival, unsigned bank_group, unsigned bank, std::uint64_t row, unsigned bursts) {
    drain_if_idle(arrival);
    ++stats_.writes;
    write_queue_.push_back({bank_group, bank, row, bursts, arrival});
    if (write_queue_.size() < t_.write_queue_high) return arrival;
    drain(t_.write_queue_low, arrival);
    // The write that filled the queue is accepted once the drain made room.
    return std::max(arrival, drain_end_);
}

ps_t pseudo_channel::flush() {
    if (!write_queue_.empty()) drain(0, 0);
    return bus_.last_end();
}

}  // namespace trn3::hbm
