// A PCIe / NeuronLink / UALink link: lanes x rate, flits, retimers, link
// training (LTSSM), lane faults and sparing, replay across a retrain.
//
//   end a ══ [retimer 0] ══ ... ══ [retimer n-1] ══ end b
//
// The devices at its two ends hold a `link_end` each: send() a TLP, receive
// TLPs through the handler they install. Underneath is one message_link (the
// only place a platform may be cut), so a TLP costs one delivery per link
// (split: one more for each NAK).
//
// Timing of a TLP (or a train of them) sent at t from one end:
//   start     = max(t, wire free)
//   flits     the TLP's bytes fill the open flit's free TLP space, then new
//             flits (flit mode); an idle wire pads and closes the open flit,
//             so a lone TLP costs a whole flit
//   wire      new flits x flit_bytes / (width x lane rate)   (gen5: bytes incl. framing)
//   arrival   start + wire + phy_latency + fec_latency (flit mode) + retimer latencies
// A receiver holds the whole flit before checking it, so arrival is the end
// of the TLP's last flit: the flit accumulation delay is in the wire term.
//
// Training (LTSSM), as a state machine in simulated time:
//   Detect (detect_time; fails if no lane or a retimer is dead)
//   Polling (polling_time)
//   Configuration (config_time; the width is chosen: phy.h choose_width, with
//     the spare lanes only when CONTROL.SPARING is set)
//   Recovery.Equalization phases 0..3 (eq_phase0..3; phases 2 and 3 once per
//     segment: retimers + 1), straight to the target rate (the equalisation
//     bypass to highest rate that PCIe 5.0 introduced)
//   L0
// A retrain (CONTROL.RETRAIN, or lanes failing in L0) goes L0 -> Recovery
// (recovery_time) -> Configuration (new width) -> L0, without equalising.
// While the link is not in L0, TLPs sent on it wait in its replay buffer;
// TLPs on the wire when a retrain starts are replayed after it, in their
// order and before anything sent later (a direction stays held until its
// last TLP from before the retrain has come back). Nothing is lost; every
// replay is counted. An aggregate whose first TLP arrived before the retrain
// completes as if uncut (send TLP by TLP to see each one replayed).
// Lanes that fail while the link trains make it retrain on reaching L0.
//
// Split (a platform cut on this link: docs/distributed.md). The two ends
// keep their own state and meet only through messages on the wire, so
// either may run in another process, and a split link behaves the same
// wherever its ends run. End a owns the LTSSM and the registers; end b
// learns the state one latency later from control messages (message_link.h:
// no wire time), as a far end learns it from training ordered sets:
//   TRAINED(width)       a -> b on reaching L0: b may send, at that width
//   DOWN(cut, settled)   a -> b on a retrain: b stops sending; a's TLPs with a
//                        seq below `cut` that reach b from now are sent back
//   DOWN_ACK(cut, settled) b -> a: the same for b's TLPs; a stays in Recovery
//                        until it arrives (the handshake of TS1/TS2)
//   NAK(seq, TLP)        receiver -> sender: a TLP that reached a retraining
//                        end, or left before the retrain: it goes back into
//                        the sender's replay buffer in its original order
//   HOLD(until)          receiver -> sender: flow control, a latency late
// `settled` (TLPs received, accepted or sent back) lets each sender count
// exactly the NAKs still to come; it holds new TLPs until they are in.
// What differs from the one-object link: b comes up a latency after a; a
// TLP that left before a retrain but reaches b before it hears of it is
// accepted; credits take a latency. The replay count (register and stat)
// is end a's: the NAKs it sent and received.
//
// Traffic classes (the TLP's TC, 0-7): with arbitration = strict, each
// end's transmitter serves the higher class first (message_link.h: a TLP
// passes the lower classes' queued traffic, which finishes later by its
// wire time); fifo (the default) sends in order, whatever the class. The
// link's flow control (rx_buffer) holds every class alike.
//
// params:  generation, lanes, spare_lanes, retimers, failed_lanes, fault_time,
//          phy_latency, fec_latency, auto_train, detect_time, polling_time,
//          config_time, eq_phase0..3, recovery_time, flit_bytes, flit_payload_bytes, rx_buffer,
//          arbitration
// sockets: in (target, may stay unbound): training and status registers, spec/link.h
// irq:     irq, raised while (EVENTS & EVENT_MASK) != 0
// stats:   tlps_ab, tlps_ba, payload_bytes_ab, payload_bytes_ba, flits_ab, flits_ba,
//          replayed, trainings, backpressure, passed
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <vector>

