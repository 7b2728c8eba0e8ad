// A split link (link.h, "Split"): its two ends keep their own state and meet
// only through messages on the wire, so that a platform may be cut on it
// and run in two processes. Checked here: the far end comes up a latency
// after the owner; under 1,000 retrains at random moments with TLP streams
// both ways every TLP arrives exactly once and in order; a receiver's
// back-pressure reaches the sender a latency later; and the link behaves
// the same when its two ends are two objects in two delivery queues, joined
// only by what they hand each other (as two processes of a run are).
#include <catch2/catch.hpp>

#include <random>

#include "common.h"
#include "trn3/core/registry.h"
#include "trn3/spec/link.h"

using namespace trn3;
using namespace trn3::pcie;
using namespace trn3::pcie_test;
using sc_core::SC_NS;

namespace {

constexpr std::uint64_t other = 0x6000000000ull;  // b's writes to a
const sc_time gen6_latency = sc_time(7, SC_NS);  // phy 5 + fec 2, no retimer

struct arrival {
    sc_time at;
    std::uint64_t address;
    std::uint32_t count;
    bool operator==(const arrival& o) const { return at == o.at && address == o.address && count == o.count; }
};

void log_arrivals(link_end& e, std::vector<arrival>& out) {
    e.on_receive([&out](tlp& t) { out.push_back({sc_core::sc_time_stamp(), t.address, t.count}); });
}

}  // namespace

TEST_CASE("split link: the far end comes up a latency after the owner") {
    delivery_queue q("q");
    link l("l", q, 1, 2, link_config{generation::gen6, 16});
    l.split();
    std::vector<arrival> at_a;
    log_arrivals(l.a(), at_a);
    bool a_up = false, b_up = false, b_up_later = false;
    unsigned b_width = 99;
    script s("s", [&] {
        sc_core::wait(l0_no_retimer + sc_time(1, SC_NS));
        a_up = l.a().up();
        b_up = l.b().up();
        b_width = l.b().width();
        sc_core::wait(gen6_latency);
        b_up_later = l.b().up();
        l.b().send(mwr(other, 64), sc_core::sc_time_stamp());
    });
    sc_core::sc_start(sc_time(100, SC_US));
    CHECK(a_up);
    CHECK_FALSE(b_up);
    CHECK(b_width == 0);
    CHECK(b_up_later);
    CHECK(l.b().width() == 16);
    REQUIRE(at_a.size() == 1);
    CHECK(at_a[0].address == other);
}

TEST_CASE("split link flaps: 1,000 retrains under TLP streams both ways, every TLP exactly once and in order") {
    delivery_queue q("q");
    link l("l", q, 1, 2, link_config{generation::gen6, 16});
    l.split();
    rig::reg_port regs("regs");
    regs.out.bind(l.in);
    constexpr unsigned tlps = 50'000, flaps = 1'000;
    std::vector<arrival> at_b, at_a;
    log_arrivals(l.b(), at_b);
    log_arrivals(l.a(), at_a);
    std::mt19937_64 rng(20261205);
    auto ns = [&](unsigned lo, unsigned hi) {
        return sc_time(double(std::uniform_int_distribution<unsigned>(lo, hi)(rng)), SC_NS);
    };
    bool sent_all = false;
    unsigned flapped = 0;
    script sender("sender", [&] {
        sc_core::wait(sc_time(50, SC_US));
        for (unsigned i = 0; i < tlps; ++i) {
            // Now and then a burst (1 MiB, about 9 us of wire) queues a
            // direction past a retrain's end: its TLPs come back late.
            const bool burst = i % 500 == 250, burst_a = i % 500 == 0;
            l.a().send(mwr(high + 4096ull * i, burst_a ? 4096 : 256, burst_a ? 256 : 1 + i % 3),
                       sc_core::sc_time_stamp());
            l.b().send(mwr(other + 4096ull * i, burst ? 4096 : 256, burst ? 256 : 1), sc_core::sc_time_stamp());
            sc_core::wait(ns(0, 400));
        }
        sent_all = true;
    });
    script flapper("flapper", [&] {
        sc_core::wait(sc_time(50, SC_US));
        while (!sent_all && flapped < flaps) {
            sc_core::wait(ns(5'000, 15'000));
            regs.write(TRN3_LINK_CONTROL, TRN3_LINK_CONTROL_RETRAIN);
            ++flapped;
        }
    });
    sc_core::sc_start(sc_time(100, sc_core::SC_MS));
    REQUIRE(sent_all);
    CHECK(flapped > 900);
    REQUIRE(at_b.size() == tlps);
    REQUIRE(at_a.size() == tlps);
    unsigned out_of_order = 0;
    for (unsigned i = 0; i < tlps; ++i) {
        if (at_b[i].address != high + 4096ull * i || at_b[i].count != (i % 500 == 0 ? 256 : 1 + i % 3)) ++out_of_order;
        if (at_a[i].address != other + 4096ull * i) ++out_of_order;
    }
    CHECK(out_of_order == 0);
    CHECK(regs.read(TRN3_LINK_TRAININGS) == 1 + flapped);
    // TLPs that met a retrain went back to their sender (seeded: the same every run).
    CHECK(l.replayed() == 6317);
    CHECK(regs.read(TRN3_LINK_REPLAYED) == l.replayed());
    CHECK(l.width() == 16);
    CHECK(l.b().width() == 16);
}

