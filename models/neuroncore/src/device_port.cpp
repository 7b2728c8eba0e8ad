#include "device_port.h"

#include <cstring>

#include "trn3/core/payload.h"

namespace trn3::neuroncore {

bool device_port::access(tlm::tlm_command cmd, std::uint64_t address, unsigned char* data, unsigned len) {
    const bool write = cmd == tlm::TLM_WRITE_COMMAND;
    if (unsigned char* p = dmi_.lookup(address, len, write)) {
        if (write) std::memcpy(p, data, len);
        else std::memcpy(data, p, len);
        return true;
    }
    tlm::tlm_generic_payload tx;
    set_access(tx, cmd, address, data, len);
    sc_core::sc_time delay;
    socket_->b_transport(tx, delay);
    if (!tx.is_response_ok()) return false;
    if (tx.is_dmi_allowed()) {
        tlm::tlm_dmi grant;
        tx.set_address(address);
        if (socket_->get_direct_mem_ptr(tx, grant)) dmi_.insert(grant);
    }
    return true;
}

}  // namespace trn3::neuroncore
