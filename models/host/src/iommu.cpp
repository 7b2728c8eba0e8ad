#include "trn3/host/iommu.h"

#include <fmt/format.h>

#include "trn3/core/error.h"
#include "trn3/core/log.h"
#include "trn3/core/payload.h"
#include "trn3/pcie/requester_id.h"

namespace trn3::host {

iommu::iommu(const sc_core::sc_module_name& name)
    : component(name, frequency{2.8e9}), translations_(this, "translations", "device accesses translated"),
      faults_(this, "faults", "device accesses refused (no mapping or no permission)") {
    in.register_b_transport(this, &iommu::transport);
}

void iommu::map(std::uint16_t device, std::uint64_t bus, std::uint64_t physical, std::uint64_t bytes, bool writable) {
    if (bytes == 0) return;
    if (bus % page != physical % page)
        throw config_error(
            fmt::format("{}: mapping {:#x} -> {:#x}: offsets within the page differ", name(), bus, physical));
    const std::uint64_t first = bus / page, last = (bus + bytes - 1) / page;
    for (std::uint64_t p = first; p <= last; ++p) pages_[{device, p}] = {physical / page + (p - first), writable};
}

void iommu::unmap(std::uint16_t device, std::uint64_t bus, std::uint64_t bytes) {
    if (bytes == 0) return;
    for (std::uint64_t p = bus / page; p <= (bus + bytes - 1) / page; ++p) pages_.erase({device, p});
}

void iommu::transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay) {
    pcie::requester_id* id = nullptr;
    tx.get_extension(id);
    if (!id || !enabled.get()) {
        out->b_transport(tx, delay);
        return;
    }
    delay += latency.get();
    const bool write = tx.is_write();
    const std::uint64_t bus = tx.get_address();
    const std::uint64_t n = tx.get_data_length();
    if (n == 0) {
        tx.set_response_status(tlm::TLM_OK_RESPONSE);
        return;
    }
    // Check every page first: a refused access moves nothing.
    for (std::uint64_t p = bus / page; p <= (bus + n - 1) / page; ++p) {
        auto it = pages_.find({id->bdf, p});
        if (it == pages_.end() || (write && !it->second.writable)) {
            ++faults_;
            log().warn("fault: device {:02x}:{:02x}.{} {} bus address {:#x}", id->bdf >> 8, (id->bdf >> 3) & 31,
                       id->bdf & 7, write ? "write" : "read", p * page < bus ? bus : p * page);
            tx.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
            if (fault) fault(id->bdf, p * page < bus ? bus : p * page, write);
            return;
        }
    }
    // Translate page by page (contiguous physical runs in one access).
    unsigned char* data = tx.get_data_ptr();
    timing_only no_data;  // a timing-only access stays one, run by run
    const bool timing = tx.get_extension<timing_only>() != nullptr;
    std::uint64_t done = 0;
    while (done < n) {
        const std::uint64_t a = bus + done;
        const entry& e = pages_.find({id->bdf, a / page})->second;
        std::uint64_t run = std::min<std::uint64_t>(page - a % page, n - done);
        // Extend over following pages that are physically contiguous.
        while (done + run < n) {
            auto next = pages_.find({id->bdf, (a + run) / page});
            if (next->second.physical_page != e.physical_page + (a % page + run) / page) break;
            run += std::min<std::uint64_t>(page, n - done - run);
        }
        tlm::tlm_generic_payload part;
        set_access(part, tx.get_command(), e.physical_page * page + a % page, data + done, static_cast<unsigned>(run));
        if (timing) part.set_extension(&no_data);
        out->b_transport(part, delay);
        if (timing) part.clear_extension(&no_data);
        ++translations_;
        if (part.get_response_status() != tlm::TLM_OK_RESPONSE) {
            tx.set_response_status(part.get_response_status());
            return;
        }
        done += run;
    }
    tx.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace trn3::host
