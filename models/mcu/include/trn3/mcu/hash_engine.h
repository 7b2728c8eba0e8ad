// The MCU's SHA-256 engine (spec/mcu.h, TRN3_MCU_HASH_*): the boot ROM's
// image check in hardware, as roots of trust do it. A start reads the data
// from the MCU's ROM or SRAM (through `memory`), hashes it (OpenSSL's
// SHA-256) and reports DONE once `bytes_per_second` says the engine would
// have finished; software polls STATUS.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "trn3/core/reg_block.h"
#include "trn3/core/stats.h"
#include "trn3/spec/mcu.h"

namespace trn3::mcu {

class hash_engine : public reg_block {
public:
    // Host pointer to `bytes` of MCU memory at `address`, or null when the
    // range is not wholly inside ROM or SRAM.
    using memory_view = std::function<const std::uint8_t*(std::uint32_t address, std::uint32_t bytes)>;

    param<double> bytes_per_second;
    param<sc_core::sc_time> start_latency;

    hash_engine(const sc_core::sc_module_name& name, memory_view memory);

    void reset();

private:
    void before_access(const sc_core::sc_time& delay) override { access_at_ = sc_core::sc_time_stamp() + delay; }
    void start();
    void settle();  // busy -> done once the access comes at or after done_at_

    memory_view memory_;
    sc_core::sc_time access_at_, done_at_;
    std::array<std::uint8_t, 32> result_{};
    counter hashes_, bytes_hashed_, errors_;
    reg src_{regs, "src", TRN3_MCU_HASH_SRC, 4, 0, access::rw, "MCU address of the data"};
    reg len_{regs, "len", TRN3_MCU_HASH_LEN, 4, 0, access::rw, "bytes to hash"};
    reg ctrl_{regs, "ctrl", TRN3_MCU_HASH_CTRL, 4, 0, access::wo, "bit 0: start"};
    reg status_{regs, "status", TRN3_MCU_HASH_STATUS, 4, 0, access::ro, "bit 0 busy, bit 1 done, bit 2 error"};
    std::vector<std::unique_ptr<reg>> digest_;  // TRN3_MCU_HASH_DIGEST_WORDS words
};

}  // namespace trn3::mcu
