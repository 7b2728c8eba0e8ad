// The window protocol of a distributed run (window_sync.h).
#include "trn3/core/window_sync.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace trn3 {
namespace {

constexpr std::uint64_t none = std::numeric_limits<std::uint64_t>::max();

// A byte buffer written and read field by field (both ends are this program on one machine type).
struct writer {
    byte_buffer& out;
    template <class T>
    void put(const T& v) {
        const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
        out.insert(out.end(), p, p + sizeof v);
    }
    void put_bytes(const byte_buffer& b) {
        put<std::uint64_t>(b.size());
        out.insert(out.end(), b.begin(), b.end());
    }
};

struct reader {
    const byte_buffer& in;
    std::size_t at = 0;
    template <class T>
    T get() {
        if (in.size() - at < sizeof(T)) throw std::logic_error("window_sync: a boundary's buffer is cut short");
        T v;
        std::memcpy(&v, in.data() + at, sizeof v);
        at += sizeof v;
        return v;
    }
    byte_buffer get_bytes() {
        const auto n = get<std::uint64_t>();
        if (in.size() - at < n) throw std::logic_error("window_sync: a boundary's buffer is cut short");
        byte_buffer b(in.begin() + static_cast<std::ptrdiff_t>(at), in.begin() + static_cast<std::ptrdiff_t>(at + n));
        at += n;
        return b;
    }
};

void put_message(writer& w, const message& m) {
    w.put(m.src_port);
    w.put(m.dst_port);
    w.put(m.seq);
    w.put(m.sent.value());
    w.put(m.delivered.value());
    w.put(m.bytes);
    w.put(m.train_span.value());
    w.put(m.kind);
    w.put(m.traffic_class);
    w.put(std::uint8_t(m.control ? 1 : 0));
    w.put_bytes(m.data);
}

message get_message(reader& r) {
    message m;
    m.src_port = r.get<std::uint64_t>();
    m.dst_port = r.get<std::uint64_t>();
    m.seq = r.get<std::uint64_t>();
    m.sent = sc_core::sc_time::from_value(r.get<std::uint64_t>());
    m.delivered = sc_core::sc_time::from_value(r.get<std::uint64_t>());
    m.bytes = r.get<std::uint64_t>();
    m.train_span = sc_core::sc_time::from_value(r.get<std::uint64_t>());
    m.kind = r.get<std::uint32_t>();
    m.traffic_class = r.get<std::uint8_t>();
    m.control = r.get<std::uint8_t>() != 0;
    m.data = r.get_bytes();
    return m;
}

}  // namespace

window_sync::window_sync(ranks& r, const sc_core::sc_time& window) : ranks_(r), window_(window), outbox_(r.size()) {
    if (window_ == sc_core::SC_ZERO_TIME) throw std::logic_error("window_sync: a window of zero time");
}

void window_sync::add_proxy(message_port& proxy, unsigned owner) { proxy.make_remote(forward_to(owner)); }

std::function<void(message&&)> window_sync::forward_to(unsigned owner) {
    if (owner >= ranks_.size() || owner == ranks_.rank())
        throw std::logic_error(fmt::format("window_sync: a proxy for rank {} of {}", owner, ranks_.size()));
    return [this, owner](message&& m) {
        ++messages_out_;
        bytes_out_ += m.data.size();
        outbox_[owner].push_back(std::move(m));
    };
}

void window_sync::add_local(message_port& port, delivery_queue& queue) { local_[port.id()] = {&port, &queue}; }

void window_sync::add_channel(std::function<byte_buffer()> outgoing,
                              std::function<void(unsigned, const byte_buffer&)> incoming) {
    channels_.emplace_back(std::move(outgoing), std::move(incoming));
}

