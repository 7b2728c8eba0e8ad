// Traffic classes at switch egress (link arbitration, message_link.h): two
// chips write to a third through a fabric switch; the second chip's small
// write of a higher class goes ahead of the first chip's long train of a
// lower class under strict arbitration, and waits behind it under fifo.
// Nothing is lost either way.
#include <catch2/catch.hpp>

#include "common.h"
#include "trn3/pcie/pcie_switch.h"

using namespace trn3;
using namespace trn3::pcie;
using namespace trn3::pcie_test;
using sc_core::SC_NS;

namespace {

struct outcome {
    sc_time small_arrival;  // the class-1 write's, from its send
    sc_time train_tail;  // the class-0 train's last TLP, from its send
    std::uint64_t bytes = 0;  // landed at the destination
    std::uint64_t passed = 0;  // the switch egress link's count of TLPs sent ahead of lower classes
};

// chip A ══ l0 ══╗
//                switch ══ l2 ══ chip C       (Gen6 x8 links, the Gen1 switch)
// chip B ══ l1 ══╝
// A sends 256 KiB (1024 TLPs of 256 B, class 0) at 100 us; B a 64-B write of
// class 1 at 101 us, while A's train is leaving the switch towards C.
outcome run(bool strict) {
    delivery_queue q("q");
    const link_config cfg = link_config{generation::gen6, 8}.with_strict_priority(strict);
    link l0("l0", q, 1, 2, cfg), l1("l1", q, 3, 4, cfg), l2("l2", q, 5, 6, cfg);
    pcie_switch sw("sw", switch_config{"gen1-160"}.fabric());
    sw.attach(0, l0.b());
    sw.attach(1, l1.b());
    sw.attach(2, l2.a());
    rig::route(sw, 2, 0x2000000000ull, 1ull << 34, 3);
    outcome o;
    const sc_time a_at(100, SC_US), b_at(101, SC_US);
    l2.b().on_receive([&](tlp& t) {
        o.bytes += t.total_bytes();
        if (t.traffic_class == 1) o.small_arrival = sc_core::sc_time_stamp() - b_at;
        else o.train_tail = sc_core::sc_time_stamp() + t.train_span - a_at;
    });
    script s("s", [&] {
        sc_core::wait(a_at);
        l0.a().send(mwr(0x2040000000ull, 256, 1024), sc_core::sc_time_stamp());
        sc_core::wait(b_at - a_at);
        tlp small = mwr(0x2050000000ull, 64);
        small.traffic_class = 1;
        l1.a().send(std::move(small), sc_core::sc_time_stamp());
    });
    sc_core::sc_start(sc_time(200, SC_US));
    o.passed = l2.passed();
    return o;
}

// One hop as test_pcie_fabric's budget has it, without retimers: a flit at
// x8 (4 ns) + phy 5 + FEC 2 per link, the switch 120 ns.
const sc_time one_hop = sc_time(11 + 120 + 11, SC_NS);

}  // namespace

TEST_CASE("strict arbitration: a higher-class write passes a lower-class train at switch egress and arrives in one "
          "hop's time, and every byte lands") {
    const outcome o = run(true);
    CHECK(o.small_arrival == one_hop);
    CHECK(o.bytes == 256 * 1024 + 64);
    CHECK(o.passed == 1);
    // The train left the switch in about 4.6 us (Gen6 x8: 59 GB/s of TLPs).
    CHECK(o.train_tail > sc_time(4, SC_US));
    CHECK(o.train_tail < sc_time(5, SC_US));
}

TEST_CASE("fifo arbitration: the same higher-class write waits at switch egress behind the train that was queued "
          "before it") {
    const outcome o = run(false);
    CHECK(o.bytes == 256 * 1024 + 64);
    CHECK(o.passed == 0);
    // It leaves after the train's last TLP, in that TLP's open flit: it
    // arrives with the train's tail (B sent 1 us after A).
    CHECK(o.small_arrival + sc_time(1, SC_US) == o.train_tail);
    CHECK(o.small_arrival > sc_time(3, SC_US));
}
