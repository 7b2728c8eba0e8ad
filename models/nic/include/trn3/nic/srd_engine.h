// srd_engine: the Nitro NIC's SRD transport (Scalable Reliable Datagram),
// loosely timed, and the reliable-datagram messages above it.
//
//   port(0) .. port(n-1): message ports, each one end of an Ethernet link to
//   a ToR (two ports: dual ToR)
//
// A connection is (local queue pair, peer node, peer queue pair). A message
// posted on it is cut into packets of at most `mtu` payload bytes, each with
// the connection's next packet sequence number (PSN).
//
// Sending (per connection):
// - Multipath spraying: a connection has `paths` paths, each an entropy (the
//   connection's base plus the path's number: what ECMP hashes, spec/srd.h)
//   and a NIC port (path mod ports). Each packet takes the path with the
//   fewest packets in flight, the next in turn among equals: round robin
//   while the paths keep up, and fewer packets on a path whose queues make
//   them wait. A path whose packet timed out is avoided for `path_penalty`;
//   a port that is down (set_port_down: its link lost) is not used.
// - Window: at most `window` packets unacknowledged. The window follows the
//   RTT: each acknowledgement's RTT sample (its send time, echoed) above
//   `target_rtt` shrinks it by `decrease` (at most once per smoothed RTT),
//   one at or below it grows it by 1 / window (one packet per window's worth
//   of acknowledgements), between 1 and `window_max`.
// - Retransmission: a packet unacknowledged `rto` after it left (rto =
//   max(rto_min, 3 x smoothed RTT)) is sent again on another path; after
//   `max_retries`, or when no port works, the connection fails: its messages
//   complete with an error, none is half delivered. The path it was lost on
//   is avoided for `path_penalty`, doubled for each further loss on it
//   before an acknowledgement comes back through it (up to 1024 x), so the
//   paths through a dead switch are soon left alone.
// Receiving: every data packet is acknowledged (the ACK echoes its send
// time); a PSN seen before is acknowledged again and dropped (duplicates).
// A message is delivered when all its bytes are in, and messages of a
// connection are delivered in the order they were posted (send-after-send
// ordering: a complete message waits for the ones before it). What the
// receiver holds is bounded by the sender: the packets it has in flight
// span at most window_max PSNs. A packet that disagrees with its message's
// first one is neither taken nor acknowledged. Packets carry their
// connection's epoch: a newer one makes the receiver start the connection
// again (the sender reset it: reset_qp), an older one is dropped.
//
// Times: a packet leaves tx_latency after it is made (the NIC's pipeline);
// a message is delivered, and an ACK leaves, rx_latency after the packet
// that completed it arrived.
//
// params:  mtu, paths, window_initial, window_max, target_rtt, decrease, rto_min,
//          path_penalty, max_retries, tx_latency, rx_latency
// stats:   packets_sent, retransmits, timeouts, acks_sent, duplicates, malformed,
//          messages_sent, messages_delivered, bytes_delivered, connection_failures,
//          rtt_ns (histogram)
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <set>
#include <tuple>
#include <vector>

#include "trn3/core/component.h"
#include "trn3/core/message_link.h"
#include "trn3/core/stats.h"
#include "trn3/nic/srd_packet.h"

namespace trn3::nic {

class srd_engine : public component {
public:
    param<byte_count> mtu;
    param<std::uint64_t> paths;
    param<std::uint64_t> window_initial, window_max;
    param<sc_core::sc_time> target_rtt;
    param<double> decrease;
    param<sc_core::sc_time> rto_min, path_penalty;
    param<std::uint64_t> max_retries;
    param<sc_core::sc_time> tx_latency, rx_latency;

    // node: this NIC's 48-bit address; port p's message-port id is first_port_id + p.
    srd_engine(const sc_core::sc_module_name& name, std::uint64_t node, unsigned ports, std::uint64_t first_port_id);

    std::uint64_t node() const { return node_; }
    message_port& port(unsigned p) { return *ports_[p]; }
    unsigned port_count() const { return static_cast<unsigned>(ports_.size()); }
    // A port whose link is down (its ToR died, a cable pulled): no path uses
    // it, nor a port without a link; with no port working a connection fails.
    void set_port_down(unsigned p, bool down) { port_down_[p] = down; }
    bool port_usable(unsigned p) const { return ports_[p]->connected() && !port_down_[p]; }
    // Forgets every connection of local queue pair `qp` (messages in flight
    // are dropped without completion: the owner completes them) and starts
    // its next epoch: peers drop their state of the connections before.
    void reset_qp(std::uint16_t qp);

    // A message delivered to queue pair dst_qp: at `when`, in host memory.
    struct inbound {
        std::uint64_t src_node = 0;
        std::uint16_t src_qp = 0, dst_qp = 0;
        std::uint64_t bytes = 0;
        // Its bytes; for a timing-only message fewer: the leading bytes it
        // carried (none, or a header), the rest only timed.
        std::vector<std::uint8_t> data;
        sc_core::sc_time when;
    };
    void on_deliver(std::function<void(inbound&)> f) { deliver_ = std::move(f); }