#include "trn3/core/irq.h"
#include "trn3/core/message_link.h"
#include "trn3/core/reg_block.h"
#include "trn3/core/timeline.h"
#include "trn3/pcie/phy.h"
#include "trn3/pcie/retimer.h"
#include "trn3/pcie/tlp.h"
#include "trn3/spec/link.h"

namespace trn3::pcie {

class link;

// One end of a link, as the device attached there sees it.
class link_end {
public:
    using handler = std::function<void(tlp&)>;  // called at the TLP's arrival time (sc_time_stamp())

    void on_receive(handler h) { handler_ = std::move(h); }
    // Sends at `when` (>= now). Returns the time the last byte of the TLP
    // (or train) arrives at the other end, or when it was queued while the
    // link trains, the time it was queued.
    sc_core::sc_time send(tlp&& t, const sc_core::sc_time& when);
    // Forwards a TLP that arrived now on another link (a switch or bridge,
    // `latency` from ingress to egress): an aggregate starts when its first
    // TLP is ready and its tail never leaves before it arrived. With the
    // end it arrived on (`ingress`) and that link's rx_buffer, flow control:
    // a TLP waits in the ingress buffer until its egress starts; when that
    // wait is longer than the buffer holds at the ingress link's rate, the
    // buffer is full, and the ingress link's sender is held until there is
    // room (its wire stays busy: back-pressure, hop by hop to the source).
    sc_core::sc_time forward(tlp&& t, const sc_core::sc_time& latency, link_end* ingress = nullptr);
    // Time to serialise n TLPs like t back to back at the current width.
    sc_core::sc_time train_time(const tlp& t, std::uint64_t n) const;
    // When the wire leaving this end is next free (for a TLP of
    // `traffic_class`: under strict arbitration, of that class and above).
    sc_core::sc_time wire_free(unsigned traffic_class = 0) const;

    link& owner() const { return *link_; }
    // Holds the sender at the other end of this end's link until `until`.
    void hold_sender(const sc_core::sc_time& until);
    // The link as this end sees it (split: end b's view lags a's).
    bool up() const;
    unsigned width() const;

private:
    friend class link;
    link* link_ = nullptr;
    int dir_ = 0;  // 0: a -> b
    handler handler_;
};

// The defaults of a link's params, as a builder says them:
//   link_config{generation::gen6, 64}.with_retimers(1).with_spares(16).trained_by_firmware()
// is a Gen6 x64 link with one retimer and 16 spare lanes that waits for
// firmware to enable it (CONTROL.ENABLE) instead of training at power-on.
struct link_config {
    generation gen = generation::gen6;
    unsigned lanes = 16;
    unsigned spare_lanes = 0;
    unsigned retimers = 0;
    bool auto_train = true;
    std::uint64_t rx_buffer = 0;  // bytes per receiving end; 0: no flow control
    bool strict_priority = false;  // arbitration among traffic classes: strict (else fifo)

    link_config& with_retimers(unsigned n) {
        retimers = n;
        return *this;
    }
    link_config& with_spares(unsigned n) {
        spare_lanes = n;
        return *this;
    }
    link_config& trained_by_firmware() {
        auto_train = false;
        return *this;
    }
    link_config& with_rx_buffer(std::uint64_t bytes) {
        rx_buffer = bytes;
        return *this;
    }
    link_config& with_strict_priority(bool on = true) {
        strict_priority = on;
        return *this;
    }
};

class link : public reg_block {
public:
    param<std::string> generation_name;
    param<std::uint64_t> lanes;
    param<std::uint64_t> spare_lanes;
    param<std::uint64_t> retimer_count;
    param<std::string> failed_lanes;
    param<sc_core::sc_time> fault_time;
    param<sc_core::sc_time> phy_latency;
    param<sc_core::sc_time> fec_latency;
    param<bool> auto_train;
    param<sc_core::sc_time> detect_time, polling_time, config_time, recovery_time;
    param<sc_core::sc_time> eq_phase0, eq_phase1, eq_phase2, eq_phase3;
    param<std::uint64_t> flit_bytes, flit_payload_bytes;
    param<byte_count> rx_buffer;
    param<std::string> arbitration;

