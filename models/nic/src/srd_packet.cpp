#include "trn3/nic/srd_packet.h"

#include <cstring>

#include "trn3/ethernet/frame.h"

namespace trn3::nic {

using ethernet::get_field;
using ethernet::put_field;

message encode(const srd_packet& p, const std::uint8_t* payload, std::uint32_t carried) {
    message m;
    if (!payload) carried = 0;
    m.data.assign(TRN3_SRD_HEADER_BYTES + std::size_t{carried}, 0);
    put_field<std::uint64_t>(m.data, TRN3_ETH_DST, p.dst_node & TRN3_ETH_NODE_MASK);
    put_field<std::uint64_t>(m.data, TRN3_ETH_SRC, p.src_node & TRN3_ETH_NODE_MASK);
    put_field<std::uint16_t>(m.data, TRN3_ETH_ENTROPY, p.entropy);
    put_field<std::uint16_t>(m.data, TRN3_ETH_PROTO, TRN3_ETH_PROTO_SRD);
    put_field<std::uint8_t>(m.data, TRN3_SRD_TYPE, p.type);
    put_field<std::uint16_t>(m.data, TRN3_SRD_SRC_QP, p.src_qp);
    put_field<std::uint16_t>(m.data, TRN3_SRD_DST_QP, p.dst_qp);
    put_field<std::uint16_t>(m.data, TRN3_SRD_EPOCH, p.epoch);
    put_field<std::uint32_t>(m.data, TRN3_SRD_PSN, p.psn);
    put_field<std::uint32_t>(m.data, TRN3_SRD_MSG, p.msg);
    put_field<std::uint32_t>(m.data, TRN3_SRD_PAYLOAD_BYTES, p.payload_bytes);
    put_field<std::uint64_t>(m.data, TRN3_SRD_MSG_BYTES, p.msg_bytes);
    put_field<std::uint64_t>(m.data, TRN3_SRD_MSG_OFFSET, p.msg_offset);
    put_field<std::uint64_t>(m.data, TRN3_SRD_STAMP, p.stamp_ps);
    if (carried) std::memcpy(m.data.data() + TRN3_SRD_HEADER_BYTES, payload, carried);
    m.bytes = ethernet::wire_bytes(p.payload_bytes);
    m.kind = p.type;
    return m;
}

std::optional<srd_packet> decode(const message& frame) {
    const std::vector<std::uint8_t>& d = frame.data;
    if (d.size() < TRN3_SRD_HEADER_BYTES) return std::nullopt;
    if (get_field<std::uint16_t>(d, TRN3_ETH_PROTO) != TRN3_ETH_PROTO_SRD) return std::nullopt;
    if (get_field<std::uint8_t>(d, TRN3_SRD_FLAGS) != 0) return std::nullopt;
    srd_packet p;
    p.dst_node = get_field<std::uint64_t>(d, TRN3_ETH_DST);
    p.src_node = get_field<std::uint64_t>(d, TRN3_ETH_SRC);
    if ((p.dst_node | p.src_node) & ~TRN3_ETH_NODE_MASK) return std::nullopt;  // node addresses are 48 bits
    p.entropy = get_field<std::uint16_t>(d, TRN3_ETH_ENTROPY);
    p.type = get_field<std::uint8_t>(d, TRN3_SRD_TYPE);
    p.src_qp = get_field<std::uint16_t>(d, TRN3_SRD_SRC_QP);
    p.dst_qp = get_field<std::uint16_t>(d, TRN3_SRD_DST_QP);
    p.epoch = get_field<std::uint16_t>(d, TRN3_SRD_EPOCH);
    p.psn = get_field<std::uint32_t>(d, TRN3_SRD_PSN);
    p.msg = get_field<std::uint32_t>(d, TRN3_SRD_MSG);
    p.payload_bytes = get_field<std::uint32_t>(d, TRN3_SRD_PAYLOAD_BYTES);
    p.msg_bytes = get_field<std::uint64_t>(d, TRN3_SRD_MSG_BYTES);
    p.msg_offset = get_field<std::uint64_t>(d, TRN3_SRD_MSG_OFFSET);
    p.stamp_ps = get_field<std::uint64_t>(d, TRN3_SRD_STAMP);
    if (p.type == TRN3_SRD_ACK) {  // no payload, no message fields
        if (p.payload_bytes != 0 || p.msg != 0 || p.msg_bytes != 0 || p.msg_offset != 0 ||
            d.size() != TRN3_SRD_HEADER_BYTES)
            return std::nullopt;
        return p;
    }
    if (p.type != TRN3_SRD_DATA || p.payload_bytes > TRN3_SRD_MAX_PAYLOAD) return std::nullopt;
    if (p.msg_bytes > TRN3_SRD_MAX_MESSAGE) return std::nullopt;
    if (p.msg_offset > p.msg_bytes || p.payload_bytes > p.msg_bytes - p.msg_offset) return std::nullopt;
    if (p.payload_bytes == 0 && p.msg_bytes != 0) return std::nullopt;  // only an empty message has an empty packet
    // The whole payload, or (timing only) a leading part of it or none.
    const std::size_t carried = d.size() - TRN3_SRD_HEADER_BYTES;
    if (carried > p.payload_bytes || (carried && carried < p.payload_bytes && p.msg_offset != 0))
        return std::nullopt;  // more than the payload, or a part of it past the message's first packet
    p.carried = static_cast<std::uint32_t>(carried);
    p.has_payload = carried == p.payload_bytes;
    if (carried || p.has_payload) p.payload = d.data() + TRN3_SRD_HEADER_BYTES;
    return p;
}

}  // namespace trn3::nic
