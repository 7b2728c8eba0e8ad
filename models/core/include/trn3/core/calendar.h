// calendar: a resource booked in time intervals, with gap filling.
//
// A loosely-timed model places each request once, when it is called, but the
// hardware it models reorders: a DRAM controller issues a ready request while
// an older one waits for its bank. A calendar lets a later request take an
// earlier free gap: book(earliest, length) returns the first start >=
// earliest at which [start, start + length) is free, and books it.
// Intervals that end before `forget_before` are dropped (nothing may be
// booked there any more), and touching intervals merge, so a saturated
// resource costs one interval. The search for a gap walks at most max_walk
// intervals, then books at the end: a bounded cost per booking, at the price
// of missing a rare fitting gap deep in a long backlog.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace trn3 {

class calendar {
public:
    using tick = std::uint64_t;

    // A place found for a booking; valid until the calendar next changes.
    struct slot {
        tick start;
        std::size_t index;
    };

    tick book(tick earliest, tick length) { return book(find_slot(earliest, length), length); }
    // Books a slot that find_slot() returned (no second search).
    tick book(const slot& s, tick length) {
        insert(busy_.begin() + static_cast<std::ptrdiff_t>(s.index), s.start, s.start + length);
        return s.start;
    }
    slot find_slot(tick earliest, tick length) {
        auto [start, it] = search(earliest, length);
        return {start, static_cast<std::size_t>(it - busy_.begin())};
    }
    // Where book() would place it, without booking.
    tick find(tick earliest, tick length) { return search(earliest, length).first; }

    // The end of the last booked interval (0 when empty).
    tick last_end() const { return busy_.empty() ? floor_ : busy_.back().end; }
    // Forget intervals ending before t; nothing can be booked before t after this.
    void forget_before(tick t) {
        if (t <= floor_) return;
        floor_ = t;
        auto it = std::lower_bound(busy_.begin(), busy_.end(), t, [](const interval& i, tick v) { return i.end < v; });
        busy_.erase(busy_.begin(), it);
    }
    std::size_t intervals() const { return busy_.size(); }

    // Gaps are searched through at most this many booked intervals.
    static constexpr int max_walk = 8;

private:
    struct interval {
        tick start, end;
    };
    using iterator = std::vector<interval>::iterator;
    std::pair<tick, iterator> search(tick earliest, tick length) {
        if (earliest < floor_) earliest = floor_;
        // First interval that ends after `earliest` (ends are sorted too:
        // intervals are disjoint). Bookings mostly land near the end: look
        // back a few intervals before searching.
        auto it = busy_.end();
        int steps = 0;
        while (it != busy_.begin() && (it - 1)->end > earliest && steps < 8) {
            --it;
            ++steps;
        }
        if (steps == 8)
            it = std::upper_bound(busy_.begin(), it, earliest, [](tick t, const interval& i) { return t < i.end; });
        tick start = earliest;
        int walked = 0;
        while (it != busy_.end() && it->start < start + length) {
            start = std::max(start, it->end);
            ++it;
            // A gap that far back is unlikely to fit: take the end instead,
            // so a booking costs O(1) however deep the backlog.
            if (++walked == max_walk && it != busy_.end()) {
                it = busy_.end();
                start = std::max(start, busy_.back().end);
            }
        }
        return {start, it};
    }
    // Inserts [s, e) before `pos`, merging with neighbours it touches.
    void insert(std::vector<interval>::iterator pos, tick s, tick e) {
        const bool join_prev = pos != busy_.begin() && (pos - 1)->end == s;
        const bool join_next = pos != busy_.end() && pos->start == e;
        if (join_prev && join_next) {
            (pos - 1)->end = pos->end;
            busy_.erase(pos);
        } else if (join_prev) {
            (pos - 1)->end = e;
        } else if (join_next) {
            pos->start = s;
        } else {
            busy_.insert(pos, interval{s, e});
        }
    }
    std::vector<interval> busy_;
    tick floor_ = 0;
};

}  // namespace trn3
