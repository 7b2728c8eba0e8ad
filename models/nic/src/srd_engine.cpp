#include "trn3/nic/srd_engine.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace trn3::nic {
namespace {
using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_US;

sc_time now() { return sc_core::sc_time_stamp(); }
}  // namespace

srd_engine::srd_engine(const sc_core::sc_module_name& name, std::uint64_t node, unsigned ports,
                       std::uint64_t first_port_id)
    : component(name, frequency{1e9}),
      mtu(this, "mtu", byte_count{8192}, "payload bytes per packet (a 9,000-byte jumbo frame holds 8,928)",
          range<byte_count>{byte_count{256}, byte_count{TRN3_SRD_MAX_PAYLOAD}}),
      paths(this, "paths", 64, "paths a connection sprays its packets over (entropy values)",
            range<std::uint64_t>{1, 65536}),
      window_initial(this, "window_initial", 64, "a new connection's window, in packets",
                     range<std::uint64_t>{1, 4096}),
      window_max(this, "window_max", 256, "the largest window, in packets", range<std::uint64_t>{1, 4096}),
      target_rtt(this, "target_rtt", sc_time(25, SC_US), "RTT above which the window shrinks",
                 range<sc_time>{sc_time(10, SC_NS), sc_time(10, sc_core::SC_MS)}),
      decrease(this, "decrease", 0.8, "factor the window shrinks by (an RTT above target, a timeout)",
               range<double>{0.1, 1.0}),
      rto_min(this, "rto_min", sc_time(100, SC_US),
              "least retransmission timeout (from the packet reaching the ToR); rto = max(rto_min, 3 x smoothed RTT)",
              range<sc_time>{sc_time(1, SC_US), sc_time(1, sc_core::SC_SEC)}),
      path_penalty(this, "path_penalty", sc_time(1, sc_core::SC_MS),
                   "how long a path that lost a packet is avoided (doubled per further loss without an acknowledgement "
                   "on it, at most 1024 x)",
                   range<sc_time>{sc_time(0, SC_NS), sc_time(1, sc_core::SC_SEC)}),
      max_retries(this, "max_retries", 16, "sends of one packet after the first before its connection fails",
                  range<std::uint64_t>{1, 1000}),
      tx_latency(this, "tx_latency", sc_time(1, SC_US), "packet made to packet on the wire (the NIC's send pipeline)",
                 range<sc_time>{sc_time(0, SC_NS), sc_time(1, sc_core::SC_MS)}),
      rx_latency(this, "rx_latency", sc_time(1, SC_US),
                 "packet in to its data in host memory and its acknowledgement on the wire",
                 range<sc_time>{sc_time(0, SC_NS), sc_time(1, sc_core::SC_MS)}),
      node_(node & TRN3_ETH_NODE_MASK), packets_sent_(this, "packets_sent", "data packets sent, first sends"),
      retransmits_(this, "retransmits", "data packets sent again"),
      timeouts_(this, "timeouts", "packets unacknowledged within the timeout"),
      acks_sent_(this, "acks_sent", "acknowledgements sent"),
      duplicates_(this, "duplicates", "data packets received again (acknowledged, dropped)"),
      malformed_(this, "malformed", "frames dropped: not a valid SRD packet for this node"),
      messages_sent_(this, "messages_sent", "messages acknowledged whole"),
      messages_delivered_(this, "messages_delivered", "messages delivered whole, in order"),
      bytes_delivered_(this, "bytes_delivered", "bytes of the messages delivered"),
      connection_failures_(this, "connection_failures", "connections failed after max_retries"),
      rtt_ns_(this, "rtt_ns", "RTT samples, data packet sent to its acknowledgement back, in ns") {
    if (window_initial.get() > window_max.get())
        throw config_error(fmt::format("param {} must not exceed {}", window_initial.name(), window_max.name()));
    port_down_.assign(ports, false);
    for (unsigned p = 0; p < ports; ++p) {
        ports_.push_back(std::make_unique<message_port>(fmt::format("{}.port{}", this->name(), p), first_port_id + p));
        ports_.back()->on_receive([this, p](message& m) { receive(p, m); });
        // Data leaves tx_latency after it is made, an acknowledgement rx_latency after its packet.
        ports_.back()->set_lead(std::min(tx_latency.get(), rx_latency.get()));
    }
    SC_HAS_PROCESS(srd_engine);
    SC_THREAD(timers);
}

