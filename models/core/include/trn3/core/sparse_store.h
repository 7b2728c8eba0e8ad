// sparse_store: host memory for a simulated memory of any size.
//
// Reserved with mmap(MAP_NORESERVE): 144 GiB costs a few page-table entries
// until it is written, so a 144-chip platform can declare 20 TiB of HBM.
// Transparent huge pages are disabled on the mapping so that touching one
// byte costs one 4 KiB page, not 2 MiB. Untouched memory reads as zero.
#pragma once

#include <cstdint>
#include <string>

namespace trn3 {

class sparse_store {
public:
    // Throws config_error naming `owner` when the host refuses the
    // reservation, and says why (vm.overcommit_memory=2, ulimit -v).
    sparse_store(const std::string& owner, std::uint64_t bytes);
    ~sparse_store();
    sparse_store(const sparse_store&) = delete;
    sparse_store& operator=(const sparse_store&) = delete;

    unsigned char* data() const { return base_; }
    std::uint64_t size() const { return bytes_; }
    // Makes [offset, offset + bytes) read as zero again: whole pages go back
    // to the host (untouched, they cost nothing), partial ones are cleared.
    // Throws std::out_of_range past the end.
    void zero(std::uint64_t offset, std::uint64_t bytes);
    // 4 KiB pages the host has made resident (mincore over the mapping).
    std::uint64_t resident_pages() const;

private:
    unsigned char* base_ = nullptr;
    std::uint64_t bytes_ = 0;
    std::uint64_t mapped_ = 0;
};

// Resident set size of this process in bytes (from /proc/self/statm).
std::uint64_t process_resident_bytes();

}  // namespace trn3
