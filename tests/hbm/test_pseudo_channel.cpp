// The pseudo-channel timing engine against hand-computed timelines.
#include <catch2/catch.hpp>

#include "trn3/hbm/pseudo_channel.h"

using namespace trn3::hbm;

namespace {
// The stack's defaults (hbm_stack.h), in ps: 2.4 GHz command clock, 38.4 GB/s.
timing defaults() {
    timing t{};
    t.t_burst = 833;  // 32 B at 38.4 GB/s
    t.t_cl = 12500;
    t.t_wl = 5000;
    t.t_rcd = 19400;
    t.t_rp = 16250;
    t.t_ras = 28100;
    t.t_rc = 45000;
    t.t_faw = 15000;
    t.t_rrd_s = 2500;
    t.t_rrd_l = 3100;
    t.t_ccd_s = 833;  // 2 clocks
    t.t_ccd_l = 1667;  // 4 clocks
    t.t_wr = 15000;
    t.t_wtr = 7500;
    t.t_rtw = 3300;
    t.t_refi = 3900000;
    t.t_rfc = 350000;
    t.write_queue_high = 4;
    t.write_queue_low = 1;
    t.idle_drain = 100000;
    t.reorder_window = 1000000;
    t.read_queue = 64;
    return t;
}
constexpr ps_t tail = 1667 + 12500 + 833;  // second burst's column (tCCD_L), tCL, one burst
// A channel that first refreshes at 3.84 us: cases that do not test refresh
// run long before it.
constexpr ps_t late = 3839062;
}  // namespace

TEST_CASE("a read to a closed row pays tRCD and tCL") {
    pseudo_channel c(defaults(), 4, 4, late);
    CHECK(c.read(0, 0, 0, 7, 2) == 19400 + tail);
    CHECK(c.stats().row_closed == 1);
}

TEST_CASE("a read to the open row pays only tCL") {
    pseudo_channel c(defaults(), 4, 4, late);
    c.read(0, 0, 0, 7, 2);
    CHECK(c.read(50000, 0, 0, 7, 2) == 50000 + tail);
    CHECK(c.stats().row_hits == 1);
}

TEST_CASE("a read to another row of an open bank pays tRP, tRCD and tCL") {
    pseudo_channel c(defaults(), 4, 4, late);
    c.read(0, 0, 0, 7, 2);
    CHECK(c.read(50000, 0, 0, 8, 2) == 50000 + 16250 + 19400 + tail);
    CHECK(c.stats().row_conflicts == 1);
}

TEST_CASE("a quick row change in one bank waits for tRAS, tRP and tRC") {
    pseudo_channel c(defaults(), 4, 4, late);
    c.read(0, 0, 0, 7, 2);
    // PRE at 28.1 ns (tRAS) would allow ACT at 44.35 ns (tRP), but tRC holds
    // the ACT to 45 ns; data after tRCD + tCL.
    CHECK(c.read(1000, 0, 0, 8, 2) == 45000 + 19400 + tail);
}

TEST_CASE("activates keep the sustained tFAW rate: four per window") {
    pseudo_channel c(defaults(), 4, 4, late);
    // ACTs in four groups at 0, 3.75, 7.5, 11.25 ns (tFAW / 4 apart); the fifth at 15 ns.
    for (unsigned g = 0; g < 4; ++g) c.read(0, g, 0, 1, 2);
    CHECK(c.read(0, 0, 1, 1, 2) == 15000 + 19400 + tail);
}

TEST_CASE("activates in one bank group are tRRD_L apart") {
    timing t = defaults();
    t.t_faw = 8000;  // so that tRRD_L (3.1 ns), not tFAW / 4, is the binding spacing
    pseudo_channel c(t, 4, 4, late);
    c.read(0, 0, 0, 1, 1);  // one burst, so the group's column slot is free again in time
    CHECK(c.read(0, 0, 1, 1, 2) == 3100 + 19400 + tail);
}

TEST_CASE("a request inside a refresh window waits for it and finds its row closed") {
    pseudo_channel c(defaults(), 4, 4, 3900000 / 64);  // refreshes at 60.937 ns + k x 3.9 us
    c.read(0, 0, 0, 7, 2);
    const ps_t refresh_end = 3900000 / 64 + 350000;
    CHECK(c.read(100000, 0, 0, 7, 2) == refresh_end + 19400 + tail);
    CHECK(c.stats().refresh_waits == 1);
    // The next refresh starts 3.9 us later and closes the row again.
    const ps_t later = refresh_end + 3900000;
    CHECK(c.read(later, 0, 0, 7, 2) == later + 19400 + tail);
}

TEST_CASE("bursts on the data bus never overlap: a saturated channel delivers its bandwidth") {
    pseudo_channel c(defaults(), 4, 4, late);
    ps_t last = 0;
    const unsigned requests = 1000;
    for (unsigned i = 0; i < requests; ++i) last = c.read(0, i % 4, 0, 1 + i / 64, 8);  // 256 B over 4 groups
    // 8000 bursts of 833 ps need 6.66 us of bus at least. Row switches
    // (all four groups change rows together every 64 requests in this
    // pattern) and one refresh cost at most 12% and 350 ns more; a channel
    // that serialised its groups would take twice as long.
    CHECK(last >= requests * 8 * 833);
    CHECK(last < requests * 8 * 833 * 112 / 100 + 350000);
}

TEST_CASE("a single bank group gets at most one column per tCCD_L") {
    pseudo_channel c(defaults(), 4, 4, late);
    ps_t last = 0;
    for (unsigned i = 0; i < 100; ++i) last = c.read(0, 0, 0, 1, 8);
    CHECK(last >= 100 * 8 * 1667);
}

TEST_CASE("writes are posted until the queue reaches its high watermark, then drain") {
    pseudo_channel c(defaults(), 4, 4, late);
    CHECK(c.write(0, 0, 0, 1, 2) == 0);
    CHECK(c.write(0, 1, 0, 1, 2) == 0);
    CHECK(c.write(0, 2, 0, 1, 2) == 0);
    // The fourth fills the queue: three drain (down to the low watermark of one)
    // and the writer waits for them.
    const ps_t t = c.write(0, 3, 0, 1, 2);
    CHECK(t > 19400);
    CHECK(c.stats().write_drains == 1);
    CHECK(c.flush() > t);
}

TEST_CASE("a read right after a write drain waits for the write-to-read turnaround") {
    pseudo_channel alone(defaults(), 4, 4, late);
    const ps_t r_alone = alone.read(0, 1, 0, 1, 2);
    pseudo_channel c(defaults(), 4, 4, late);
    for (unsigned i = 0; i < 4; ++i) c.write(0, 0, 0, 1, 2);  // drains three
    const ps_t r = c.read(0, 1, 0, 1, 2);
    CHECK(r > r_alone + 7500);
}

TEST_CASE("a later request to a ready bank overtakes one waiting for its bank") {
    pseudo_channel c(defaults(), 4, 4, late);
    c.read(0, 0, 0, 1, 2);
    const ps_t waiting = c.read(0, 0, 0, 2, 2);  // row conflict: waits for tRC
    const ps_t ready = c.read(0, 1, 0, 1, 2);  // another group, closed row
    CHECK(ready < waiting);
    CHECK(ready <= 3750 + 19400 + tail);  // its ACT takes the next free slot
}

TEST_CASE("queued writes drain while the channel is idle") {
    pseudo_channel c(defaults(), 4, 4, late);
    c.write(0, 0, 0, 1, 2);
    c.read(1000000, 1, 0, 1, 2);  // long after: the write drained in the idle time
    CHECK(c.stats().write_drains == 1);
}
