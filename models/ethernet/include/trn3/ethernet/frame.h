// An Ethernet frame of the scale-out network as the models carry it: a
// trn3::message whose data holds the addressing part and the SRD packet of
// spec/srd.h (payload bytes only in data mode) and whose `bytes` is the wire
// size. What a switch reads and the flow hash that ECMP uses live here.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "trn3/core/message_link.h"
#include "trn3/spec/srd.h"

namespace trn3::ethernet {

// Little-endian fields in a frame's bytes (spec/srd.h offsets).
template <typename T>
T get_field(const std::vector<std::uint8_t>& bytes, std::size_t offset) {
    T v{};
    std::memcpy(&v, bytes.data() + offset, sizeof v);
    return v;
}
template <typename T>
void put_field(std::vector<std::uint8_t>& bytes, std::size_t offset, T v) {
    std::memcpy(bytes.data() + offset, &v, sizeof v);
}

// What a switch reads from a frame.
struct frame_address {
    std::uint64_t dst = 0, src = 0;
    std::uint16_t entropy = 0;
};

// The frame's addressing, or nothing when it is too short to hold it
// (a malformed frame: switches drop it).
std::optional<frame_address> address_of(const message& frame);

// The ECMP hash of a flow: every switch picks among its equal ports by it,
// each with its own salt (so that tiers do not pick in lockstep).
std::uint64_t flow_hash(const frame_address& a, std::uint64_t salt);

// Wire bytes of a frame with `payload` bytes.
inline std::uint64_t wire_bytes(std::uint64_t payload) { return payload + TRN3_SRD_WIRE_OVERHEAD; }

}  // namespace trn3::ethernet
