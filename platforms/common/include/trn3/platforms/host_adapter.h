// The driver's view of a host model: driver::host_ops implemented with a
// graviton4's software API (TLM accesses through its root complex, its DDR5,
// its IOMMU and interrupt dispatch). Platforms give one to each driver
// instance; call it only from the host's software threads.
#pragma once

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "trn3/driver/host_ops.h"
#include "trn3/host/graviton4.h"

namespace trn3 {

class host_adapter final : public driver::host_ops, private driver::config_access {
public:
    explicit host_adapter(host::graviton4& h) : h_(h) {
        h_.iommu0.fault = [this](std::uint16_t d, std::uint64_t a, bool w) {
            for (auto& f : fault_handlers_) f(d, a, w);
        };
    }

    driver::config_access& config() override { return *this; }
    std::uint32_t mmio_read32(std::uint64_t a) override {
        std::uint32_t v = 0;
        h_.mmio(tlm::TLM_READ_COMMAND, a, &v, 4);
        return v;
    }
    void mmio_write32(std::uint64_t a, std::uint32_t v) override { h_.mmio(tlm::TLM_WRITE_COMMAND, a, &v, 4); }
    void mmio_write64(std::uint64_t a, std::uint64_t v) override { h_.mmio(tlm::TLM_WRITE_COMMAND, a, &v, 8); }
    void mmio_read(std::uint64_t a, void* d, std::size_t n) override { h_.mmio(tlm::TLM_READ_COMMAND, a, d, n); }
    void mmio_write(std::uint64_t a, const void* d, std::size_t n) override {
        h_.mmio(tlm::TLM_WRITE_COMMAND, a, const_cast<void*>(d), n);
    }
    driver::dma_buffer alloc_dma(std::uint16_t bdf, std::size_t bytes) override {
        driver::dma_buffer b = alloc_unmapped(bytes);
        if (b.cpu) h_.iommu0.map(bdf, b.bus_address, b.bus_address, (bytes + 4095) / 4096 * 4096, true);  // identity
        return b;
    }
    driver::dma_buffer alloc_unmapped(std::size_t bytes) override {
        h_.step();
        const std::uint64_t pa = h_.alloc(bytes);
        if (pa == host::graviton4::no_memory) return {};
        h_.ddr.zero(pa, bytes);  // zeroed as the driver expects, without making the pages resident
        return {pa, h_.memory(pa), bytes};
    }
    // The buffer starts a page of its own in the pinned window, wherever it
    // lies in the simulator's memory: the simulated addresses (and so the
    // DMA's page crossings and timing) never depend on the host's allocator.
    driver::dma_buffer pin(std::uint16_t bdf, void* cpu, std::size_t bytes) override {
        h_.step();
        if (!cpu || bytes == 0) return {};
        const std::uint64_t pa = h_.ddr.pin(static_cast<unsigned char*>(cpu), bytes);
        h_.iommu0.map(bdf, pa, pa, pages(bytes), true);  // identity
        return {pa, static_cast<std::uint8_t*>(cpu), bytes};
    }
    void unpin(std::uint16_t bdf, const driver::dma_buffer& b) override {
        if (!b.bus_address) return;
        h_.step();
        h_.iommu0.unmap(bdf, b.bus_address, pages(b.size));
        h_.ddr.unpin(b.bus_address);
    }
    void request_irq(std::uint32_t data, std::function<void()> handler) override {
        h_.on_interrupt(data, std::move(handler));
    }
    void on_iommu_fault(std::function<void(std::uint16_t, std::uint64_t, bool)> handler) override {
        fault_handlers_.push_back(std::move(handler));
    }
    bool wait_until(const std::function<bool()>& ready, std::uint64_t timeout_ns, std::uint64_t poll_ns) override {
        const double hour_ns = 3.6e12;  // longer waits are clamped: sc_time must not overflow
        return h_.wait_until(ready, sc_core::sc_time(std::min(double(timeout_ns), hour_ns), sc_core::SC_NS),
                             sc_core::sc_time(std::max(1.0, std::min(double(poll_ns), hour_ns)), sc_core::SC_NS));
    }
    void sleep_ns(std::uint64_t ns) override { h_.sleep(sc_core::sc_time(double(ns), sc_core::SC_NS)); }
    std::uint64_t now_ns() const override {
        return static_cast<std::uint64_t>(sc_core::sc_time_stamp().to_seconds() * 1e9);
    }
    void log(const std::string& line) override { lines.push_back(line); }

    std::vector<std::string> lines;  // what the driver logged

private:
    static std::uint64_t pages(std::size_t bytes) { return (std::uint64_t{bytes} + 4095) & ~std::uint64_t{4095}; }
    std::uint32_t read(std::uint16_t bdf, std::uint16_t off, unsigned bytes) override {
        return h_.config_read(bdf, off, bytes);
    }
    void write(std::uint16_t bdf, std::uint16_t off, unsigned bytes, std::uint32_t v) override {
        h_.config_write(bdf, off, bytes, v);
    }
    host::graviton4& h_;
    std::vector<std::function<void(std::uint16_t, std::uint64_t, bool)>> fault_handlers_;
};

}  // namespace trn3
