// hbm_stack: one HBM3E stack and its controller, loosely timed.
//
// A stack holds `channels` pseudo-channels (default 32 x 38.4 GB/s =
// 1.2288 TB/s; four stacks make a Trainium3's 4.915 TB/s). An access is split
// at interleave-granule boundaries (address_map.h), each piece is placed on
// its pseudo-channel's timeline (pseudo_channel.h), and the access completes
// when its last piece does, plus the controller latency. Data lives in a
// sparse store; ECC errors live beside it (ecc.h).
//
// timing_model=bandwidth swaps that engine for one that books each access
// whole on the stack's sustained bandwidth (stack_bandwidth.h): O(1) per
// access, for workload-scale runs whose HBM traffic is streaming; the dram
// engine (the default) is the reference for any pattern.
//
// sockets: in     data (b_transport, DMI when no ECC error can appear, debug)
//          ctrl   control and status registers (below)
// irq:     mem_error — level: (irq_status & irq_enable) != 0
//
// registers (ctrl; offsets and bits: TRN3_HBM_* in spec/device.h):
//   id              RO  4  0x48424d33 ("HBM3")
//   ce_count        RO  8  corrected (single-bit) errors
//   ue_count        RO  8  uncorrectable errors (poisoned data returned)
//   addr_errors     RO  8  accesses beyond the stack
//   last_error_addr RO  8  address of the last ECC or address error
//   irq_status      W1C 4  uncorrectable, corrected, address error
//   irq_enable      RW  4  same bits; reset: uncorrectable and address error
//   inject_addr     RW  8  address of the word for inject_mask
//   inject_mask     WO  8  writing a non-zero mask flips those bits of the 64-bit word
//   train_ctrl      WO  4  write TRAIN_START: initialise and train the stack (takes training_time)
//   train_status    RO  4  untrained, busy (training), ready
//
// Training: with needs_training (a chip's stacks: its firmware trains them),
// the stack answers data accesses with TLM_GENERIC_ERROR_RESPONSE and grants
// no DMI until train_ctrl has been written and training_time has passed.
// Without it (the default, for rigs without firmware) it is ready at reset.
//
// timeline (--timeline): a "<stack> GB/s" counter per timeline_window and an
// instant for every error interrupt cause.
//
// A payload carrying trn3::timing_only is charged its time and moves no data:
// initiators that move data through DMI use it to keep the timing.
#pragma once

#include <memory>
#include <vector>

#include <tlm_utils/simple_target_socket.h>

#include "trn3/core/component.h"
#include "trn3/core/irq.h"
#include "trn3/core/reg.h"
#include "trn3/core/sparse_store.h"
#include "trn3/core/stats.h"
#include "trn3/core/timeline.h"
#include "trn3/hbm/address_map.h"
#include "trn3/hbm/ecc.h"
#include "trn3/hbm/pseudo_channel.h"
#include "trn3/hbm/stack_bandwidth.h"
#include "trn3/spec/device.h"

namespace trn3::hbm {

class hbm_stack : public component {
public:
    tlm_utils::simple_target_socket<hbm_stack> in;
    tlm_utils::simple_target_socket_optional<hbm_stack> ctrl;  // may stay unbound
    irq_line mem_error;

    // geometry
    param<byte_count> size;
    param<std::uint64_t> channels;
    param<std::uint64_t> bank_groups;
    param<std::uint64_t> banks_per_group;
    param<byte_count> row_size;
    param<byte_count> burst_size;
    param<bandwidth> channel_bandwidth;
    param<std::string> interleave;
    // DRAM timing
    param<sc_core::sc_time> t_cl, t_wl, t_rcd, t_rp, t_ras, t_rc, t_faw, t_rrd_s, t_rrd_l, t_wr, t_wtr, t_rtw;
    param<std::uint64_t> t_ccd_s_clocks, t_ccd_l_clocks;
    param<sc_core::sc_time> t_refi, t_rfc;
    param<bool> refresh_stagger;
    // timing engine: dram (per pseudo-channel, below) or bandwidth (stack_bandwidth.h)
    param<std::string> timing_model;
    param<double> read_efficiency, write_efficiency;
    // controller
    param<sc_core::sc_time> controller_latency;
    param<std::uint64_t> read_queue, write_queue_high, write_queue_low;
    param<sc_core::sc_time> idle_drain;
    param<sc_core::sc_time> reorder_window;
    param<bool> dmi;
    param<bool> needs_training;
    param<sc_core::sc_time> training_time;
    // ECC
    param<double> ecc_single_rate, ecc_double_rate;
    param<std::uint64_t> ecc_seed;
    param<std::string> ecc_inject;
    // observability
    param<sc_core::sc_time> timeline_window;

