#include "trn3/pcie/requester.h"

#include <algorithm>
#include <cstring>

namespace trn3::pcie {

requester::requester(unsigned tags, sc_core::sc_time timeout) : slots_(tags), timeout_(timeout) {}

std::uint16_t requester::open(std::uint64_t bytes, std::uint16_t requester_id, bool no_data) {
    while (outstanding_ == slots_.size()) sc_core::wait(freed_);
    while (slots_[next_].busy) next_ = (next_ + 1) % slots_.size();
    const unsigned tag = next_;
    next_ = (next_ + 1) % static_cast<unsigned>(slots_.size());
    slot& s = slots_[tag];
    s.busy = true;
    s.done = false;
    s.expected = bytes;
    s.requester_id = requester_id;
    s.deadline = sc_core::sc_time_stamp() + timeout_;
    s.received = 0;
    s.tail = sc_core::SC_ZERO_TIME;
    s.r = result{};
    if (no_data) s.r.data.clear();
    else s.r.data.assign(bytes, 0);
    ++outstanding_;
    return static_cast<std::uint16_t>(tag);
}

bool requester::complete(const tlp& cpl) {
    if (cpl.tag >= slots_.size() || !slots_[cpl.tag].busy || slots_[cpl.tag].done ||
        slots_[cpl.tag].requester_id != cpl.requester)
        return false;
    slot& s = slots_[cpl.tag];
    const sc_core::sc_time tail = sc_core::sc_time_stamp() + cpl.train_span;
    if (tail > s.tail) s.tail = tail;
    if (cpl.status != cpl_status::success) {
        s.r.status = cpl.status;
        s.done = true;
    } else {
        const std::uint64_t n =
            std::min<std::uint64_t>(cpl.data.size(), s.r.data.size() > cpl.address ? s.r.data.size() - cpl.address : 0);
        if (n) std::memcpy(s.r.data.data() + cpl.address, cpl.data.data(), n);
        s.received += cpl.type == tlp_type::completion_data ? cpl.total_bytes() : s.expected;
        s.r.poisoned = s.r.poisoned || cpl.poisoned;
        s.done = s.received >= s.expected;
    }
    if (s.done) s.answered.notify(sc_core::SC_ZERO_TIME);
    return true;
}

requester::result requester::wait(std::uint16_t tag) {
    slot& s = slots_[tag];
    const sc_core::sc_time deadline = s.deadline;
    while (!s.done) {
        const sc_core::sc_time now = sc_core::sc_time_stamp();
        if (now >= deadline) {
            s.r.timed_out = true;
            break;
        }
        sc_core::wait(deadline - now, s.answered);
    }
    if (s.done && s.tail > sc_core::sc_time_stamp()) sc_core::wait(s.tail - sc_core::sc_time_stamp());
    result r = std::move(s.r);
    s.busy = false;
    // A late completion for this tag after a timeout finds no request: it is
    // dropped as unexpected by complete()'s caller.
    --outstanding_;
    freed_.notify(sc_core::SC_ZERO_TIME);
    return r;
}

}  // namespace trn3::pcie
