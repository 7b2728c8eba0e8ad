// PCIe models, the fabric: latency and bandwidth budgets, switch routing,
// ACS, unsupported requests, poisoned data, firmware-driven training, UALink
// switches, retrains and lane faults under traffic, flit formats.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <map>

#include "common.h"
#include "trn3/pcie/phy.h"
#include "trn3/pcie/tlp.h"
#include "trn3/spec/device.h"
#include "trn3/spec/link.h"

using namespace trn3;
using namespace trn3::pcie;
using namespace trn3::pcie_test;
using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_US;

namespace {

// chip ══ link ══ switch ══ link ══ chip: the time a 64-B write sent at
// 100 us takes to arrive.
sc_time one_hop(const link_config& cfg, const std::string& preset) {
    delivery_queue q("q");
    link l0("l0", q, 1, 2, cfg), l1("l1", q, 3, 4, cfg);
    pcie_switch sw("sw", switch_config{preset}.fabric());
    sw.attach(0, l0.b());
    sw.attach(1, l1.a());
    rig::route(sw, 1, 0x2000000000ull, 1ull << 34, 2);
    arrivals rx;
    rx.attach(l1.b());
    script s("s", [&] {
        wait(sc_time(100, SC_US));
        l0.a().send(mwr(0x2040000000ull, 64), sc_core::sc_time_stamp());
    });
    sc_core::sc_start(sc_time(200, SC_US));
    return rx.head.size() == 1 ? rx.head[0] - sc_time(100, SC_US) : sc_core::SC_ZERO_TIME;
}

}  // namespace

TEST_CASE("latency chip -> retimer -> switch -> retimer -> chip equals the documented budget") {
    link_config cfg;
    cfg.lanes = 8;
    cfg.retimers = 1;
    // Per link: one flit at x8 (4 ns) + phy 5 + FEC/CRC 2 + retimer 10 = 21 ns; the switch 120 ns.
    CHECK(one_hop(cfg, "gen1-160") == sc_time(21 + 120 + 21, SC_NS));
}

namespace {

// Three endpoints on one fabric switch (no upstream port): ep0 and ep1 over
// x8 links with a retimer, ep2 over a plain x8 link. Device n's BARs live
// at n x 64 GiB: BAR0 +0, BAR2 +1 GiB, BAR4 +2 GiB; its bus is n + 1.
struct switched {
    delivery_queue q{"q"};
    link l0, l1, l2;
    pcie_switch sw{"sw", switch_config{"gen1-160"}.fabric()};
    rig::device d0, d1, d2;
    static std::uint64_t base(unsigned n) { return (std::uint64_t(n) + 1) << 36; }
    static std::uint64_t bar2(unsigned n) { return base(n) + (1ull << 30); }
    static link_config x8(unsigned retimers) {
        link_config c;
        c.lanes = 8;
        c.retimers = retimers;
        return c;
    }
    explicit switched(bool broken_regs_on_1 = false)
        : l0("l0", q, 1, 2, x8(1)), l1("l1", q, 3, 4, x8(1)), l2("l2", q, 5, 6, x8(0)), d0("d0"),
          d1("d1", broken_regs_on_1), d2("d2") {
        link* links[] = {&l0, &l1, &l2};
        rig::device* devs[] = {&d0, &d1, &d2};
        for (unsigned n = 0; n < 3; ++n) {
            sw.attach(n, links[n]->b());
            devs[n]->ep.attach(links[n]->a());
            devs[n]->assign(base(n), bar2(n), base(n) + (2ull << 30), static_cast<std::uint16_t>((n + 1) << 8));
            rig::route(sw, n, base(n), 1ull << 36, n + 1);
        }
    }
};

}  // namespace

