// A component whose registers are its whole bus interface: a target socket
// serving one register bank, one clock cycle per access. Small devices
// (UART, timer, interrupt controller, mailbox) derive from it and declare
// their registers in `regs`.
#pragma once

#include <string>

#include <tlm_utils/simple_target_socket.h>

#include "trn3/core/component.h"
#include "trn3/core/reg.h"

namespace trn3 {

class reg_block : public component {
public:
    tlm_utils::simple_target_socket_optional<reg_block> in;  // may stay unbound (a link no one manages)

    reg_block(const sc_core::sc_module_name& name, frequency default_clock);

protected:
    // Called before each access with the initiator's annotated delay (a
    // device that reads time sees when the access happens).
    virtual void before_access(const sc_core::sc_time& delay) { (void)delay; }

    reg_bank regs{std::string(name()) + ".regs"};

private:
    void transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay);
    unsigned debug(tlm::tlm_generic_payload& tx);
};

}  // namespace trn3
