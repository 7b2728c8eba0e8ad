// The DMA engine's WAIT_FABRIC descriptors and channels (spec/device.h): a
// wait holds its queue, and only its queue, until its channel's count of
// landed fabric bytes reaches the descriptor's src; ON_CHANNEL(c) names the
// channel a wait waits on, or the one a fabric write counts on at its
// destination, instead of the queue's number.
#include "rig.h"

using namespace trn3;
using namespace trn3::test::dma_rig;

TEST_CASE("a WAIT_FABRIC descriptor holds only its queue until its channel has the bytes, ON_CHANNEL picks "
          "the channel and TRAFFIC_CLASS the fabric writes' class") {
    rig r;
    std::array<std::uint64_t, TRN3_FABRIC_CHANNELS> landed{};
    r.dma.fabric_rx_bytes = [&](unsigned c) { return landed.at(c); };
    constexpr std::uint32_t wait = TRN3_DESC_WAIT_FABRIC;
    ring q2 = r.open(2, 8, true), q3 = r.open(3, 8, true), q4 = r.open(4, 8, true);
    r.post(q2, desc(100, 0, 0, wait, 20));  // channel 2 (its queue)
    r.post(q2, desc(dev0, dev0 + 0x100, 64, 0, 21));
    r.post(q3, desc(50, 0, 0, wait | TRN3_DESC_ON_CHANNEL(7), 30));
    r.post(q3, desc(dev0, dev0 + 0x200, 64, 0, 31));
    r.post(q4, desc(dev0, TRN3_FABRIC_ADDR(0, 0x1000), 64, TRN3_DESC_ON_CHANNEL(9) | TRN3_DESC_TRAFFIC_CLASS(6), 40));
    r.post(q4, desc(dev0, TRN3_FABRIC_ADDR(0, 0x2000), 64, 0, 41));
    r.doorbell(q2);
    r.doorbell(q3);
    r.doorbell(q4);
    sc_core::sc_start(sc_time(5, sc_core::SC_US));
    CHECK(r.head(2) == 0);  // both held
    CHECK(r.head(3) == 0);
    CHECK(r.head(4) == 2);  // the others went on
    REQUIRE(r.fabric.writes.size() == 2);
    CHECK(r.fabric.writes[0].offset == 0x1000);
    CHECK(r.fabric.writes[0].channel == 9);  // ON_CHANNEL(9)
    CHECK(r.fabric.writes[1].channel == 4);  // its queue's
    CHECK(r.fabric.writes[0].traffic_class == 6);
    CHECK(r.fabric.writes[1].traffic_class == 0);
    CHECK_FALSE(r.fabric.writes[0].reduce);

    landed[2] = 99;  // one short of queue 2's wait; queue 3 waits on channel 7, not 3
    landed[3] = 1000;
    r.dma.fabric_progress();
    sc_core::sc_start(sc_time(5, sc_core::SC_US));
    CHECK(r.head(2) == 0);
    CHECK(r.head(3) == 0);
    landed[7] = 50;
    r.dma.fabric_progress();
    sc_core::sc_start(sc_time(5, sc_core::SC_US));
    CHECK(r.head(3) == 2);
    CHECK(r.head(2) == 0);
    landed[2] = 100;
    r.dma.fabric_progress();
    sc_core::sc_start(sc_time(5, sc_core::SC_US));
    CHECK(r.head(2) == 2);
    CHECK(r.record(q3, 0).user == 30);
    CHECK(r.record(q2, 1).user == 21);
    CHECK(r.status(2) == TRN3_DMA_STATE_IDLE);
}

TEST_CASE("a queue held by a wait: software sets TAIL back, rewrites the entries read ahead, and the engine runs "
          "the new ones") {
    // Entries 0 (a wait that never comes) and 1 are read ahead together;
    // software takes both back (TAIL = HEAD = 0), writes a copy at entry 0
    // and rings again: the engine must read entry 0 again, not run the wait
    // it had read ahead.
    rig r;
    r.dma.fabric_rx_bytes = [](unsigned) { return std::uint64_t(0); };
    ring q = r.open(2, 8, true);
    r.post(q, desc(100, 0, 0, TRN3_DESC_WAIT_FABRIC, 1));
    r.post(q, desc(dev0, dev0 + 0x100, 64, 0, 2));
    r.doorbell(q);
    sc_core::sc_start(sc_time(5, sc_core::SC_US));
    REQUIRE(r.head(2) == 0);  // held
    q.tail = 0;
    r.doorbell(q);  // TAIL set back over what was read ahead
    std::memset(r.dev(dev0 + 0x400), 0x5A, 64);
    r.submit(q, desc(dev0 + 0x400, dev0 + 0x800, 64, 0, 3));  // entry 0, rewritten
    sc_core::sc_start(sc_time(5, sc_core::SC_US));
    CHECK(r.head(2) == 1);
    CHECK(r.record(q, 0).user == 3);
    CHECK(r.dev(dev0 + 0x800)[63] == 0x5A);
}
