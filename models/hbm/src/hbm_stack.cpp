#include "trn3/hbm/hbm_stack.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "trn3/core/payload.h"
#include "trn3/core/stable_hash.h"

namespace trn3::hbm {
namespace {
using sc_core::SC_NS;
using sc_core::sc_time;

sc_time ns(double v) { return sc_time(v, SC_NS); }
ps_t to_ps(const sc_time& t) { return t.value(); }  // the time resolution is 1 ps
sc_time from_ps(ps_t v) { return sc_time::from_value(v); }

geometry geometry_of(const hbm_stack& s) {
    return {static_cast<unsigned>(s.channels.get()), static_cast<unsigned>(s.bank_groups.get()),
            static_cast<unsigned>(s.banks_per_group.get()), s.row_size.get().bytes};
}

}  // namespace

hbm_stack::hbm_stack(const sc_core::sc_module_name& name, bool default_needs_training)
    : component(name, frequency{2.4e9}), in("in"), ctrl("ctrl"),
      size(this, "size", byte_count{36ull << 30}, "capacity of the stack (12-high HBM3E: 36 GiB)",
           range<byte_count>{byte_count{1 << 20}, {}}),
      channels(this, "channels", 32, "pseudo-channels", range<std::uint64_t>{1, 256}),
      bank_groups(this, "bank_groups", 4, "bank groups per pseudo-channel", range<std::uint64_t>{1, 64}),
      banks_per_group(this, "banks_per_group", 4, "banks per bank group", range<std::uint64_t>{1, 64}),
      row_size(this, "row_size", byte_count{1024}, "row (page) size of a pseudo-channel"),
      burst_size(this, "burst_size", byte_count{32}, "bytes per burst (32 DQ x BL8); also the access granule",
                 range<byte_count>{byte_count{1}, byte_count{4096}}),
      channel_bandwidth(this, "channel_bandwidth", bandwidth{38.4e9},
                        "data bandwidth of one pseudo-channel (32 pins x 9.6 Gb/s)"),
      interleave(this, "interleave", "offset:8,channel:5,bank_group:2,column:2,bank:2,row",
                 "address bits from the LSB up: offset (interleave granule), channel, bank_group, column, bank, row"),
      t_cl(this, "t_cl", ns(12.5), "READ to first data (tCL)"), t_wl(this, "t_wl", ns(5), "WRITE to first data (tWL)"),
      t_rcd(this, "t_rcd", ns(19.4), "ACT to READ/WRITE (tRCD)"), t_rp(this, "t_rp", ns(16.25), "PRE to ACT (tRP)"),
      t_ras(this, "t_ras", ns(28.1), "ACT to PRE (tRAS)"), t_rc(this, "t_rc", ns(45), "ACT to ACT in one bank (tRC)"),
      t_faw(this, "t_faw", ns(15), "window holding at most four ACTs (tFAW)"),
      t_rrd_s(this, "t_rrd_s", ns(2.5), "ACT to ACT, different bank groups (tRRD_S)"),
      t_rrd_l(this, "t_rrd_l", ns(3.1), "ACT to ACT, same bank group (tRRD_L)"),
      t_wr(this, "t_wr", ns(15), "end of write data to PRE (tWR)"),
      t_wtr(this, "t_wtr", ns(7.5), "end of write data to READ (write-to-read turnaround)"),
      t_rtw(this, "t_rtw", ns(3.3), "end of read data to write data (read-to-write turnaround)"),
      t_ccd_s_clocks(this, "t_ccd_s", 2, "column to column, different bank groups, in clocks (tCCD_S)"),
      t_ccd_l_clocks(this, "t_ccd_l", 4, "column to column, same bank group, in clocks (tCCD_L)"),
      t_refi(this, "t_refi", ns(3900), "refresh interval (tREFI)"),
      t_rfc(this, "t_rfc", ns(350), "all-bank refresh time (tRFC)"),
      refresh_stagger(this, "refresh_stagger", false,
                      "spread the pseudo-channels' refreshes evenly over tREFI; false: all refresh together "
                      "(a request striped over many channels then meets one refresh, not one per channel)"),
      timing_model(this, "timing_model", "dram",
                   "timing engine: dram (every 256-byte piece on its pseudo-channel's banks, bus and refreshes) or "
                   "bandwidth (each access whole on the stack's sustained bandwidth: O(1) per access, streaming "
                   "traffic only)",
                   one_of<std::string>{{"dram", "bandwidth"}}),
      read_efficiency(this, "read_efficiency", 0.905,
                      "timing_model=bandwidth: fraction of peak sustained by reads (the dram engine's streaming "
                      "figure)",
                      range<double>{0.01, 1.0}),
      write_efficiency(this, "write_efficiency", 0.862,
                       "timing_model=bandwidth: fraction of peak sustained by writes (the dram engine's streaming "
                       "figure)",
                       range<double>{0.01, 1.0}),
      controller_latency(this, "controller_latency", ns(80),
                         "controller, PHY and return path: added to every access (reads: after data; writes: after "
                         "acceptance)"),
      read_queue(this, "read_queue", 64, "reads a pseudo-channel holds; more wait for the oldest to complete",
                 range<std::uint64_t>{1, 4096}),
      write_queue_high(this, "write_queue_high", 48, "writes queued per channel before a drain starts",
                       range<std::uint64_t>{1, 4096}),
      write_queue_low(this, "write_queue_low", 16, "writes left queued when a drain stops"),
      idle_drain(this, "idle_drain", ns(100), "idle time after which a channel drains all queued writes"),
      reorder_window(this, "reorder_window", ns(1000),
                     "how far before the latest arrival a request may still be placed in a free gap (the "
                     "controller's reordering horizon)"),
      dmi(this, "dmi", true, "grant DMI when no ECC error can appear"),
      needs_training(this, "needs_training", default_needs_training,
                     "data accesses fail until firmware trains the stack (train_ctrl)"),
      training_time(this, "training_time", sc_time(25, sc_core::SC_US),
                    "initialisation and training (PHY, write leveling, read/write eye) per stack"),
      ecc_single_rate(this, "ecc.single_rate", 0.0, "transient single-bit errors per 64-bit word read",
                      range<double>{0.0, 1.0}),
      ecc_double_rate(this, "ecc.double_rate", 0.0, "transient double-bit errors per 64-bit word read",
                      range<double>{0.0, 1.0}),
      ecc_seed(this, "ecc.seed", 1, "seed of the transient-error generator", seed_range()),
      ecc_inject(this, "ecc.inject", "",
                 "persistent errors: ADDR:MASK[;ADDR:MASK...], MASK = bits to flip in the 64-bit word at ADDR"),
      timeline_window(this, "timeline_window", ns(1000), "window of the bandwidth counter on the timeline",
                      range<sc_time>{sc_time(1, sc_core::SC_NS), {}}),
      store_(this->name(), size.get().bytes), map_(interleave.get(), geometry_of(*this), interleave.name()),
      ecc_(ecc_single_rate, ecc_double_rate, stable_hash(this->name(), ecc_seed)), burst_bytes_(burst_size.get().bytes),
      controller_ps_(to_ps(controller_latency)), trace_in_(*this, "in"),
      bandwidth_(timeline::process_of(*this), basename(), timeline_window),
      track_(timeline::instance().track_of(*this, " errors")), reads_(this, "reads", "read accesses"),
      writes_(this, "writes", "write accesses"), bytes_read_(this, "bytes_read", "bytes read"),
      bytes_written_(this, "bytes_written", "bytes written"),
      stat_ce_(this, "ecc_corrected", "words with a corrected single-bit error"),
      stat_ue_(this, "ecc_uncorrectable", "words returned poisoned"),
      stat_addr_errors_(this, "address_errors", "accesses beyond the stack"),
      read_latency_ns_(this, "read_latency_ns", "read latency, arrival to completion, in ns") {
    if (write_queue_low.get() >= write_queue_high.get())
        throw config_error(fmt::format("param {} must be below {}", write_queue_low.name(), write_queue_high.name()));
    if (map_.granule_bytes() % burst_bytes_ != 0)
        throw config_error(fmt::format("param {}: the interleave granule must hold whole bursts of {}",
                                       interleave.name(), format_byte_count(burst_size)));
    const timing t = make_timing();
    const ps_t n = channels.get();
    for (ps_t c = 0; c < n; ++c) {
        // Aligned: every channel refreshes at tREFI/2 + k tREFI. Staggered:
        // channel c at (2c + 1) tREFI / 2n + k tREFI.
        const ps_t phase = refresh_stagger.get() ? (2 * c + 1) * t.t_refi / (2 * n) : t.t_refi / 2;
        channels_.emplace_back(t, static_cast<unsigned>(bank_groups.get()),
                               static_cast<unsigned>(banks_per_group.get()), phase);
    }
    if (timing_model.get() == "bandwidth")
        fast_ = std::make_unique<stack_bandwidth>(static_cast<double>(n) * channel_bandwidth.get().bytes_per_s,
                                                  read_efficiency.get(), write_efficiency.get(), t.t_rcd + t.t_cl,
                                                  t.reorder_window);
    inject_from_param();

    in.register_b_transport(this, &hbm_stack::b_transport);
    in.register_get_direct_mem_ptr(this, &hbm_stack::get_direct_mem_ptr);
    in.register_transport_dbg(this, &hbm_stack::transport_dbg);
    ctrl.register_b_transport(this, &hbm_stack::ctrl_transport);
    ctrl.register_transport_dbg(this, &hbm_stack::ctrl_dbg);
    irq_status_.on_write([this](reg&, std::uint64_t) { update_irq(); });
    train_status_.set(needs_training.get() ? TRN3_HBM_TRAIN_UNTRAINED : TRN3_HBM_TRAIN_READY);
    train_ctrl_.on_write([this](reg& r, std::uint64_t) {
        if ((r.value() & TRN3_HBM_TRAIN_START) && train_status_.value() == TRN3_HBM_TRAIN_UNTRAINED) {
            train_status_.set(TRN3_HBM_TRAIN_BUSY);
            trained_event_.notify(training_time.get());
        }
    });
    SC_HAS_PROCESS(hbm_stack);
    SC_METHOD(finish_training);
    sensitive << trained_event_;
    dont_initialize();
    irq_enable_.on_write([this](reg&, std::uint64_t) { update_irq(); });
    inject_mask_.on_write([this](reg& r, std::uint64_t) {
        ecc_.inject(inject_addr_.value(), r.value());
        in->invalidate_direct_mem_ptr(0, ~0ull);  // a DMI read would now bypass ECC
    });
}

timing hbm_stack::make_timing() const {
    timing t{};
    t.t_burst = to_ps(channel_bandwidth.get().transfer_time(burst_bytes_));
    t.t_cl = to_ps(t_cl);
    t.t_wl = to_ps(t_wl);
    t.t_rcd = to_ps(t_rcd);
    t.t_rp = to_ps(t_rp);
    t.t_ras = to_ps(t_ras);
    t.t_rc = to_ps(t_rc);
    t.t_faw = to_ps(t_faw);
    t.t_rrd_s = to_ps(t_rrd_s);
    t.t_rrd_l = to_ps(t_rrd_l);
    t.t_ccd_s = to_ps(cycles(t_ccd_s_clocks));
    t.t_ccd_l = to_ps(cycles(t_ccd_l_clocks));
    t.t_wr = to_ps(t_wr);
    t.t_wtr = to_ps(t_wtr);
    t.t_rtw = to_ps(t_rtw);
    t.t_refi = to_ps(t_refi);
    t.t_rfc = to_ps(t_rfc);
    if (t.t_refi == 0 || t.t_rfc >= t.t_refi)
        throw config_error(fmt::format("param {} must be above zero and above {}", t_refi.name(), t_rfc.name()));
    t.write_queue_high = static_cast<unsigned>(write_queue_high);
    t.write_queue_low = static_cast<unsigned>(write_queue_low);
    t.idle_drain = to_ps(idle_drain);
    t.reorder_window = to_ps(reorder_window);
    t.read_queue = static_cast<unsigned>(read_queue);
    return t;
}

void hbm_stack::inject_from_param() {
    std::stringstream ss(ecc_inject.get());
    std::string item;
    while (std::getline(ss, item, ';')) {
        if (item.empty()) continue;
        auto colon = item.find(':');
        try {
            if (colon == std::string::npos) throw std::invalid_argument("no ':'");
            std::uint64_t addr = std::stoull(item.substr(0, colon), nullptr, 0);
            std::uint64_t mask = std::stoull(item.substr(colon + 1), nullptr, 0);
            if (addr >= size.get().bytes) throw std::out_of_range("address beyond the stack");
            ecc_.inject(addr, mask);
        } catch (const std::exception& e) {
            throw config_error(fmt::format("param {}: '{}' is not ADDR:MASK inside the stack ({})", ecc_inject.name(),
                                           item, e.what()));
        }
    }
}

ps_t hbm_stack::place(std::uint64_t addr, unsigned len, bool is_write, ps_t arrival) {
    if (fast_) return (is_write ? fast_->write(arrival, len) : fast_->read(arrival, len)) + controller_ps_;
    ps_t done = arrival;
    const std::uint64_t granule = map_.granule_bytes();
    const std::uint64_t end = addr + len;
    for (std::uint64_t a = addr; a < end;) {
        const std::uint64_t next = std::min(end, (a / granule + 1) * granule);
        const location l = map_.decode(a);
        const auto bursts = static_cast<unsigned>((next - 1) / burst_bytes_ - a / burst_bytes_ + 1);
        pseudo_channel& c = channels_[l.channel];
        const ps_t t = is_write ? c.write(arrival, l.bank_group, l.bank, l.row, bursts)
                                : c.read(arrival, l.bank_group, l.bank, l.row, bursts);
        done = std::max(done, t);
        a = next;
    }
    return done + controller_ps_;
}

void hbm_stack::finish_training() {
    train_status_.set(TRN3_HBM_TRAIN_READY);
    log().info("trained in {}", training_time.get().to_string());
}

void hbm_stack::b_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay) {
    ++transaction_count();
    if (train_status_.value() != TRN3_HBM_TRAIN_READY) {
        // Not initialised: the controller refuses the access.
        tx.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        delay += controller_latency.get();
        return;
    }
    const std::uint64_t addr = tx.get_address();
    const unsigned len = tx.get_data_length();
    const bool timing_only_access = tx.get_extension<timing_only>() != nullptr;
    const bool is_write = tx.is_write();
    if (len == 0 || addr >= size.get().bytes || len > size.get().bytes - addr) {
        ++stat_addr_errors_;
        addr_errors_.set(addr_errors_.value() + 1);
        raise(TRN3_HBM_IRQ_ADDRESS, addr);
        delay += controller_latency.get();
        tx.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        trace_in_.record(tx, delay);
        return;
    }
    if (tx.get_command() == tlm::TLM_IGNORE_COMMAND) {
        tx.set_response_status(tlm::TLM_OK_RESPONSE);
        return;
    }
    if (!timing_only_access && tx.get_streaming_width() < len) {
        tx.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
        return;
    }
    const sc_time now = sc_core::sc_time_stamp();
    const ps_t arrival = to_ps(now + delay);
    const ps_t done = place(addr, len, is_write, arrival);
    delay = from_ps(done) - now;
    bandwidth_.add(from_ps(done), len);
    tx.set_response_status(tlm::TLM_OK_RESPONSE);
    if (is_write) {
        ++writes_;
        bytes_written_ += len;
        if (!timing_only_access) {
            copy_payload(tx, store_.data() + addr);
            if (std::uint64_t fixed = ecc_.on_write(addr, len)) {
                stat_ce_ += fixed;
                ce_count_.set(ce_count_.value() + fixed);
                raise(TRN3_HBM_IRQ_CORRECTED, addr);
            }
        }
    } else {
        ++reads_;
        bytes_read_ += len;
        read_latency_ns_.sample(static_cast<double>(done - arrival) / 1000.0);
        if (!timing_only_access) {
            copy_payload(tx, store_.data() + addr);
            if (ecc_.active()) {
                ecc_result r = ecc_.check_read(addr, tx.get_data_ptr(), len);
                if (r.corrected) {
                    stat_ce_ += r.corrected;
                    ce_count_.set(ce_count_.value() + r.corrected);
                    raise(TRN3_HBM_IRQ_CORRECTED, addr + (r.first_error_addr > addr ? r.first_error_addr - addr : 0));
                }
                if (r.uncorrectable) {
                    stat_ue_ += r.uncorrectable;
                    ue_count_.set(ue_count_.value() + r.uncorrectable);
                    raise(TRN3_HBM_IRQ_UNCORRECTABLE, std::max(addr, r.first_error_addr));
                    tx.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
                    log().warn("uncorrectable ECC error at 0x{:x}: poisoned data returned", r.first_error_addr);
                }
            }
        }
    }
    tx.set_dmi_allowed(dmi.get() && !ecc_.active());
    trace_in_.record(tx, delay);
}

