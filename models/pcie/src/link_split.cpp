// A split link's protocol (link.h, "Split"): what its two ends tell each
// other in control messages, so that each keeps only its own state.
#include <stdexcept>

#include "trn3/pcie/link.h"

namespace trn3::pcie {

namespace {

// A control message's words, then (a NAK) the TLP it sends back.
std::vector<std::uint8_t> pack(const std::vector<std::uint64_t>& words, std::vector<std::uint8_t> tail) {
    std::vector<std::uint8_t> out;
    out.reserve(8 * words.size() + tail.size());
    for (std::uint64_t w : words)
        for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(w >> (8 * i)));
    out.insert(out.end(), tail.begin(), tail.end());
    return out;
}

std::uint64_t word(const std::vector<std::uint8_t>& data, std::size_t k) {
    if (data.size() < 8 * (k + 1)) throw std::logic_error("link: a control message is cut short");
    std::uint64_t w = 0;
    for (int i = 0; i < 8; ++i) w |= std::uint64_t(data[8 * k + std::size_t(i)]) << (8 * i);
    return w;
}

}  // namespace

void link::split() {
    if (sc_core::sc_is_running()) throw std::logic_error(std::string(name()) + ": split after the simulation started");
    split_ = true;
}

void link::make_remote(int e, std::function<void(message&&)> forward) {
    if (!split_) throw std::logic_error(std::string(name()) + ": only a split link has an end elsewhere");
    port(e).make_remote(std::move(forward));
    if (e == 0) {
        // The owner's process runs the LTSSM and applies the faults.
        owner_remote_ = true;
        step_event_.cancel();
        fault_event_.cancel();
        state_ = TRN3_LTSSM_DISABLED;
        update_status();
    }
}

void link::send_control(int from_end, control_kind kind, std::vector<std::uint64_t> words,
                        std::vector<std::uint8_t> tlp_bytes) {
    message m;
    m.control = true;
    m.kind = kind;
    m.data = pack(words, std::move(tlp_bytes));
    port(from_end).send(std::move(m), sc_core::sc_time_stamp());
}

// At end a, CONTROL.RETRAIN or lanes failing in L0: its own direction stops
// (what it had reserved on the wire is free again), and b hears of it.
void link::split_retrain() {
    wire_->abort(port_a_);
    fill_[0] = 0;
    ack_pending_ = true;
    send_control(0, down, {port_a_.next_seq(), settled_[1]});
    raise(TRN3_LINK_EVENT_DOWN);
    enter(TRN3_LTSSM_RECOVERY, 0, recovery_time.get());
}

// A TLP that reached an end that is not in L0, or that left before the
// sender's retrain: back to the sender's replay buffer.
void link::send_back(int dir, message& m) {
    const int at = dir == 0 ? 1 : 0;
    if (at == 0) {  // end a counts what it sends back (its TLP count is in the encoding)
        tlp t = decode(std::move(m.data));
        replayed_ += t.count;
        update_status();
        m.data = encode(std::move(t));
    }
    send_control(at, nak, {m.seq}, std::move(m.data));
}

void link::receive_control(int at, message& m) {
    switch (m.kind) {
    case trained:  // at b
        far_up_ = true;
        far_width_ = static_cast<unsigned>(word(m.data, 0));
        wire_->set_rate(port_b_, bandwidth{raw_bytes_per_second_at(1)});
        flush_held(1);
        return;
    case down: {  // at b
        far_up_ = false;
        replay_below_[0] = word(m.data, 0);
        const std::uint64_t settled_at_a = word(m.data, 1);
        wire_->abort(port_b_);
        fill_[1] = 0;
        // Every TLP of b's that a had not settled when it went down comes back.
        awaiting_replay_[1] = wire_sends_[1] > settled_at_a ? wire_sends_[1] - settled_at_a : 0;
        send_control(1, down_ack, {port_b_.next_seq(), settled_[0]});
        return;
    }
    case down_ack: {  // at a
        replay_below_[1] = word(m.data, 0);
        const std::uint64_t settled_at_b = word(m.data, 1);
        awaiting_replay_[0] = wire_sends_[0] > settled_at_b ? wire_sends_[0] - settled_at_b : 0;
        ack_pending_ = false;
        if (recovery_waits_) {
            recovery_waits_ = false;
            step();
        }
        return;
    }
    case nak: {  // at the sender
        const std::uint64_t seq = word(m.data, 0);
        tlp t = decode(std::vector<std::uint8_t>(m.data.begin() + 8, m.data.end()));
        if (at == 0) {
            replayed_ += t.count;
            update_status();
        }
        held_[at].push_back({seq, std::move(t)});
        if (awaiting_replay_[at] > 0) --awaiting_replay_[at];
        flush_held(at);
        return;
    }
    case hold: wire_->hold(port(at), sc_core::sc_time::from_value(word(m.data, 0))); return;
    default: throw std::logic_error(std::string(name()) + ": an unknown control message");
    }
}

}  // namespace trn3::pcie
