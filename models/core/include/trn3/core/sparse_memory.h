// sparse_memory: a memory of any size that costs only what is touched.
//
// The backing store is reserved with mmap(MAP_NORESERVE): 144 GiB is a few
// page-table entries until software writes to it, so a 144-chip platform can
// declare 20 TiB of HBM. Transparent huge pages are disabled on the mapping
// so that touching one byte costs one 4 KiB page, not 2 MiB.
//
// socket:  in   (TLM target; b_transport, DMI, debug)
// params:  size, read_latency, write_latency, dmi
// stats:   reads, writes, bytes_read, bytes_written, address_errors
#pragma once

#include <cstdint>

#include <tlm_utils/simple_target_socket.h>

#include "trn3/core/component.h"
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
    ~sparse_memory() override;

    // Host pointer to the whole store (for loaders and tests).
    unsigned char* data() { return base_; }
    // 4 KiB pages the host has made resident (mincore over the mapping).
    std::uint64_t resident_pages() const;
    // Revokes every DMI pointer handed out (for example when the memory resets).
    void invalidate_dmi();

private:
    void b_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay);
    bool get_direct_mem_ptr(tlm::tlm_generic_payload& tx, tlm::tlm_dmi& dmi_data);
    unsigned transport_dbg(tlm::tlm_generic_payload& tx);
    // Checks the access; sets an error response and returns false if bad.
    bool check(tlm::tlm_generic_payload& tx) const;

    unsigned char* base_ = nullptr;
    std::uint64_t bytes_ = 0;
    trace_point trace_in_;
    counter reads_, writes_, bytes_read_, bytes_written_, address_errors_;
};

// Resident set size of this process in bytes (from /proc/self/statm).
std::uint64_t process_resident_bytes();

} // namespace trn3
