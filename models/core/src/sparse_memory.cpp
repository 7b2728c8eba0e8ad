#include "trn3/core/sparse_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include <fmt/format.h>

namespace trn3 {
namespace {
constexpr std::uint64_t page_bytes = 4096;

std::string overcommit_mode() {
    std::ifstream f("/proc/sys/vm/overcommit_memory");
    std::string mode;
    f >> mode;
    return mode;
}
} // namespace

std::uint64_t process_resident_bytes() {
    std::ifstream f("/proc/self/statm");
    std::uint64_t total = 0, resident = 0;
    f >> total >> resident;
    return resident * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

sparse_memory::sparse_memory(const sc_core::sc_module_name& name, byte_count default_size)
    : component(name, frequency{1e9}), in("in"),
      size(this, "size", default_size, "capacity; reserved lazily, only touched pages use host memory",
           range<byte_count>{byte_count{1}, {}}),
      read_latency(this, "read_latency", sc_core::sc_time(10, sc_core::SC_NS), "time annotated on every read"),
      write_latency(this, "write_latency", sc_core::sc_time(10, sc_core::SC_NS), "time annotated on every write"),
      dmi(this, "dmi", true, "grant direct memory access to initiators"),
      trace_in_(*this, "in"),
      reads_(this, "reads", "read transactions served"),
      writes_(this, "writes", "write transactions served"),
      bytes_read_(this, "bytes_read", "bytes read through b_transport"),
      bytes_written_(this, "bytes_written", "bytes written through b_transport"),
      address_errors_(this, "address_errors", "accesses beyond the end of the memory") {
    bytes_ = (size.get().bytes + page_bytes - 1) / page_bytes * page_bytes;
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        int err = errno;
        std::string mode = overcommit_mode();
        std::string why = mode == "2"
            ? "the host refuses overcommit (vm.overcommit_memory=2); sparse memories need mode 0 or 1 "
              "(sysctl vm.overcommit_memory=0)"
            : std::string("mmap failed: ") + std::strerror(err) + " (check ulimit -v)";
        throw config_error(fmt::format("{}: cannot reserve {}: {}", this->name(), format_byte_count(size), why));
    }
    madvise(p, bytes_, MADV_NOHUGEPAGE);
    base_ = static_cast<unsigned char*>(p);
    in.register_b_transport(this, &sparse_memory::b_transport);
    in.register_get_direct_mem_ptr(this, &sparse_memory::get_direct_mem_ptr);
    in.register_transport_dbg(this, &sparse_memory::transport_dbg);
}

sparse_memory::~sparse_memory() {
    if (base_) munmap(base_, bytes_);
}

std::uint64_t sparse_memory::resident_pages() const {
    // mincore wants one byte per page: walk in 1 GiB chunks to bound the vector.
    constexpr std::uint64_t chunk = 1ull << 30;
    std::vector<unsigned char> vec(chunk / page_bytes);
    std::uint64_t n = 0;
    for (std::uint64_t off = 0; off < bytes_; off += chunk) {
        std::uint64_t len = std::min(chunk, bytes_ - off);
        if (mincore(base_ + off, len, vec.data()) != 0) continue;
        for (std::uint64_t i = 0; i < len / page_bytes; ++i) n += vec[i] & 1;
    }
    return n;
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

namespace {
// Copies with byte enables (the slow path: enables are rare for memory).
void copy_enabled(unsigned char* dst, const unsigned char* src, unsigned len, const unsigned char* be, unsigned be_len) {
    for (unsigned i = 0; i < len; ++i)
        if (be[i % be_len] == TLM_BYTE_ENABLED) dst[i] = src[i];
}
} // namespace

void sparse_memory::b_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay) {
    ++transaction_count();
    if (!check(tx)) {
        ++address_errors_;
        trace_in_.record(tx, delay);
        return;
    }
    unsigned char* mem = base_ + tx.get_address();
    const unsigned len = tx.get_data_length();
    const unsigned char* be = tx.get_byte_enable_ptr();
    if (tx.is_read()) {
        if (be)
            copy_enabled(tx.get_data_ptr(), mem, len, be, tx.get_byte_enable_length());
        else
            std::memcpy(tx.get_data_ptr(), mem, len);
        ++reads_;
        bytes_read_ += len;
        delay += read_latency.get();
    } else if (tx.is_write()) {
        if (be)
            copy_enabled(mem, tx.get_data_ptr(), len, be, tx.get_byte_enable_length());
        else
            std::memcpy(mem, tx.get_data_ptr(), len);
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
    d.set_dmi_ptr(base_);
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
    if (tx.is_read())
        std::memcpy(tx.get_data_ptr(), base_ + a, len);
    else if (tx.is_write())
        std::memcpy(base_ + a, tx.get_data_ptr(), len);
    tx.set_response_status(tlm::TLM_OK_RESPONSE);
    trace_in_.record(tx, sc_core::SC_ZERO_TIME, true);
    return len;
}

} // namespace trn3