    // Posts a message of `bytes` from queue pair src_qp to (dst_node,
    // dst_qp); `data` holds its bytes, or is empty (timing only: the same
    // packets, no payload), or holds fewer than the first packet's payload
    // (timing only past them: they arrive, as the receiver's `data`). `done(ok, when)` is called when every packet is
    // acknowledged (ok) or the connection failed (not ok). Returns the
    // message's id. Call it from a SystemC process or before the simulation starts.
    using completion = std::function<void(bool ok, const sc_core::sc_time& when)>;
    std::uint64_t post_send(std::uint16_t src_qp, std::uint64_t dst_node, std::uint16_t dst_qp, std::uint64_t bytes,
                            std::vector<std::uint8_t> data, completion done);

    // The connection's current window, in packets (0: no such connection).
    double window(std::uint16_t src_qp, std::uint64_t dst_node, std::uint16_t dst_qp) const;

private:
    using conn_key = std::tuple<std::uint16_t, std::uint64_t, std::uint16_t>;  // local qp, peer node, peer qp
    struct outgoing {
        std::uint64_t id;
        std::uint32_t msg;
        std::uint64_t bytes;
        std::vector<std::uint8_t> data;
        std::uint64_t next_offset = 0;  // the next byte not yet in a packet
        std::uint64_t unacked = 0;  // packets sent and not yet acknowledged
        bool all_sent = false;  // every byte is in a packet
        completion done;
    };
    struct in_flight {
        std::uint64_t msg_id;
        std::uint32_t msg;
        std::uint64_t offset, length, msg_bytes;
        std::uint64_t path;
        sc_core::sc_time sent, deadline;
        std::uint64_t retries = 0;
    };
    struct sender {
        std::uint64_t next_psn = 0;
        std::uint32_t next_msg = 0;
        std::uint16_t entropy_base = 0;
        std::uint64_t next_path = 0;
        std::vector<sc_core::sc_time> path_bad_until;
        std::vector<std::uint8_t> path_strikes;  // losses since the path's last acknowledgement
        std::vector<std::uint32_t> path_load;  // packets in flight per path
        std::map<std::uint64_t, outgoing> messages;  // by id, unacknowledged
        std::map<std::uint64_t, in_flight> flight;  // by PSN
        std::deque<std::uint64_t> to_send;  // ids with bytes not yet in packets
        double window = 0;
        sc_core::sc_time srtt, last_decrease;
        bool failed = false;
        std::uint16_t epoch = 0;
    };
    struct reassembly {
        std::uint64_t bytes = 0, received = 0, packets = 0;
        std::vector<std::uint8_t> data;
        bool timing = false, complete = false;
        sc_core::sc_time complete_at;
    };
    struct receiver {
        std::uint16_t epoch = 0;
        std::uint64_t expected = 0;  // every PSN below it has arrived
        std::set<std::uint64_t> above;  // PSNs at or past `expected` that arrived
        std::uint32_t next_deliver = 0;
        std::map<std::uint32_t, reassembly> messages;
    };

    void receive(unsigned port, message& frame);
    void on_data(unsigned port, const srd_packet& p);
    void on_ack(const srd_packet& p);
    void pump(const conn_key& k, sender& s);
    // False when no port works (nothing sent).
    bool transmit(const conn_key& k, sender& s, std::uint64_t psn, in_flight& f, bool again);
    // The path of the next packet; `paths` when no port works.
    std::uint64_t pick_path(sender& s, std::uint64_t avoid);
    sc_core::sc_time rto(const sender& s) const;
    void fail(const conn_key& k, sender& s);
    void timers();  // thread: retransmits what timed out
    static std::uint64_t widen(std::uint64_t expected, std::uint32_t psn);

    std::uint64_t node_;
    std::vector<std::unique_ptr<message_port>> ports_;
    std::vector<bool> port_down_;
    std::map<std::uint16_t, std::uint16_t> qp_epoch_;  // each local queue pair's current epoch
    std::map<conn_key, sender> senders_;
    std::map<conn_key, receiver> receivers_;  // key: local qp, peer node, peer qp
    std::function<void(inbound&)> deliver_;
    std::uint64_t next_id_ = 1;
    // Deadlines of packets in flight (stale entries are skipped: a packet
    // acknowledged or sent again since).
    struct deadline {
        sc_core::sc_time at;
        conn_key conn;
        std::uint64_t psn;
        bool operator>(const deadline& o) const { return std::tie(at, conn, psn) > std::tie(o.at, o.conn, o.psn); }
    };
    std::priority_queue<deadline, std::vector<deadline>, std::greater<deadline>> deadlines_;
    sc_core::sc_event deadline_added_;
    counter packets_sent_, retransmits_, timeouts_, acks_sent_, duplicates_, malformed_, messages_sent_,
        messages_delivered_, bytes_delivered_, connection_failures_;
    histogram rtt_ns_;
};

}  // namespace trn3::nic
