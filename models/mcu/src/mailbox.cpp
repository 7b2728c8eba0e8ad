#include "trn3/mcu/mailbox.h"

#include <fmt/format.h>

namespace trn3::mcu {

mailbox::mailbox(const sc_core::sc_module_name& name) : reg_block(name, frequency{1e9}), host("host") {
    host.register_b_transport(this, &mailbox::host_transport);
    host.register_transport_dbg(this, &mailbox::host_debug);
    static_assert(sizeof(trn3_mbox_request) == sizeof(trn3_mbox_response), "one word count for both buffers");
    for (unsigned i = 0; i < sizeof(trn3_mbox_request) / 4; ++i) {
        buffers_.push_back(std::make_unique<reg>(regs, fmt::format("request{}", i), TRN3_MBOX_REQUEST + 4 * i, 4, 0,
                                                 access::rw, "request message word"));
        buffers_.push_back(std::make_unique<reg>(regs, fmt::format("response{}", i), TRN3_MBOX_RESPONSE + 4 * i, 4, 0,
                                                 access::rw, "response message word"));
    }
    // Ringing sets a doorbell from its own side; writing 1 from the other side
    // clears it. A doorbell drives its interrupt line.
    auto doorbell = [this](reg& r, std::uint64_t old, side ringer, irq_line& line, bool count) {
        const bool one = r.value() & TRN3_MBOX_DOORBELL_RING;  // ring or clear, by side
        bool pending = old & TRN3_MBOX_DOORBELL_PENDING;
        if (one && side_ == ringer) {
            pending = true;
            if (count) ++requests_;
        } else if (one) {
            pending = false;
        }
        r.set(pending);
        line.set(pending);
    };
    h2m_.on_write([this, doorbell](reg& r, std::uint64_t old) { doorbell(r, old, side::host, mcu_irq, true); });
    m2h_.on_write([this, doorbell](reg& r, std::uint64_t old) { doorbell(r, old, side::mcu, host_irq, false); });
}

void mailbox::host_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay) {
    side_ = side::host;
    regs.transport(tx);
    side_ = side::mcu;
    delay += cycles(1);
}

unsigned mailbox::host_debug(tlm::tlm_generic_payload& tx) {
    regs.transport(tx, true);
    return tx.get_data_length();
}

}  // namespace trn3::mcu

namespace trn3::mcu {

void mailbox::reset() {
    regs.reset();
    mcu_irq.set(false);
    host_irq.set(false);
}

}  // namespace trn3::mcu