// The same link twice: one object with both ends here, and two objects
// (its halves) in two delivery queues, each with the other end remote,
// joined only by the messages each hands the other. Driven alike, they
// must deliver the same TLPs at the same times, and count the same.
TEST_CASE("split link halves: two objects joined by their messages behave as one") {
    delivery_queue q("q"), q0("q0"), q1("q1");
    const link_config cfg = link_config{generation::gen6, 16}.with_retimers(2);
    link whole("whole", q, 1, 2, cfg), half0("half0", q0, 1, 2, cfg), half1("half1", q1, 1, 2, cfg);
    for (link* l : {&whole, &half0, &half1}) l->split();
    half0.make_remote(1, [&](message&& m) { q1.schedule(std::move(m), &half1.port(1)); });
    half1.make_remote(0, [&](message&& m) { q0.schedule(std::move(m), &half0.port(0)); });
    rig::reg_port regs("regs"), regs0("regs0");
    regs.out.bind(whole.in);
    regs0.out.bind(half0.in);
    std::vector<arrival> whole_a, whole_b, half_a, half_b;
    log_arrivals(whole.a(), whole_a);
    log_arrivals(whole.b(), whole_b);
    log_arrivals(half0.a(), half_a);
    log_arrivals(half1.b(), half_b);
    constexpr unsigned tlps = 20'000, flaps = 300;
    std::mt19937_64 rng(7);
    auto ns = [&](unsigned lo, unsigned hi) {
        return sc_time(double(std::uniform_int_distribution<unsigned>(lo, hi)(rng)), SC_NS);
    };
    bool sent_all = false;
    script sender("sender", [&] {
        sc_core::wait(sc_time(100, SC_US));
        for (unsigned i = 0; i < tlps; ++i) {
            const sc_time now = sc_core::sc_time_stamp();
            whole.a().send(mwr(high + 4096ull * i, 512, 1 + i % 4), now);
            half0.a().send(mwr(high + 4096ull * i, 512, 1 + i % 4), now);
            whole.b().send(mwr(other + 4096ull * i, 128), now);
            half1.b().send(mwr(other + 4096ull * i, 128), now);
            if (i % 7 == 0) {  // a receiver short of buffer holds its sender
                whole.b().hold_sender(now + sc_time(300, SC_NS));
                half1.b().hold_sender(now + sc_time(300, SC_NS));
            }
            sc_core::wait(ns(0, 300));
        }
        sent_all = true;
    });
    script flapper("flapper", [&] {
        sc_core::wait(sc_time(100, SC_US));
        for (unsigned k = 0; !sent_all && k < flaps; ++k) {
            sc_core::wait(ns(3'000, 12'000));
            regs.write(TRN3_LINK_CONTROL, TRN3_LINK_CONTROL_RETRAIN);
            regs0.write(TRN3_LINK_CONTROL, TRN3_LINK_CONTROL_RETRAIN);
        }
    });
    sc_core::sc_start(sc_time(100, sc_core::SC_MS));
    REQUIRE(sent_all);
    REQUIRE(whole_b.size() == tlps);
    REQUIRE(whole_a.size() == tlps);
    CHECK(half_b == whole_b);
    CHECK(half_a == whole_a);
    CHECK(whole.replayed() == 403);
    CHECK(half0.replayed() == whole.replayed());
    CHECK(half1.replayed() == 0);  // end a's count
    CHECK(regs0.read(TRN3_LINK_TRAININGS) == regs.read(TRN3_LINK_TRAININGS));
    CHECK(half0.held_by_receiver() + half1.held_by_receiver() == whole.held_by_receiver());
    CHECK(half0.payload_bytes() + half1.payload_bytes() == whole.payload_bytes());
    CHECK(half1.state() == TRN3_LTSSM_DISABLED);  // no LTSSM where the owner is remote
}

