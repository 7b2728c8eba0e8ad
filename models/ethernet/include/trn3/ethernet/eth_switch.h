// eth_switch: an Ethernet switch of the scale-out network (ToR, leaf or
// spine), loosely timed.
//
//   port(0) .. port(n-1): message ports, each one end of an Ethernet link
//   (the builder makes the link, then hands it to connect())
//
// Radix: capacity / port_speed logical ports (12.8T at 100G: 128); a
// builder uses up to that many.
//
// Forwarding: a frame arriving at time t leaves at t + latency (its last
// bit has arrived: store and forward) on one of the ports set_route() gave
// for its destination node, the one its flow hash picks (frame.h: source,
// destination and entropy, salted per switch). SRD varies the entropy per
// packet, so a connection's packets spread over every equal path; a flow
// with one entropy keeps one path. No route: dropped (no_route).
//
// Egress buffers: a port holds at most `buffer` bytes waiting for its wire.
// What waits when a frame is to leave is (wire free - departure) x the
// link's rate; a frame that does not fit is dropped (overflow): the switch
// never queues without bound, and SRD recovers what it drops.
//
// Faults (params, seeded per switch): each frame is lost with probability
// `drop_rate` (fault_drops), or held back `reorder_delay` with probability
// `reorder_rate` (held: the frames behind it pass it). set_port_down(p):
// the port's link is lost (a cable pulled, a dead neighbour): what arrives
// on it is dropped, and the port leaves every ECMP group (a route whose
// ports are all down drops, counted in down_drops). `fail_at`: the whole
// switch dies then (every port down, silently: its neighbours see only
// loss; SRD's path avoidance moves traffic to the other plane).
//
// params:  capacity, port_speed, latency, buffer, drop_rate, reorder_rate, reorder_delay, seed, fail_at
// stats:   forwarded, overflow, no_route, malformed, fault_drops, held, down_drops
#pragma once

#include <map>
#include <memory>
#include <random>
#include <vector>

#include "trn3/core/component.h"
#include "trn3/core/message_link.h"
#include "trn3/core/stats.h"
#include "trn3/ethernet/frame.h"

namespace trn3::ethernet {

class eth_switch : public component {
public:
    param<bandwidth> capacity;
    param<bandwidth> port_speed;
    param<sc_core::sc_time> latency;
    param<byte_count> buffer;
    param<double> drop_rate;
    param<double> reorder_rate;
    param<sc_core::sc_time> reorder_delay;
    param<std::uint64_t> seed;
    param<sc_core::sc_time> fail_at;

    // ports: how many the builder wires (at most the radix); port p's
    // message-port id is first_port_id + p (ids come from the topology).
    eth_switch(const sc_core::sc_module_name& name, unsigned ports, std::uint64_t first_port_id);

    unsigned radix() const { return radix_; }
    unsigned port_count() const { return static_cast<unsigned>(ports_.size()); }
    message_port& port(unsigned p) { return *ports_[p].end; }
    // Wiring: the link whose one end is port(p).
    void connect(unsigned p, message_link& link) { ports_[p].link = &link; }
    // The equal-cost ports towards node `dst` (48-bit address).
    void set_route(std::uint64_t dst, std::vector<unsigned> ports);
    void set_port_down(unsigned p, bool down) { ports_[p].down = down; }

private:
    struct port_state {
        std::unique_ptr<message_port> end;
        message_link* link = nullptr;
        bool down = false;
    };
    void receive(unsigned in, message& frame);
    void forward(unsigned out, message&& frame, const sc_core::sc_time& departure);
    double uniform();  // [0, 1), the same on every host for a seed
    void release_held();  // thread: sends held frames when their time comes

    unsigned radix_;
    std::uint64_t salt_;
    std::vector<port_state> ports_;
    std::map<std::uint64_t, std::vector<unsigned>> routes_;
    std::vector<unsigned> up_;  // scratch: a route's ports that are up
    std::mt19937_64 rng_;
    struct held_frame {
        unsigned out;
        message frame;
    };
    std::multimap<sc_core::sc_time, held_frame> held_;
    sc_core::sc_event held_added_;
    counter forwarded_, overflow_, no_route_, malformed_, fault_drops_, held_count_, down_drops_;
};

}  // namespace trn3::ethernet