std::uint64_t srd_engine::post_send(std::uint16_t src_qp, std::uint64_t dst_node, std::uint16_t dst_qp,
                                    std::uint64_t bytes, std::vector<std::uint8_t> data, completion done) {
    // All its bytes, none, or fewer than its first packet carries (a timing-only message's leading bytes).
    const std::uint64_t first_packet = std::min(bytes, mtu.get().bytes);
    if ((data.size() != bytes && data.size() >= first_packet) || bytes > TRN3_SRD_MAX_MESSAGE)
        throw std::invalid_argument(
            fmt::format("{}: a message of {} bytes given {} bytes of data (all, or under {}; at most {})", name(),
                        bytes, data.size(), first_packet, TRN3_SRD_MAX_MESSAGE));
    const conn_key k{src_qp, dst_node & TRN3_ETH_NODE_MASK, dst_qp};
    auto [it, created] = senders_.try_emplace(k);
    sender& s = it->second;
    const std::uint64_t id = next_id_++;
    if (created) {
        // A connection's entropies start at a value of its own, so that
        // connections do not all load the same paths first.
        s.entropy_base = static_cast<std::uint16_t>((node_ * 0x9E3779B97F4A7C15ull) ^ (std::get<1>(k) << 16) ^
                                                    (std::uint64_t{src_qp} << 8) ^ dst_qp);
        s.window = static_cast<double>(window_initial.get());
        s.path_bad_until.assign(paths.get(), sc_time());
        s.path_strikes.assign(paths.get(), 0);
        s.path_load.assign(paths.get(), 0);
        s.srtt = target_rtt.get();
        s.epoch = qp_epoch_[src_qp];
    }
    if (s.failed) {  // a failed connection stays failed (the host re-establishes it)
        if (done) done(false, now());
        return id;
    }
    outgoing& m = s.messages[id];
    m.id = id;
    m.msg = s.next_msg++;
    m.bytes = bytes;
    m.data = std::move(data);
    m.done = std::move(done);
    s.to_send.push_back(id);
    pump(k, s);
    return id;
}

void srd_engine::reset_qp(std::uint16_t qp) {
    for (auto it = senders_.begin(); it != senders_.end();)
        it = std::get<0>(it->first) == qp ? senders_.erase(it) : std::next(it);
    for (auto it = receivers_.begin(); it != receivers_.end();)
        it = std::get<0>(it->first) == qp ? receivers_.erase(it) : std::next(it);
    ++qp_epoch_[qp];
}

double srd_engine::window(std::uint16_t src_qp, std::uint64_t dst_node, std::uint16_t dst_qp) const {
    const auto it = senders_.find(conn_key{src_qp, dst_node, dst_qp});
    return it == senders_.end() ? 0.0 : it->second.window;
}

sc_time srd_engine::rto(const sender& s) const { return std::max(rto_min.get(), s.srtt * 3.0); }

std::uint64_t srd_engine::pick_path(sender& s, std::uint64_t avoid) {
    // The least loaded usable path, the next in turn among equals: packets
    // spray round robin while the paths keep up, and a path whose packets
    // wait (a congested queue on it) gets fewer until they drain.
    const std::uint64_t n = paths.get();
    std::uint64_t best = n;
    for (std::uint64_t i = 0; i < n; ++i) {
        const std::uint64_t p = (s.next_path + i) % n;
        if (p == avoid || s.path_bad_until[p] > now() || !port_usable(p % ports_.size())) continue;
        if (best == n || s.path_load[p] < s.path_load[best]) best = p;
        if (s.path_load[best] == 0) break;
    }
    // Every path avoided: the next one on a port that works, penalised or
    // (last) the one to avoid; none when no port works (n).
    for (std::uint64_t i = 0; best == n && i < 2 * n; ++i) {
        const std::uint64_t p = (s.next_path + i) % n;
        if ((p != avoid || i >= n) && port_usable(p % ports_.size())) best = p;
    }
    if (best < n) s.next_path = best + 1;
    return best;
}

void srd_engine::pump(const conn_key& k, sender& s) {
    // At most `window` packets in flight, and their PSNs at most window_max
    // apart (what a receiver holds while one is retried stays bounded).
    const std::uint64_t limit = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(s.window));
    while (s.flight.size() < limit && !s.to_send.empty() &&
           (s.flight.empty() || s.next_psn - s.flight.begin()->first < window_max.get())) {
        outgoing& m = s.messages.at(s.to_send.front());
        const std::uint64_t length = std::min(mtu.get().bytes, m.bytes - m.next_offset);
        const std::uint64_t psn = s.next_psn++;
        in_flight& f = s.flight[psn];
        f.msg_id = m.id;
        f.msg = m.msg;
        f.offset = m.next_offset;
        f.length = length;
        f.msg_bytes = m.bytes;
        m.next_offset += length;
        ++m.unacked;
        if (m.next_offset >= m.bytes) {
            m.all_sent = true;
            s.to_send.pop_front();
        }
        if (!transmit(k, s, psn, f, false)) return fail(k, s);
    }
}

