#include "trn3/hbm/pseudo_channel.h"

#include <algorithm>

namespace trn3::hbm {

pseudo_channel::pseudo_channel(const timing& t, unsigned bank_groups, unsigned banks_per_group, unsigned index,
                               unsigned count)
    : t_(t), banks_per_group_(banks_per_group),
      // Channels refresh at evenly spread phases, none at time zero.
      refresh_phase_((2 * static_cast<ps_t>(index) + 1) * t.t_refi / (2 * static_cast<ps_t>(count))),
      banks_(static_cast<std::size_t>(bank_groups) * banks_per_group), group_col_free_(bank_groups, 0),
      act_ok_in_group_(bank_groups, 0) {
    write_queue_.reserve(t.write_queue_high + 1);
}

ps_t pseudo_channel::after_refresh(ps_t t) {
    if (t < refresh_phase_) return t;
    const std::uint64_t k = (t - refresh_phase_) / t_.t_refi;
    const ps_t start = refresh_phase_ + k * t_.t_refi;
    const ps_t end = start + t_.t_rfc;
    if (k + 1 > refresh_epoch_) {
        // A refresh ran since the last command: every row is closed, and no
        // bank activates before the refresh ends.
        refresh_epoch_ = k + 1;
        for (bank_state& b : banks_) {
            b.open_row = -1;
            b.act_allowed = std::max(b.act_allowed, end);
        }
    }
    if (t < end) {
        ++stats_.refresh_waits;
        return end;
    }
    return t;
}

ps_t pseudo_channel::activate(bank_state& b, unsigned bank_group, ps_t t) {
    ps_t act = std::max({t, b.act_allowed, act_ok_any_, act_ok_in_group_[bank_group]});
    if (b.activated) act = std::max(act, b.act + t_.t_rc);
    if (acts_ >= 4) act = std::max(act, faw_[acts_ % 4] + t_.t_faw);
    act = after_refresh(act);
    faw_[acts_ % 4] = act;
    ++acts_;
    b.act = act;
    b.activated = true;
    b.col_allowed = act + t_.t_rcd;
    b.pre_allowed = act + t_.t_ras;
    act_ok_any_ = act + t_.t_rrd_s;
    act_ok_in_group_[bank_group] = act + t_.t_rrd_l;
    return act;
}

ps_t pseudo_channel::place(ps_t arrival, bool is_write, unsigned bank_group, unsigned bank, std::uint64_t row,
                           unsigned bursts) {
    bank_state& b = banks_[bank_group * banks_per_group_ + bank];
    ps_t t = after_refresh(arrival);
    ps_t col = 0;
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
        // Each bank group issues one column command per tCCD_L: a request to a
        // single group gets that group's share, others fill the bus meanwhile.
        col = std::max(col, group_col_free_[bank_group]);
        if (is_write != last_was_write_ && !is_write) col = std::max(col, bus_free_ + t_.t_wtr);
        const ps_t moved = after_refresh(col);
        if (moved == col) break;
        t = moved;
    }
    ps_t data = std::max(col + (is_write ? t_.t_wl : t_.t_cl), bus_free_);
    if (is_write && !last_was_write_) data = std::max(data, bus_free_ + t_.t_rtw);
    const ps_t beat = std::max(t_.t_burst, t_.t_ccd_s);
    const ps_t last_col = col + static_cast<ps_t>(bursts - 1) * t_.t_ccd_l;
    group_col_free_[bank_group] = last_col + t_.t_ccd_l;
    bus_free_ = data + bursts * beat;
    const ps_t end = std::max(bus_free_, last_col + (is_write ? t_.t_wl : t_.t_cl) + t_.t_burst);
    if (is_write) b.pre_allowed = std::max(b.pre_allowed, end + t_.t_wr);
    last_was_write_ = is_write;
    stats_.bursts += bursts;
    return end;
}

void pseudo_channel::drain(std::size_t keep, ps_t from) {
    std::size_t n = write_queue_.size() - keep;
    for (std::size_t i = 0; i < n; ++i) {
        const queued_write& w = write_queue_[i];
        drain_end_ = place(std::max(w.arrival, from), true, w.bank_group, w.bank, w.row, w.bursts);
    }
    write_queue_.erase(write_queue_.begin(), write_queue_.begin() + static_cast<long>(n));
    ++stats_.write_drains;
}

void pseudo_channel::drain_if_idle(ps_t now) {
    if (!write_queue_.empty() && now > bus_free_ + t_.idle_drain) drain(0, bus_free_ + t_.idle_drain);
}

ps_t pseudo_channel::read(ps_t arrival, unsigned bank_group, unsigned bank, std::uint64_t row, unsigned bursts) {
    drain_if_idle(arrival);
    ++stats_.reads;
    return place(arrival, false, bank_group, bank, row, bursts);
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
    return bus_free_;
}

} // namespace trn3::hbm
