// sparse_memory: a TLM memory of any size that costs only what is touched
// (its backing store is a sparse_store).
//
// socket:  in   (TLM target; b_transport, DMI, debug)
// params:  size, read_latency, write_latency, dmi
// stats:   reads, writes, bytes_read, bytes_written, address_errors
#pragma once

#include <cstdint>

#include <tlm_utils/simple_target_socket.h>

#include "trn3/core/component.h"
#include "trn3/core/sparse_store.h"
#include "trn3/core/stats.h"

namespace trn3 {

class sparse_memory : public component {
public:
    tlm_utils::simple_target_socket<sparse_memory> in;

    param<byte_count> size;
    param<sc_core::sc_time> read_latency;
    param<sc_core::sc_time> write_latency;
    param<bool> dmi;

    sparse_memory(const sc_core::sc_module_name& name, byte_count default_size);

    // Host pointer to the whole store (for loaders and tests).
    unsigned char* data() { return store_.data(); }
    const unsigned char* data() const { return store_.data(); }
    std::uint64_t resident_pages() const { return store_.resident_pages(); }
    // Revokes every DMI pointer handed out (for example when the memory resets).
    void invalidate_dmi();

private:
    void b_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay);
    bool get_direct_mem_ptr(tlm::tlm_generic_payload& tx, tlm::tlm_dmi& dmi_data);
    unsigned transport_dbg(tlm::tlm_generic_payload& tx);
    // Checks the access; sets an error response and returns false if bad.
    bool check(tlm::tlm_generic_payload& tx) const;

    trace_point trace_in_;
    counter reads_, writes_, bytes_read_, bytes_written_, address_errors_;
    sparse_store store_;
};

}  // namespace trn3