    irq_line irq;

    // Port ids of the two ends come from the platform's topology (the
    // message_link delivery order, architecture decision 3).
    link(const sc_core::sc_module_name& name, delivery_queue& queue, std::uint64_t port_id_a, std::uint64_t port_id_b,
         const link_config& defaults);
    ~link() override;

    link_end& a() { return end_[0]; }
    link_end& b() { return end_[1]; }

    // Makes this a split link (above). Before the simulation starts.
    void split();
    bool is_split() const { return split_; }
    bool owner_remote() const { return owner_remote_; }  // end a (its LTSSM, registers, replay count) is elsewhere
    // A proxy: end e (0: a, 1: b) runs in another process of a distributed
    // run; what the wire delivers there goes to `forward` (window_sync.h).
    // Split links only. With end a remote, this process runs no LTSSM.
    void make_remote(int e, std::function<void(message&&)> forward);
    // The wire's port at end e: where a process delivers what another sent.
    message_port& port(int e) { return e == 0 ? port_a_ : port_b_; }

    // State, for models and reports: end a's (the owner's). Where end a is
    // remote (owner_remote()), this process runs no LTSSM: DISABLED, width 0;
    // its end b's view is link_end::up() and width().
    unsigned state() const { return state_; }  // TRN3_LTSSM_*
    bool up() const;
    unsigned width() const { return width_; }
    bool training_failed() const { return failed_training_; }
    unsigned spares_used() const { return spares_used_; }
    const std::set<unsigned>& failed() const { return failed_; }
    const phy_spec& phy() const { return phy_; }  // the generation's, with this link's flit params
    bool sparing() const;  // CONTROL.SPARING
    // Per direction, after training: TLP bytes per second the width carries
    // (flit payload share of the raw rate; gen5: line rate).
    double raw_bytes_per_second() const;
    sc_core::sc_time latency() const;  // phy + fec + retimers: what the wire adds after the last flit
    sc_core::sc_time wire_latency() const { return wire_->latency.get(); }  // the same, unless its param says else
    sc_core::sc_time trained_at() const { return trained_at_; }
    std::uint64_t payload_bytes() const { return payload_bytes_[0].value() + payload_bytes_[1].value(); }  // both ways
    std::uint64_t replayed() const { return replayed_.value(); }
    std::uint64_t held_by_receiver() const { return backpressure_.value(); }  // flow control: times the sender was held
    std::uint64_t passed() const { return passed_.value(); }  // strict arbitration: TLPs sent ahead of lower classes
    // TLPs on the wire or waiting in the replay buffer, both ways (a fabric
    // manager drains a link to 0 before it powers it off). A split link
    // counts only what waits in its replay buffers (a cut system refuses a
    // hot-swap).
    std::uint64_t unsettled() const { return in_flight_[0] + in_flight_[1] + held_[0].size() + held_[1].size(); }
    retimer& retimer_at(unsigned i) { return *retimers_[i]; }
    // Fails lanes now (a fault injected by a test or a platform); a link in
    // L0 retrains.
    void fail_lanes(const std::set<unsigned>& lanes);
    // Starts training (what CONTROL.ENABLE does).
    void start_training();

private:
    friend class link_end;
    sc_core::sc_time transmit(int dir, tlp&& t, const sc_core::sc_time& when);
    void receive(int dir, message& m);
    void step();  // the LTSSM: one state's time has passed
    void enter(unsigned state, unsigned eq_phase, const sc_core::sc_time& stay);
    void reach_l0();
    void retrain();
    void apply_fault();
    void raise(std::uint32_t events);
    void update_status();
    void flush_held(int dir);
    bool up_at(int end) const;
    unsigned width_at(int end) const;
    double raw_bytes_per_second_at(int end) const;
    // The split protocol (link_split.cpp).
    enum control_kind : std::uint32_t { trained = 1, down, down_ack, nak, hold };
    void send_control(int from_end, control_kind kind, std::vector<std::uint64_t> words,
                      std::vector<std::uint8_t> tlp_bytes = {});
    void receive_control(int at_end, message& m);
    void send_back(int dir, message& m);  // a NAK
    void split_retrain();

