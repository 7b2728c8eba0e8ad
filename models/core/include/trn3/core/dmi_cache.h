// dmi_cache: the initiator side of DMI, the one place that holds DMI pointers.
//
// An initiator asks lookup() before each access; a hit returns the host
// pointer for the access, a miss means "use b_transport". Grants arrive via
// insert() (after get_direct_mem_ptr) and leave via invalidate() (from the
// initiator's invalidate_direct_mem_ptr). With an observer (the protocol
// checker on the initiator's socket) every hit is reported, so a pointer used
// after its invalidation is caught.
#pragma once

#include <cstdint>
#include <vector>

#include <tlm>

namespace trn3 {

class protocol_checker;

class dmi_cache {
public:
    void set_observer(protocol_checker* checker) { observer_ = checker; }

    unsigned char* lookup(std::uint64_t addr, unsigned len, bool is_write) {
        const entry* e = last_ < entries_.size() ? &entries_[last_] : nullptr;
        if (!e || !covers(*e, addr, len, is_write)) e = find(addr, len, is_write);
        if (!e) return nullptr;
        if (observer_) report(addr, len, is_write);
        return e->ptr + (addr - e->start);
    }
    // The grant behind the last successful lookup() (its latencies).
    const tlm::tlm_dmi& last_grant() const { return entries_[last_].dmi; }
    void insert(const tlm::tlm_dmi& dmi);
    void invalidate(std::uint64_t start, std::uint64_t end);
    std::size_t size() const { return entries_.size(); }

private:
    struct entry {
        std::uint64_t start, end;
        unsigned char* ptr;
        bool read, write;
        tlm::tlm_dmi dmi;
    };
    static bool covers(const entry& e, std::uint64_t addr, unsigned len, bool is_write) {
        return addr >= e.start && addr - e.start + len - 1 <= e.end - e.start && (is_write ? e.write : e.read);
    }
    const entry* find(std::uint64_t addr, unsigned len, bool is_write);
    void report(std::uint64_t addr, unsigned len, bool is_write);

    std::vector<entry> entries_;
    std::size_t last_ = 0;
    protocol_checker* observer_ = nullptr;
};

}  // namespace trn3
