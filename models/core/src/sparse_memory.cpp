#include "trn3/core/sparse_memory.h"

#include <cstring>

#include "trn3/core/payload.h"

namespace trn3 {

sparse_memory::sparse_memory(const sc_core::sc_module_name& name, byte_count default_size)
    : component(name, frequency{1e9}), in("in"),
      size(this, "size", default_size, "capacity; reserved lazily, only touched pages use host memory",
           range<byte_count>{byte_count{1}, byte_count{1ull << 62}}),
      read_latency(this, "read_latency", sc_core::sc_time(10, sc_core::SC_NS), "time annotated on every read"),
      write_latency(this, "write_latency", sc_core::sc_time(10, sc_core::SC_NS), "time annotated on every write"),
      dmi(this, "dmi", true, "grant direct memory access to initiators"), trace_in_(*this, "in"),
      reads_(this, "reads", "read transactions served"), writes_(this, "writes", "write transactions served"),
      bytes_read_(this, "bytes_read", "bytes read through b_transport"),
      bytes_written_(this, "bytes_written", "bytes written through b_transport"),
      address_errors_(this, "address_errors", "accesses beyond the end of the memory"),
      store_(this->name(), size.get().bytes) {
    in.register_b_transport(this, &sparse_memory::b_transport);
    in.register_get_direct_mem_ptr(this, &sparse_memory::get_direct_mem_ptr);
    in.register_transport_dbg(this, &sparse_memory::transport_dbg);
}

void sparse_memory::invalidate_dmi() { in->invalidate_direct_mem_ptr(0, ~0ull); }

bool sparse_memory::check(tlm::tlm_generic_payload& tx) const {
    const std::uint64_t a = tx.get_address();
    const unsigned len = tx.get_data_length();
    if (a >= size.get().bytes || len > size.get().bytes - a) {
        tx.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return false;
    }
    if (tx.get_streaming_width() < len) {
        tx.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
        return false;
    }
    return true;
}

void sparse_memory::b_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay) {
    ++transaction_count();
    if (!check(tx)) {
        ++address_errors_;
        trace_in_.record(tx, delay);
        return;
    }
    const unsigned len = tx.get_data_length();
    if (!tx.get_extension<timing_only>()) copy_payload(tx, store_.data() + tx.get_address());
    if (tx.is_read()) {
        ++reads_;
        bytes_read_ += len;
        delay += read_latency.get();
    } else if (tx.is_write()) {
        ++writes_;
        bytes_written_ += len;
        delay += write_latency.get();
    }
    tx.set_dmi_allowed(dmi.get());
    tx.set_response_status(tlm::TLM_OK_RESPONSE);
    trace_in_.record(tx, delay);
}

bool sparse_memory::get_direct_mem_ptr(tlm::tlm_generic_payload& tx, tlm::tlm_dmi& d) {
    if (!dmi.get() || tx.get_address() >= size.get().bytes) return false;
    d.set_dmi_ptr(store_.data());
    d.set_start_address(0);
    d.set_end_address(size.get().bytes - 1);
    d.set_granted_access(tlm::tlm_dmi::DMI_ACCESS_READ_WRITE);
    d.set_read_latency(read_latency.get());
    d.set_write_latency(write_latency.get());
    return true;
}

unsigned sparse_memory::transport_dbg(tlm::tlm_generic_payload& tx) {
    const std::uint64_t a = tx.get_address();
    if (a >= size.get().bytes) {
        tx.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return 0;
    }
    auto len = static_cast<unsigned>(std::min<std::uint64_t>(tx.get_data_length(), size.get().bytes - a));
    if (tx.is_read()) std::memcpy(tx.get_data_ptr(), store_.data() + a, len);
    else if (tx.is_write()) std::memcpy(store_.data() + a, tx.get_data_ptr(), len);
    tx.set_response_status(tlm::TLM_OK_RESPONSE);
    trace_in_.record(tx, sc_core::SC_ZERO_TIME, true);
    return len;
}

}  // namespace trn3
