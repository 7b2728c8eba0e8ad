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
    // Payload bytes in the frame: all payload_bytes of them (has_payload),
    // or, timing only, none or the first `carried` (a message's leading
    // bytes that must arrive, such as an RDMA header, ahead of a payload
    // that is only timed). The wire time is payload_bytes' either way.
    const std::uint8_t* payload = nullptr;
    std::uint32_t carried = 0;
    bool has_payload = false;
};

// The frame of a packet: data = header and `carried` bytes of `payload`
// (payload_bytes for a whole packet, fewer or none timing only); bytes =
// the wire size, from payload_bytes.
message encode(const srd_packet& p, const std::uint8_t* payload, std::uint32_t carried);
inline message encode(const srd_packet& p, const std::uint8_t* payload) {
    return encode(p, payload, payload ? p.payload_bytes : 0);
}
// The packet a frame holds, or nothing when the frame is malformed: too
// short, another protocol, a node address over 48 bits, reserved bits set,
// an unknown type, a payload over the MTU or beyond its message, a message
// over TRN3_SRD_MAX_MESSAGE, more data than the header says or part of it
// past a message's first packet, an ACK with a payload or message fields. What decodes
// encodes back to the same bytes.
// The packet's payload points into frame.data.
std::optional<srd_packet> decode(const message& frame);

}  // namespace trn3::nic
