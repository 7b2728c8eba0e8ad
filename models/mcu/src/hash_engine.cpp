#include "trn3/mcu/hash_engine.h"

#include <openssl/evp.h>

#include <fmt/format.h>

namespace trn3::mcu {

hash_engine::hash_engine(const sc_core::sc_module_name& name, memory_view memory)
    : reg_block(name, frequency{1e9}),
      bytes_per_second(this, "bytes_per_second", 1e9,
                       "hashing rate: a 64-byte block per 64 cycles of a 1 GHz engine (a round per cycle)",
                       range<double>{1e3, 1e12}),
      start_latency(this, "start_latency", sc_core::sc_time(100, sc_core::SC_NS),
                    "from the start to the first block (padding and the last block are in the rate)"),
      memory_(std::move(memory)), hashes_(this, "hashes", "digests computed"),
      bytes_hashed_(this, "bytes_hashed", "bytes hashed"),
      errors_(this, "errors", "starts refused: a range outside ROM and SRAM, or the engine busy") {
    for (unsigned i = 0; i < TRN3_MCU_HASH_DIGEST_WORDS; ++i) {
        digest_.push_back(std::make_unique<reg>(regs, fmt::format("digest{}", i), TRN3_MCU_HASH_DIGEST + 4 * i, 4, 0,
                                                access::ro, "digest bytes 4i..4i+3, little-endian"));
        digest_.back()->on_read([this](reg&) { settle(); });
    }
    status_.on_read([this](reg&) { settle(); });
    ctrl_.on_write([this](reg& r, std::uint64_t) {
        if (r.value() & TRN3_MCU_HASH_CTRL_START) start();
        r.set(0);
    });
}

void hash_engine::reset() {
    for (reg* r : {&src_, &len_, &ctrl_, &status_}) r->reset();
    for (auto& d : digest_) d->reset();
}

void hash_engine::start() {
    settle();
    const std::uint32_t bytes = static_cast<std::uint32_t>(len_.value());
    const std::uint8_t* data = memory_(static_cast<std::uint32_t>(src_.value()), bytes);
    if ((status_.value() & TRN3_MCU_HASH_STATUS_BUSY) || !data) {
        ++errors_;
        status_.set((status_.value() & TRN3_MCU_HASH_STATUS_BUSY) | TRN3_MCU_HASH_STATUS_ERROR);
        return;
    }
    unsigned int length = 0;
    EVP_Digest(data, bytes, result_.data(), &length, EVP_sha256(), nullptr);
    ++hashes_;
    bytes_hashed_ += bytes;
    // SHA-256 pads to whole 64-byte blocks (the message, a 1 bit, the length).
    const double blocks = static_cast<double>((std::uint64_t(bytes) + 9 + 63) / 64);
    done_at_ =
        access_at_ + start_latency.get() + sc_core::sc_time(blocks * 64 / bytes_per_second.get(), sc_core::SC_SEC);
    status_.set(TRN3_MCU_HASH_STATUS_BUSY);
    for (auto& d : digest_) d->set(0);
}

void hash_engine::settle() {
    if (!(status_.value() & TRN3_MCU_HASH_STATUS_BUSY) || access_at_ < done_at_) return;
    for (unsigned i = 0; i < TRN3_MCU_HASH_DIGEST_WORDS; ++i)
        digest_[i]->set(std::uint32_t(result_[4 * i]) | std::uint32_t(result_[4 * i + 1]) << 8 |
                        std::uint32_t(result_[4 * i + 2]) << 16 | std::uint32_t(result_[4 * i + 3]) << 24);
    status_.set(TRN3_MCU_HASH_STATUS_DONE);
}

}  // namespace trn3::mcu
