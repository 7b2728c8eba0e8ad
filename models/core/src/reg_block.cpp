#include "trn3/core/reg_block.h"

namespace trn3 {

reg_block::reg_block(const sc_core::sc_module_name& name, frequency default_clock)
    : component(name, default_clock), in("in") {
    in.register_b_transport(this, &reg_block::transport);
    in.register_transport_dbg(this, &reg_block::debug);
}

void reg_block::transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay) {
    before_access(delay);
    regs.transport(tx);
    delay += cycles(1);
}

unsigned reg_block::debug(tlm::tlm_generic_payload& tx) {
    regs.transport(tx, true);
    return tx.is_response_ok() ? tx.get_data_length() : 0;  // bytes transferred: none when it failed
}

}  // namespace trn3
