// A function's 4 KiB configuration space, bit by bit as the specification
// defines it: every byte has a write mask (which bits software may change)
// and a write-1-to-clear mask; everything else is read-only. BAR sizing falls
// out of the masks (the low bits of a BAR are read-only zero), and so do
// status bits that software clears by writing 1.
//
// The owner builds the header and capabilities at construction (init_*),
// refreshes live fields before a read (on_read) and reacts to writes
// (on_write: BAR moved, MSI-X enabled, bus number captured).
#pragma once

#include <array>
#include <cstdint>
#include <functional>

#include "trn3/spec/pci.h"

namespace trn3::pcie {

class config_space {
public:
    using read_hook = std::function<void(std::uint16_t offset)>;
    using write_hook = std::function<void(std::uint16_t offset, unsigned bytes)>;

    config_space() {
        data_.fill(0);
        wmask_.fill(0);
        w1c_.fill(0);
    }

    // Software view (config TLPs): naturally aligned 1, 2 or 4 bytes inside
    // the 4 KiB (well_formed); anything else reads all ones and writes
    // nothing.
    static bool well_formed(unsigned offset, unsigned bytes) {
        return (bytes == 1 || bytes == 2 || bytes == 4) && offset % bytes == 0 &&
               offset + bytes <= TRN3_PCI_CONFIG_SIZE;
    }
    std::uint32_t read(std::uint16_t offset, unsigned bytes);
    void write(std::uint16_t offset, unsigned bytes, std::uint32_t value);

    // Hardware view: set values and masks, no policy.
    void init(std::uint16_t offset, unsigned bytes, std::uint64_t value, std::uint64_t write_mask = 0,
              std::uint64_t w1c_mask = 0);
    std::uint64_t get(std::uint16_t offset, unsigned bytes) const;
    // The whole space as the hardware holds it (debuggers, snapshots).
    const std::array<std::uint8_t, TRN3_PCI_CONFIG_SIZE>& bytes() const { return data_; }
    void set(std::uint16_t offset, unsigned bytes, std::uint64_t value);  // keeps the masks
    void set_bits(std::uint16_t offset, unsigned bytes, std::uint64_t bits) {
        set(offset, bytes, get(offset, bytes) | bits);
    }

    // Headers and capabilities the models share.
    void init_type0(std::uint16_t vendor, std::uint16_t device, std::uint32_t class_code, std::uint8_t revision);
    void init_type1(std::uint16_t vendor, std::uint16_t device);
    // A 64-bit memory BAR of `size` bytes (a power of two, >= 16) in slots
    // index and index + 1.
    void init_bar64(unsigned index, std::uint64_t size, bool prefetchable);
    std::uint64_t bar_address(unsigned index) const;  // 64-bit BAR's address
    std::uint64_t bar_size(unsigned index) const { return bar_sizes_[index]; }
    // Capabilities at the fixed offsets of spec/pci.h, chained in order of the calls.
    void add_capability(std::uint8_t id, std::uint16_t offset);
    void add_ext_capability(std::uint16_t id, std::uint16_t offset, std::uint8_t version);
    void init_pcie_cap(unsigned port_type, unsigned max_speed, unsigned max_width);
    void set_link_status(unsigned speed, unsigned width, bool dl_active, bool flit);
    void init_aer();
    void report_error(std::uint32_t aer_uncorrectable_bit, std::uint16_t status_bit = 0);

    // Bridges: the windows and bus range software programmed.
    std::uint8_t secondary_bus() const { return static_cast<std::uint8_t>(get(TRN3_PCI_SECONDARY_BUS, 1)); }
    std::uint8_t subordinate_bus() const { return static_cast<std::uint8_t>(get(TRN3_PCI_SUBORDINATE_BUS, 1)); }
    bool routes_bus(unsigned bus) const {
        return bus >= secondary_bus() && bus <= subordinate_bus() && secondary_bus() != 0;
    }
    bool routes_address(std::uint64_t address) const;  // in the memory or prefetchable window

    void on_read(read_hook h) { on_read_ = std::move(h); }
    void on_write(write_hook h) { on_write_ = std::move(h); }

private:
    std::array<std::uint8_t, TRN3_PCI_CONFIG_SIZE> data_, wmask_, w1c_;
    std::array<std::uint64_t, 6> bar_sizes_{};
    std::uint16_t last_cap_ = 0, last_ext_cap_ = 0;
    read_hook on_read_;
    write_hook on_write_;
};

}  // namespace trn3::pcie
