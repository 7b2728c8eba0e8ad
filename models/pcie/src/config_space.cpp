#include "trn3/pcie/config_space.h"

namespace trn3::pcie {

std::uint32_t config_space::read(std::uint16_t offset, unsigned bytes) {
    if (!well_formed(offset, bytes)) return 0xFFFFFFFFu;
    if (on_read_) on_read_(offset);
    return static_cast<std::uint32_t>(get(offset, bytes));
}

void config_space::write(std::uint16_t offset, unsigned bytes, std::uint32_t value) {
    if (!well_formed(offset, bytes)) return;
    for (unsigned i = 0; i < bytes; ++i) {
        const std::uint8_t v = static_cast<std::uint8_t>(value >> (8 * i));
        std::uint8_t& d = data_[offset + i];
        d = static_cast<std::uint8_t>((d & ~wmask_[offset + i]) | (v & wmask_[offset + i]));
        d = static_cast<std::uint8_t>(d & ~(v & w1c_[offset + i]));
    }
    if (on_write_) on_write_(offset, bytes);
}

void config_space::init(std::uint16_t offset, unsigned bytes, std::uint64_t value, std::uint64_t write_mask,
                        std::uint64_t w1c_mask) {
    for (unsigned i = 0; i < bytes; ++i) {
        data_[offset + i] = static_cast<std::uint8_t>(value >> (8 * i));
        wmask_[offset + i] = static_cast<std::uint8_t>(write_mask >> (8 * i));
        w1c_[offset + i] = static_cast<std::uint8_t>(w1c_mask >> (8 * i));
    }
}

std::uint64_t config_space::get(std::uint16_t offset, unsigned bytes) const {
    std::uint64_t v = 0;
    for (unsigned i = 0; i < bytes; ++i) v |= std::uint64_t(data_[offset + i]) << (8 * i);
    return v;
}

void config_space::set(std::uint16_t offset, unsigned bytes, std::uint64_t value) {
    for (unsigned i = 0; i < bytes; ++i) data_[offset + i] = static_cast<std::uint8_t>(value >> (8 * i));
}

void config_space::init_type0(std::uint16_t vendor, std::uint16_t device, std::uint32_t class_code,
                              std::uint8_t revision) {
    init(TRN3_PCI_VENDOR_ID, 2, vendor);
    init(TRN3_PCI_DEVICE_ID, 2, device);
    init(TRN3_PCI_COMMAND, 2, 0, TRN3_PCI_COMMAND_MEMORY | TRN3_PCI_COMMAND_BUS_MASTER);
    init(TRN3_PCI_STATUS, 2, TRN3_PCI_STATUS_CAP_LIST, 0,
         TRN3_PCI_STATUS_SIG_TARGET_ABORT | TRN3_PCI_STATUS_REC_MASTER_ABORT | TRN3_PCI_STATUS_DETECTED_PARITY);
    init(TRN3_PCI_CLASS_REV, 4, (std::uint64_t(class_code) << 8) | revision);
    init(TRN3_PCI_HEADER_TYPE, 1, TRN3_PCI_HEADER_TYPE_ENDPOINT);
}

void config_space::init_type1(std::uint16_t vendor, std::uint16_t device) {
    init_type0(vendor, device, TRN3_PCI_CLASS_BRIDGE_P2P, 0);
    init(TRN3_PCI_HEADER_TYPE, 1, TRN3_PCI_HEADER_TYPE_BRIDGE);
    init(TRN3_PCI_PRIMARY_BUS, 3, 0, 0xFFFFFF);
    // Windows: bits 15:4 hold address bits 31:20; the prefetchable window is 64-bit.
    // Windows come out of reset closed (base above limit).
    init(TRN3_PCI_MEMORY_BASE, 2, TRN3_PCI_WINDOW_MASK, TRN3_PCI_WINDOW_MASK);
    init(TRN3_PCI_MEMORY_LIMIT, 2, 0, TRN3_PCI_WINDOW_MASK);
    init(TRN3_PCI_PREF_MEMORY_BASE, 2, TRN3_PCI_WINDOW_MASK | TRN3_PCI_PREF_64BIT, TRN3_PCI_WINDOW_MASK);
    init(TRN3_PCI_PREF_MEMORY_LIMIT, 2, TRN3_PCI_PREF_64BIT, TRN3_PCI_WINDOW_MASK);
    init(TRN3_PCI_PREF_BASE_UPPER, 4, 0, 0xFFFFFFFF);
    init(TRN3_PCI_PREF_LIMIT_UPPER, 4, 0, 0xFFFFFFFF);
}

void config_space::init_bar64(unsigned index, std::uint64_t size, bool prefetchable) {
    const std::uint64_t mask = ~(size - 1);
    init(static_cast<std::uint16_t>(TRN3_PCI_BAR(index)), 4,
         TRN3_PCI_BAR_MEM64 | (prefetchable ? TRN3_PCI_BAR_PREFETCH : 0),
         static_cast<std::uint32_t>(mask) & ~TRN3_PCI_BAR_FLAGS);
    init(static_cast<std::uint16_t>(TRN3_PCI_BAR(index + 1)), 4, 0, mask >> 32);
    bar_sizes_[index] = size;
}

std::uint64_t config_space::bar_address(unsigned index) const {
    return (get(static_cast<std::uint16_t>(TRN3_PCI_BAR(index)), 4) & ~std::uint64_t(TRN3_PCI_BAR_FLAGS)) |
           (get(static_cast<std::uint16_t>(TRN3_PCI_BAR(index + 1)), 4) << 32);
}

void config_space::add_capability(std::uint8_t id, std::uint16_t offset) {
    init(offset, 2, id);
    if (last_cap_ == 0) init(TRN3_PCI_CAP_PTR, 1, offset);
    else set(static_cast<std::uint16_t>(last_cap_ + TRN3_PCI_CAP_NEXT), 1, offset);
    last_cap_ = offset;
}

void config_space::add_ext_capability(std::uint16_t id, std::uint16_t offset, std::uint8_t version) {
    init(offset, 4, TRN3_PCI_EXT_CAP_HEADER(id, version, 0));
    if (last_ext_cap_ != 0) {
        const std::uint64_t prev = get(last_ext_cap_, 4);
        set(last_ext_cap_, 4,
            TRN3_PCI_EXT_CAP_HEADER(TRN3_PCI_EXT_CAP_ID(prev), TRN3_PCI_EXT_CAP_VERSION(prev), offset));
    }
    last_ext_cap_ = offset;
}

void config_space::init_pcie_cap(unsigned port_type, unsigned max_speed, unsigned max_width) {
    add_capability(TRN3_PCI_CAP_ID_PCIE, TRN3_PCI_PCIE_CAP);
    init(TRN3_PCI_PCIE_CAP + TRN3_PCIE_CAPS, 2, TRN3_PCIE_CAPS_VALUE(port_type, TRN3_PCIE_CAP_VERSION));
    init(TRN3_PCI_PCIE_CAP + TRN3_PCIE_LINK_CAP, 4, TRN3_PCIE_LINK_VALUE(max_speed, max_width));
    init(TRN3_PCI_PCIE_CAP + TRN3_PCIE_LINK_CONTROL, 2, 0, 0xFFFF);
}

void config_space::set_link_status(unsigned speed, unsigned width, bool dl_active, bool flit) {
    set(TRN3_PCI_PCIE_CAP + TRN3_PCIE_LINK_STATUS, 2,
        TRN3_PCIE_LINK_VALUE(speed, width) | (dl_active ? TRN3_PCIE_LINK_DL_ACTIVE : 0));
    set(TRN3_PCI_PCIE_CAP + TRN3_PCIE_LINK_STATUS2, 2, flit ? TRN3_PCIE_LINK_STATUS2_FLIT_MODE : 0);
}

void config_space::init_aer() {
    add_ext_capability(TRN3_PCI_EXT_CAP_ID_AER, TRN3_PCI_AER_CAP, 2);
    init(TRN3_PCI_AER_CAP + TRN3_AER_UNCOR_STATUS, 4, 0, 0, 0xFFFFFFFF);
}

void config_space::report_error(std::uint32_t aer_bit, std::uint16_t status_bit) {
    if (aer_bit) set_bits(TRN3_PCI_AER_CAP + TRN3_AER_UNCOR_STATUS, 4, aer_bit);
    if (status_bit) set_bits(TRN3_PCI_STATUS, 2, status_bit);
}

bool config_space::routes_address(std::uint64_t a) const {
    const std::uint64_t granule_end = TRN3_PCI_WINDOW_GRANULE - 1;  // a limit covers its whole granule
    const std::uint64_t mem_base = TRN3_PCI_WINDOW_ADDR(get(TRN3_PCI_MEMORY_BASE, 2));
    const std::uint64_t mem_limit = TRN3_PCI_WINDOW_ADDR(get(TRN3_PCI_MEMORY_LIMIT, 2)) | granule_end;
    if (mem_base <= mem_limit && a >= mem_base && a <= mem_limit) return true;
    const std::uint64_t pref_base =
        TRN3_PCI_WINDOW_ADDR(get(TRN3_PCI_PREF_MEMORY_BASE, 2)) | (get(TRN3_PCI_PREF_BASE_UPPER, 4) << 32);
    const std::uint64_t pref_limit = TRN3_PCI_WINDOW_ADDR(get(TRN3_PCI_PREF_MEMORY_LIMIT, 2)) | granule_end |
                                     (get(TRN3_PCI_PREF_LIMIT_UPPER, 4) << 32);
    return pref_base <= pref_limit && a >= pref_base && a <= pref_limit;
}

}  // namespace trn3::pcie
