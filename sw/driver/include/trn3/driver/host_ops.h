// What a host gives its driver: device accesses and host services.
//
// The driver is host-compiled C++ (architecture decision 5): it never
// touches a model. The host model implements this interface with TLM
// accesses through its root complex; every call costs the simulated time of
// what it does (an MMIO read waits for its completion) plus the host's
// per-call software cost, never wall-clock time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "trn3/driver/pci_enum.h"

namespace trn3::driver {

struct dma_buffer {
    std::uint64_t bus_address = 0;  // what the device uses (through the IOMMU)
    std::uint8_t* cpu = nullptr;  // what the driver uses
    std::size_t size = 0;
};

struct host_ops {
    virtual ~host_ops() = default;
    virtual config_access& config() = 0;
    virtual std::uint32_t mmio_read32(std::uint64_t address) = 0;
    virtual void mmio_write32(std::uint64_t address, std::uint32_t value) = 0;
    virtual void mmio_write64(std::uint64_t address, std::uint64_t value) = 0;
    virtual void mmio_read(std::uint64_t address, void* data, std::size_t bytes) = 0;
    virtual void mmio_write(std::uint64_t address, const void* data, std::size_t bytes) = 0;
    // Host memory a device may reach: allocated, mapped in the IOMMU for
    // device `bdf` (read and write), zeroed. cpu == nullptr: host memory is used up.
    virtual dma_buffer alloc_dma(std::uint16_t bdf, std::size_t bytes) = 0;
    // Host memory without an IOMMU mapping (for tests of faults).
    virtual dma_buffer alloc_unmapped(std::size_t bytes) = 0;
    // A program's own memory made reachable by device `bdf` (what registering
    // memory does: its pages are pinned and mapped in the IOMMU). The result's
    // cpu is `cpu`; bus_address == 0: refused.
    virtual dma_buffer pin(std::uint16_t bdf, void* cpu, std::size_t bytes) = 0;
    virtual void unpin(std::uint16_t bdf, const dma_buffer& pinned) = 0;
    // Interrupts: `handler` runs when a message with `data` arrives (it must
    // not block: set state and return).
    virtual void request_irq(std::uint32_t data, std::function<void()> handler) = 0;
    // IOMMU faults of this host: handler(device, bus address, write).
    virtual void on_iommu_fault(std::function<void(std::uint16_t, std::uint64_t, bool)> handler) = 0;
    // Waits in simulated time until `ready()` holds (checked after each
    // interrupt and every `poll_ns`), at most `timeout_ns`; false on timeout.
    virtual bool wait_until(const std::function<bool()>& ready, std::uint64_t timeout_ns,
                            std::uint64_t poll_ns = 1000) = 0;
    virtual void sleep_ns(std::uint64_t ns) = 0;
    virtual std::uint64_t now_ns() const = 0;
    virtual void log(const std::string& line) = 0;
};

}  // namespace trn3::driver
