// A PCIe test bench as a lab has one: exerciser endpoints the test drives
// from the side (a DMA of its choosing, an MSI-X it raises) and a protocol
// analyzer at the root (the MSIs it saw, the root complex's counters). The
// pcie platform's endpoints are such exercisers; host programs reach the
// hierarchy itself only through host_ops.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace trn3::apps {

enum class bench_response { ok, address_error, other_error };

struct msi_record {
    std::uint32_t data;
    std::uint16_t requester;
    std::uint64_t at_ps;  // simulated time it reached the root
};

class pcie_bench {
public:
    virtual ~pcie_bench() = default;
    virtual unsigned exercisers() const = 0;
    // Exerciser i's DMA: a read or write of host or peer memory from its
    // endpoint; returns when the transfer is done (simulated time passes).
    virtual bench_response dma(unsigned i, bool write, std::uint64_t address, void* data, std::size_t bytes) = 0;
    virtual void raise_msix(unsigned i, unsigned vector) = 0;
    // What the exerciser's BAR2 memory holds, and host memory (to check transfers).
    virtual const std::uint8_t* exerciser_memory(unsigned i) const = 0;
    virtual const std::uint8_t* host_memory() const = 0;
    // The analyzer.
    virtual const std::vector<msi_record>& msis() const = 0;
    virtual std::uint64_t config_requests() const = 0;
    virtual std::uint64_t config_retries() const = 0;  // Configuration Retry Status while links trained
    virtual std::uint64_t reflected() const = 0;  // requests the root sent back down (ACS redirect)
};

}  // namespace trn3::apps
