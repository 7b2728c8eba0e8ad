// calendar: a resource booked in time intervals, with gap filling.
//
// A loosely-timed model places each request once, when it is called, but the
// hardware it models reorders: a DRAM controller issues a ready request while
// an older one waits for its bank. A calendar lets a later request take an
// earlier free gap: book(earliest, length) returns the first start >=
// earliest at which [start, start + length) is free, and books it.
// Intervals that end before `forget_before` are dropped (nothing may be
// booked there any more), and touching intervals merge, so a saturated
// resource costs one interval.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace trn3 {

class calendar {
public:
    using tick = std::uint64_t;

    tick book(tick earliest, tick length) {
        auto [start, it] = search(earliest, length);
        insert(it, start, start + length);
        return start;
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

private:
    struct interval {
        tick start, end;
    };
    using iterator = std::vector<interval>::iterator;
    std::pair<tick, iterator> search(tick earliest, tick length) {
        if (earliest < floor_) earliest = floor_;
        // First interval that ends after `earliest` (ends are sorted too:
        // intervals are disjoint).
        auto it = std::upper_bound(busy_.begin(), busy_.end(), earliest,
                                   [](tick t, const interval& i) { return t < i.end; });
        tick start = earliest;
        while (it != busy_.end() && it->start < start + length) {
            start = std::max(start, it->end);
            ++it;
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

} // namespace trn3
