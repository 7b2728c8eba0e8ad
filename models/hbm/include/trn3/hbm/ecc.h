// ECC of an HBM stack: SECDED over each 64-bit word (a (72,64) code; a 32-byte
// burst carries four such words).
//
// The model keeps data correct in the backing store and keeps errors beside
// it, as bit masks per word. A read of a word whose mask has one bit set is
// corrected (the data returned is right, the event is counted). Two or more
// bits are detected and uncorrectable: the data returned has exactly those
// bits flipped (poisoned) and the access gets an error response. A real
// SECDED code can miscorrect some patterns of three or more bits; the model
// reports them as uncorrectable instead, so that no error is ever silent.
//
// Errors come from two sources:
//  - persistent: inject(addr, mask) flips bits of the word at addr until the
//    word is written whole (a partial write corrects a single-bit error on the
//    way, as a read-modify-write does, but cannot repair a poisoned word);
//  - transient: a rate of single- and double-bit errors per 64-bit word read,
//    drawn from a generator seeded by a param, so a run is reproducible.
#pragma once

#include <cstdint>
#include <random>
#include <unordered_map>

namespace trn3::hbm {

struct ecc_result {
    std::uint64_t corrected = 0;  // words with a corrected single-bit error
    std::uint64_t uncorrectable = 0;  // words returned poisoned
    std::uint64_t first_error_addr = 0;
};

class ecc_model {
public:
    ecc_model(double single_rate, double double_rate, std::uint64_t seed);

    void inject(std::uint64_t addr, std::uint64_t mask);
    // True when any error can appear: DMI must then be refused, since a DMI
    // read would bypass the check.
    bool active() const { return !errors_.empty() || rate_ > 0; }

    // Checks a read of [addr, addr + len) whose data was copied into `data`.
    ecc_result check_read(std::uint64_t addr, unsigned char* data, unsigned len);
    // A write of [addr, addr + len): clears what it repairs. Returns the
    // single-bit errors corrected by read-modify-write.
    std::uint64_t on_write(std::uint64_t addr, unsigned len);

private:
    void draw_next();
    std::unordered_map<std::uint64_t, std::uint64_t> errors_;  // word index -> flipped bits
    double rate_, double_share_;
    std::mt19937_64 rng_;
    std::uint64_t words_to_next_ = 0;
};

}  // namespace trn3::hbm