bool srd_engine::transmit(const conn_key& k, sender& s, std::uint64_t psn, in_flight& f, bool again) {
    const std::uint64_t path = pick_path(s, again ? f.path : paths.get());
    if (path == paths.get()) return false;  // no port works
    if (again) --s.path_load[f.path];
    f.path = path;
    ++s.path_load[f.path];
    const outgoing& m = s.messages.at(f.msg_id);
    srd_packet p;
    p.dst_node = std::get<1>(k);
    p.src_node = node_;
    p.entropy = static_cast<std::uint16_t>(s.entropy_base + f.path);
    p.type = TRN3_SRD_DATA;
    p.src_qp = std::get<0>(k);
    p.dst_qp = std::get<2>(k);
    p.epoch = s.epoch;
    p.psn = static_cast<std::uint32_t>(psn);
    p.msg = f.msg;
    p.payload_bytes = static_cast<std::uint32_t>(f.length);
    p.msg_bytes = f.msg_bytes;
    p.msg_offset = f.offset;
    f.sent = now() + tx_latency.get();
    p.stamp_ps = f.sent.value();
    // Whole packets, or (timing only) the leading bytes the message holds.
    const std::uint64_t held = m.data.size() > f.offset ? std::min(m.data.size() - f.offset, f.length) : 0;
    message frame = encode(p, held ? m.data.data() + f.offset : nullptr, static_cast<std::uint32_t>(held));
    // The timeout runs from the packet reaching the ToR (not from its turn
    // on the NIC's own wire, which a large window makes long).
    const sc_time at_tor = ports_[f.path % ports_.size()]->send(std::move(frame), f.sent);
    f.deadline = at_tor + rto(s);
    deadlines_.push(deadline{f.deadline, k, psn});
    deadline_added_.notify(sc_core::SC_ZERO_TIME);
    ++(again ? retransmits_ : packets_sent_);
    return true;
}

void srd_engine::receive(unsigned port, message& frame) {
    const std::optional<srd_packet> p = decode(frame);
    if (!p || p->dst_node != node_) {
        ++malformed_;
        return;
    }
    if (p->type == TRN3_SRD_ACK) on_ack(*p);
    else on_data(port, *p);
}

std::uint64_t srd_engine::widen(std::uint64_t near, std::uint32_t psn) {
    // The 64-bit PSN closest to `near` whose low 32 bits are psn.
    const auto diff = static_cast<std::int32_t>(psn - static_cast<std::uint32_t>(near));
    if (diff < 0 && static_cast<std::uint64_t>(-static_cast<std::int64_t>(diff)) > near) return psn;
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(near) + diff);
}

void srd_engine::on_data(unsigned port, const srd_packet& p) {
    receiver& r = receivers_[conn_key{p.dst_qp, p.src_node, p.src_qp}];
    if (r.epoch != p.epoch) {
        if (static_cast<std::int16_t>(p.epoch - r.epoch) < 0) {  // the connection before a reset: gone
            ++duplicates_;
            return;
        }
        r = receiver{};  // the sender reset the connection: start again
        r.epoch = p.epoch;
    }
    // A packet that disagrees with its message's first one is neither taken nor acknowledged.
    const auto known = r.messages.find(p.msg);
    if (known != r.messages.end() && (p.msg_bytes != known->second.bytes || p.has_payload == known->second.timing)) {
        ++malformed_;
        return;
    }
    // Acknowledge it, new or not (the first acknowledgement may be lost).
    srd_packet ack;
    ack.dst_node = p.src_node;
    ack.src_node = node_;
    ack.entropy = p.entropy;
    ack.type = TRN3_SRD_ACK;
    ack.src_qp = p.dst_qp;
    ack.dst_qp = p.src_qp;
    ack.epoch = p.epoch;
    ack.psn = p.psn;
    ack.stamp_ps = p.stamp_ps;
    const sc_time ready = now() + rx_latency.get();
    ports_[port]->send(encode(ack, nullptr), ready);
    ++acks_sent_;

    const std::uint64_t psn = widen(r.expected, p.psn);
    if (psn < r.expected || !r.above.insert(psn).second) {
        ++duplicates_;
        return;
    }
    while (!r.above.empty() && *r.above.begin() == r.expected) {
        r.above.erase(r.above.begin());
        ++r.expected;
    }
    if (p.msg - r.next_deliver >= 0x80000000u) return;  // a message already delivered (cannot happen: its PSNs were)
    reassembly& m = r.messages[p.msg];
    if (m.packets == 0) {  // its first packet
        m.bytes = p.msg_bytes;
        m.timing = !p.has_payload;
        if (!m.timing) m.data.resize(p.msg_bytes);
    }
    if (p.has_payload && !m.timing && p.payload_bytes)
        std::copy_n(p.payload, p.payload_bytes, m.data.begin() + static_cast<std::ptrdiff_t>(p.msg_offset));
    if (m.timing && p.carried) {  // a timing-only message's leading bytes
        if (m.data.size() < p.msg_offset + p.carried) m.data.resize(p.msg_offset + p.carried);
        std::copy_n(p.payload, p.carried, m.data.begin() + static_cast<std::ptrdiff_t>(p.msg_offset));
    }
    m.received += p.payload_bytes;
    ++m.packets;
    if (m.received < m.bytes) return;
    m.complete = true;
    m.complete_at = ready;
    // Deliver, in posting order, every complete message from the next one on.
    for (auto it = r.messages.find(r.next_deliver); it != r.messages.end() && it->second.complete;
         it = r.messages.find(r.next_deliver)) {
        inbound in{p.src_node,
                   p.src_qp,
                   p.dst_qp,
                   it->second.bytes,
                   std::move(it->second.data),
                   std::max(it->second.complete_at, ready)};
        ++messages_delivered_;
        bytes_delivered_ += in.bytes;
        r.messages.erase(it);
        ++r.next_deliver;
        if (deliver_) deliver_(in);
    }
}

