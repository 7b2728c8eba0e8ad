// The MCU's system control page: the test exit (tohost), the boot status the
// boot ROM and firmware report, where the firmware image lies, and the
// SHA-256 digest the chip was provisioned with (its fuses).
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "trn3/core/reg_block.h"
#include "trn3/core/timeline.h"
#include "trn3/spec/mcu.h"

namespace trn3::mcu {

// "reset", "checking", "verified", "refused", "running" (TRN3_BOOT_*).
const char* boot_status_name(std::uint32_t status);

class sysctl : public reg_block {
public:
    explicit sysctl(const sc_core::sc_module_name& name);

    void set_image(std::uint32_t base, std::uint32_t size, std::uint32_t entry);
    void set_digest(const std::array<std::uint8_t, 32>& digest);
    void set_chip_present(bool present) { chip_.set(present ? 1 : 0); }
    // 0 until software writes tohost; then its value (1: pass).
    std::uint32_t tohost() const { return tohost_value_; }
    std::uint32_t boot_status() const { return static_cast<std::uint32_t>(boot_status_.value()); }
    std::uint32_t image_base() const { return static_cast<std::uint32_t>(fw_base_.value()); }
    std::uint32_t image_size() const { return static_cast<std::uint32_t>(fw_size_.value()); }
    const sc_core::sc_event& tohost_written() const { return tohost_event_; }
    // tohost and the boot status back to zero (the image registers stay).
    void reset() override;

private:
    std::uint32_t tohost_value_ = 0;
    sc_core::sc_event tohost_event_;
    timeline::track track_;  // the boot status as it changes
    reg tohost_{regs,
                "tohost",
                TRN3_MCU_SYSCTL_TOHOST,
                4,
                0,
                access::rw,
                "1: pass; (n << 1) | 1: fail with test n; stops the MCU"};
    reg boot_status_{
        regs, "boot_status", TRN3_MCU_SYSCTL_BOOT_STATUS, 4, TRN3_BOOT_RESET, access::rw, "TRN3_BOOT_* (spec/mcu.h)"};
    reg fw_base_{regs, "fw_base", TRN3_MCU_SYSCTL_FW_BASE, 4, 0, access::ro, "firmware image base (SRAM)"};
    reg fw_size_{regs, "fw_size", TRN3_MCU_SYSCTL_FW_SIZE, 4, 0, access::ro, "firmware image size in bytes"};
    reg fw_entry_{regs, "fw_entry", TRN3_MCU_SYSCTL_FW_ENTRY, 4, 0, access::ro, "firmware entry point"};
    reg chip_{regs,
              "chip",
              TRN3_MCU_SYSCTL_CHIP,
              4,
              0,
              access::ro,
              "1: the chip window (TRN3_MCU_CHIP_BASE) leads to a chip"};
    std::vector<std::unique_ptr<reg>> digest_;  // TRN3_MCU_SYSCTL_DIGEST_WORDS words at TRN3_MCU_SYSCTL_DIGEST
};

}  // namespace trn3::mcu
