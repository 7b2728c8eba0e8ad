// window_sync: the conservative window protocol of a distributed run
// (architecture decision 10).
//
// A platform is cut along message links into partitions, and each process
// (ranks.h) elaborates its partitions plus a proxy port for the far end of
// each cut link. Every cut link has a lookahead: nothing sent into it is
// delivered sooner than the sender's lead plus the link's latency
// (message_port::set_lead). The run advances in windows no longer than the
// smallest lookahead:
//
//   every rank runs its kernel up to the boundary B (events at B wait);
//   at B the ranks exchange what their proxies collected, each with its
//   delivery time (never before B: it was sent before B, at least one
//   lookahead earlier), and the side channels' bytes; each schedules what
//   it received in its own delivery queue, whose (time, destination,
//   source, sequence) order is the one a single process uses;
//   the next boundary is the earliest pending activity of any rank, or of
//   any message in flight, plus the window (idle stretches are skipped).
//
// A run that is not distributed takes the same windows and the same stop,
// so its results are the same for any number of ranks: the run ends at the
// first boundary at which every rank is done, or at `limit`. Its simulated
// time is when the last rank's part finished (each says when), not the
// boundary: where boundaries fall depends on every pending event (idle
// stretches are skipped up to the next one), which no figure should.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <systemc>

#include "trn3/core/message_link.h"
#include "trn3/core/ranks.h"

namespace trn3 {

class window_sync {
public:
    window_sync(ranks& r, const sc_core::sc_time& window);

    // `proxy` stands for a port that rank `owner` elaborates.
    void add_proxy(message_port& proxy, unsigned owner);
    // What a proxy for rank `owner` does with a message (for a port made
    // remote by its own owner: pcie::link::make_remote).
    std::function<void(message&&)> forward_to(unsigned owner);
    // A port of this rank that other ranks' messages may reach, delivered by `queue`.
    void add_local(message_port& port, delivery_queue& queue);
    // Side channel: at each boundary `outgoing()` goes to every other rank,
    // where `incoming(from_rank, bytes)` takes it, in rank order.
    void add_channel(std::function<byte_buffer()> outgoing, std::function<void(unsigned, const byte_buffer&)> incoming);

    // Runs windows until `finished_at()` gives a time on every rank at a
    // boundary (when its part finished), until `limit` (zero: none), or
    // until no rank has anything left to do. Returns the run's simulated
    // time: the latest rank's finish, else the last boundary.
    // A model error on any rank stops every rank: it is rethrown where it
    // happened and reported as that rank's failure elsewhere.
    // `at_boundary` is called at each boundary (progress lines).
    sc_core::sc_time run(const std::function<std::optional<sc_core::sc_time>()>& finished_at,
                         const sc_core::sc_time& limit, const std::function<void()>& at_boundary = {});

    const sc_core::sc_time& window() const { return window_; }
    std::uint64_t windows() const { return windows_; }
    std::uint64_t messages_out() const { return messages_out_; }
    std::uint64_t bytes_out() const { return bytes_out_; }
    // Wall seconds this rank spent at boundaries (exchanging and waiting),
    // and, summed over the windows from every rank's figure of the window
    // before: the least any rank spent (what the exchange itself costs: the
    // last rank to arrive waits for nobody) and the most less the least (the
    // ranks' imbalance).
    double exchange_seconds() const { return exchange_s_; }
    double sync_seconds() const { return sync_s_; }
    double imbalance_seconds() const { return imbalance_s_; }

private:
    struct status {
        bool done = false, failed = false;
        std::uint64_t next_ps = 0;  // earliest pending activity or message sent (UINT64_MAX: none)
        std::uint64_t done_ps = 0;  // when its part finished (done)
        std::uint64_t last_wait_ns = 0;  // wall time at the previous boundary
    };
    // Exchanges at the boundary; returns every rank's status.
    std::vector<status> boundary(const status& mine);

    ranks& ranks_;
    sc_core::sc_time window_;
    std::vector<std::vector<message>> outbox_;  // by rank
    std::map<std::uint64_t, std::pair<message_port*, delivery_queue*>> local_;  // by port id
    std::vector<std::pair<std::function<byte_buffer()>, std::function<void(unsigned, const byte_buffer&)>>> channels_;
    std::uint64_t windows_ = 0, messages_out_ = 0, bytes_out_ = 0;
    double exchange_s_ = 0, sync_s_ = 0, imbalance_s_ = 0;
    std::uint64_t last_wait_ns_ = 0;
};

}  // namespace trn3
