// A host without an operating system's costs: driver::host_ops over a CPU's
// two initiator sockets, ECAM (configuration space, offset = bdf << 12 |
// register) and MMIO, for a bench without a Graviton4 (the pcie platform's
// bare root complex, the mcu platform's mailbox). Every access waits for its
// annotated time and nothing else; there is no host memory allocator or
// IOMMU. Either socket may stay unbound: configuration reads then find no
// device (all ones), MMIO reads return zero and writes vanish. The platform
// delivers interrupts with deliver_interrupt(data); they run the handlers
// request_irq registered and wake wait_until.
//
//   cpu_ecam ──> rc.ecam      cpu_mmio ──> rc.mmio (or a device's registers)
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>

#include "trn3/driver/host_ops.h"

namespace trn3 {

class bare_host final : public sc_core::sc_module, public driver::host_ops, private driver::config_access {
public:
    tlm_utils::simple_initiator_socket_optional<bare_host> cpu_ecam{"cpu_ecam"}, cpu_mmio{"cpu_mmio"};

    explicit bare_host(const sc_core::sc_module_name& name) : sc_core::sc_module(name) {}

    driver::config_access& config() override { return *this; }
    std::uint32_t mmio_read32(std::uint64_t a) override;
    void mmio_write32(std::uint64_t a, std::uint32_t v) override;
    void mmio_write64(std::uint64_t a, std::uint64_t v) override;
    void mmio_read(std::uint64_t a, void* d, std::size_t n) override;
    void mmio_write(std::uint64_t a, const void* d, std::size_t n) override;
    driver::dma_buffer alloc_dma(std::uint16_t, std::size_t) override { return {}; }
    driver::dma_buffer alloc_unmapped(std::size_t) override { return {}; }
    driver::dma_buffer pin(std::uint16_t, void*, std::size_t) override { return {}; }
    void unpin(std::uint16_t, const driver::dma_buffer&) override {}
    void request_irq(std::uint32_t data, std::function<void()> handler) override {
        handlers_[data] = std::move(handler);
    }
    void on_iommu_fault(std::function<void(std::uint16_t, std::uint64_t, bool)>) override {}
    bool wait_until(const std::function<bool()>& ready, std::uint64_t timeout_ns, std::uint64_t poll_ns) override;
    void sleep_ns(std::uint64_t ns) override;
    std::uint64_t now_ns() const override;
    void log(const std::string& line) override { lines.push_back(line); }

    std::vector<std::string> lines;

    // Wiring: an interrupt with message data `data` reaches the host.
    void deliver_interrupt(std::uint32_t data);

private:
    std::uint32_t read(std::uint16_t bdf, std::uint16_t offset, unsigned bytes) override;
    void write(std::uint16_t bdf, std::uint16_t offset, unsigned bytes, std::uint32_t value) override;
    void access(tlm_utils::simple_initiator_socket_optional<bare_host>& s, tlm::tlm_command cmd, std::uint64_t address,
                void* data, std::size_t bytes);
    std::map<std::uint32_t, std::function<void()>> handlers_;
    sc_core::sc_event interrupt_;
};

}  // namespace trn3