void srd_engine::on_ack(const srd_packet& p) {
    const conn_key k{p.dst_qp, p.src_node, p.src_qp};
    const auto sit = senders_.find(k);
    if (sit == senders_.end()) return;
    sender& s = sit->second;
    if (p.epoch != s.epoch) return;  // for the connection before a reset
    const auto fit = s.flight.find(widen(s.next_psn, p.psn));
    if (fit == s.flight.end()) return;  // acknowledged before (a duplicate's acknowledgement)
    const sc_time t = now();
    const sc_time rtt = t - sc_time::from_value(std::min<std::uint64_t>(p.stamp_ps, t.value()));
    rtt_ns_.sample(rtt.to_seconds() * 1e9);
    s.srtt = s.srtt * 0.875 + rtt * 0.125;
    if (rtt > target_rtt.get()) {
        if (t - s.last_decrease >= s.srtt) {
            s.window = std::max(1.0, s.window * decrease.get());
            s.last_decrease = t;
        }
    } else {
        s.window = std::min(static_cast<double>(window_max.get()), s.window + 1.0 / s.window);
    }
    const std::uint64_t id = fit->second.msg_id;
    --s.path_load[fit->second.path];
    s.path_strikes[fit->second.path] = 0;  // the path works
    s.flight.erase(fit);
    outgoing& m = s.messages.at(id);
    if (--m.unacked == 0 && m.all_sent) {
        completion done = std::move(m.done);
        s.messages.erase(id);
        ++messages_sent_;
        if (done) done(true, t);
    }
    pump(k, s);
}

void srd_engine::fail(const conn_key& k, sender& s) {
    ++connection_failures_;
    log().warn("connection qp {} -> node {:#x} qp {} failed after {} retries", std::get<0>(k), std::get<1>(k),
               std::get<2>(k), max_retries.get());
    s.failed = true;
    s.flight.clear();
    s.to_send.clear();
    std::fill(s.path_load.begin(), s.path_load.end(), 0);
    std::map<std::uint64_t, outgoing> lost;
    lost.swap(s.messages);
    for (auto& [id, m] : lost)
        if (m.done) m.done(false, now());
}

void srd_engine::timers() {
    for (;;) {
        if (deadlines_.empty()) {
            wait(deadline_added_);
            continue;
        }
        const deadline d = deadlines_.top();
        if (d.at > now()) {
            wait(d.at - now(), deadline_added_);
            continue;
        }
        deadlines_.pop();
        const auto sit = senders_.find(d.conn);
        if (sit == senders_.end()) continue;
        sender& s = sit->second;
        const auto fit = s.flight.find(d.psn);
        if (fit == s.flight.end() || fit->second.deadline != d.at) continue;  // acknowledged or sent again since
        in_flight& f = fit->second;
        ++timeouts_;
        if (++f.retries > max_retries.get()) {
            fail(d.conn, s);
            continue;
        }
        // Avoided for path_penalty, doubled for each further loss on it
        // without an acknowledgement between (a dead switch: its paths are
        // soon left alone for long), at most 1024 times.
        const unsigned strikes = s.path_strikes[f.path];
        if (strikes < 10) ++s.path_strikes[f.path];
        s.path_bad_until[f.path] = now() + path_penalty.get() * double(1u << strikes);
        s.window = std::max(1.0, s.window * decrease.get());
        if (!transmit(d.conn, s, d.psn, f, true)) fail(d.conn, s);
    }
}

}  // namespace trn3::nic
