#include "trn3/hbm/ecc.h"

#include <algorithm>
#include <bitset>
#include <cmath>

namespace trn3::hbm {

ecc_model::ecc_model(double single_rate, double double_rate, std::uint64_t seed)
    : rate_(single_rate + double_rate), double_share_(rate_ > 0 ? double_rate / rate_ : 0), rng_(seed) {
    if (rate_ > 0) draw_next();
}

void ecc_model::draw_next() {
    // Words until the next transient error: geometric with the error rate.
    std::geometric_distribution<std::uint64_t> gap(std::min(rate_, 1.0));
    words_to_next_ = gap(rng_) + 1;
}

void ecc_model::inject(std::uint64_t addr, std::uint64_t mask) {
    if (mask) errors_[addr / 8] ^= mask;
}

namespace {
void flip(unsigned char* data, std::uint64_t addr, unsigned len, std::uint64_t word, std::uint64_t mask) {
    for (unsigned b = 0; b < 8; ++b) {
        const std::uint64_t byte_addr = word * 8 + b;
        if (byte_addr < addr || byte_addr >= addr + len) continue;
        data[byte_addr - addr] ^= static_cast<unsigned char>(mask >> (8 * b));
    }
}
}  // namespace

ecc_result ecc_model::check_read(std::uint64_t addr, unsigned char* data, unsigned len) {
    ecc_result r;
    const std::uint64_t first = addr / 8, last = (addr + len - 1) / 8;
    auto account = [&](std::uint64_t word, std::uint64_t mask) {
        if (std::bitset<64>(mask).count() == 1) {
            ++r.corrected;
            if (!r.first_error_addr) r.first_error_addr = word * 8;
            return;
        }
        if (r.uncorrectable++ == 0) r.first_error_addr = word * 8;
        flip(data, addr, len, word, mask);
    };
    if (!errors_.empty()) {
        if (last - first < errors_.size()) {
            for (std::uint64_t w = first; w <= last; ++w)
                if (auto it = errors_.find(w); it != errors_.end()) account(w, it->second);
        } else {
            for (const auto& [w, mask] : errors_)
                if (w >= first && w <= last) account(w, mask);
        }
    }
    if (rate_ > 0) {
        std::uint64_t words = last - first + 1;
        while (words >= words_to_next_) {
            words -= words_to_next_;
            const std::uint64_t w = last - words;
            const bool two = std::uniform_real_distribution<double>(0, 1)(rng_) < double_share_;
            const unsigned b0 = static_cast<unsigned>(rng_() % 64);
            std::uint64_t mask = 1ull << b0;
            if (two) mask |= 1ull << ((b0 + 1 + rng_() % 63) % 64);
            account(w, mask);
            draw_next();
        }
        words_to_next_ -= words;
    }
    return r;
}

std::uint64_t ecc_model::on_write(std::uint64_t addr, unsigned len) {
    if (errors_.empty()) return 0;
    std::uint64_t corrected = 0;
    const std::uint64_t first = addr / 8, last = (addr + len - 1) / 8;
    auto repair = [&](std::uint64_t w, std::uint64_t mask) {
        const bool whole = w * 8 >= addr && w * 8 + 8 <= addr + len;
        const bool single = std::bitset<64>(mask).count() == 1;
        if (single && !whole) ++corrected;
        return whole || single;
    };
    for (auto it = errors_.begin(); it != errors_.end();) {
        if (it->first >= first && it->first <= last && repair(it->first, it->second)) it = errors_.erase(it);
        else ++it;
    }
    return corrected;
}

}  // namespace trn3::hbm