    generation gen_;
    phy_spec phy_;
    std::vector<std::unique_ptr<retimer>> retimers_;
    message_port port_a_, port_b_;
    std::unique_ptr<message_link> wire_;
    link_end end_[2];

    struct held {
        std::uint64_t order;  // replays keep their original order, before anything sent later
        tlp t;
    };
    std::vector<held> held_[2];
    std::uint64_t next_order_ = std::uint64_t(1) << 62;
    std::uint64_t in_flight_[2] = {0, 0};  // on the wire, per direction
    std::uint64_t awaiting_replay_[2] = {0, 0};  // of those, sent before the last retrain
    std::uint64_t wire_sends_[2] = {0, 0};  // TLP messages sent (= the next seq on the port, unless split)
    std::uint64_t replay_below_[2] = {0, 0};  // at the receiver: messages with a seq below this are replayed
    // Split.
    bool split_ = false;
    bool owner_remote_ = false;  // end a runs in another process
    bool far_up_ = false;  // end b's view
    unsigned far_width_ = 0;
    std::uint64_t settled_[2] = {0, 0};  // at the receiver: TLP messages accepted or sent back, per direction
    bool ack_pending_ = false;  // a: DOWN sent, DOWN_ACK not yet in
    bool recovery_waits_ = false;  // a: Recovery's time is up, waiting for DOWN_ACK
    std::size_t failures_at_config_ = 0;
    unsigned fill_[2] = {0, 0};  // TLP bytes used in the open flit, per direction

    unsigned state_ = 0;
    unsigned eq_phase_ = 0;
    unsigned eq_segment_ = 0;
    unsigned width_ = 0;
    unsigned spares_used_ = 0;
    bool retraining_ = false;
    bool failed_training_ = false;
    std::set<unsigned> failed_;
    std::set<unsigned> pending_faults_;
    sc_core::sc_time trained_at_;
    sc_core::sc_time training_started_;  // for the timeline's training slice
    timeline::track track_;
    sc_core::sc_event step_event_, fault_event_;

    counter tlps_[2], payload_bytes_[2], flits_[2], replayed_, trainings_, backpressure_, passed_;

    reg control_{regs, "control", TRN3_LINK_CONTROL, 4, 0, access::rw, "bit 0 enable (train), bit 1 retrain (write 1)"};
    reg status_{regs,
                "status",
                TRN3_LINK_STATUS,
                4,
                0,
                access::ro,
                "LTSSM state, eq phase, speed, width, up/flit/degraded/failed"};
    reg lanes_{regs, "lanes", TRN3_LINK_LANES, 4, 0, access::ro, "configured, spare, spares used, failed lane counts"};
    reg failed0_{regs, "failed0", TRN3_LINK_FAILED0, 4, 0, access::ro, "failed lanes 0-31"};
    reg failed1_{regs, "failed1", TRN3_LINK_FAILED1, 4, 0, access::ro, "failed lanes 32-63"};
    reg failed2_{regs, "failed2", TRN3_LINK_FAILED2, 4, 0, access::ro, "failed lanes 64-95"};
    reg events_{regs, "events", TRN3_LINK_EVENTS, 4, 0, access::w1c, "up, down, degraded, failed (write 1 to clear)"};
    reg event_mask_{regs, "event_mask", TRN3_LINK_EVENT_MASK, 4, 0, access::rw, "events that raise the interrupt"};
    reg trainings_reg_{regs, "trainings", TRN3_LINK_TRAININGS, 4, 0, access::ro, "trainings and retrains completed"};
    reg replayed_reg_{regs, "replayed", TRN3_LINK_REPLAYED, 4, 0, access::ro, "TLPs replayed after a retrain"};
};

}  // namespace trn3::pcie
