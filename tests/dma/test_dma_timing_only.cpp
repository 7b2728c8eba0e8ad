// The DMA engine's TIMING_ONLY descriptors (spec/device.h, a simulator
// extension): the same accesses as the data mode, each carrying
// trn3::timing_only, so every target times them and nothing moves.
#include "rig.h"

#include "trn3/core/payload.h"

using namespace trn3;
using namespace trn3::test::dma_rig;

TEST_CASE("a TIMING_ONLY descriptor makes the data mode's accesses as timing-only ones: no byte moves, nothing is "
          "reduced, and it completes as a data one does") {
    rig r;
    const auto data = test::pattern(8192, 3);
    std::memcpy(r.dev(dev0), data.data(), data.size());
    const std::vector<float> acc = {1.0f, 2.0f}, add = {4.0f, 8.0f};
    std::memcpy(r.dev(dev1 + 0x100), acc.data(), 8);
    std::memcpy(r.dev(dev0 + 0x9000), add.data(), 8);
    ring q = r.open(1, 8);
    r.post(q, desc(dev0, dev1 + 0x1000, 8192, TRN3_DESC_TIMING_ONLY, 1));
    r.post(q, desc(dev0 + 0x9000, dev1 + 0x100, 8, TRN3_DESC_TIMING_ONLY | TRN3_DESC_REDUCE_WITH(0, 0), 2));
    r.post(q, desc(dev0, TRN3_FABRIC_ADDR(0, 0x40), 256, TRN3_DESC_TIMING_ONLY | TRN3_DESC_ON_CHANNEL(6), 3));
    r.post(q, desc(dev0, dev1 + 0x4000, 8192, 0, 4));  // the same copy, with its data
    r.doorbell(q);
    sc_core::sc_start();
    CHECK(r.head(1) == 4);
    CHECK(all_zero(r.dev(dev1 + 0x1000), 8192));  // timed, not moved
    std::vector<float> now(2);
    std::memcpy(now.data(), r.dev(dev1 + 0x100), 8);
    CHECK(now == acc);  // not reduced
    CHECK(std::memcmp(r.dev(dev1 + 0x4000), data.data(), data.size()) == 0);  // the data one did move
    REQUIRE(r.fabric.writes.size() == 1);
    CHECK(r.fabric.writes[0].channel == 6);
    CHECK(r.fabric.writes[0].timing_only);
    // The same accesses as the data copy's: read the source, write the destination.
    std::vector<access_record> copies;
    for (const auto& a : r.log)
        if (a.side == 'd' && a.length == 8192) copies.push_back(a);
    CHECK(copies == std::vector<access_record>{{'d', 'R', dev0, 8192},
                                               {'d', 'W', dev1 + 0x1000, 8192},
                                               {'d', 'R', dev0, 8192},
                                               {'d', 'W', dev1 + 0x4000, 8192}});
    CHECK(r.record(q, 0).status == 0);
    CHECK(r.record(q, 0).length == 8192);
}
