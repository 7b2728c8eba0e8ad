// The core's path to device memory, its `mem` socket: instruction fetch and
// DMA use it. Accesses go through DMI where the target grants it, else
// b_transport (asking for a grant whenever the target allows one).
#pragma once

#include <cstdint>

#include <tlm>

#include "trn3/core/dmi_cache.h"

namespace trn3::neuroncore {

class device_port {
public:
    explicit device_port(tlm::tlm_initiator_socket<>& socket) : socket_(socket) {}

    // False when the target answers with an error.
    bool access(tlm::tlm_command cmd, std::uint64_t address, unsigned char* data, unsigned len);
    // The socket's invalidate_direct_mem_ptr.
    void invalidate(std::uint64_t start, std::uint64_t end) { dmi_.invalidate(start, end); }

private:
    tlm::tlm_initiator_socket<>& socket_;
    dmi_cache dmi_;
};

}  // namespace trn3::neuroncore
