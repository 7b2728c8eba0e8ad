// Message links: the device-to-device connection (architecture decision 3).
//
// A cable or serial link between two devices (PCIe/NeuronLink lanes,
// Ethernet) carries messages, not TLM transactions. A link has a latency and
// a bandwidth per direction: a message reserves the wire for
// bytes / bandwidth, starting when the wire is free, and is delivered at
//     start + bytes / bandwidth + latency,  start = max(send time, wire free).
// A message that stands for a train of smaller ones (an aggregate) sets
// `train_span`, the time between the train's first and last arrival: it is
// delivered when its first unit arrives, train_span before the time above,
// and the receiver accounts for the rest.
// Traffic classes: a direction set to strict priority serves its messages'
// classes (0-7, higher first) instead of in order. "Wire free" is then kept
// per class: class c starts at max(send time, end of the traffic of classes
// >= c) and pushes the free time of every lower class back by its own wire
// time, so it passes lower-class traffic at once (as if at the next
// packet boundary) and that traffic finishes later by as much. Messages
// already given a delivery time keep it (the loosely-timed part: a lower
// class's message on the wire is delivered as if it had not been passed;
// the class's next message pays). Within a class, order is kept.
// Deliveries go through a delivery_queue, which hands simultaneous messages to
// their receivers at the end of their instant (end_of_instant.h: after
// everything else due then, so a receiver sees every change its instant
// makes, whichever process the kernel ran first) in a fixed key order
//     (delivery time, destination port id, source port id, per-source sequence)
// so that results never depend on construction order, on SystemC's process
// scheduling, or (later) on how a platform is split over MPI ranks. Port ids
// are given by the platform builder from the topology, never by construction
// order. A link's latency must be above zero: it is what lets the platform be
// cut along links.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <queue>
#include <string>
#include <vector>

#include <systemc>

#include "trn3/core/component.h"
#include "trn3/core/end_of_instant.h"
#include "trn3/core/stats.h"

namespace trn3 {

struct message {
    std::uint64_t src_port = 0;
    std::uint64_t dst_port = 0;
    std::uint64_t seq = 0;  // per source port, from 0
    sc_core::sc_time sent;
    sc_core::sc_time delivered;
    std::uint64_t bytes = 0;  // size on the wire: what the timing charges
    sc_core::sc_time train_span;  // aggregates: first to last unit arrival (delivered at the first)
    std::uint32_t kind = 0;  // protocol-defined (TLP type, packet type, ...)
    std::uint8_t traffic_class = 0;  // 0-7; counts only on a strict-priority direction
    // A link-layer control message (training ordered sets, a NAK, a credit
    // update): it takes no wire time and does not wait for the data on the
    // wire; it arrives `latency` after it is sent and is not counted as
    // traffic. What it means is the link protocol's (kind, data).
    bool control = false;
    std::vector<std::uint8_t> data;  // payload; empty in timing-only mode
};

class message_link;
class delivery_queue;

// One end of a link. The owner installs a receive handler.
class message_port {
public:
    using handler = std::function<void(message&)>;

    message_port(std::string name, std::uint64_t id) : name_(std::move(name)), id_(id) {}
    message_port(const message_port&) = delete;
    message_port& operator=(const message_port&) = delete;

    void on_receive(handler h) { handler_ = std::move(h); }
    // Sends over the attached link; send_time is the sender's local time
    // (sc_time_stamp() plus its quantum offset), never in the past. Returns the
    // delivery time.
    sc_core::sc_time send(message m, const sc_core::sc_time& send_time);

    std::uint64_t id() const { return id_; }
    const std::string& name() const { return name_; }
    std::uint64_t next_seq() const { return next_seq_; }  // the seq the next message sent here takes
    bool connected() const { return link_ != nullptr; }

    // The owner's promise: every send's send_time is at least `lead` past
    // the simulated time of the call (a NIC's transmit pipeline, a switch's
    // forwarding latency). Checked on every send; added to a cut link's
    // latency, it is the lookahead of a distributed run (window_sync.h).
    void set_lead(const sc_core::sc_time& lead) { lead_ = lead; }
    const sc_core::sc_time& lead() const { return lead_; }

