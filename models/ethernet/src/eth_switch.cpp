// sc_spawn for the held-frame thread.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "trn3/ethernet/eth_switch.h"

#include <cmath>

#include <fmt/format.h>

#include "trn3/core/stable_hash.h"

namespace trn3::ethernet {
using sc_core::sc_time;

eth_switch::eth_switch(const sc_core::sc_module_name& name, unsigned ports, std::uint64_t first_port_id)
    : component(name, frequency{1e9}),
      capacity(this, "capacity", bandwidth{12.8e12 / 8}, "switching capacity (12.8 Tb/s; 25.6T and 51.2T switches)",
               one_of<bandwidth>{{bandwidth{12.8e12 / 8}, bandwidth{25.6e12 / 8}, bandwidth{51.2e12 / 8}}}),
      port_speed(this, "port_speed", bandwidth{100e9 / 8}, "logical port speed: the radix is capacity / port_speed",
                 one_of<bandwidth>{{bandwidth{100e9 / 8}, bandwidth{200e9 / 8}, bandwidth{400e9 / 8}}}),
      latency(this, "latency", sc_time(800, sc_core::SC_NS),
              "port to port, from a frame's last bit in to its first bit out (a shared-buffer data-centre switch)",
              range<sc_time>{sc_time(1, sc_core::SC_NS), sc_time(1, sc_core::SC_MS)}),
      buffer(this, "buffer", byte_count{1 << 20}, "bytes an egress port holds for its wire; more are dropped",
             range<byte_count>{byte_count{TRN3_SRD_MAX_PAYLOAD + TRN3_SRD_WIRE_OVERHEAD}, byte_count{1ull << 32}}),
      drop_rate(this, "drop_rate", 0.0, "probability that a frame is lost (fault injection)", range<double>{0.0, 1.0}),
      reorder_rate(this, "reorder_rate", 0.0, "probability that a frame is held back reorder_delay (fault injection)",
                   range<double>{0.0, 1.0}),
      reorder_delay(this, "reorder_delay", sc_time(5, sc_core::SC_US), "how long a held-back frame waits",
                    range<sc_time>{sc_time(1, sc_core::SC_NS), sc_time(1, sc_core::SC_MS)}),
      seed(this, "seed", 1, "seed of the fault draws (mixed with the switch's name)", seed_range()),
      fail_at(this, "fail_at", sc_time(0, sc_core::SC_NS), "when the whole switch fails (0: never)"),
      radix_(static_cast<unsigned>(std::llround(capacity.get().bytes_per_s / port_speed.get().bytes_per_s))),
      salt_(stable_hash(this->name())), rng_(stable_hash(this->name(), seed)),
      forwarded_(this, "forwarded", "frames sent on"),
      overflow_(this, "overflow", "frames dropped: egress buffer full"),
      no_route_(this, "no_route", "frames dropped: no route to their destination"),
      malformed_(this, "malformed", "frames dropped: too short to hold an address"),
      fault_drops_(this, "fault_drops", "frames lost by drop_rate"),
      held_count_(this, "held", "frames held back by reorder_rate"),
      down_drops_(this, "down_drops", "frames dropped at a port that is down") {
    if (ports > radix_)
        throw config_error(fmt::format("{}: {} ports wired, but {} at {} gives a radix of {}", this->name(), ports,
                                       capacity.name(), port_speed.value_string(), radix_));
    ports_.resize(ports);
    for (unsigned p = 0; p < ports; ++p) {
        ports_[p].end = std::make_unique<message_port>(fmt::format("{}.port{}", this->name(), p), first_port_id + p);
        ports_[p].end->on_receive([this, p](message& m) { receive(p, m); });
        ports_[p].end->set_lead(latency.get());  // a frame leaves `latency` after it arrived
    }
    sc_core::sc_spawn([this] { release_held(); }, "held");
    if (fail_at.get() > sc_core::SC_ZERO_TIME)
        sc_core::sc_spawn(
            [this] {
                sc_core::wait(fail_at.get());
                log().warn("the switch fails: every port down");
                for (auto& p : ports_) p.down = true;
            },
            "fail");
}

void eth_switch::set_route(std::uint64_t dst, std::vector<unsigned> ports) {
    for (unsigned p : ports)
        if (p >= ports_.size())
            throw config_error(
                fmt::format("{}: a route to node {:#x} names port {} of {}", name(), dst, p, ports_.size()));
    routes_[dst & TRN3_ETH_NODE_MASK] = std::move(ports);
}

double eth_switch::uniform() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

void eth_switch::receive(unsigned in, message& frame) {
    if (ports_[in].down) {
        ++down_drops_;
        return;
    }
    const std::optional<frame_address> a = address_of(frame);
    if (!a) {
        ++malformed_;
        return;
    }
    const auto route = routes_.find(a->dst);
    if (route == routes_.end() || route->second.empty()) {
        ++no_route_;
        return;
    }
    // Among the equal ports that are up (a switch takes a port whose link
    // went down out of its ECMP groups).
    std::vector<unsigned>& equal = up_;
    equal.clear();
    for (unsigned p : route->second)
        if (!ports_[p].down) equal.push_back(p);
    if (equal.empty()) {
        ++down_drops_;
        return;
    }
    const unsigned out = equal[flow_hash(*a, salt_) % equal.size()];
    // Fault draws: one per frame each, in arrival order (the same for a seed).
    if (drop_rate.get() > 0 && uniform() < drop_rate.get()) {
        ++fault_drops_;
        return;
    }
    const sc_time departure = sc_core::sc_time_stamp() + latency.get();
    if (reorder_rate.get() > 0 && uniform() < reorder_rate.get()) {
        ++held_count_;
        // Released reorder_delay from now, to leave `latency` later (the port's lead).
        held_.emplace(sc_core::sc_time_stamp() + reorder_delay.get(), held_frame{out, std::move(frame)});
        held_added_.notify(sc_core::SC_ZERO_TIME);
        return;
    }
    forward(out, std::move(frame), departure);
}

void eth_switch::forward(unsigned out, message&& frame, const sc_time& departure) {
    port_state& p = ports_[out];
    if (p.down || !p.link) {
        ++down_drops_;
        return;
    }
    // What still waits for the wire when this frame is to leave.
    const sc_time wire_free = p.link->wire_free(*p.end);
    const double waiting =
        wire_free > departure ? (wire_free - departure).to_seconds() * p.link->current_rate().bytes_per_s : 0.0;
    if (waiting + static_cast<double>(frame.bytes) > static_cast<double>(buffer.get().bytes)) {
        ++overflow_;
        return;
    }
    ++forwarded_;
    p.end->send(std::move(frame), departure);
}

void eth_switch::release_held() {
    for (;;) {
        if (held_.empty()) {
            wait(held_added_);
            continue;
        }
        const sc_time next = held_.begin()->first, now = sc_core::sc_time_stamp();
        if (next > now) {
            wait(next - now, held_added_);
            continue;
        }
        while (!held_.empty() && held_.begin()->first <= now) {
            held_frame h = std::move(held_.begin()->second);
            held_.erase(held_.begin());
            forward(h.out, std::move(h.frame), now + latency.get());
        }
    }
}

}  // namespace trn3::ethernet
