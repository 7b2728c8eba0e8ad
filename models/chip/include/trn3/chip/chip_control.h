// The chip's control block (BAR0 + 0, spec/device.h): identity, the MCU's
// boot status, the logical core size, per-core reset and launch, error
// causes with their interrupt, the DMA queues' count and which of them
// have work left (DMA_PENDING: one read for 32 queues), and the
// notification queue that tells the host each NeuronCore that stopped.
//
// Launch: the driver writes each engine's start address into LAUNCH_PC(e)
// and then core and engine mask into LAUNCH; the chip starts those engines
// of that core at the same instant and watches the core. When every started
// engine has stopped (or one stopped on an error) it writes a notification
// (spec/device.h: core, status, error, sequence) into the host ring through
// `host` and raises the notify vector; a core that stopped on an error also
// sets its ERR_STATUS bit.
//
// sockets: in (target, registers), host (initiator: notification writes)
// params:  version
#pragma once

#include <array>
#include <functional>
#include <memory>

#include <tlm_utils/simple_initiator_socket.h>

#include "trn3/core/irq.h"
#include "trn3/core/reg_block.h"
#include "trn3/core/stats.h"
#include "trn3/core/timeline.h"
#include "trn3/neuroncore/neuroncore.h"
#include "trn3/spec/device.h"
#include "trn3/spec/mcu.h"

namespace trn3::chip {

class chip_control : public reg_block {
public:
    tlm_utils::simple_initiator_socket<chip_control> host{"host"};
    irq_line error_irq;  // (ERR_STATUS & ERR_ENABLE) != 0

    std::function<std::uint32_t()> boot_status;  // the MCU's
    std::function<void()> reset_mcu;  // MCU_RESET with its key: the MCU's warm reset
    std::function<std::uint32_t(unsigned word)> dma_pending;  // DMA_PENDING(w): the DMA engine's
    std::function<void(unsigned vector)> raise_msix;  // the endpoint's

    chip_control(const sc_core::sc_module_name& name, std::array<neuroncore::neuroncore*, TRN3_DEV_CORES> cores);

    // Error causes from other blocks (DMA queues, HBM).
    void report_error(std::uint32_t cause);
    std::uint32_t lnc() const { return static_cast<std::uint32_t>(lnc_.value()); }
    void add_neuronlink_port(unsigned p) { nl_ports_.set(nl_ports_.value() | TRN3_NL_PORT(p)); }
    void set_dma_queues(unsigned n) { dma_queues_.set(n); }
    // The NeuronLink fabric: this chip's id, whether its host has put it on
    // the fabric (FABRIC_ID.ENABLE), what landed, and what it had to drop
    // (counted and reported as an error cause).
    unsigned fabric_id() const { return static_cast<unsigned>(fabric_id_.value() & TRN3_FABRIC_ID_MASK); }
    bool fabric_enabled() const { return (fabric_id_.value() & TRN3_FABRIC_ENABLE) != 0; }
    void fabric_landed(std::uint64_t bytes, unsigned channel) {
        fabric_rx_bytes_.set(fabric_rx_bytes_.value() + bytes);
        reg& c = *fabric_rx_channel_[channel % TRN3_FABRIC_CHANNELS];
        c.set(c.value() + bytes);
    }
    std::uint64_t fabric_rx_bytes(unsigned channel) const {
        return fabric_rx_channel_[channel % TRN3_FABRIC_CHANNELS]->value();
    }
    // TRN3_CHIP_FABRIC_OPERAND(c): where a reducing write of channel c that
    // asks for an operand finds it, from its own address.
    std::uint64_t fabric_operand(unsigned channel) const {
        return fabric_operand_[channel % TRN3_FABRIC_CHANNELS]->value();
    }
    void fabric_dropped();
    // TRN3_CHIP_ROUTE(dest): the ports towards chip `dest` (bit p: port p).
    std::uint32_t route(unsigned dest) const {
        return dest < routes_.size() ? static_cast<std::uint32_t>(routes_[dest]->value()) : TRN3_ROUTE_NONE;
    }
    // The fabric manager's write of TRN3_CHIP_ROUTE(dest) over the management
    // network (a hot-swap's new routes), not through the host.
    void set_route(unsigned dest, std::uint32_t ports) {
        if (dest < routes_.size()) routes_[dest]->set(ports);
    }

private:
    void launch(unsigned core, unsigned engine_mask);
    void watch();  // a core's engine stopped
    void notify(unsigned core, std::uint32_t status, std::uint32_t error);
    void update_irq();

