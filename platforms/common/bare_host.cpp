#include "trn3/platforms/bare_host.h"

#include <algorithm>
#include <cstring>

#include "trn3/core/payload.h"

namespace trn3 {

void bare_host::access(tlm_utils::simple_initiator_socket_optional<bare_host>& s, tlm::tlm_command cmd,
                       std::uint64_t address, void* data, std::size_t bytes) {
    if (s.size() == 0) {  // nothing there: no device answers
        if (cmd == tlm::TLM_READ_COMMAND) std::memset(data, &s == &cpu_ecam ? 0xFF : 0, bytes);
        return;
    }
    access_and_wait(s.operator->(), cmd, address, data, bytes);
}

void bare_host::deliver_interrupt(std::uint32_t data) {
    if (auto it = handlers_.find(data); it != handlers_.end()) it->second();
    interrupt_.notify(sc_core::SC_ZERO_TIME);
}

std::uint32_t bare_host::read(std::uint16_t bdf, std::uint16_t offset, unsigned bytes) {
    std::uint32_t v = 0;
    access(cpu_ecam, tlm::TLM_READ_COMMAND, (std::uint64_t(bdf) << 12) | offset, &v, bytes);
    return v;
}

void bare_host::write(std::uint16_t bdf, std::uint16_t offset, unsigned bytes, std::uint32_t value) {
    access(cpu_ecam, tlm::TLM_WRITE_COMMAND, (std::uint64_t(bdf) << 12) | offset, &value, bytes);
}

std::uint32_t bare_host::mmio_read32(std::uint64_t a) {
    std::uint32_t v = 0;
    access(cpu_mmio, tlm::TLM_READ_COMMAND, a, &v, 4);
    return v;
}
void bare_host::mmio_write32(std::uint64_t a, std::uint32_t v) { access(cpu_mmio, tlm::TLM_WRITE_COMMAND, a, &v, 4); }
void bare_host::mmio_write64(std::uint64_t a, std::uint64_t v) { access(cpu_mmio, tlm::TLM_WRITE_COMMAND, a, &v, 8); }
void bare_host::mmio_read(std::uint64_t a, void* d, std::size_t n) { access(cpu_mmio, tlm::TLM_READ_COMMAND, a, d, n); }
void bare_host::mmio_write(std::uint64_t a, const void* d, std::size_t n) {
    access(cpu_mmio, tlm::TLM_WRITE_COMMAND, a, const_cast<void*>(d), n);
}

bool bare_host::wait_until(const std::function<bool()>& ready, std::uint64_t timeout_ns, std::uint64_t poll_ns) {
    const sc_core::sc_time deadline = sc_core::sc_time_stamp() + sc_core::sc_time(double(timeout_ns), sc_core::SC_NS);
    const sc_core::sc_time poll(double(std::max<std::uint64_t>(poll_ns, 1)), sc_core::SC_NS);
    while (!ready()) {
        const sc_core::sc_time now = sc_core::sc_time_stamp();
        if (now >= deadline) return false;
        sc_core::wait(std::min(poll, deadline - now), interrupt_);
    }
    return true;
}

void bare_host::sleep_ns(std::uint64_t ns) { sc_core::wait(sc_core::sc_time(double(ns), sc_core::SC_NS)); }

std::uint64_t bare_host::now_ns() const {
    return static_cast<std::uint64_t>(sc_core::sc_time_stamp().to_seconds() * 1e9);
}

}  // namespace trn3
