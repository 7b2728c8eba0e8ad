// Flow control on links (pcie::link rx_buffer): a forwarder whose egress is
// slower than its ingress keeps at most its receive buffer of TLPs waiting,
// and holds the sender; without a buffer limit the backlog grows with
// everything sent.
#include <catch2/catch.hpp>

#include <memory>

#include "common.h"

using namespace trn3;
using namespace trn3::pcie;
using namespace trn3::pcie_test;

namespace {

// sender ══ fast (x16) ══ forwarder ══ slow (x2) ══ receiver. The sender
// sends 64 writes of 16 KiB as fast as its wire lets it; returns the time
// its last one started and the longest a TLP waited at the forwarder.
struct chain {
    delivery_queue queue{"queue"};
    link fast, slow;
    std::vector<sc_time> waited;  // at the forwarder: egress start - arrival, per TLP
    sc_time last_start;
    std::uint64_t received = 0;
    explicit chain(std::uint64_t rx_buffer)
        : fast("fast", queue, 1, 2, link_config{generation::gen6, 16}.with_rx_buffer(rx_buffer)),
          slow("slow", queue, 3, 4, link_config{generation::gen6, 2}) {
        fast.b().on_receive([this](tlp& t) {
            const sc_time now = sc_core::sc_time_stamp();
            const sc_time egress = std::max(now, slow.a().wire_free());
            waited.push_back(egress - now);
            slow.a().forward(std::move(t), sc_core::SC_ZERO_TIME, &fast.b());
        });
        slow.b().on_receive([this](tlp& t) { received += t.total_bytes(); });
    }
    void send_all() {
        sc_core::wait(sc_time(50, SC_US));  // both links trained
        for (unsigned i = 0; i < 64; ++i) {
            const sc_time start = std::max(sc_core::sc_time_stamp(), fast.a().wire_free());
            sc_core::wait(start - sc_core::sc_time_stamp());
            last_start = start;
            fast.a().send(mwr(high + i * 16384ull, 256, 64), start);
        }
    }
};

}  // namespace

TEST_CASE("a full receive buffer holds the sender: the forwarder's queue stays within its buffer, the sender slows "
          "to the slow link's rate, and every byte arrives") {
    chain bounded(64 << 10);
    script s("s", [&] { bounded.send_all(); });
    sc_core::sc_start(sc_time(2000, SC_US));
    CHECK(bounded.received == 64ull * 16384);
    const double slow_rate = bounded.slow.raw_bytes_per_second(), fast_rate = bounded.fast.raw_bytes_per_second();
    REQUIRE(fast_rate > 4 * slow_rate);
    // No TLP waits longer than the 64 KiB buffer takes to fill at the fast link's rate (plus one TLP train).
    sc_time longest;
    for (const sc_time& w : bounded.waited) longest = std::max(longest, w);
    INFO("longest wait " << longest << ", buffer time " << (64 << 10) / fast_rate * 1e6 << " us");
    CHECK(longest.to_seconds() < (64.0 * 1024 + 16384) / slow_rate);
    CHECK(bounded.fast.held_by_receiver() > 0);
    // The sender was held: its last write started only when the slow link had nearly drained the rest.
    CHECK(bounded.last_start.to_seconds() > sc_time(50, SC_US).to_seconds() + (63.0 * 16384 - 80 * 1024) / slow_rate);
}

TEST_CASE("without a receive buffer limit nothing holds the sender: it sends at its own rate and the forwarder's "
          "queue grows with everything sent") {
    chain unbounded(0);
    script s("s", [&] { unbounded.send_all(); });
    sc_core::sc_start(sc_time(2000, SC_US));
    CHECK(unbounded.received == 64ull * 16384);
    CHECK(unbounded.fast.held_by_receiver() == 0);
    sc_time longest;
    for (const sc_time& w : unbounded.waited) longest = std::max(longest, w);
    const double slow_rate = unbounded.slow.raw_bytes_per_second();
    CHECK(longest.to_seconds() > 0.8 * 63 * 16384 / slow_rate);  // the last waits for nearly everything before it
}