    std::array<neuroncore::neuroncore*, TRN3_DEV_CORES> cores_;
    std::array<bool, TRN3_DEV_CORES> running_{};
    std::array<unsigned, TRN3_DEV_CORES> launched_mask_{};
    std::uint32_t sequence_ = 0;
    sc_core::sc_event launched_;
    counter launches_, notifications_;
    timeline::track track_;

    reg id_{regs, "id", TRN3_CHIP_ID, 4, TRN3_CHIP_ID_VALUE, access::ro, "0x1D0F7364"};
    reg version_{regs, "version", TRN3_CHIP_VERSION, 4, TRN3_CHIP_VERSION_VALUE, access::ro, "model version 1.0"};
    reg boot_{regs, "boot_status", TRN3_CHIP_BOOT_STATUS, 4, TRN3_BOOT_RESET, access::ro, "the MCU's boot status"};
    reg lnc_{regs, "lnc", TRN3_CHIP_LNC, 4, 1, access::rw, "logical core size: 1 or 2"};
    reg core_reset_{regs, "core_reset", TRN3_CHIP_CORE_RESET, 4, 0, access::wo, "bit c: reset NeuronCore c"};
    reg err_status_{regs, "err_status", TRN3_CHIP_ERR_STATUS, 4, 0, access::w1c, "error causes"};
    reg err_enable_{regs, "err_enable", TRN3_CHIP_ERR_ENABLE, 4, 0xFFFFFFFF, access::rw, "causes that interrupt"};
    reg core_state_{
        regs, "core_state", TRN3_CHIP_CORE_STATE, 4, 0, access::ro, "2 bits per core: idle, running, error"};
    reg launch_{regs, "launch", TRN3_CHIP_LAUNCH, 4, 0, access::wo, "bits 4:0 engine mask, bits 11:8 core"};
    reg mcu_reset_{regs,
                   "mcu_reset",
                   TRN3_CHIP_MCU_RESET,
                   4,
                   0,
                   access::wo,
                   "TRN3_MCU_RESET_KEY: warm-reset the MCU and its mailbox"};
    reg fw_event_{regs, "fw_event", TRN3_CHIP_FW_EVENT, 4, 0, access::wo, "firmware: 1 reports an event to the host"};
    reg nl_ports_{regs, "nl_ports", TRN3_CHIP_NL_PORTS, 4, 0, access::ro, "bit p: NeuronLink port p has a link"};
    reg dma_queues_{regs, "dma_queues", TRN3_CHIP_DMA_QUEUES, 4, TRN3_DMA_QUEUES, access::ro, "DMA queues"};
    reg fabric_id_{regs, "fabric_id", TRN3_CHIP_FABRIC_ID, 4, 0, access::rw, "bits 7:0 fabric id, bit 31 enable"};
    reg fabric_rx_bytes_{regs, "fabric_rx_bytes", TRN3_CHIP_FABRIC_RX_BYTES, 8, 0, access::ro, "fabric bytes landed"};
    reg fabric_dropped_{regs, "fabric_dropped", TRN3_CHIP_FABRIC_DROPPED, 4, 0, access::ro, "fabric TLPs dropped"};
    std::array<std::unique_ptr<reg>, TRN3_FABRIC_CHANNELS> fabric_rx_channel_;  // TRN3_CHIP_FABRIC_RX_CHANNEL(c)
    std::array<std::unique_ptr<reg>, TRN3_FABRIC_CHANNELS> fabric_operand_;  // TRN3_CHIP_FABRIC_OPERAND(c)
    std::array<std::unique_ptr<reg>, TRN3_DMA_PENDING_WORDS> dma_pending_;  // TRN3_CHIP_DMA_PENDING(w)
    std::vector<std::unique_ptr<reg>> routes_;
    reg notify_base_{regs, "notify_base", TRN3_BAR0_NOTIFY + TRN3_NOTIFY_BASE, 8,
                     0,    access::rw,    "notification ring (host)"};
    reg notify_size_{regs, "notify_size", TRN3_BAR0_NOTIFY + TRN3_NOTIFY_SIZE, 4,
                     0,    access::rw,    "entries (a power of two)"};
    reg notify_head_{regs, "notify_head", TRN3_BAR0_NOTIFY + TRN3_NOTIFY_HEAD, 4, 0, access::ro, "entries written"};
    reg notify_tail_{regs, "notify_tail", TRN3_BAR0_NOTIFY + TRN3_NOTIFY_TAIL, 4,
                     0,    access::rw,    "entries the host has read"};
    reg notify_control_{regs,       "notify_control", TRN3_BAR0_NOTIFY + TRN3_NOTIFY_CONTROL, 4, 0,
                        access::rw, "bit 0 enable"};
    std::array<std::unique_ptr<reg>, 5> launch_pc_;
};

}  // namespace trn3::chip
