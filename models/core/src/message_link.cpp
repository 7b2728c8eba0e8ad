#include "trn3/core/message_link.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace trn3 {

sc_core::sc_time message_port::send(message m, const sc_core::sc_time& send_time) {
    if (!link_) throw config_error("message port " + name_ + " is not connected to a link");
    m.src_port = id_;
    m.seq = next_seq_++;
    return link_->transmit(*this, std::move(m), send_time);
}

bool delivery_queue::later::operator()(const key& x, const key& y) const {
    // priority_queue pops the largest: "x comes after y" is the order.
    if (x.delivered != y.delivered) return x.delivered > y.delivered;
    if (x.dst != y.dst) return x.dst > y.dst;
    if (x.src != y.src) return x.src > y.src;
    return x.seq > y.seq;
}

delivery_queue::delivery_queue(const sc_core::sc_module_name& name)
    : sc_core::sc_module(name), end_(this->name(), [this] { go_.notify(); }) {
    SC_HAS_PROCESS(delivery_queue);
    SC_THREAD(run);
}

void delivery_queue::schedule(message&& m, message_port* dst) {
    if (dst->remote_) return dst->remote_(std::move(m));
    std::uint32_t slot;
    if (free_slots_.empty()) {
        slot = static_cast<std::uint32_t>(slots_.size());
        slots_.emplace_back();
    } else {
        slot = free_slots_.back();
        free_slots_.pop_back();
    }
    const key k{m.delivered.value(), m.dst_port, m.src_port, m.seq, slot};
    slots_[slot].msg = std::move(m);
    slots_[slot].dst = dst;
    const bool earliest = queue_.empty() || k.delivered < queue_.top().delivered;
    queue_.push(k);
    if (earliest) wake_.notify(sc_core::sc_time::from_value(k.delivered) - sc_core::sc_time_stamp());
}

void delivery_queue::run() {
    for (;;) {
        if (queue_.empty()) {
            wait(wake_);
            continue;
        }
        const std::uint64_t now = sc_core::sc_time_stamp().value();
        const std::uint64_t next = queue_.top().delivered;
        if (next > now) {
            wait(sc_core::sc_time::from_value(next - now), wake_);
            continue;
        }
        end_.request();
        wait(go_);
        // Everything due now, in key order. A handler may send; with a
        // non-zero latency its message is due later, never in this batch.
        while (!queue_.empty() && queue_.top().delivered <= now) {
            const std::uint32_t slot = queue_.top().slot;
            queue_.pop();
            message msg = std::move(slots_[slot].msg);
            message_port* dst = slots_[slot].dst;
            free_slots_.push_back(slot);
            ++delivered_;
            if (dst->handler_) dst->handler_(msg);
        }
    }
}

message_link::message_link(const sc_core::sc_module_name& name, delivery_queue& queue, message_port& a, message_port& b,
                           sc_core::sc_time default_latency, bandwidth default_rate)
    : component(name, frequency{1e9}),
      latency(this, "latency", default_latency, "time from the last bit leaving to the message arriving",
              range<sc_core::sc_time>{sc_core::sc_time(1, sc_core::SC_PS), {}}),
      rate(this, "bandwidth", default_rate, "bandwidth per direction"), queue_(queue), a_(a),
      b_(b), rate_now_{rate.get(), rate.get()},
      messages_ab_(this, "messages_ab", "messages sent from port a to port b"),
      messages_ba_(this, "messages_ba", "messages sent from port b to port a"),
      bytes_ab_(this, "bytes_ab", "bytes sent from port a to port b"),
      bytes_ba_(this, "bytes_ba", "bytes sent from port b to port a") {
    if (a.link_ || b.link_)
        throw config_error(
            fmt::format("{}: port {} is already on a link", this->name(), a.link_ ? a.name() : b.name()));
    if (a.id() == b.id()) throw config_error(fmt::format("{}: both ports have id {}", this->name(), a.id()));
    a.link_ = this;
    b.link_ = this;
}

sc_core::sc_time message_link::wire_free(const message_port& from, unsigned traffic_class) const {
    const int dir = &from == &a_ ? 0 : 1;
    return free_[dir][strict_[dir] ? std::min(traffic_class, traffic_classes - 1) : 0];
}

void message_link::abort(const message_port& from) {
    for (sc_core::sc_time& free : free_[&from == &a_ ? 0 : 1])
        if (free > sc_core::sc_time_stamp()) free = sc_core::sc_time_stamp();
}

void message_link::hold(const message_port& from, const sc_core::sc_time& until) {
    for (sc_core::sc_time& free : free_[&from == &a_ ? 0 : 1])
        if (free < until) free = until;
}

sc_core::sc_time message_link::transmit(message_port& from, message&& m, const sc_core::sc_time& send_time) {
    const int dir = &from == &a_ ? 0 : 1;
    message_port& to = dir == 0 ? b_ : a_;
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    if (send_time < now + from.lead_)
        throw std::logic_error(fmt::format("{}: port {} sent at {} at {}, inside its lead of {}", name(), from.name(),
                                           send_time.to_string(), now.to_string(), from.lead_.to_string()));
    const sc_core::sc_time sent = send_time < now ? now : send_time;
    m.dst_port = to.id();
    m.sent = sent;
    if (m.control) {
        m.delivered = sent + latency.get();
        const sc_core::sc_time delivered = m.delivered;
        queue_.schedule(std::move(m), &to);
        return delivered;
    }
    const unsigned cls = strict_[dir] ? std::min<unsigned>(m.traffic_class, traffic_classes - 1) : 0;
    auto& free = free_[dir];
    const sc_core::sc_time start = sent < free[cls] ? free[cls] : sent;
    const sc_core::sc_time wire = rate_now_[dir].transfer_time(m.bytes);
    // This class and every lower one: their traffic goes after this message.
    for (unsigned k = 0; k <= cls; ++k) free[k] = (free[k] > start ? free[k] : start) + wire;
    const sc_core::sc_time end = start + wire;
    const sc_core::sc_time tail = end + latency.get();
    const sc_core::sc_time earliest = sent + latency.get();  // the lookahead a cut needs
    m.delivered = m.train_span > tail - earliest ? earliest : tail - m.train_span;
    (dir == 0 ? messages_ab_ : messages_ba_) += 1;
    (dir == 0 ? bytes_ab_ : bytes_ba_) += m.bytes;
    const sc_core::sc_time delivered = m.delivered;
    queue_.schedule(std::move(m), &to);
    return delivered;
}

}  // namespace trn3
