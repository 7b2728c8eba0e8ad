// An SRD packet (spec/srd.h) as the NIC reads and writes it: encode() lays
// out a frame's bytes, decode() checks a received frame field by field and
// refuses what the protocol cannot have sent (the NIC drops and counts it).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "trn3/core/message_link.h"
#include "trn3/spec/srd.h"

namespace trn3::nic {

struct srd_packet {
    std::uint64_t dst_node = 0, src_node = 0;
    std::uint16_t entropy = 0;
    std::uint8_t type = TRN3_SRD_DATA;
    std::uint16_t src_qp = 0, dst_qp = 0;
    std::uint16_t epoch = 0;
    std::uint32_t psn = 0;
    std::uint32_t msg = 0;
    std::uint32_t payload_bytes = 0;
    std::uint64_t msg_bytes = 0, msg_offset = 0;
    std::uint64_t stamp_ps = 0;
    // Payload bytes carried: payload_bytes of them, or none (timing only).
    const std::uint8_t* payload = nullptr;
    bool has_payload = false;
};

// The frame of a packet: data = header and, when `payload` is given,
// payload_bytes of it; bytes = the wire size.
message encode(const srd_packet& p, const std::uint8_t* payload);
// The packet a frame holds, or nothing when the frame is malformed: too
// short, another protocol, a node address over 48 bits, reserved bits set,
// an unknown type, a payload over the MTU or beyond its message, a message
// over TRN3_SRD_MAX_MESSAGE, data of
// another length than the header says, an ACK with a payload or message fields. What decodes
// encodes back to the same bytes.
// The packet's payload points into frame.data.
std::optional<srd_packet> decode(const message& frame);

}  // namespace trn3::nic
