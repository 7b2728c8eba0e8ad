// The provider's own protocol, carried in NIC SEND messages above SRD
// (docs/fabric.md "Protocol"). Every message starts with a wire_header:
//
//   eager  header + the data (at most eager_bytes): copied into a receive
//          bounce buffer, then into the application's buffer when matched
//   rts    header only (ready to send): the data stays in the sender's
//          registered memory; the receiver, once matched, RDMA-reads it
//          straight into its buffer and answers fin
//   fin    header only: the rendezvous is over (status: the read's)
//
// eager and rts carry a sequence number per (sender endpoint, receiver
// endpoint): the receiver delivers in that order (send-after-send), holding
// early arrivals, since an RNR retry can overtake. A send refused by a
// receiver that is not ready (RNR) is retried with back-off for as long as
// it takes, as EFA's provider does: giving up would leave a gap in the
// order that holds every later message back. All fields little-endian.
#pragma once

#include <cstdint>

namespace trn3::fabric {

// An endpoint's address, as fi_getname gives it and fi_av_insert takes it.
// The incarnation tells endpoints apart that had the same queue pair one
// after the other: a message meant for an earlier one is dropped, and a
// reopened sender's sequence numbers start again.
struct wire_address {
    std::uint64_t node = 0;  // the NIC's network address
    std::uint16_t qp = 0;  // its queue pair
    std::uint16_t incarnation = 0;
    std::uint16_t reserved[2] = {};
    bool operator==(const wire_address& o) const {
        return node == o.node && qp == o.qp && incarnation == o.incarnation;
    }
    bool operator<(const wire_address& o) const {
        if (node != o.node) return node < o.node;
        return qp != o.qp ? qp < o.qp : incarnation < o.incarnation;
    }
};
static_assert(sizeof(wire_address) == 16);

enum : std::uint8_t { msg_eager = 1, msg_rts = 2, msg_fin = 3 };
enum : std::uint8_t { flag_tagged = 1, flag_cq_data = 2 };

struct wire_header {
    std::uint8_t type = 0;
    std::uint8_t flags = 0;
    std::uint16_t status = 0;  // fin: the NIC status of the receiver's read
    std::uint32_t cq_data = 0;
    std::uint64_t seq = 0;  // eager, rts: per (sender, receiver) incarnations
    std::uint64_t tag = 0;
    std::uint64_t length = 0;  // the message's bytes
    std::uint64_t offset = 0;  // rts: where the data is in the sender's region
    std::uint32_t rkey = 0;  // rts: that region's key
    std::uint16_t src_incarnation = 0;  // the sender's
    std::uint16_t dst_incarnation = 0;  // the receiver's, as the sender's address vector has it
    std::uint64_t token = 0;  // rts: the sender's operation; fin: echoed
};
static_assert(sizeof(wire_header) == 56);

inline constexpr std::uint32_t eager_bytes = 8192;  // larger messages use rts
inline constexpr std::uint32_t slot_bytes = 64 + eager_bytes;  // a bounce buffer
inline constexpr unsigned rx_slots = 64, tx_slots = 64;  // per endpoint
inline constexpr unsigned queue_entries = 256;  // NIC send and receive rings
inline constexpr std::uint64_t rnr_backoff_ns = 2'000, rnr_backoff_max_ns = 500'000;
inline constexpr std::uint64_t copy_bytes_per_ns = 10;  // the host CPU's memcpy: 10 GB/s
inline constexpr std::uint64_t idle_poll_ns = 1'000;  // an empty completion queue read waits at most this

}  // namespace trn3::fabric