TEST_CASE("an x8 Gen6 port carries at least 95% of 64 GB/s x flit and TLP efficiency, aggregated or TLP by TLP") {
    param_registry::instance().set_pending_text("d1.ep.aggregate", "false", "test");
    switched s;
    const std::uint64_t n = 16 << 20;
    const std::vector<std::uint8_t> data = rig::pattern(n, 3);
    double gbps[2] = {0, 0};
    auto stream = [&](rig::device& d, unsigned to, double& out) {
        d.job = [&, to](rig::device& self) {
            sc_core::wait(sc_time(100, SC_US));
            std::vector<std::uint8_t> buf = data;
            const sc_time start = sc_core::sc_time_stamp();
            REQUIRE(self.access(tlm::TLM_WRITE_COMMAND, switched::bar2(to), buf.data(), n) == tlm::TLM_OK_RESPONSE);
            std::uint8_t flush[4];  // a read does not pass the writes before it
            REQUIRE(self.access(tlm::TLM_READ_COMMAND, switched::bar2(to), flush, 4) == tlm::TLM_OK_RESPONSE);
            out = double(n) / (sc_core::sc_time_stamp() - start).to_seconds() / 1e9;
        };
    };
    stream(s.d0, 2, gbps[0]);  // aggregated
    stream(s.d1, 0, gbps[1]);  // TLP by TLP
    sc_core::sc_start(sc_time(2, sc_core::SC_MS));
    const double bound = 64.0 * 236 / 256 * 256 / 272;  // 55.507 GB/s of payload in 256-B writes
    CHECK(gbps[0] >= 0.95 * bound);
    CHECK(gbps[1] >= 0.95 * bound);
    CHECK(gbps[0] == Approx(gbps[1]).epsilon(0.002));
    CHECK(std::memcmp(s.d2.mem.data() + (1 << 30) * 0, data.data(), 16) == 0);
    CHECK(std::memcmp(s.d2.mem.data(), data.data(), n) == 0);
    CHECK(std::memcmp(s.d0.mem.data(), data.data(), n) == 0);
    INFO("aggregated " << gbps[0] << " GB/s, TLP by TLP " << gbps[1] << " GB/s");
    CHECK(gbps[0] < bound);
}

