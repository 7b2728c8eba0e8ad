// Host-side PCI Express enumeration, as a host driver (or firmware) does it
// after reset, and an lspci-like listing of the result.
//
// The walk is depth-first from bus 0. On every bus it probes devices 0..31,
// function 0 first and functions 1..7 only when function 0's header type has
// the multi-function bit. For each function found it
//   1. reads the IDs, class and header type and walks the capability list for
//      the PCI Express capability (port type, link) and MSI-X (table size);
//   2. turns memory decoding off, sizes every memory BAR (write all ones, read
//      back, restore) and assigns it from the address pools: 64-bit
//      prefetchable BARs from mem64, all others (32-bit, and 64-bit
//      non-prefetchable, which a bridge's 32-bit non-prefetchable window must
//      hold) from mem32, each aligned to its size;
//   3. for a bridge (header type 1): writes primary = this bus, secondary = the
//      next free bus and subordinate = 0xFF (so type-1 configuration requests
//      reach everything below during the scan), aligns both pool cursors to
//      1 MiB (the window bases), scans the secondary bus, then writes the real
//      subordinate bus and programs the non-prefetchable window (mem32) and
//      the 64-bit prefetchable window (mem64) over what was assigned below,
//      limits rounded up to 1 MiB; a window with nothing behind it is closed
//      (base > limit);
//   4. sets Memory Space and Bus Master in the command register.
// Register offsets and bits come from trn3/spec/pci.h. Plain C++17, no SystemC.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trn3/spec/pci.h"

namespace trn3::driver {

// How the walker reaches configuration space (the platform implements it with
// TLM accesses through the root complex's ECAM window). A read of a function
// that does not exist returns all ones (an Unsupported Request completion).
struct config_access {
    virtual ~config_access() = default;
    // bytes is 1, 2 or 4 and offset is naturally aligned.
    virtual std::uint32_t read(std::uint16_t bdf, std::uint16_t offset, unsigned bytes) = 0;
    virtual void write(std::uint16_t bdf, std::uint16_t offset, unsigned bytes, std::uint32_t value) = 0;
};

// One assigned memory BAR. A 64-bit BAR occupies slots index and index + 1.
struct pci_bar {
    int index;  // first BAR slot (0..5)
    std::uint64_t base;  // assigned address
    std::uint64_t size;  // bytes (a power of two)
    bool is64;
    bool prefetchable;
};

struct pci_function {
    std::uint16_t bdf = 0;
    std::uint16_t vendor = 0, device = 0;
    std::uint32_t class_code = 0;  // base class << 16 | subclass << 8 | programming interface
    std::uint8_t revision = 0;
    bool bridge = false;  // header type 1
    unsigned port_type = ~0u;  // PCIe capability device/port type (TRN3_PCIE_TYPE_*), or ~0u if no PCIe capability
    std::vector<pci_bar> bars;  // sized and assigned BARs (size 0 BARs omitted)
    // bridges only:
    std::uint8_t secondary = 0, subordinate = 0;
    std::uint64_t mem_base = 0, mem_limit = 0;  // non-prefetchable window (limit inclusive); base > limit = closed
    std::uint64_t pref_base = 0, pref_limit = 0;  // prefetchable 64-bit window
    // link (from the PCIe capability's link status / status 2):
    unsigned link_speed = 0;  // code: 1 2.5 GT/s, 2 5, 3 8, 4 16, 5 32, 6 64
    unsigned link_width = 0;  // lanes
    unsigned max_speed = 0, max_width = 0;  // from link capabilities
    bool flit_mode = false, dl_active = false;
    unsigned msix_vectors = 0;  // table size from the MSI-X capability, 0 if none
    int parent = -1;  // index in the result of the bridge above, -1 for bus 0
    int depth = 0;
};

// Memory the walker hands out: [base, base + size) for each kind of BAR.
// mem32 must lie below 4 GiB.
struct address_pool {
    std::uint64_t mem32_base, mem32_size, mem64_base, mem64_size;
};

// Depth-first walk from bus 0: assigns bus numbers to bridges (primary,
// secondary, subordinate), sizes every BAR (write all ones, read back, restore)
// and assigns it from the pool (64-bit prefetchable BARs from mem64, the others
// from mem32, each aligned to its size), programs each bridge's non-prefetchable and
// prefetchable windows to cover what is below it (1 MiB granularity; a window
// with nothing behind it is programmed closed: base > limit), sets Memory Space
// and Bus Master in every function's command register. Throws
// std::runtime_error with a one-line message if a pool runs out or more than
// 255 buses are needed. Functions are returned in discovery (depth-first) order.
std::vector<pci_function> enumerate(config_access& cfg, const address_pool& pool);

// An lspci-like listing, one line per function, indented two spaces per
// depth: bdf, [vendor:device], kind; for bridges the bus range and both
// windows ("closed" when base > limit); each BAR with base, width,
// prefetchability and size; the MSI-X vector count; the link (speed, width,
// maximum, flit mode, DL active). For example:
//   00:00.0 [1d0f:7f00] PCI bridge (root port) bus 01-05 mem 0xe0000000-0xe03fffff
//           pref 0x4000000000-0x40010fffff  Gen6 64GT/s x16 (max Gen6 64GT/s x16) flit DLActive
//       03:00.0 [1d0f:7364] accelerator BAR0 0x4000000000 [64-bit pref 16M] BAR2 0xe0100000 [32-bit 1M]
//           MSI-X 32  Gen6 64GT/s x16 (max Gen6 64GT/s x16) flit
// (each entry is one line; wrapped here).
std::string lspci(const std::vector<pci_function>& functions);
// "03:00.0"
std::string bdf_name(std::uint16_t bdf);

}  // namespace trn3::driver
