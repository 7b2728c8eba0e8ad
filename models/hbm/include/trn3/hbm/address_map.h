// hbm_address_map: which bits of a stack-relative address pick the pseudo-
// channel, bank group, bank, row and column.
//
// Written as a list of fields from the least significant bit up, each with a
// width in bits; the last field takes all remaining bits:
//     "offset:8,channel:5,column:2,bank_group:2,bank:2,row"      (the default)
// `offset` is the interleave granule (here 256 B: consecutive 256 B pieces go
// to consecutive pseudo-channels); `column` counts granules within a row.
// Every field must appear exactly once, and the widths must match the
// geometry (channels, bank groups, banks, row size).
#pragma once

#include <cstdint>
#include <string>

namespace trn3::hbm {

struct location {
    unsigned channel;
    unsigned bank_group;
    unsigned bank;  // within its bank group
    std::uint64_t row;
    unsigned column;  // granule within the row
};

struct geometry {
    unsigned channels;
    unsigned bank_groups;
    unsigned banks_per_group;
    std::uint64_t row_bytes;
};

class address_map {
public:
    // Throws config_error naming `param_name` when the text is malformed or
    // does not match the geometry.
    address_map(const std::string& text, const geometry& g, const std::string& param_name);

    location decode(std::uint64_t addr) const {
        location l;
        l.channel = static_cast<unsigned>((addr >> channel_.shift) & channel_.mask);
        l.bank_group = static_cast<unsigned>((addr >> bank_group_.shift) & bank_group_.mask);
        l.bank = static_cast<unsigned>((addr >> bank_.shift) & bank_.mask);
        l.column = static_cast<unsigned>((addr >> column_.shift) & column_.mask);
        l.row = addr >> row_shift_;
        return l;
    }
    // Bytes in one interleave granule: a request is split at these boundaries.
    std::uint64_t granule_bytes() const { return 1ull << offset_bits_; }

private:
    struct field {
        unsigned shift = 0;
        std::uint64_t mask = 0;
    };
    field channel_, bank_group_, bank_, column_;
    unsigned offset_bits_ = 0;
    unsigned row_shift_ = 0;
};

}  // namespace trn3::hbm
