// The MCU's system control page: the test exit (tohost), the boot status the
// boot ROM and firmware report, where the firmware image lies, and the
// SHA-256 digest the chip was provisioned with (its fuses).
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "trn3/core/reg_block.h"

namespace trn3::mcu {

class sysctl : public reg_block {
public:

    explicit sysctl(const sc_core::sc_module_name& name);

    void set_image(std::uint32_t base, std::uint32_t size, std::uint32_t entry);
    void set_digest(const std::array<std::uint8_t, 32>& digest);
    void set_chip_present(bool present) { chip_.set(present ? 1 : 0); }
    // 0 until software writes tohost; then its value (1: pass).
    std::uint32_t tohost() const { return tohost_value_; }
    std::uint32_t boot_status() const { return static_cast<std::uint32_t>(boot_status_.value()); }
    const sc_core::sc_event& tohost_written() const { return tohost_event_; }
    // tohost and the boot status back to zero (the image registers stay).
    void reset() override;

private:
    std::uint32_t tohost_value_ = 0;
    sc_core::sc_event tohost_event_;
    reg tohost_{regs, "tohost", 0x00, 4, 0, access::rw, "1: pass; (n << 1) | 1: fail with test n; stops the MCU"};
    reg boot_status_{regs, "boot_status", 0x04, 4, 0, access::rw, "TRN3_BOOT_* (spec/mcu.h)"};
    reg fw_base_{regs, "fw_base", 0x08, 4, 0, access::ro, "firmware image base (SRAM)"};
    reg fw_size_{regs, "fw_size", 0x0c, 4, 0, access::ro, "firmware image size in bytes"};
    reg fw_entry_{regs, "fw_entry", 0x10, 4, 0, access::ro, "firmware entry point"};
    reg chip_{regs, "chip", 0x14, 4, 0, access::ro, "1: the chip window (TRN3_MCU_CHIP_BASE) leads to a chip"};
    std::vector<std::unique_ptr<reg>> digest_;  // 8 words at 0x20
};

} // namespace trn3::mcu