std::vector<window_sync::status> window_sync::boundary(const status& mine) {
    const unsigned n = ranks_.size(), me = ranks_.rank();
    std::vector<status> all(n);
    all[me] = mine;
    if (n == 1) {
        for (auto& c : channels_) c.first();  // nobody to tell: what it would send is dropped alike
        return all;
    }
    const auto wall0 = std::chrono::steady_clock::now();
    std::vector<byte_buffer> channel_bytes;
    for (auto& c : channels_) channel_bytes.push_back(c.first());
    std::vector<byte_buffer> to(n);
    for (unsigned r = 0; r < n; ++r) {
        if (r == me) continue;
        writer w{to[r]};
        w.put<std::uint8_t>(mine.done);
        w.put<std::uint8_t>(mine.failed);
        w.put(mine.next_ps);
        w.put(mine.done_ps);
        w.put(mine.last_wait_ns);
        w.put<std::uint64_t>(outbox_[r].size());
        for (const message& m : outbox_[r]) put_message(w, m);
        outbox_[r].clear();
        for (const auto& b : channel_bytes) w.put_bytes(b);
    }
    const std::vector<byte_buffer> from = ranks_.exchange(std::move(to));
    for (unsigned r = 0; r < n; ++r) {
        if (r == me) continue;
        reader rd{from[r]};
        all[r].done = rd.get<std::uint8_t>() != 0;
        all[r].failed = rd.get<std::uint8_t>() != 0;
        all[r].next_ps = rd.get<std::uint64_t>();
        all[r].done_ps = rd.get<std::uint64_t>();
        all[r].last_wait_ns = rd.get<std::uint64_t>();
        const auto count = rd.get<std::uint64_t>();
        for (std::uint64_t i = 0; i < count; ++i) {
            message m = get_message(rd);
            const auto it = local_.find(m.dst_port);
            if (it == local_.end())
                throw std::logic_error(fmt::format(
                    "window_sync: rank {} sent a message to port {}, which rank {} does not have", r, m.dst_port, me));
            if (m.delivered < sc_core::sc_time_stamp())
                throw std::logic_error(fmt::format(
                    "window_sync: a message from rank {} to {} is due at {}, before the boundary at {} (a lookahead "
                    "shorter than the window)",
                    r, it->second.first->name(), m.delivered.to_string(), sc_core::sc_time_stamp().to_string()));
            it->second.second->schedule(std::move(m), it->second.first);
        }
        for (auto& c : channels_) c.second(r, rd.get_bytes());
    }
    const double wait = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    exchange_s_ += wait;
    last_wait_ns_ = static_cast<std::uint64_t>(wait * 1e9);
    std::uint64_t least = all[0].last_wait_ns, most = least;
    for (const status& st : all) {
        least = std::min(least, st.last_wait_ns);
        most = std::max(most, st.last_wait_ns);
    }
    sync_s_ += static_cast<double>(least) * 1e-9;
    imbalance_s_ += static_cast<double>(most - least) * 1e-9;
    return all;
}

sc_core::sc_time window_sync::run(const std::function<std::optional<sc_core::sc_time>()>& finished_at,
                                  const sc_core::sc_time& limit, const std::function<void()>& at_boundary) {
    const bool limited = limit != sc_core::SC_ZERO_TIME;
    sc_core::sc_time now = sc_core::sc_time_stamp();
    sc_core::sc_time end = now + window_;
    if (limited) end = std::min(end, limit);
    for (;;) {
        std::exception_ptr error;
        try {
            if (end > now && sc_core::sc_get_status() != sc_core::SC_STOPPED) sc_core::sc_start(end - now);
        } catch (...) {
            error = std::current_exception();
        }
        now = sc_core::sc_time_stamp();
        ++windows_;
        if (at_boundary) at_boundary();
        status mine;
        mine.failed = static_cast<bool>(error);
        mine.last_wait_ns = last_wait_ns_;
        const std::optional<sc_core::sc_time> finished = mine.failed ? std::nullopt : finished_at();
        mine.done = mine.failed || sc_core::sc_get_status() == sc_core::SC_STOPPED || finished;
        mine.done_ps = (finished ? *finished : now).value();
        mine.next_ps = !mine.failed && sc_core::sc_pending_activity()
                           ? (now + sc_core::sc_time_to_pending_activity()).value()
                           : none;
        for (const auto& box : outbox_)
            for (const message& m : box) mine.next_ps = std::min<std::uint64_t>(mine.next_ps, m.delivered.value());
        const std::vector<status> all = boundary(mine);
        if (error) std::rethrow_exception(error);
        for (unsigned r = 0; r < all.size(); ++r)
            if (all[r].failed) throw std::runtime_error(fmt::format("rank {} failed (it says why)", r));
        if (std::all_of(all.begin(), all.end(), [](const status& s) { return s.done; })) {
            std::uint64_t last = 0;
            for (const status& s : all) last = std::max(last, s.done_ps);
            return sc_core::sc_time::from_value(last);
        }
        if (limited && now >= limit) return now;
        std::uint64_t next = none;
        for (const status& s : all) next = std::min(next, s.next_ps);
        if (next == none) return now;  // nothing left to do on any rank
        end = std::max(now, sc_core::sc_time::from_value(next)) + window_;
        if (limited) end = std::min(end, limit);
    }
}

}  // namespace trn3
