// Helpers for moving a generic payload's data, and the timing-only extension.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>

#include <systemc>
#include <tlm>

namespace trn3 {

// Prepares a payload for a plain access: command, address, data, length,
// streaming width = length, no byte enables, TLM_INCOMPLETE_RESPONSE.
inline void set_access(tlm::tlm_generic_payload& tx, tlm::tlm_command cmd, std::uint64_t addr, void* data,
                       unsigned len) {
    tx.set_command(cmd);
    tx.set_address(addr);
    tx.set_data_ptr(static_cast<unsigned char*>(data));
    tx.set_data_length(len);
    tx.set_streaming_width(len);
    tx.set_byte_enable_ptr(nullptr);
    tx.set_byte_enable_length(0);
    tx.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
}

// A blocking access from a thread: b_transport with `delay` annotated (a
// caller's own cost), then wait() for the annotated time. Returns the
// response. `fw` is an initiator socket's forward interface (`socket.operator->()`).
inline tlm::tlm_response_status access_and_wait(tlm::tlm_fw_transport_if<>* fw, tlm::tlm_command cmd,
                                                std::uint64_t addr, void* data, std::size_t bytes,
                                                sc_core::sc_time delay = sc_core::SC_ZERO_TIME) {
    tlm::tlm_generic_payload tx;
    set_access(tx, cmd, addr, data, static_cast<unsigned>(bytes));
    fw->b_transport(tx, delay);
    sc_core::wait(delay);
    return tx.get_response_status();
}

// Copies between a payload's data array and `mem` (the bytes at the payload's
// address), honouring byte enables: disabled bytes are neither read nor
// written.
inline void copy_payload(tlm::tlm_generic_payload& tx, unsigned char* mem) {
    const unsigned len = tx.get_data_length();
    unsigned char* data = tx.get_data_ptr();
    const unsigned char* be = tx.get_byte_enable_ptr();
    const unsigned be_len = tx.get_byte_enable_length();
    if (!be) {
        if (tx.is_read()) std::memcpy(data, mem, len);
        else if (tx.is_write()) std::memcpy(mem, data, len);
        return;
    }
    for (unsigned i = 0; i < len; ++i) {
        if (be[i % be_len] != TLM_BYTE_ENABLED) continue;
        if (tx.is_read()) data[i] = mem[i];
        else if (tx.is_write()) mem[i] = data[i];
    }
}

// Attached to a payload whose data the initiator has already moved through
// DMI (or does not carry at all, in timing-only runs): the target charges the
// time of a read or write of that address and length, and moves no data.
struct timing_only : tlm::tlm_extension<timing_only> {
    tlm::tlm_extension_base* clone() const override { return new timing_only(*this); }
    void copy_from(const tlm::tlm_extension_base& other) override { *this = static_cast<const timing_only&>(other); }
};

// What a timing-only payload's data pointer points at: room for `bytes`
// that nobody reads or writes, allocated and never touched, so a large
// timing-only access makes no host memory resident. Grows, never shrinks.
class untouched_buffer {
public:
    unsigned char* get(std::uint64_t bytes) {
        if (bytes > size_) {
            p_.reset(new unsigned char[bytes]);  // default-initialised: not written
            size_ = bytes;
        }
        return p_.get();
    }

private:
    std::unique_ptr<unsigned char[]> p_;
    std::uint64_t size_ = 0;
};

}  // namespace trn3