bool hbm_stack::get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi& d) {
    // DMI bypasses ECC and timing: granted only when no error can appear.
    // Timing stays charged by initiators through timing_only payloads.
    if (!dmi.get() || ecc_.active() || train_status_.value() != TRN3_HBM_TRAIN_READY) return false;
    d.set_dmi_ptr(store_.data());
    d.set_start_address(0);
    d.set_end_address(size.get().bytes - 1);
    d.allow_read_write();
    const sc_time unloaded = controller_latency.get() + t_rcd.get() + t_cl.get();
    d.set_read_latency(unloaded);
    d.set_write_latency(controller_latency.get());
    return true;
}

unsigned hbm_stack::transport_dbg(tlm::tlm_generic_payload& tx) {
    const std::uint64_t addr = tx.get_address();
    if (addr >= size.get().bytes) return 0;
    const auto len = static_cast<unsigned>(std::min<std::uint64_t>(tx.get_data_length(), size.get().bytes - addr));
    if (tx.is_read()) std::memcpy(tx.get_data_ptr(), store_.data() + addr, len);
    else if (tx.is_write()) std::memcpy(store_.data() + addr, tx.get_data_ptr(), len);
    tx.set_response_status(tlm::TLM_OK_RESPONSE);
    return len;
}

void hbm_stack::ctrl_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay) {
    regs_.transport(tx);
    delay += cycles(1);
}

unsigned hbm_stack::ctrl_dbg(tlm::tlm_generic_payload& tx) {
    regs_.transport(tx, true);
    return tx.is_response_ok() ? tx.get_data_length() : 0;
}

void hbm_stack::raise(std::uint32_t bits, std::uint64_t addr) {
    timeline::instance().instant(track_,
                                 bits & TRN3_HBM_IRQ_UNCORRECTABLE ? "uncorrectable ECC error"
                                 : bits & TRN3_HBM_IRQ_CORRECTED   ? "corrected ECC error"
                                                                   : "address error",
                                 sc_core::sc_time_stamp());
    last_error_addr_.set(addr);
    irq_status_.set(irq_status_.value() | bits);
    update_irq();
}

void hbm_stack::update_irq() { mem_error.set((irq_status_.value() & irq_enable_.value()) != 0); }

sc_core::sc_time hbm_stack::flush() {
    ps_t last = fast_ ? fast_->last_data_end() : 0;
    for (pseudo_channel& c : channels_) last = std::max(last, c.flush());
    return from_ps(last);
}

void hbm_stack::reset() {
    regs_.reset();
    update_irq();
}

}  // namespace trn3::hbm
