#include "trn3/mcu/sysctl.h"

#include <fmt/format.h>

namespace trn3::mcu {

const char* boot_status_name(std::uint32_t s) {
    switch (s) {
    case TRN3_BOOT_RESET: return "reset";
    case TRN3_BOOT_CHECKING: return "checking";
    case TRN3_BOOT_VERIFIED: return "verified";
    case TRN3_BOOT_REFUSED: return "refused";
    case TRN3_BOOT_RUNNING: return "running";
    default: return "?";
    }
}

sysctl::sysctl(const sc_core::sc_module_name& name) : reg_block(name, frequency{1e9}) {
    for (unsigned i = 0; i < TRN3_MCU_SYSCTL_DIGEST_WORDS; ++i)
        digest_.push_back(std::make_unique<reg>(regs, fmt::format("digest{}", i), TRN3_MCU_SYSCTL_DIGEST + 4 * i, 4, 0,
                                                access::ro,
                                                "provisioned SHA-256 of the firmware image, bytes 4i..4i+3"));
    track_ = timeline::instance().track_of(*this, ".boot");
    boot_status_.on_write([this](reg& r, std::uint64_t) {
        timeline::instance().instant(track_,
                                     std::string("boot: ") + boot_status_name(static_cast<std::uint32_t>(r.value())),
                                     sc_core::sc_time_stamp());
    });
    tohost_.on_write([this](reg& r, std::uint64_t) {
        tohost_value_ = static_cast<std::uint32_t>(r.value());
        tohost_event_.notify(sc_core::SC_ZERO_TIME);
    });
}

void sysctl::reset() {
    tohost_value_ = 0;
    tohost_.reset();
    boot_status_.reset();
}

void sysctl::set_image(std::uint32_t base, std::uint32_t size, std::uint32_t entry) {
    fw_base_.set(base);
    fw_size_.set(size);
    fw_entry_.set(entry);
}

void sysctl::set_digest(const std::array<std::uint8_t, 32>& d) {
    for (unsigned i = 0; i < TRN3_MCU_SYSCTL_DIGEST_WORDS; ++i)
        digest_[i]->set(static_cast<std::uint32_t>(d[4 * i]) | (static_cast<std::uint32_t>(d[4 * i + 1]) << 8) |
                        (static_cast<std::uint32_t>(d[4 * i + 2]) << 16) |
                        (static_cast<std::uint32_t>(d[4 * i + 3]) << 24));
}

}  // namespace trn3::mcu
