#include "trn3/pcie/link.h"

#include <algorithm>

#include <fmt/format.h>

#include "trn3/core/error.h"
#include "trn3/core/log.h"

namespace trn3::pcie {

using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_US;

// ---- link_end ---------------------------------------------------------------

sc_time link_end::send(tlp&& t, const sc_time& when) { return link_->transmit(dir_, std::move(t), when); }

void link_end::hold_sender(const sc_time& until) {
    ++link_->backpressure_;
    // Split: the sender hears of it a latency later.
    if (link_->split_) return link_->send_control(dir_, link::hold, {until.value()});
    // Messages into this end come from the other end's port.
    link_->wire_->hold(dir_ == 0 ? link_->port_b_ : link_->port_a_, until);
}

sc_time link_end::forward(tlp&& t, const sc_time& latency, link_end* ingress) {
    const sc_time now = sc_core::sc_time_stamp();
    sc_time start = now + latency;  // the head (the whole TLP, if single) is ready
    if (t.count > 1) {
        // The tail arrives train_span after the head and may not leave
        // before it is in: start no earlier than tail_ready - (the egress time
        // of everything before the tail).
        const sc_time tail_ready = now + t.train_span + latency;
        const sc_time before_tail = train_time(t, t.count - 1);
        if (tail_ready > before_tail && tail_ready - before_tail > start) start = tail_ready - before_tail;
    }
    if (ingress && ingress->link_->rx_buffer.get().bytes > 0 && up()) {
        const sc_time egress = std::max(start, wire_free(t.traffic_class));
        const double rate = ingress->link_->raw_bytes_per_second_at(ingress->dir_);
        const sc_time holds =
            rate > 0 ? sc_time(double(ingress->link_->rx_buffer.get().bytes) / rate, sc_core::SC_SEC) : sc_time();
        if (egress > now + holds) ingress->hold_sender(egress - holds);
    }
    return send(std::move(t), start);
}

sc_time link_end::train_time(const tlp& t, std::uint64_t n) const {
    const phy_spec& p = link_->phy();
    const double rate = link_->raw_bytes_per_second_at(dir_);
    if (rate <= 0) return sc_core::SC_ZERO_TIME;
    const double bytes = p.flit_mode ? double(n) * tlp_wire_bytes(t) * p.flit_bytes / p.flit_payload_bytes
                                     : double(n) * (tlp_wire_bytes(t) + p.tlp_framing_bytes);
    return sc_time(bytes / rate, sc_core::SC_SEC);
}

sc_time link_end::wire_free(unsigned traffic_class) const {
    return link_->wire_->wire_free(dir_ == 0 ? link_->port_a_ : link_->port_b_, traffic_class);
}
bool link_end::up() const { return link_->up_at(dir_); }
unsigned link_end::width() const { return link_->width_at(dir_); }

// ---- link -------------------------------------------------------------------

link::link(const sc_core::sc_module_name& name, delivery_queue& queue, std::uint64_t port_id_a, std::uint64_t port_id_b,
           const link_config& d)
    : reg_block(name, frequency{1e9}),
      generation_name(this, "generation", generation_text(d.gen),
                      "gen5 (32 GT/s), gen6 (64 GT/s PAM4, flit mode) or ualink (200 Gb/s lanes)",
                      generation_choices()),
      lanes(this, "lanes", d.lanes, "active width: the lanes the link runs on when all are healthy",
            range<std::uint64_t>{1, 96}),
      spare_lanes(this, "spare_lanes", d.spare_lanes,
                  "extra lanes that stand in for failed active ones (NeuronLink backplane: 16)",
                  range<std::uint64_t>{0, 95}),
      retimer_count(this, "retimers", d.retimers, "retimers on the link", range<std::uint64_t>{0, 8}),
      failed_lanes(this, "failed_lanes", "",
                   "lanes that fail (e.g. 3,17,40-55), numbered 0 .. lanes + spare_lanes - 1"),
      fault_time(this, "fault_time", sc_core::SC_ZERO_TIME,
                 "when failed_lanes fail; 0 = from power-on (the link trains around them)"),
      phy_latency(this, "phy_latency", sc_time(5, SC_NS), "transmitter + channel + receiver, without retimers"),
      fec_latency(this, "fec_latency", sc_time(2, SC_NS), "FEC decode and CRC check of a received flit (flit mode)"),
      auto_train(this, "auto_train", d.auto_train, "train at power-on (else firmware writes CONTROL.ENABLE)"),
      detect_time(this, "detect_time", sc_time(1, SC_US), "LTSSM Detect: receiver detection"),
      polling_time(this, "polling_time", sc_time(4, SC_US), "LTSSM Polling: bit lock, symbol lock"),
      config_time(this, "config_time", sc_time(2, SC_US), "LTSSM Configuration: link and lane numbers, width"),
      recovery_time(this, "recovery_time", sc_time(2, SC_US), "LTSSM Recovery of a retrain (no equalisation)"),
      eq_phase0(this, "eq_phase0", sc_time(1, SC_US), "equalisation phase 0: presets exchanged"),
      eq_phase1(this, "eq_phase1", sc_time(1, SC_US), "equalisation phase 1: BER < 1e-4 at presets"),
      eq_phase2(this, "eq_phase2", sc_time(10, SC_US),
                "equalisation phase 2: far end tunes our transmitter, per segment"),
      eq_phase3(this, "eq_phase3", sc_time(10, SC_US), "equalisation phase 3: we tune the far end, per segment"),
      flit_bytes(this, "flit_bytes", 0, "flit size on the wire, flit mode (0: the generation's: Gen6 256, UALink 640)"),
      flit_payload_bytes(this, "flit_payload_bytes", 0,
                         "TLP bytes a flit carries (0: the generation's: Gen6 236, UALink 616)"),
      rx_buffer(this, "rx_buffer", byte_count{d.rx_buffer},
                "receive buffer of each end, for TLPs a switch or chip forwards (flow control: a full buffer "
                "holds the sender); 0: unbounded, no flow control",
                range<byte_count>{byte_count{0}, byte_count{1ull << 30}}),
      arbitration(this, "arbitration", d.strict_priority ? "strict" : "fifo",
                  "how each end's transmitter picks among traffic classes (the TLP's TC): fifo (in order, "
                  "classes ignored) or strict (the highest class first; it passes lower classes' queued traffic)",
                  one_of<std::string>{{"fifo", "strict"}}),
      gen_(parse_generation(generation_name.get(), std::string(this->name()) + ".generation")),
      port_a_(std::string(this->name()) + ".a", port_id_a),
      port_b_(std::string(this->name()) + ".b", port_id_b), tlps_{{this, "tlps_ab",
                                                                   "TLPs sent a -> b (an aggregate counts its TLPs)"},
                                                                  {this, "tlps_ba", "TLPs sent b -> a"}},
      payload_bytes_{{this, "payload_bytes_ab", "TLP payload bytes a -> b"},
                     {this, "payload_bytes_ba", "TLP payload bytes b -> a"}},
      flits_{{this, "flits_ab", "flits (flit mode) a -> b"}, {this, "flits_ba", "flits (flit mode) b -> a"}},
      replayed_(this, "replayed", "TLPs replayed after a retrain"),
      trainings_(this, "trainings", "trainings and retrains completed"),
      backpressure_(this, "backpressure", "times a full receive buffer held this link's sender (flow control)"),
      passed_(this, "passed", "TLPs (aggregates) sent ahead of lower-class traffic queued before them (strict)") {
    const unsigned physical = lanes.get() + spare_lanes.get();
    if (physical > 96)
        throw config_error(fmt::format("{}: lanes + spare_lanes = {} is above the 96 the status registers hold",
                                       this->name(), physical));
    for (unsigned i = 0; i < retimer_count.get(); ++i)
        retimers_.push_back(std::make_unique<retimer>(fmt::format("retimer{}", i).c_str()));
    const std::set<unsigned> faults =
        parse_lanes(failed_lanes.get(), physical, std::string(this->name()) + ".failed_lanes");
    if (fault_time.get() == sc_core::SC_ZERO_TIME) failed_ = faults;
    else pending_faults_ = faults;

    phy_ = spec_of(gen_);
    if (flit_bytes.get()) phy_.flit_bytes = static_cast<unsigned>(flit_bytes.get());
    if (flit_payload_bytes.get()) phy_.flit_payload_bytes = static_cast<unsigned>(flit_payload_bytes.get());
    if (phy_.flit_mode && (phy_.flit_payload_bytes == 0 || phy_.flit_payload_bytes > phy_.flit_bytes))
        throw config_error(fmt::format("{}: a flit of {} bytes cannot carry {} bytes of TLPs", this->name(),
                                       phy_.flit_bytes, phy_.flit_payload_bytes));
    const phy_spec& p = phy();
    wire_ = std::make_unique<message_link>("wire", queue, port_a_, port_b_, latency(),
                                           bandwidth{p.lane_bytes_per_second * lanes.get()});
    wire_->set_strict_priority(port_a_, arbitration.get() == "strict");
    wire_->set_strict_priority(port_b_, arbitration.get() == "strict");
    port_a_.on_receive([this](message& m) { receive(1, m); });
    port_b_.on_receive([this](message& m) { receive(0, m); });
    for (int i = 0; i < 2; ++i) {
        end_[i].link_ = this;
        end_[i].dir_ = i;
    }

    control_.on_write([this](reg& r, std::uint64_t) {
        const std::uint64_t v = r.value();
        if ((v & TRN3_LINK_CONTROL_ENABLE) && state_ == TRN3_LTSSM_DISABLED) start_training();
        if (v & TRN3_LINK_CONTROL_RETRAIN) {
            r.set(v & ~std::uint64_t(TRN3_LINK_CONTROL_RETRAIN));
            retrain();
        }
    });
    events_.on_write([this](reg&, std::uint64_t) { raise(0); });
    event_mask_.on_write([this](reg&, std::uint64_t) { raise(0); });

    track_ = timeline::instance().track_of(*this);
    SC_HAS_PROCESS(link);
    SC_METHOD(step);
    sensitive << step_event_;
    dont_initialize();
    SC_METHOD(apply_fault);
    sensitive << fault_event_;
    dont_initialize();
    if (!pending_faults_.empty()) fault_event_.notify(fault_time.get());
    if (auto_train.get()) {
        control_.set(TRN3_LINK_CONTROL_ENABLE | TRN3_LINK_CONTROL_SPARING);
        state_ = TRN3_LTSSM_DETECT;
        step_event_.notify(detect_time.get());
    }
    update_status();
}

link::~link() = default;

bool link::up() const { return state_ == TRN3_LTSSM_L0; }
bool link::up_at(int end) const { return split_ && end == 1 ? far_up_ : up(); }
unsigned link::width_at(int end) const { return split_ && end == 1 ? far_width_ : width_; }
double link::raw_bytes_per_second_at(int end) const { return phy().lane_bytes_per_second * width_at(end); }

bool link::sparing() const { return (control_.value() & TRN3_LINK_CONTROL_SPARING) != 0; }

double link::raw_bytes_per_second() const { return phy().lane_bytes_per_second * width_; }

sc_time link::latency() const {
    sc_time l = phy_latency.get();
    if (phy().flit_mode) l += fec_latency.get();
    for (const auto& r : retimers_) l += r->latency.get();
    return l;
}

void link::start_training() {
    if (state_ != TRN3_LTSSM_DISABLED) return;
    training_started_ = sc_core::sc_time_stamp();
    control_.set(control_.value() | TRN3_LINK_CONTROL_ENABLE);
    enter(TRN3_LTSSM_DETECT, 0, detect_time.get());
}

void link::enter(unsigned state, unsigned eq_phase, const sc_time& stay) {
    state_ = state;
    eq_phase_ = eq_phase;
    update_status();
    step_event_.notify(stay);
}

void link::step() {
    switch (state_) {
    case TRN3_LTSSM_DETECT: {
        bool retimers_ok = true;
        for (const auto& r : retimers_) retimers_ok = retimers_ok && r->healthy.get();
        const width_choice w = choose_width(lanes.get(), sparing() ? spare_lanes.get() : 0, failed_);
        if (!retimers_ok || w.width == 0) {
            // The receivers are never detected: the link stays down.
            failed_training_ = true;
            update_status();
            raise(TRN3_LINK_EVENT_FAILED);
            log().warn("link training failed in Detect ({})", retimers_ok ? "no healthy lanes" : "a retimer is dead");
            return;
        }
        enter(TRN3_LTSSM_POLLING, 0, polling_time.get());
        return;
    }
    case TRN3_LTSSM_POLLING: enter(TRN3_LTSSM_CONFIGURATION, 0, config_time.get()); return;
    case TRN3_LTSSM_CONFIGURATION: {
        const width_choice w = choose_width(lanes.get(), sparing() ? spare_lanes.get() : 0, failed_);
        width_ = w.width;
        spares_used_ = w.spares_used;
        failures_at_config_ = failed_.size();
        if (width_ == 0) {
            failed_training_ = true;
            update_status();
            raise(TRN3_LINK_EVENT_FAILED);
            log().warn("link training failed in Configuration: no healthy width");
            return;
        }
        if (split_) wire_->set_rate(port_a_, bandwidth{raw_bytes_per_second()});
        else wire_->set_rate(bandwidth{raw_bytes_per_second()});
        if (retraining_) reach_l0();
        else enter(TRN3_LTSSM_RECOVERY, 0, eq_phase0.get());  // equalise to the target rate
        return;
    }
    case TRN3_LTSSM_RECOVERY: {
        if (retraining_ && ack_pending_) {
            recovery_waits_ = true;  // split: not before the far end has answered
            return;
        }
        if (retraining_) {
            enter(TRN3_LTSSM_CONFIGURATION, 0, config_time.get());
            return;
        }
        const unsigned segments = static_cast<unsigned>(retimers_.size()) + 1;
        switch (eq_phase_) {
        case 0: enter(TRN3_LTSSM_RECOVERY, 1, eq_phase1.get()); return;
        case 1: enter(TRN3_LTSSM_RECOVERY, 2, eq_phase2.get() * segments); return;
        case 2: enter(TRN3_LTSSM_RECOVERY, 3, eq_phase3.get() * segments); return;
        default: reach_l0(); return;
        }
    }
    default: return;
    }
}

void link::reach_l0() {
    state_ = TRN3_LTSSM_L0;
    eq_phase_ = 0;
    retraining_ = false;
    trained_at_ = sc_core::sc_time_stamp();
    ++trainings_;
    timeline::instance().slice(
        track_,
        fmt::format("{} to L0: {} x{}", trainings_.value() == 1 ? "training" : "retraining", phy().name, width_),
        training_started_, trained_at_);
    update_status();
    std::uint32_t events = TRN3_LINK_EVENT_UP;
    if (width_ < lanes.get()) {
        events |= TRN3_LINK_EVENT_DEGRADED;
        log().warn("trained {} x{} of x{}: {} of {} lanes failed, {} spares", phy().name, width_, lanes.get(),
                   failed_.size(), lanes.get() + spare_lanes.get(), spare_lanes.get());
    } else {
        log().debug("trained {} x{} ({} spare lanes in use)", phy().name, width_, spares_used_);
    }
    raise(events);
    if (split_) send_control(0, trained, {width_});
    if (failed_.size() != failures_at_config_) {
        retrain();  // lanes failed after the width was chosen
        return;
    }
    flush_held(0);
    if (!split_) flush_held(1);
}

void link::retrain() {
    if (state_ != TRN3_LTSSM_L0) return;
    retraining_ = true;
    training_started_ = sc_core::sc_time_stamp();
    if (split_) return split_retrain();
    // What is on the wire now will be replayed; the wire stops.
    for (int dir = 0; dir < 2; ++dir) {
        awaiting_replay_[dir] = in_flight_[dir];
        replay_below_[dir] = wire_sends_[dir];
    }
    wire_->abort(port_a_);
    wire_->abort(port_b_);
    fill_[0] = fill_[1] = 0;
    raise(TRN3_LINK_EVENT_DOWN);
    enter(TRN3_LTSSM_RECOVERY, 0, recovery_time.get());
}

void link::fail_lanes(const std::set<unsigned>& l) {
    const unsigned physical = static_cast<unsigned>(lanes.get() + spare_lanes.get());
    for (unsigned lane : l)
        if (lane < physical) failed_.insert(lane);
        else log().warn("lane {} does not exist (lanes 0-{})", lane, physical - 1);
    update_status();
    if (state_ == TRN3_LTSSM_L0) retrain();
}

void link::apply_fault() {
    log().info("{} lanes fail", pending_faults_.size());
    fail_lanes(pending_faults_);
    pending_faults_.clear();
}

void link::raise(std::uint32_t events) {
    events_.set(events_.value() | events);
    irq.set((events_.value() & event_mask_.value()) != 0);
}

void link::update_status() {
    std::uint32_t s = TRN3_LINK_STATUS_VALUE(state_, eq_phase_, phy().speed_code, width_);
    if (state_ == TRN3_LTSSM_L0) s |= TRN3_LINK_STATUS_UP;
    if (phy().flit_mode) s |= TRN3_LINK_STATUS_FLIT;
    if (width_ != 0 && width_ < lanes.get()) s |= TRN3_LINK_STATUS_DEGRADED;
    if (failed_training_) s |= TRN3_LINK_STATUS_FAILED;
    status_.set(s);
    lanes_.set(TRN3_LINK_LANES_VALUE(lanes.get(), spare_lanes.get(), spares_used_,
                                     std::min<std::size_t>(failed_.size(), 255)));
    std::uint32_t mask[3] = {0, 0, 0};
    for (unsigned l : failed_) mask[l / 32] |= 1u << (l % 32);
    failed0_.set(mask[0]);
    failed1_.set(mask[1]);
    failed2_.set(mask[2]);
    trainings_reg_.set(trainings_.value());
    replayed_reg_.set(replayed_.value());
}

sc_time link::transmit(int dir, tlp&& t, const sc_time& when) {
    const sc_time now = sc_core::sc_time_stamp();
    if (!up_at(dir) || awaiting_replay_[dir] > 0) {
        held_[dir].push_back({next_order_++, std::move(t)});
        return when < now ? now : when;
    }
    if (t.count == 0) t.count = 1;
    const phy_spec& p = phy();
    const std::uint64_t w = tlp_wire_bytes(t);
    const std::uint64_t n = t.count;
    const sc_time sent = when < now ? now : when;
    message_port& from = dir == 0 ? port_a_ : port_b_;
    const sc_time free = wire_->wire_free(from);  // the whole wire's
    // Strict arbitration: a TLP that passes lower-class traffic goes in flits
    // of its own (the open flit is that traffic's, and stays open for it).
    const bool passing = wire_->strict_priority(from) && sent < free && wire_->wire_free(from, t.traffic_class) < free;
    if (passing) ++passed_;
    unsigned own_fill = 0;
    unsigned& fill = passing ? own_fill : fill_[dir];
    std::uint64_t bytes = 0, first_bytes = 0;
    if (p.flit_mode) {
        // An idle wire has padded and sent the open flit.
        if (sent > free) fill = 0;
        const std::uint64_t P = p.flit_payload_bytes;
        const std::uint64_t open = fill > 0 ? 1 : 0;  // already charged to an earlier TLP
        const std::uint64_t total = fill + n * w;
        const std::uint64_t flits = (total + P - 1) / P - open;
        const std::uint64_t first_flits = (fill + w + P - 1) / P - open;
        fill = static_cast<unsigned>(total % P);
        bytes = flits * p.flit_bytes;
        first_bytes = first_flits * p.flit_bytes;
        flits_[dir] += flits;
    } else {
        bytes = n * (w + p.tlp_framing_bytes);
        first_bytes = w + p.tlp_framing_bytes;
    }
    t.train_span = sc_time(double(bytes - first_bytes) / raw_bytes_per_second_at(dir), sc_core::SC_SEC);
    tlps_[dir] += n;
    if (t.has_data()) payload_bytes_[dir] += n * t.length;
    message m;
    m.bytes = bytes;
    m.kind = static_cast<std::uint32_t>(t.type);
    m.traffic_class = t.traffic_class;
    m.train_span = t.train_span;
    m.data = encode(std::move(t));
    if (!split_) ++in_flight_[dir];
    ++wire_sends_[dir];
    const sc_time span = m.train_span;
    const sc_time head = from.send(std::move(m), sent);
    return head + span;
}

void link::receive(int dir, message& m) {
    const int at = dir == 0 ? 1 : 0;
    if (m.control) return receive_control(at, m);
    if (split_) {
        ++settled_[dir];
        if (!up_at(at) || m.seq < replay_below_[dir]) return send_back(dir, m);
        if (end_[at].handler_) {
            tlp t = decode(std::move(m.data));
            end_[at].handler_(t);
        }
        return;
    }
    --in_flight_[dir];
    // On the wire when a retrain started (or arriving while the link is down).
    const bool hit_by_retrain = m.seq < replay_below_[dir];
    if (state_ != TRN3_LTSSM_L0 || hit_by_retrain) {
        // Corrupted or cut off by the retrain: the sender's replay buffer
        // sends it again once the link is back in L0, in its original order.
        tlp t = decode(std::move(m.data));
        replayed_ += t.count;
        held_[dir].push_back({m.seq, std::move(t)});
        if (awaiting_replay_[dir] > 0) --awaiting_replay_[dir];
        update_status();
        if (state_ == TRN3_LTSSM_L0) {
            flush_held(0);
            flush_held(1);
        }
        return;
    }
    if (!end_[at].handler_) return;
    tlp t = decode(std::move(m.data));
    end_[at].handler_(t);
}

void link::flush_held(int dir) {
    // Wait until everything from before the retrain is back, then send in order.
    if (held_[dir].empty() || awaiting_replay_[dir] > 0 || !up_at(dir)) return;
    std::vector<held> batch = std::move(held_[dir]);
    held_[dir].clear();
    std::stable_sort(batch.begin(), batch.end(), [](const held& x, const held& y) { return x.order < y.order; });
    for (held& h : batch) transmit(dir, std::move(h.t), sc_core::sc_time_stamp());
}

}  // namespace trn3::pcie