TEST_CASE("a read of an address no port claims gets an Unsupported Request, a posted write is dropped and logged") {
    switched s;
    tlm::tlm_response_status read_status = tlm::TLM_OK_RESPONSE, write_status = tlm::TLM_INCOMPLETE_RESPONSE;
    s.d0.job = [&](rig::device& d) {
        sc_core::wait(sc_time(100, SC_US));
        std::uint8_t buf[64] = {};
        read_status = d.access(tlm::TLM_READ_COMMAND, 0x7000000000ull, buf, 64);
        write_status = d.access(tlm::TLM_WRITE_COMMAND, 0x7000000000ull, buf, 64);
        sc_core::wait(sc_time(1, SC_US));
    };
    sc_core::sc_start(sc_time(1, sc_core::SC_MS));
    CHECK(read_status == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK(write_status == tlm::TLM_OK_RESPONSE);  // posted: the requester is not told
    CHECK((s.d0.ep.config().get(TRN3_PCI_STATUS, 2) & TRN3_PCI_STATUS_REC_MASTER_ABORT) != 0);
    CHECK((s.sw.port_config(0).get(TRN3_PCI_AER_CAP + TRN3_AER_UNCOR_STATUS, 4) & TRN3_AER_UNSUPPORTED_REQUEST) != 0);
}

TEST_CASE("peer to peer under one switch, and ACS egress control blocking it as an ACS violation") {
    switched s;
    const std::vector<std::uint8_t> data = rig::pattern(8192, 9);
    std::vector<std::uint8_t> back(8192);
    tlm::tlm_response_status blocked = tlm::TLM_OK_RESPONSE;
    s.d0.job = [&](rig::device& d) {
        sc_core::wait(sc_time(100, SC_US));
        std::vector<std::uint8_t> buf = data;
        REQUIRE(d.access(tlm::TLM_WRITE_COMMAND, switched::bar2(1) + 4096, buf.data(), buf.size()) ==
                tlm::TLM_OK_RESPONSE);
        REQUIRE(d.access(tlm::TLM_READ_COMMAND, switched::bar2(1) + 4096, back.data(), back.size()) ==
                tlm::TLM_OK_RESPONSE);
        s.sw.port_config(0).write(TRN3_PCI_ACS_CAP + TRN3_ACS_CONTROL, 2, TRN3_ACS_EGRESS_CONTROL);
        std::uint8_t one[4];
        blocked = d.access(tlm::TLM_READ_COMMAND, switched::bar2(1), one, 4);
    };
    sc_core::sc_start(sc_time(1, sc_core::SC_MS));
    CHECK(back == data);
    CHECK(std::memcmp(s.d1.mem.data() + 4096, data.data(), data.size()) == 0);
    CHECK(blocked == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK((s.sw.port_config(0).get(TRN3_PCI_AER_CAP + TRN3_AER_UNCOR_STATUS, 4) & TRN3_AER_ACS_VIOLATION) != 0);
}

TEST_CASE("poisoned data is flagged end to end: the completer's error reaches the requester as EP") {
    switched s(true);  // d1's registers fail every read
    tlm::tlm_response_status st = tlm::TLM_OK_RESPONSE;
    s.d0.job = [&](rig::device& d) {
        sc_core::wait(sc_time(100, SC_US));
        std::uint8_t buf[16];
        st = d.access(tlm::TLM_READ_COMMAND, switched::base(1) + 0x40, buf, 16);
    };
    sc_core::sc_start(sc_time(1, sc_core::SC_MS));
    CHECK(st == tlm::TLM_GENERIC_ERROR_RESPONSE);
    CHECK((s.d0.ep.config().get(TRN3_PCI_AER_CAP + TRN3_AER_UNCOR_STATUS, 4) & TRN3_AER_POISONED_TLP) != 0);
    CHECK((s.d0.ep.config().get(TRN3_PCI_STATUS, 2) & TRN3_PCI_STATUS_DETECTED_PARITY) != 0);
}

TEST_CASE("firmware trains a link through CONTROL.ENABLE, retrains it through CONTROL.RETRAIN, and sees the events") {
    delivery_queue q("q");
    link_config cfg;
    cfg.lanes = 16;
    cfg.auto_train = false;
    link l("l", q, 1, 2, cfg);
    rig::reg_port regs("regs");
    regs.out.bind(l.in);
    std::uint32_t before = 0, after_enable = 0, events = 0, events_cleared = 0, trainings = 0;
    bool irq_seen = false;
    l.irq.on_change([&](bool level) { irq_seen = irq_seen || level; });
    script s("s", [&] {
        wait(sc_time(100, SC_US));
        before = regs.read(TRN3_LINK_STATUS);
        regs.write(TRN3_LINK_EVENT_MASK, TRN3_LINK_EVENT_UP | TRN3_LINK_EVENT_DOWN);
        regs.write(TRN3_LINK_CONTROL, TRN3_LINK_CONTROL_ENABLE);
        wait(sc_time(100, SC_US));
        after_enable = regs.read(TRN3_LINK_STATUS);
        regs.write(TRN3_LINK_CONTROL, TRN3_LINK_CONTROL_ENABLE | TRN3_LINK_CONTROL_RETRAIN);
        wait(sc_time(100, SC_US));
        events = regs.read(TRN3_LINK_EVENTS);
        regs.write(TRN3_LINK_EVENTS, events);  // write 1 to clear
        events_cleared = regs.read(TRN3_LINK_EVENTS);
        trainings = regs.read(TRN3_LINK_TRAININGS);
    });
    sc_core::sc_start(sc_time(400, SC_US));
    CHECK(TRN3_LINK_STATUS_STATE(before) == TRN3_LTSSM_DISABLED);
    CHECK(TRN3_LINK_STATUS_STATE(after_enable) == TRN3_LTSSM_L0);
    CHECK(l.trained_at() == sc_time(200 + 2 + 2, SC_US));  // retrain written at 200 us: recovery 2 + configuration 2
    CHECK(events == (TRN3_LINK_EVENT_UP | TRN3_LINK_EVENT_DOWN));
    CHECK(events_cleared == 0);
    CHECK(trainings == 2);
    CHECK(irq_seen);
    CHECK_FALSE(l.irq.level());
}

TEST_CASE("a UALink-style switch: 200 Gb/s lanes, 640-B flits, 100 ns port to port, less than the PCIe switches") {
    {
        pcie_switch sw("sw72", switch_config{"ualink-72"}.fabric());
        CHECK(sw.port_count() == 72);
        CHECK(sw.total_lanes() == 288);
        CHECK_THROWS_WITH(pcie_switch("big", switch_config{"ualink-72"}.fabric().with_ports(80).with_port_lanes(4)),
                          Catch::Contains("need 320 lanes"));
    }
    link_config cfg;
    cfg.gen = generation::ualink;
    cfg.lanes = 4;
    // One 640-B flit at 4 x 25 GB/s = 6.4 ns, + 5 + 2 per link; 100 ns in the switch.
    CHECK(one_hop(cfg, "ualink-72") == sc_time(2 * (6.4 + 5 + 2) + 100, SC_NS));
}

TEST_CASE("a retrain under a TLP stream: every TLP arrives exactly once and in the order it was sent") {
    delivery_queue q("q");
    link_config cfg;
    cfg.lanes = 16;
    link l("l", q, 1, 2, cfg);
    std::vector<std::uint64_t> order;
    l.b().on_receive([&](tlp& t) { order.push_back(t.address); });
    script s("s", [&] {
        wait(sc_time(50, SC_US));
        // 2000 x 4 KiB TLPs take about 130 us on x16; lane 9 fails 20 us in.
        for (unsigned i = 0; i < 1000; ++i) l.a().send(mwr(high + 4096ull * i, 4096), sc_core::sc_time_stamp());
        wait(sc_time(20, SC_US));
        l.fail_lanes({9});
        for (unsigned i = 1000; i < 2000; ++i) l.a().send(mwr(high + 4096ull * i, 4096), sc_core::sc_time_stamp());
    });
    sc_core::sc_start(sc_time(2, sc_core::SC_MS));
    REQUIRE(order.size() == 2000);
    for (unsigned i = 0; i < 2000; ++i) CHECK(order[i] == high + 4096ull * i);
    CHECK(l.width() == 8);
    CHECK(l.replayed() > 0);
}

TEST_CASE("lanes failing while the link trains: it retrains on reaching L0 and reports the narrower width") {
    param_registry::instance().set_pending_text("l.failed_lanes", "9", "test");
    param_registry::instance().set_pending_text("l.fault_time", "10us", "test");  // after Configuration (7 us)
    delivery_queue q("q");
    link_config cfg;
    cfg.lanes = 16;
    link l("l", q, 1, 2, cfg);
    sc_core::sc_start(sc_time(100, SC_US));
    CHECK(l.up());
    CHECK(l.width() == 8);
    CHECK(l.trained_at() == sc_time(29 + 2 + 2, SC_US));  // trained at 29 us, then Recovery and Configuration
}

TEST_CASE("two flows into one switch port share its egress link: each gets half, together the port's bandwidth") {
    switched s;
    const std::uint64_t n = 8 << 20;
    const std::vector<std::uint8_t> data = rig::pattern(n, 5);
    sc_time end[2];
    auto flow = [&](rig::device& d, unsigned which) {
        d.job = [&, which](rig::device& self) {
            sc_core::wait(sc_time(100, SC_US));
            std::vector<std::uint8_t> buf = data;
            REQUIRE(self.access(tlm::TLM_WRITE_COMMAND, switched::bar2(1) + which * n, buf.data(), n) ==
                    tlm::TLM_OK_RESPONSE);
            std::uint8_t flush[4];
            REQUIRE(self.access(tlm::TLM_READ_COMMAND, switched::bar2(1), flush, 4) == tlm::TLM_OK_RESPONSE);
            end[which] = sc_core::sc_time_stamp();
        };
    };
    flow(s.d0, 0);
    flow(s.d2, 1);
    sc_core::sc_start(sc_time(5, sc_core::SC_MS));
    const double bound = 64.0 * 236 / 256 * 256 / 272;
    const double last = (std::max(end[0], end[1]) - sc_time(100, SC_US)).to_seconds();
    const double first = (std::min(end[0], end[1]) - sc_time(100, SC_US)).to_seconds();
    CHECK(2.0 * n / last / 1e9 == Approx(bound).epsilon(0.02));  // together: the one x8 egress
    CHECK(double(n) / first / 1e9 < 0.6 * bound);  // neither flow had the port to itself
    CHECK(std::memcmp(s.d1.mem.data() + (1 << 30) * 0, data.data(), n) == 0);
    CHECK(std::memcmp(s.d1.mem.data() + n, data.data(), n) == 0);
}

TEST_CASE("lane sparing is the firmware's to enable: without CONTROL.SPARING a failed lane costs width") {
    param_registry::instance().set_pending_text("off.failed_lanes", "17", "test");
    param_registry::instance().set_pending_text("on.failed_lanes", "17", "test");
    delivery_queue q("q");
    const link_config cfg = link_config{generation::gen6, 64}.with_retimers(1).with_spares(16).trained_by_firmware();
    link off("off", q, 1, 2, cfg), on("on", q, 3, 4, cfg);
    rig::reg_port r_off("r_off"), r_on("r_on");
    r_off.out.bind(off.in);
    r_on.out.bind(on.in);
    script s("s", [&] {
        r_off.write(TRN3_LINK_CONTROL, TRN3_LINK_CONTROL_ENABLE);
        r_on.write(TRN3_LINK_CONTROL, TRN3_LINK_CONTROL_ENABLE | TRN3_LINK_CONTROL_SPARING);
    });
    sc_core::sc_start(sc_time(200, SC_US));
    CHECK(on.width() == 64);
    CHECK(on.spares_used() == 1);
    CHECK(off.width() == 40);  // lanes 24-63 (reversed): the widest healthy multiple of 8 without spares
}

TEST_CASE(
    "a link's flit format is a param: 128-byte flits carrying 118 bytes halve the flit time, and nonsense is refused") {
    param_registry::instance().set_pending_text("small.flit_bytes", "128", "test");
    param_registry::instance().set_pending_text("small.flit_payload_bytes", "118", "test");
    param_registry::instance().set_pending_text("bad.flit_payload_bytes", "300", "test");
    delivery_queue q("q");
    link small("small", q, 1, 2, link_config{generation::gen6, 8});
    CHECK_THROWS_WITH(link("bad", q, 3, 4, link_config{generation::gen6, 8}),
                      Catch::Contains("a flit of 256 bytes cannot carry 300 bytes of TLPs"));
    arrivals rx;
    rx.attach(small.b());
    script s("s", [&] {
        wait(sc_time(50, SC_US));
        small.a().send(mwr(high, 64), sc_core::sc_time_stamp());  // 80 B: one 128-B flit, 2 ns at x8
    });
    sc_core::sc_start(sc_time(60, SC_US));
    REQUIRE(rx.head.size() == 1);
    CHECK(rx.head[0] - sc_time(50, SC_US) == sc_time(2 + 5 + 2, SC_NS));
}

TEST_CASE("a fabric switch spreads flows over a destination's equal ports by source and channel, each flow in order") {
    delivery_queue q("q");
    link_config cfg;
    cfg.lanes = 8;
    link in("in", q, 1, 2, cfg), out1("out1", q, 3, 4, cfg), out2("out2", q, 5, 6, cfg);
    pcie_switch sw("sw", switch_config{"gen1-160"}.fabric());
    sw.attach(0, in.b());
    sw.attach(1, out1.a());
    sw.attach(2, out2.a());
    sw.set_fabric_route(7, {2, 1});  // any order: the switch takes them lowest first
    std::vector<std::pair<unsigned, tlp>> got;  // (port, TLP)
    out1.b().on_receive([&](tlp& t) { got.emplace_back(1, t); });
    out2.b().on_receive([&](tlp& t) { got.emplace_back(2, t); });
    script s("s", [&] {
        wait(sc_time(100, SC_US));
        for (unsigned k = 0; k < 24; ++k) {  // sources 3 and 4, channels 0..2, four TLPs each
            tlp t = mwr(TRN3_FABRIC_ADDR(7, 0x1000 + 64 * k), 64);
            t.requester = std::uint16_t(3 + k % 2);
            t.channel = std::uint8_t(k / 2 % 3);
            t.tag = std::uint8_t(k);
            in.a().send(std::move(t), sc_core::sc_time_stamp());
        }
    });
    sc_core::sc_start(sc_time(200, SC_US));
    REQUIRE(got.size() == 24);
    std::map<std::pair<unsigned, unsigned>, int> last_tag;  // per flow (source, channel)
    unsigned on_port[3] = {};
    for (const auto& [port, t] : got) {
        // TRN3_ROUTE_PICK over ports {1, 2}: (source + 7 + channel) even takes port 1.
        CHECK(port == 1 + (t.requester + 7u + t.channel) % 2);
        ++on_port[port];
        const auto flow = std::make_pair(unsigned(t.requester), unsigned(t.channel));
        CHECK((last_tag.count(flow) == 0 || last_tag[flow] < t.tag));
        last_tag[flow] = t.tag;
    }
    CHECK(on_port[1] == 12);  // the six flows, three on each port
    CHECK(on_port[2] == 12);
}

TEST_CASE("timing-only DMA peer to peer: its TLPs without data take the time of the data ones, and no byte moves") {
    switched s;
    const std::uint64_t n = 1 << 20;
    const std::vector<std::uint8_t> data = rig::pattern(n, 5);
    std::vector<std::uint8_t> back(n, 0x33), timed_back(n, 0x33);
    sc_time write_data, write_timed, read_data, read_timed;
    s.d0.job = [&](rig::device& d) {
        sc_core::wait(sc_time(100, SC_US));
        auto timed = [&](tlm::tlm_command cmd, std::uint64_t at, std::uint8_t* buf, bool timing) {
            const sc_time start = sc_core::sc_time_stamp();
            REQUIRE(d.access(cmd, at, buf, n, timing) == tlm::TLM_OK_RESPONSE);
            std::uint8_t flush[4];  // a read does not pass the writes before it
            if (cmd == tlm::TLM_WRITE_COMMAND)
                REQUIRE(d.access(tlm::TLM_READ_COMMAND, at, flush, 4) == tlm::TLM_OK_RESPONSE);
            return sc_core::sc_time_stamp() - start;
        };
        std::vector<std::uint8_t> buf = data;
        write_data = timed(tlm::TLM_WRITE_COMMAND, switched::bar2(1), buf.data(), false);
        write_timed = timed(tlm::TLM_WRITE_COMMAND, switched::bar2(1) + n, buf.data(), true);
        read_data = timed(tlm::TLM_READ_COMMAND, switched::bar2(1), back.data(), false);
        read_timed = timed(tlm::TLM_READ_COMMAND, switched::bar2(1), timed_back.data(), true);
    };
    sc_core::sc_start(sc_time(1, sc_core::SC_MS));
    INFO("write " << write_data << " / " << write_timed << ", read " << read_data << " / " << read_timed);
    CHECK(write_data > sc_time(15, SC_US));  // 1 MiB at about 55 GB/s
    CHECK(write_timed == write_data);
    CHECK(read_timed == read_data);
    CHECK(std::memcmp(s.d1.mem.data(), data.data(), n) == 0);
    CHECK(std::all_of(s.d1.mem.data() + n, s.d1.mem.data() + 2 * n, [](std::uint8_t v) { return v == 0; }));
    CHECK(back == data);
    CHECK(timed_back == std::vector<std::uint8_t>(n, 0x33));
}

TEST_CASE("malformed requests at an endpoint: a write with less data than its length is dropped and logged, a "
          "config request of 8 bytes or past 4 KiB gets UR") {
    delivery_queue q("q");
    link l("l", q, 1, 2, link_config{});
    rig::device d("d");
    d.ep.attach(l.a());
    d.assign(0x100000000ull, 0x140000000ull, 0x180000000ull, 0x100);
    std::vector<cpl_status> answers;
    l.b().on_receive([&](tlp& t) {
        if (!t.is_request()) answers.push_back(t.status);
    });
    script run("run", [&] {
        sc_core::wait(sc_time(100, SC_US));
        tlp short_write = mwr(0x140000000ull, 64);
        short_write.data.resize(32);
        l.b().send(std::move(short_write), sc_core::sc_time_stamp());
        auto config = [&](tlp_type type, std::uint64_t offset, std::uint32_t length) {
            tlp t;
            t.type = type;
            t.completer = 0x100;
            t.address = offset;
            t.length = length;
            if (type == tlp_type::cfg_write0) t.data.assign(length, 0xFF);
            l.b().send(std::move(t), sc_core::sc_time_stamp());
            sc_core::wait(sc_time(1, SC_US));
        };
        config(tlp_type::cfg_read0, TRN3_PCI_COMMAND, 8);
        config(tlp_type::cfg_write0, TRN3_PCI_COMMAND, 8);
        config(tlp_type::cfg_read0, 4094, 4);
        config(tlp_type::cfg_read0, 0, 4);  // well formed
    });
    sc_core::sc_start(sc_time(1, sc_core::SC_MS));
    CHECK(answers == std::vector<cpl_status>{cpl_status::unsupported, cpl_status::unsupported, cpl_status::unsupported,
                                             cpl_status::success});
    CHECK((d.ep.config().get(TRN3_PCI_AER_CAP + TRN3_AER_UNCOR_STATUS, 4) & TRN3_AER_MALFORMED_TLP) != 0);
    CHECK(std::all_of(d.mem.data(), d.mem.data() + 64, [](std::uint8_t v) { return v == 0; }));
    // The 8-byte config write changed nothing: memory and mastering stay enabled.
    CHECK(d.ep.config().get(TRN3_PCI_COMMAND, 2) == (TRN3_PCI_COMMAND_MEMORY | TRN3_PCI_COMMAND_BUS_MASTER));
}