    explicit hbm_stack(const sc_core::sc_module_name& name, bool default_needs_training = false);
    bool trained() const { return train_status_.value() == TRN3_HBM_TRAIN_READY; }

    // Drains every queued write; returns the time the last one is done.
    sc_core::sc_time flush();
    unsigned char* data() { return store_.data(); }
    const sparse_store& store() const { return store_; }
    std::uint64_t bytes_moved() const { return bytes_read_.value() + bytes_written_.value(); }
    const pseudo_channel& channel(unsigned i) const { return channels_[i]; }
    void reset() override;

private:
    void b_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay);
    bool get_direct_mem_ptr(tlm::tlm_generic_payload& tx, tlm::tlm_dmi& dmi_data);
    unsigned transport_dbg(tlm::tlm_generic_payload& tx);
    void ctrl_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay);
    unsigned ctrl_dbg(tlm::tlm_generic_payload& tx);

    // Places [addr, addr + len) on the channels; returns the completion time.
    ps_t place(std::uint64_t addr, unsigned len, bool is_write, ps_t arrival);
    void raise(std::uint32_t status_bits, std::uint64_t addr);
    void update_irq();
    void inject_from_param();
    timing make_timing() const;

    sparse_store store_;
    address_map map_;
    std::vector<pseudo_channel> channels_;
    std::unique_ptr<stack_bandwidth> fast_;  // timing_model=bandwidth only
    ecc_model ecc_;
    std::uint64_t burst_bytes_;
    ps_t controller_ps_;

    reg_bank regs_{std::string(name()) + ".regs"};
    reg id_{regs_, "id", TRN3_HBM_ID, 4, TRN3_HBM_ID_VALUE, access::ro, "identifies an HBM3 stack controller"};
    reg ce_count_{regs_, "ce_count", TRN3_HBM_CE_COUNT, 8, 0, access::ro, "corrected (single-bit) errors"};
    reg ue_count_{regs_, "ue_count", TRN3_HBM_UE_COUNT, 8, 0, access::ro, "uncorrectable errors"};
    reg addr_errors_{regs_, "addr_errors", TRN3_HBM_ADDR_ERRORS, 8, 0, access::ro, "accesses beyond the stack"};
    reg last_error_addr_{regs_, "last_error_addr", TRN3_HBM_LAST_ERROR_ADDR,   8,
                         0,     access::ro,        "address of the last error"};
    reg irq_status_{regs_, "irq_status", TRN3_HBM_IRQ_STATUS, 4, 0, access::w1c, "pending error interrupts"};
    reg irq_enable_{regs_,
                    "irq_enable",
                    TRN3_HBM_IRQ_ENABLE,
                    4,
                    TRN3_HBM_IRQ_UNCORRECTABLE | TRN3_HBM_IRQ_ADDRESS,
                    access::rw,
                    "enabled error interrupts"};
    reg inject_addr_{regs_, "inject_addr", TRN3_HBM_INJECT_ADDR, 8, 0, access::rw, "word address for inject_mask"};
    reg inject_mask_{
        regs_, "inject_mask", TRN3_HBM_INJECT_MASK, 8, 0, access::wo, "bits to flip in the word at inject_addr"};
    reg train_ctrl_{
        regs_, "train_ctrl", TRN3_HBM_TRAIN_CTRL, 4, 0, access::wo, "write 1: initialise and train the stack"};
    reg train_status_{regs_,
                      "train_status",
                      TRN3_HBM_TRAIN_STATUS,
                      4,
                      TRN3_HBM_TRAIN_UNTRAINED,
                      access::ro,
                      "0 untrained, 1 training, 2 ready"};
    sc_core::sc_event trained_event_;
    void finish_training();

    trace_point trace_in_;
    rate_counter bandwidth_;  // timeline: GB/s per window
    timeline::track track_;  // timeline: error instants
    counter reads_, writes_, bytes_read_, bytes_written_, stat_ce_, stat_ue_, stat_addr_errors_;
    histogram read_latency_ns_;
};

}  // namespace trn3::hbm