    // A proxy: this end's owner lives in another process of a distributed
    // run. What is sent to it goes to `forward` with its delivery time set,
    // for the window protocol to carry (window_sync.h).
    void make_remote(std::function<void(message&&)> forward) { remote_ = std::move(forward); }
    bool remote() const { return static_cast<bool>(remote_); }

private:
    friend class message_link;
    friend class delivery_queue;
    std::string name_;
    std::uint64_t id_;
    std::uint64_t next_seq_ = 0;
    message_link* link_ = nullptr;
    handler handler_;
    sc_core::sc_time lead_;
    std::function<void(message&&)> remote_;
};

// Orders and delivers the messages of every link attached to it.
class delivery_queue : public sc_core::sc_module {
public:
    explicit delivery_queue(const sc_core::sc_module_name& name);
    // Delivers m to dst at m.delivered (a proxy: hands it to its forward).
    // From a process, or between sc_start calls (a distributed run's
    // boundary), never for a time already past.
    void schedule(message&& m, message_port* dst);
    std::uint64_t delivered() const { return delivered_; }

private:
    // The heap holds small keys; the messages wait in slots (moving a
    // message through a heap of thousands costs more than the delivery).
    struct key {
        std::uint64_t delivered;  // sc_time value
        std::uint64_t dst, src, seq;
        std::uint32_t slot;
    };
    struct later {
        bool operator()(const key& a, const key& b) const;
    };
    struct parked {
        message msg;
        message_port* dst = nullptr;
    };
    void run();

    std::priority_queue<key, std::vector<key>, later> queue_;
    std::vector<parked> slots_;
    std::vector<std::uint32_t> free_slots_;
    sc_core::sc_event wake_;
    sc_core::sc_event go_;  // the end of the instant its messages are due at
    end_of_instant::requester end_;
    std::uint64_t delivered_ = 0;
};

// A full-duplex link between ports a and b.
//
// params: latency, bandwidth (per direction)
// stats:  messages_ab, messages_ba, bytes_ab, bytes_ba
class message_link : public component {
public:
    param<sc_core::sc_time> latency;
    param<bandwidth> rate;

    message_link(const sc_core::sc_module_name& name, delivery_queue& queue, message_port& a, message_port& b,
                 sc_core::sc_time default_latency, bandwidth default_rate);

    static constexpr unsigned traffic_classes = 8;

    // Time the wire from `from` is next free for a message of
    // `traffic_class` (every class: the whole wire's).
    sc_core::sc_time wire_free(const message_port& from, unsigned traffic_class = 0) const;
    // Strict priority among traffic classes on the wire from `from` (else
    // one queue in send order, classes ignored).
    void set_strict_priority(const message_port& from, bool strict) { strict_[&from == &a_ ? 0 : 1] = strict; }
    bool strict_priority(const message_port& from) const { return strict_[&from == &a_ ? 0 : 1]; }
    // The rate from now on (a link that retrains to another width); the
    // param is the rate at power-on. Both directions, or the one from `from`.
    void set_rate(bandwidth r) { rate_now_[0] = rate_now_[1] = r; }
    void set_rate(const message_port& from, bandwidth r) { rate_now_[&from == &a_ ? 0 : 1] = r; }
    // The wire from `from` stops now (a link going into recovery): time it
    // had reserved beyond now is free again. Messages already on it are still
    // delivered; the link above decides what they mean.
    void abort(const message_port& from);
    // The wire from `from` stays busy until `until` (back-pressure: the far
    // end has no buffer for more); what is already on it is not affected.
    void hold(const message_port& from, const sc_core::sc_time& until);
    // The rate from a (the same both ways, unless set per direction).
    bandwidth current_rate() const { return rate_now_[0]; }

private:
    friend class message_port;
    sc_core::sc_time transmit(message_port& from, message&& m, const sc_core::sc_time& send_time);

    delivery_queue& queue_;
    message_port& a_;
    message_port& b_;
    // Per direction, per class c: when the wire is free of the traffic of
    // classes >= c (FIFO directions use class 0 only).
    std::array<sc_core::sc_time, traffic_classes> free_[2];
    bool strict_[2] = {false, false};
    bandwidth rate_now_[2];
    counter messages_ab_, messages_ba_, bytes_ab_, bytes_ba_;
};

}  // namespace trn3
