/* The scale-out network's packets: an Ethernet frame carrying one SRD
 * packet (Scalable Reliable Datagram, the transport of EFA). Shared by the
 * NIC model (models/nic), the Ethernet switches (models/ethernet) and, as it
 * lands, the NIC's host software; docs/scaleout.md describes the protocol.
 * Plain C.
 *
 * A frame's bytes as the model carries them: a 20-byte addressing part that
 * stands for the Ethernet, IPv4 and UDP headers (what a switch reads: the
 * destination and source node and the flow entropy, which on the wire is the
 * UDP source port), then the SRD header, then the payload. All fields are
 * little-endian. A frame costs its payload plus TRN3_SRD_WIRE_OVERHEAD bytes
 * of wire time: preamble and start delimiter 8, Ethernet header 14, IPv4 20,
 * UDP 8, the SRD header 44, FCS 4, inter-frame gap 12.
 *
 * SRD's own header layout is not public; this one carries what the protocol
 * needs (sequence numbers, the message a packet belongs to, the send time
 * that an acknowledgement echoes for the RTT).
 */
#ifndef TRN3_SPEC_SRD_H
#define TRN3_SPEC_SRD_H

#include <stdint.h>

/* Addressing (what a switch reads) */
#define TRN3_ETH_DST 0u /* u64: destination node (a 48-bit MAC address) */
#define TRN3_ETH_SRC 8u /* u64: source node */
#define TRN3_ETH_ENTROPY 16u /* u16: flow entropy, the UDP source port: ECMP hashes it */
#define TRN3_ETH_PROTO 18u /* u16: TRN3_ETH_PROTO_SRD */
#define TRN3_ETH_HEADER_BYTES 20u
#define TRN3_ETH_PROTO_SRD 0x5244u /* "DR" */
#define TRN3_ETH_NODE_MASK 0xFFFFFFFFFFFFull /* node addresses are 48 bits */

/* The SRD header */
#define TRN3_SRD_TYPE 20u /* u8: TRN3_SRD_DATA or TRN3_SRD_ACK */
#define TRN3_SRD_FLAGS 21u /* u8: reserved, 0 */
#define TRN3_SRD_SRC_QP 22u /* u16: the sender's queue pair */
#define TRN3_SRD_DST_QP 24u /* u16: the receiver's queue pair */
#define TRN3_SRD_EPOCH 26u /* u16: the connection's epoch: a sender that resets a connection starts the next one */
#define TRN3_SRD_PSN 28u /* u32: packet sequence number on the connection (an ACK: the one acknowledged) */
#define TRN3_SRD_MSG 32u /* u32: the message's sequence number on the connection */
#define TRN3_SRD_PAYLOAD_BYTES 36u /* u32: payload bytes in this packet (an ACK: 0) */
#define TRN3_SRD_MSG_BYTES 40u /* u64: the whole message's length */
#define TRN3_SRD_MSG_OFFSET 48u /* u64: where this payload goes in the message */
#define TRN3_SRD_STAMP 56u /* u64: the data packet's send time in ps (an ACK echoes it) */
#define TRN3_SRD_HEADER_BYTES 64u /* payload follows */

#define TRN3_SRD_DATA 1u
#define TRN3_SRD_ACK 2u

/* Wire bytes per frame beyond the payload (see above) */
#define TRN3_SRD_WIRE_OVERHEAD 110u
/* The largest payload a frame may carry (a 9,000-byte jumbo MTU less headers) */
#define TRN3_SRD_MAX_PAYLOAD 8928u
/* The largest message (what a receiver may have to hold) */
#define TRN3_SRD_MAX_MESSAGE 0x80000000ull

#endif
