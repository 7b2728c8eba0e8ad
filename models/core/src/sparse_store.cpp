#include "trn3/core/sparse_store.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "trn3/core/error.h"
#include "trn3/core/units.h"

namespace trn3 {
namespace {
constexpr std::uint64_t page_bytes = 4096;

std::string overcommit_mode() {
    std::ifstream f("/proc/sys/vm/overcommit_memory");
    std::string mode;
    f >> mode;
    return mode;
}
}  // namespace

std::uint64_t process_resident_bytes() {
    std::ifstream f("/proc/self/statm");
    std::uint64_t total = 0, resident = 0;
    f >> total >> resident;
    return resident * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

sparse_store::sparse_store(const std::string& owner, std::uint64_t bytes) : bytes_(bytes) {
    mapped_ = (bytes + page_bytes - 1) / page_bytes * page_bytes;
    void* p = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        int err = errno;
        std::string why =
            overcommit_mode() == "2"
                ? "the host refuses overcommit (vm.overcommit_memory=2); sparse memories need mode 0 or 1 "
                  "(sysctl vm.overcommit_memory=0)"
                : std::string("mmap failed: ") + std::strerror(err) + " (check ulimit -v)";
        throw config_error(fmt::format("{}: cannot reserve {}: {}", owner, format_byte_count(byte_count{bytes}), why));
    }
    madvise(p, mapped_, MADV_NOHUGEPAGE);
    base_ = static_cast<unsigned char*>(p);
}

sparse_store::~sparse_store() {
    if (base_) munmap(base_, mapped_);
}

void sparse_store::zero(std::uint64_t offset, std::uint64_t bytes) {
    if (offset > bytes_ || bytes > bytes_ - offset)
        throw std::out_of_range(fmt::format("sparse_store::zero: {} bytes at {} past {}", bytes, offset, bytes_));
    const std::uint64_t end = offset + bytes;
    const std::uint64_t first = (offset + page_bytes - 1) / page_bytes * page_bytes,
                        last = end / page_bytes * page_bytes;
    if (first >= last) {  // within one page, or across one boundary without a whole page
        std::memset(base_ + offset, 0, bytes);
        return;
    }
    std::memset(base_ + offset, 0, first - offset);
    std::memset(base_ + last, 0, end - last);
    // A private anonymous mapping reads zero-filled pages after MADV_DONTNEED.
    if (madvise(base_ + first, last - first, MADV_DONTNEED) != 0) std::memset(base_ + first, 0, last - first);
}

std::uint64_t sparse_store::resident_pages() const {
    // mincore wants one byte per page: walk in 1 GiB chunks to bound the vector.
    constexpr std::uint64_t chunk = 1ull << 30;
    std::vector<unsigned char> vec(chunk / page_bytes);
    std::uint64_t n = 0;
    for (std::uint64_t off = 0; off < mapped_; off += chunk) {
        std::uint64_t len = std::min(chunk, mapped_ - off);
        if (mincore(base_ + off, len, vec.data()) != 0) continue;
        n += static_cast<std::uint64_t>(std::count_if(vec.begin(), vec.begin() + static_cast<long>(len / page_bytes),
                                                      [](unsigned char v) { return v & 1; }));
    }
    return n;
}

}  // namespace trn3
