// The host <-> MCU mailbox (spec/mailbox.h): one page of registers seen from
// two sides, the MCU's MMIO (`in`) and the host's (`host`), with a doorbell
// each way and an interrupt line each way.
#pragma once

#include <memory>
#include <vector>

#include <tlm_utils/simple_target_socket.h>

#include "trn3/core/irq.h"
#include "trn3/core/reg_block.h"
#include "trn3/spec/mailbox.h"

namespace trn3::mcu {

class mailbox : public reg_block {
public:
    tlm_utils::simple_target_socket_optional<mailbox> host;
    irq_line mcu_irq;  // to the MCU's interrupt controller: a request is waiting
    irq_line host_irq;  // to the host: a response is waiting

    explicit mailbox(const sc_core::sc_module_name& name);

    std::uint64_t requests() const { return requests_; }
    // Both doorbells and the buffers cleared, both interrupts low (a reset
    // of the MCU from the host: nothing of an old request survives).
    void reset() override;

private:
    enum class side { mcu, host };
    void before_access(const sc_core::sc_time&) override { side_ = side::mcu; }
    void host_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay);
    unsigned host_debug(tlm::tlm_generic_payload& tx);
    side side_ = side::mcu;
    std::uint64_t requests_ = 0;
    reg h2m_{regs,
             "h2m_doorbell",
             TRN3_MBOX_H2M_DOORBELL,
             4,
             0,
             access::rw,
             "host rings (1), the MCU clears (1): a request waits"};
    reg m2h_{regs,
             "m2h_doorbell",
             TRN3_MBOX_M2H_DOORBELL,
             4,
             0,
             access::rw,
             "the MCU rings (1), the host clears (1): a response waits"};
    std::vector<std::unique_ptr<reg>> buffers_;  // request and response words
};

}  // namespace trn3::mcu