TEST_CASE("split link: a receiver's hold reaches the sender a latency later, a whole link's at once") {
    delivery_queue q("q");
    link split("split", q, 1, 2, link_config{generation::gen6, 16});
    link whole("whole", q, 3, 4, link_config{generation::gen6, 16});
    split.split();
    std::vector<arrival> at_split, at_whole;
    log_arrivals(split.b(), at_split);
    log_arrivals(whole.b(), at_whole);
    const sc_time hold_until = sc_time(60, SC_US);
    script s("s", [&] {
        sc_core::wait(sc_time(50, SC_US));
        split.b().hold_sender(hold_until);
        whole.b().hold_sender(hold_until);
        // Sent before the hold is heard of: not held on the split link.
        split.a().send(mwr(high, 64), sc_core::sc_time_stamp());
        whole.a().send(mwr(high, 64), sc_core::sc_time_stamp());
        sc_core::wait(gen6_latency + sc_time(1, SC_NS));  // the hold is in (at the end of its instant)
        split.a().send(mwr(high + 64, 64), sc_core::sc_time_stamp());
    });
    sc_core::sc_start(sc_time(100, SC_US));
    REQUIRE(at_split.size() == 2);
    REQUIRE(at_whole.size() == 1);
    CHECK(at_split[0].at < sc_time(51, SC_US));
    CHECK(at_whole[0].at > hold_until);
    CHECK(at_split[1].at > hold_until);
    CHECK(split.held_by_receiver() == 1);
}

TEST_CASE("split link: lanes failing retrain it narrower, and the far end takes the width a latency after L0") {
    delivery_queue q("q");
    link l("l", q, 1, 2, link_config{generation::gen6, 16});
    l.split();
    unsigned b_width_at_l0 = 0, b_width_after = 0;
    sc_time trained;
    script s("s", [&] {
        sc_core::wait(sc_time(50, SC_US));
        l.fail_lanes({3});
        while (!l.up()) sc_core::wait(sc_time(1, SC_NS));
        trained = l.trained_at();
        b_width_at_l0 = l.b().width();
        sc_core::wait(trained + gen6_latency - sc_core::sc_time_stamp() + sc_time(1, sc_core::SC_PS));
        b_width_after = l.b().width();
    });
    sc_core::sc_start(sc_time(100, SC_US));
    CHECK(l.width() < 16);
    CHECK(b_width_at_l0 == 16);  // b has not heard yet
    CHECK(b_width_after == l.width());
    CHECK(l.replayed() == 0);
}

TEST_CASE("split link: Recovery waits for the far end's answer (DOWN_ACK), a round trip") {
    param_registry::instance().set_pending_text("l.recovery_time", "1ns", "test");
    param_registry::instance().set_pending_text("whole.recovery_time", "1ns", "test");
    delivery_queue q("q");
    link l("l", q, 1, 2, link_config{generation::gen6, 16});
    link whole("whole", q, 3, 4, link_config{generation::gen6, 16});
    l.split();
    rig::reg_port regs("regs"), regs_whole("regs_whole");
    regs.out.bind(l.in);
    regs_whole.out.bind(whole.in);
    const sc_time retrain_at = sc_time(50, SC_US), config_time = sc_time(2, SC_US);
    script s("s", [&] {
        sc_core::wait(retrain_at);
        regs.write(TRN3_LINK_CONTROL, TRN3_LINK_CONTROL_RETRAIN);
        regs_whole.write(TRN3_LINK_CONTROL, TRN3_LINK_CONTROL_RETRAIN);
    });
    sc_core::sc_start(sc_time(100, SC_US));
    CHECK(whole.trained_at() == retrain_at + sc_time(1, SC_NS) + config_time);
    CHECK(l.trained_at() == retrain_at + 2 * gen6_latency + config_time);
    CHECK(l.b().up());
}
