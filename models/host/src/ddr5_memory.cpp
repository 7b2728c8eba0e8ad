#include "trn3/host/ddr5_memory.h"

#include <cstring>

#include "trn3/core/payload.h"

namespace trn3::host {

ddr5_memory::ddr5_memory(const sc_core::sc_module_name& name)
    : component(name, frequency{2.8e9}), store_(this->name(), size.get().bytes), reads_(this, "reads", "read accesses"),
      writes_(this, "writes", "write accesses"), bytes_(this, "bytes", "bytes read and written"),
      address_errors_(this, "address_errors", "accesses outside the memory") {
    in.register_b_transport(this, &ddr5_memory::transport);
    in.register_transport_dbg(this, &ddr5_memory::debug);
}

std::uint64_t ddr5_memory::pin(unsigned char* cpu, std::uint64_t bytes) {
    const std::uint64_t physical = next_pinned_;
    pinned_[physical] = {cpu, bytes};
    next_pinned_ += ((bytes + 4095) & ~std::uint64_t{4095}) + 4096;  // page aligned, a guard page between ranges
    return physical;
}

unsigned char* ddr5_memory::resolve(std::uint64_t a, std::uint64_t n) {
    if (a + n < a) return nullptr;
    if (a + n <= size.get().bytes) return store_.data() + a;
    auto it = pinned_.upper_bound(a);
    if (it == pinned_.begin()) return nullptr;
    --it;
    if (a + n > it->first + it->second.bytes) return nullptr;
    return it->second.cpu + (a - it->first);
}

void ddr5_memory::transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay) {
    const std::uint64_t a = tx.get_address(), n = tx.get_data_length();
    unsigned char* const target = resolve(a, n);
    if (!target) {
        ++address_errors_;
        tx.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    if (!tx.get_extension<timing_only>()) copy_payload(tx, target);  // timing only: nothing moves
    if (tx.is_write()) ++writes_;
    else ++reads_;
    bytes_ += n;
    const sc_core::sc_time at = sc_core::sc_time_stamp() + delay;
    const sc_core::sc_time start = at < bus_free_ ? bus_free_ : at;
    bus_free_ = start + sc_core::sc_time(double(n) / bytes_per_second(), sc_core::SC_SEC);
    delay = bus_free_ - sc_core::sc_time_stamp() + latency.get();
    tx.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned ddr5_memory::debug(tlm::tlm_generic_payload& tx) {
    const std::uint64_t a = tx.get_address(), n = tx.get_data_length();
    unsigned char* const at = resolve(a, n);
    if (!at) return 0;
    if (tx.is_write()) std::memcpy(at, tx.get_data_ptr(), n);
    else std::memcpy(tx.get_data_ptr(), at, n);
    return static_cast<unsigned>(n);
}

}  // namespace trn3::host
