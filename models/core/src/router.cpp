#include "trn3/core/router.h"

#include <algorithm>

#include <fmt/format.h>

#include "trn3/core/protocol_checker.h"

namespace trn3 {

router::router(const sc_core::sc_module_name& name)
    : component(name, frequency{1e9}), in("in"), out("out"), trace_in_(*this, "in"),
      transactions_(this, "transactions", "transactions routed"),
      address_errors_(this, "address_errors", "accesses to unmapped addresses") {
    in.register_b_transport(this, &router::b_transport);
    in.register_get_direct_mem_ptr(this, &router::get_direct_mem_ptr);
    in.register_transport_dbg(this, &router::transport_dbg);
    out.register_invalidate_direct_mem_ptr(this, &router::invalidate_direct_mem_ptr);
}

void router::map(tlm::tlm_base_target_socket_b<>& target, std::uint64_t base, std::uint64_t size,
                 const std::string& region_name) {
    if (size == 0) throw config_error(fmt::format("{}: region '{}' has size 0", name(), region_name));
    if (base + (size - 1) < base)
        throw config_error(fmt::format("{}: region '{}' runs past the end of the address space", name(), region_name));
    for (const region& r : regions_) {
        if (base <= r.base + (r.size - 1) && r.base <= base + (size - 1))
            throw config_error(fmt::format("{}: region '{}' [0x{:x}, 0x{:x}] overlaps region '{}' [0x{:x}, 0x{:x}]",
                                           name(), region_name, base, base + size - 1, r.name, r.base,
                                           r.base + r.size - 1));
    }
    connect(out, target);
    region r{region_name, base, size, bound_targets_++, nullptr};
    regions_.insert(std::upper_bound(regions_.begin(), regions_.end(), base,
                                     [](std::uint64_t b, const region& x) { return b < x.base; }),
                    r);
}

void router::end_of_elaboration() {
    for (region& r : regions_) r.fw = out[r.target];
}

std::string router::memory_map_text() const {
    std::string s = fmt::format("{} memory map:\n", name());
    for (const region& r : regions_)
        s += fmt::format("  0x{:012x} - 0x{:012x}  {:>10}  {}\n", r.base, r.base + r.size - 1,
                         format_byte_count(byte_count{r.size}), r.name);
    return s;
}

const router::region* router::decode_slow(std::uint64_t addr, unsigned len) {
    auto it = std::upper_bound(regions_.begin(), regions_.end(), addr,
                               [](std::uint64_t a, const region& r) { return a < r.base; });
    if (it == regions_.begin()) return nullptr;
    const region* r = &*(it - 1);
    if (addr - r->base >= r->size || len > r->base + r->size - addr) return nullptr;
    last_ = r;
    return r;
}

void router::b_transport(int, tlm::tlm_generic_payload& tx, sc_core::sc_time& delay) {
    ++transactions_;
    const std::uint64_t addr = tx.get_address();
    const region* r = decode(addr, tx.get_data_length());
    if (!r) {
        ++address_errors_;
        tx.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        trace_in_.record(tx, delay);
        return;
    }
    tx.set_address(addr - r->base);
    r->fw->b_transport(tx, delay);
    tx.set_address(addr);
    trace_in_.record(tx, delay);
}

bool router::get_direct_mem_ptr(int, tlm::tlm_generic_payload& tx, tlm::tlm_dmi& dmi) {
    const std::uint64_t addr = tx.get_address();
    const region* r = decode(addr, 1);
    if (!r) return false;
    tx.set_address(addr - r->base);
    bool granted = r->fw->get_direct_mem_ptr(tx, dmi);
    tx.set_address(addr);
    // Translate the grant (or the range it refuses) back into this map,
    // clipped to the region so a target never leaks past its window.
    std::uint64_t start = dmi.get_start_address(), end = std::min<std::uint64_t>(dmi.get_end_address(), r->size - 1);
    if (granted && start > end) return false;
    dmi.set_start_address(start + r->base);
    dmi.set_end_address(end + r->base);
    return granted;
}

unsigned router::transport_dbg(int, tlm::tlm_generic_payload& tx) {
    const std::uint64_t addr = tx.get_address();
    const region* r = decode(addr, 1);
    if (!r) {
        tx.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return 0;
    }
    // A debug access may run past its region: clip it.
    const unsigned len = tx.get_data_length();
    auto clipped = static_cast<unsigned>(std::min<std::uint64_t>(len, r->base + r->size - addr));
    tx.set_address(addr - r->base);
    tx.set_data_length(clipped);
    unsigned n = r->fw->transport_dbg(tx);
    tx.set_data_length(len);
    tx.set_address(addr);
    return n;
}

void router::invalidate_direct_mem_ptr(int target, sc_dt::uint64 start, sc_dt::uint64 end) {
    for (const region& r : regions_) {
        if (r.target != target || start > r.size - 1) continue;
        std::uint64_t s = r.base + start;
        std::uint64_t e = r.base + std::min<std::uint64_t>(end, r.size - 1);
        for (unsigned i = 0; i < in.size(); ++i) in[static_cast<int>(i)]->invalidate_direct_mem_ptr(s, e);
    }
}

}  // namespace trn3
