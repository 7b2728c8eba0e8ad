#include "trn3/core/dmi_cache.h"

#include "trn3/core/protocol_checker.h"

namespace trn3 {

const dmi_cache::entry* dmi_cache::find(std::uint64_t addr, unsigned len, bool is_write) {
    for (std::size_t i = 0; i < entries_.size(); ++i) {
        if (covers(entries_[i], addr, len, is_write)) {
            last_ = i;
            return &entries_[i];
        }
    }
    return nullptr;
}

void dmi_cache::insert(const tlm::tlm_dmi& dmi) {
    entries_.push_back({dmi.get_start_address(), dmi.get_end_address(), dmi.get_dmi_ptr(), dmi.is_read_allowed(),
                        dmi.is_write_allowed(), dmi});
}

void dmi_cache::invalidate(std::uint64_t start, std::uint64_t end) {
    for (std::size_t i = entries_.size(); i-- > 0;)
        if (entries_[i].start <= end && start <= entries_[i].end)
            entries_.erase(entries_.begin() + static_cast<long>(i));
    last_ = 0;
}

void dmi_cache::report(std::uint64_t addr, unsigned len, bool is_write) {
    observer_->note_dmi_access(addr, len, is_write);
}

}  // namespace trn3
