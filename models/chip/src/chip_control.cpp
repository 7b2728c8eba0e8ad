#include "trn3/chip/chip_control.h"

#include <fmt/format.h>

#include "trn3/core/log.h"
#include "trn3/core/payload.h"

namespace trn3::chip {

using neuroncore::engine_status;

chip_control::chip_control(const sc_core::sc_module_name& name,
                           std::array<neuroncore::neuroncore*, TRN3_DEV_CORES> cores)
    : reg_block(name, frequency{1.4e9}), cores_(cores), launches_(this, "launches", "kernels launched"),
      notifications_(this, "notifications", "notifications written"),
      track_(timeline::instance().track_of(*this, ".notify")) {
    for (unsigned c = 0; c < TRN3_FABRIC_CHANNELS; ++c)
        fabric_rx_channel_[c] =
            std::make_unique<reg>(regs, fmt::format("fabric_rx_channel{}", c), TRN3_CHIP_FABRIC_RX_CHANNEL(c), 8, 0,
                                  access::ro, "bytes of fabric writes of channel c landed");
    for (unsigned c = 0; c < TRN3_FABRIC_CHANNELS; ++c)
        fabric_operand_[c] =
            std::make_unique<reg>(regs, fmt::format("fabric_operand{}", c), TRN3_CHIP_FABRIC_OPERAND(c), 8, 0,
                                  access::rw, "a reducing write of channel c with an operand: its offset");
    for (unsigned w = 0; w < TRN3_DMA_PENDING_WORDS; ++w) {
        dma_pending_[w] = std::make_unique<reg>(regs, fmt::format("dma_pending{}", w), TRN3_CHIP_DMA_PENDING(w), 4, 0,
                                                access::ro, "bit i: DMA queue 32 w + i has descriptors left");
        dma_pending_[w]->on_read([this, w](reg& r) { r.set(dma_pending ? dma_pending(w) : 0); });
    }
    for (unsigned e = 0; e < isa::engine_count; ++e)
        launch_pc_[e] = std::make_unique<reg>(regs, fmt::format("launch_pc{}", e), TRN3_CHIP_LAUNCH_PC(e), 8, 0,
                                              access::rw, "start address of engine " + std::to_string(e));
    for (unsigned d = 0; d < TRN3_FABRIC_CHIPS; ++d)
        routes_.push_back(
            std::make_unique<reg>(regs, fmt::format("route{}", d), TRN3_CHIP_ROUTE(d), 4, TRN3_ROUTE_NONE, access::rw,
                                  "NeuronLink ports towards chip " + std::to_string(d) + " (bit p: port p)"));
    boot_.on_read([this](reg& r) { r.set(boot_status ? boot_status() : TRN3_BOOT_RESET); });
    lnc_.on_write([](reg& r, std::uint64_t old) {
        if (r.value() != 1 && r.value() != 2) r.set(old);  // only 1 and 2 exist
    });
    core_reset_.on_write([this](reg& r, std::uint64_t) {
        for (unsigned c = 0; c < TRN3_DEV_CORES; ++c)
            if (r.value() & TRN3_CORE_RESET_BIT(c)) {
                cores_[c]->reset();
                running_[c] = false;
                log().info("NeuronCore {} reset", c);
            }
    });
    err_status_.on_write([this](reg&, std::uint64_t) { update_irq(); });
    // The MCU's own store to it (through its chip window) resets it too, once
    // its current batch ends (mcu::request_reset).
    mcu_reset_.on_write([this](reg& r, std::uint64_t) {
        if (r.value() == TRN3_MCU_RESET_KEY && reset_mcu) reset_mcu();
        r.set(0);
    });
    fabric_id_.on_write([](reg& r, std::uint64_t) { r.set(r.value() & (TRN3_FABRIC_ID_MASK | TRN3_FABRIC_ENABLE)); });
    err_enable_.on_write([this](reg&, std::uint64_t) { update_irq(); });
    core_state_.on_read([this](reg& r) {
        std::uint32_t v = 0;
        for (unsigned c = 0; c < TRN3_DEV_CORES; ++c) {
            bool error = false;
            for (unsigned e = 0; e < isa::engine_count; ++e)
                error = error || cores_[c]->status(static_cast<isa::engine>(e)) == engine_status::error;
            v |= TRN3_CORE_STATE_FIELD(c, error         ? TRN3_CORE_STATE_ERROR
                                          : running_[c] ? TRN3_CORE_STATE_RUNNING
                                                        : TRN3_CORE_STATE_IDLE);
        }
        r.set(v);
    });
    fw_event_.on_write([this](reg& r, std::uint64_t) {
        if (r.value() & TRN3_FW_EVENT_REPORT) report_error(TRN3_ERR_FIRMWARE);
    });
    launch_.on_write([this](reg& r, std::uint64_t) {
        launch(static_cast<unsigned>(TRN3_LAUNCH_CORE(r.value())),
               static_cast<unsigned>(TRN3_LAUNCH_ENGINES(r.value())));
    });
    SC_HAS_PROCESS(chip_control);
    SC_METHOD(watch);
    for (auto* c : cores_) sensitive << c->engine_stopped();
    dont_initialize();
}

void chip_control::launch(unsigned core, unsigned mask) {
    if (core >= TRN3_DEV_CORES || mask == 0) return;
    if (running_[core]) {
        log().warn("LAUNCH on NeuronCore {} ignored: its previous kernel has not stopped (reset it first)", core);
        return;
    }
    launched_mask_[core] = mask;
    running_[core] = true;
    ++launches_;
    for (unsigned e = 0; e < isa::engine_count; ++e)
        if (mask & (1u << e)) cores_[core]->start(static_cast<isa::engine>(e), launch_pc_[e]->value());
}

void chip_control::watch() {
    for (unsigned c = 0; c < TRN3_DEV_CORES; ++c) {
        if (!running_[c]) continue;
        std::uint32_t error = 0;
        bool all_done = true;
        for (unsigned e = 0; e < isa::engine_count; ++e) {
            if (!(launched_mask_[c] & (1u << e))) continue;
            const engine_status s = cores_[c]->status(static_cast<isa::engine>(e));
            if (s == engine_status::error && error == 0) error = cores_[c]->error(static_cast<isa::engine>(e));
            if (s == engine_status::running) all_done = false;
        }
        if (error != 0) {
            // One engine's error stops the kernel: its partners may wait forever.
            running_[c] = false;
            report_error(TRN3_ERR_CORE(c));
            notify(c, TRN3_NOTIFY_STATUS_ERROR, error);
        } else if (all_done) {
            running_[c] = false;
            notify(c, TRN3_NOTIFY_STATUS_DONE, 0);
        }
    }
}

void chip_control::notify(unsigned core, std::uint32_t status, std::uint32_t error) {
    timeline::instance().instant(track_,
                                 fmt::format("nc{} {}", core, status == TRN3_NOTIFY_STATUS_ERROR ? "error" : "done"),
                                 sc_core::sc_time_stamp());
    const std::uint32_t size = static_cast<std::uint32_t>(notify_size_.value());
    if (!(notify_control_.value() & TRN3_NOTIFY_CONTROL_ENABLE) || size == 0 || (size & (size - 1))) return;
    const std::uint32_t head = static_cast<std::uint32_t>(notify_head_.value());
    if (head - static_cast<std::uint32_t>(notify_tail_.value()) >= size) {
        log().warn("notification ring full: core {} not reported", core);
        return;
    }
    trn3_notification n{core, status, error, ++sequence_};
    tlm::tlm_generic_payload tx;
    sc_core::sc_time delay;
    set_access(tx, tlm::TLM_WRITE_COMMAND, notify_base_.value() + sizeof n * (head & (size - 1)), &n, sizeof n);
    host->b_transport(tx, delay);  // a posted write: the endpoint does not wait
    notify_head_.set(head + 1);
    ++notifications_;
    if (raise_msix) raise_msix(TRN3_MSIX_NOTIFY);
}

void chip_control::fabric_dropped() {
    fabric_dropped_.set(fabric_dropped_.value() + 1);
    report_error(TRN3_ERR_FABRIC);
}

void chip_control::report_error(std::uint32_t cause) {
    err_status_.set(err_status_.value() | cause);
    update_irq();
}

void chip_control::update_irq() {
    const bool level = (err_status_.value() & err_enable_.value()) != 0;
    if (level && !error_irq.level() && raise_msix) raise_msix(TRN3_MSIX_ERROR);
    error_irq.set(level);
}

}  // namespace trn3::chip
