// PCIe models, the link: TLPs, the physical layer's arithmetic, configuration
// space, link timing and training, lane sparing and replay.
#include <catch2/catch.hpp>

#include <cstring>

#include "common.h"
#include "trn3/pcie/phy.h"
#include "trn3/pcie/tlp.h"
#include "trn3/spec/link.h"

using namespace trn3;
using namespace trn3::pcie;
using namespace trn3::pcie_test;
using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_US;

TEST_CASE("physical layer: per-lane rates and flit format of each generation") {
    CHECK(spec_of(generation::gen6).lane_bytes_per_second == 8e9);
    CHECK(spec_of(generation::gen6).flit_bytes == 256);
    CHECK(spec_of(generation::gen6).flit_payload_bytes == 236);
    CHECK(spec_of(generation::gen5).lane_bytes_per_second == Approx(3.9384615e9));
    CHECK_FALSE(spec_of(generation::gen5).flit_mode);
    CHECK(spec_of(generation::ualink).lane_bytes_per_second == 25e9);
    CHECK_THROWS_WITH(parse_generation("gen7", "x.generation"), Catch::Contains("unknown link generation 'gen7'"));
}

TEST_CASE("lane sparing: 16 spare lanes replace up to 16 failed ones, the 17th costs width") {
    auto lanes = [](const std::string& s) { return parse_lanes(s, 80, "test"); };
    CHECK(choose_width(64, 16, {}).width == 64);
    const width_choice one = choose_width(64, 16, lanes("5"));
    CHECK(one.width == 64);
    CHECK(one.spares_used == 1);
    const width_choice sixteen = choose_width(64, 16, lanes("0-15"));
    CHECK(sixteen.width == 64);
    CHECK(sixteen.spares_used == 16);
    const width_choice seventeen = choose_width(64, 16, lanes("0-15,70"));
    CHECK(seventeen.width == 56);  // 63 healthy lanes: the widest allowed width below (multiples of 8)
    CHECK(choose_width(64, 16, lanes("0-79")).width == 0);
}

TEST_CASE("lane faults without spares: the widest contiguous healthy width, lane reversal allowed") {
    auto lanes = [](const std::string& s) { return parse_lanes(s, 16, "test"); };
    CHECK(choose_width(16, 0, lanes("5")).width == 8);  // lanes 8-15, reversed
    CHECK(choose_width(16, 0, lanes("5,12")).width == 4);  // lanes 0-3
    CHECK(choose_width(16, 0, lanes("2,12")).width == 2);  // lanes 0-1
    CHECK(choose_width(16, 0, lanes("15")).width == 8);  // lanes 0-7
    CHECK(choose_width(16, 0, lanes("0,15")).width == 0);  // neither end has a healthy lane 0
    CHECK_THROWS_WITH(parse_lanes("3,x", 16, "l.failed_lanes"), Catch::Contains("'x' is not a lane number"));
    CHECK_THROWS_WITH(parse_lanes("10-20", 16, "l.failed_lanes"), Catch::Contains("outside 0-15"));
}

TEST_CASE("a TLP's envelope round-trips every field") {
    tlp t = mwr(0x123456789Aull, 8, 3);
    t.requester = 0x0310;
    t.completer = 0x0420;
    t.tag = 0x3FFF;
    t.traffic_class = 5;
    t.poisoned = true;
    t.status = cpl_status::completer_abort;
    t.byte_count = 77;
    t.train_span = sc_time(1234, SC_NS);
    t.data = rig::pattern(24, 1);
    const tlp u = decode(encode(t));
    CHECK(u.type == t.type);
    CHECK(u.address == t.address);
    CHECK(u.length == 8);
    CHECK(u.count == 3);
    CHECK(u.requester == 0x0310);
    CHECK(u.completer == 0x0420);
    CHECK(u.tag == 0x3FFF);
    CHECK(u.traffic_class == 5);
    CHECK(u.poisoned);
    CHECK(u.status == cpl_status::completer_abort);
    CHECK(u.byte_count == 77);
    CHECK(u.train_span == sc_time(1234, SC_NS));
    CHECK(u.data == t.data);
    CHECK(header_bytes(t) == 16);
    CHECK(header_bytes(mwr(0x1000, 4)) == 12);
    CHECK(describe(t) == "MWr 0x123456789a len 8 x3 req 03:02.0 tag 16383 EP");
    CHECK_FALSE(u.no_data);
    tlp timed = mwr(0x1000, 256, 4);
    timed.data.clear();
    timed.no_data = true;  // a timing-only payload
    const tlp v = decode(encode(timed));
    CHECK(v.no_data);
    CHECK_FALSE(v.poisoned);
    CHECK(v.data.empty());
    CHECK(v.total_bytes() == 1024);
}

TEST_CASE("configuration space: BAR sizing, write-1-to-clear status, bridge windows") {
    config_space c;
    c.init_type0(0x1D0F, 0x7364, 0x120000, 1);
    c.init_bar64(2, 1ull << 30, true);
    c.init_aer();
    c.write(TRN3_PCI_BAR(2), 4, 0xFFFFFFFF);
    c.write(TRN3_PCI_BAR(3), 4, 0xFFFFFFFF);
    CHECK(c.read(TRN3_PCI_BAR(2), 4) == (0xC0000000u | TRN3_PCI_BAR_MEM64 | TRN3_PCI_BAR_PREFETCH));  // 1 GiB
    CHECK(c.read(TRN3_PCI_BAR(3), 4) == 0xFFFFFFFFu);
    c.write(TRN3_PCI_BAR(2), 4, 0x40000000);
    c.write(TRN3_PCI_BAR(3), 4, 0x40);
    CHECK(c.bar_address(2) == 0x4040000000ull);
    CHECK(c.read(TRN3_PCI_VENDOR_ID, 4) == 0x73641D0Fu);
    c.write(TRN3_PCI_VENDOR_ID, 2, 0x1234);  // read-only
    CHECK(c.read(TRN3_PCI_VENDOR_ID, 2) == 0x1D0F);
    c.report_error(TRN3_AER_UNSUPPORTED_REQUEST, TRN3_PCI_STATUS_REC_MASTER_ABORT);
    CHECK(c.read(TRN3_PCI_AER_CAP + TRN3_AER_UNCOR_STATUS, 4) == TRN3_AER_UNSUPPORTED_REQUEST);
    c.write(TRN3_PCI_STATUS, 2, TRN3_PCI_STATUS_REC_MASTER_ABORT);  // write 1 to clear
    CHECK((c.read(TRN3_PCI_STATUS, 2) & TRN3_PCI_STATUS_REC_MASTER_ABORT) == 0);
    CHECK((c.read(TRN3_PCI_STATUS, 2) & TRN3_PCI_STATUS_CAP_LIST) != 0);  // read-only bits stay

    config_space b;
    b.init_type1(0x1D0F, 0x7F11);
    CHECK_FALSE(b.routes_address(0));  // windows are closed after reset
    b.write(TRN3_PCI_MEMORY_BASE, 2, TRN3_PCI_WINDOW_FIELD(0xE0000000u));
    b.write(TRN3_PCI_MEMORY_LIMIT, 2, TRN3_PCI_WINDOW_FIELD(0xE01FFFFFu));
    CHECK(b.routes_address(0xE0000000));
    CHECK(b.routes_address(0xE01FFFFF));
    CHECK_FALSE(b.routes_address(0xE0200000));
}

TEST_CASE("a link trains Detect, Polling, Configuration, equalisation phases 0-3, L0, in the documented time") {
    delivery_queue q("q");
    link_config cfg;
    cfg.lanes = 8;
    cfg.retimers = 2;
    link l("l", q, 1, 2, cfg);
    rig::reg_port regs("regs");
    regs.out.bind(l.in);
    std::vector<std::pair<sc_time, std::uint32_t>> seen;
    script w("w", [&] {
        for (int i = 0; i < 100; ++i) {
            seen.emplace_back(sc_core::sc_time_stamp(), regs.read(TRN3_LINK_STATUS));
            wait(sc_time(1, SC_US));
        }
    });
    sc_core::sc_start(sc_time(100, SC_US));
    // 2 retimers: phases 2 and 3 run once per segment (3 segments).
    const sc_time expected = sc_time(1 + 4 + 2 + 1 + 1 + 3 * (10 + 10), SC_US);
    CHECK(l.trained_at() == expected);
    CHECK(l.up());
    CHECK(l.width() == 8);
    std::vector<unsigned> states;
    for (auto& [t, s] : seen) {
        const unsigned code = TRN3_LINK_STATUS_STATE(s) * 10 + TRN3_LINK_STATUS_EQ_PHASE(s);
        if (states.empty() || states.back() != code) states.push_back(code);
    }
    CHECK(states == std::vector<unsigned>{10, 20, 30, 50, 51, 52, 53, 40});
    const std::uint32_t up = seen.back().second;
    CHECK(TRN3_LINK_STATUS_SPEED(up) == TRN3_PCIE_SPEED_GEN6);
    CHECK(TRN3_LINK_STATUS_WIDTH(up) == 8);
    CHECK((up & TRN3_LINK_STATUS_UP) != 0);
    CHECK((up & TRN3_LINK_STATUS_FLIT) != 0);
}

TEST_CASE("a dead retimer keeps its link in Detect and reports the failure") {
    param_registry::instance().set_pending_text("l.retimer1.healthy", "false", "test");
    delivery_queue q("q");
    link_config cfg;
    cfg.retimers = 2;
    link l("l", q, 1, 2, cfg);
    sc_core::sc_start(sc_time(200, SC_US));
    CHECK_FALSE(l.up());
    CHECK(l.state() == TRN3_LTSSM_DETECT);
    CHECK(l.training_failed());
}

TEST_CASE("link timing: a lone TLP costs a whole flit, small TLPs share one, a stream packs flits exactly") {
    delivery_queue q("q");
    link_config cfg;
    cfg.lanes = 8;  // x8 Gen6: 64 GB/s, a flit every 4 ns
    link l("l", q, 1, 2, cfg);
    arrivals rx;
    rx.attach(l.b());
    script s("s", [&] {
        wait(sc_time(50, SC_US));
        l.a().send(mwr(high, 64), sc_core::sc_time_stamp());  // 80 B: one flit
        wait(sc_time(1, SC_US));
        for (int i = 0; i < 3; ++i) l.a().send(mwr(high, 84), sc_core::sc_time_stamp());  // 100 B each
        wait(sc_time(1, SC_US));
        for (int i = 0; i < 1000; ++i) l.a().send(mwr(high, 256), sc_core::sc_time_stamp());  // 272 B each
        wait(sc_time(10, SC_US));
        l.a().send(mwr(high, 256, 1000), sc_core::sc_time_stamp());  // the same train as one aggregate
    });
    sc_core::sc_start(sc_time(100, SC_US));
    REQUIRE(rx.head.size() == 1 + 3 + 1000 + 1);
    const sc_time lat(7, SC_NS);  // phy 5 + FEC/CRC 2
    const sc_time flit(4, SC_NS);
    CHECK(rx.head[0] == sc_time(50, SC_US) + flit + lat);
    const sc_time t1 = sc_time(51, SC_US) + sc_time(1, SC_NS) * 0;
    CHECK(rx.head[1] == t1 + flit + lat);
    CHECK(rx.head[2] == rx.head[1]);  // 200 B: the same flit
    CHECK(rx.head[3] == t1 + 2 * flit + lat);  // 300 B: a second flit
    // 1000 x 272 B = 272,000 B of TLPs = 1152.5 flits -> the last TLP ends in flit 1153.
    const sc_time t2 = sc_time(52, SC_US);
    CHECK(rx.tail[1003] == t2 + 1153 * flit + lat);
    const double payload_gbps = 256000.0 / (1153 * 4e-9) / 1e9;
    CHECK(payload_gbps == Approx(55.507).epsilon(1e-4));  // 64 GB/s x 236/256 x 256/272
    // The aggregate: head after its first TLP's 2 flits, tail as the train's.
    const sc_time t3 = sc_time(62, SC_US);
    CHECK(rx.head[1004] == t3 + 2 * flit + lat);
    CHECK(rx.tail[1004] == t3 + 1153 * flit + lat);
    CHECK(l.replayed() == 0);
}

TEST_CASE("Gen5 links carry TLPs without flits: header + payload + 8 B of framing at 128b/130b") {
    delivery_queue q("q");
    link_config cfg;
    cfg.gen = generation::gen5;
    cfg.lanes = 16;
    link l("l", q, 1, 2, cfg);
    arrivals rx;
    rx.attach(l.b());
    script s("s", [&] {
        wait(sc_time(50, SC_US));
        for (int i = 0; i < 100; ++i) l.a().send(mwr(high, 256), sc_core::sc_time_stamp());
    });
    sc_core::sc_start(sc_time(60, SC_US));
    REQUIRE(rx.head.size() == 100);
    const double rate = 16 * 32e9 * 128 / 130 / 8;
    const double expected = 50e-6 + 100 * 280 / rate + 5e-9;  // no FEC in Gen5
    CHECK(rx.tail.back().to_seconds() == Approx(expected).margin(1e-10));  // each TLP rounded to 1 ps
}

namespace {

// A backplane link (x64 active + 16 spare, Gen6, one retimer) with `failed`
// lanes from power-on: what it trained to and the payload rate of a 4 MiB train.
struct backplane_result {
    unsigned width, spares_used, failed;
    std::uint32_t status;
    double gbps;
};

backplane_result backplane(const std::string& failed) {
    param_registry::instance().set_pending_text("bp.failed_lanes", failed, "test");
    delivery_queue q("q");
    link_config cfg;
    cfg.lanes = 64;
    cfg.spare_lanes = 16;
    cfg.retimers = 1;
    link l("bp", q, 1, 2, cfg);
    rig::reg_port regs("regs");
    regs.out.bind(l.in);
    arrivals rx;
    rx.attach(l.b());
    std::uint32_t status = 0;
    script s("s", [&] {
        wait(sc_time(100, SC_US));
        status = regs.read(TRN3_LINK_STATUS);
        l.a().send(mwr(high, 256, 16384), sc_core::sc_time_stamp());
    });
    sc_core::sc_start(sc_time(200, SC_US));
    const double seconds = (rx.tail.at(0) - sc_time(100, SC_US) - l.latency()).to_seconds();
    return {l.width(), l.spares_used(), static_cast<unsigned>(l.failed().size()), status,
            16384.0 * 256 / seconds / 1e9};
}

const double x64_gbps = 512 * 236.0 / 256 * 256 / 272;  // 444.06 GB/s of payload in 256-B writes

}  // namespace

TEST_CASE("backplane link, 1 failed lane: a spare stands in, full width and bandwidth") {
    const backplane_result r = backplane("17");
    CHECK(r.width == 64);
    CHECK(r.spares_used == 1);
    CHECK(r.gbps == Approx(x64_gbps).epsilon(1e-3));
    CHECK((r.status & TRN3_LINK_STATUS_DEGRADED) == 0);
}

TEST_CASE("backplane link, 16 failed lanes: all spares in use, full width and bandwidth") {
    const backplane_result r = backplane("0-7,40-47");
    CHECK(r.width == 64);
    CHECK(r.spares_used == 16);
    CHECK(r.gbps == Approx(x64_gbps).epsilon(1e-3));
    CHECK(TRN3_LINK_STATUS_WIDTH(r.status) == 64);
}

TEST_CASE("backplane link, 17 failed lanes: trains at x56 and reports it degraded") {
    const backplane_result r = backplane("0-16");
    CHECK(r.width == 56);
    CHECK(r.failed == 17);
    CHECK(r.gbps == Approx(x64_gbps * 56 / 64).epsilon(1e-3));
    CHECK(TRN3_LINK_STATUS_WIDTH(r.status) == 56);
    CHECK((r.status & TRN3_LINK_STATUS_DEGRADED) != 0);
}

TEST_CASE("lanes failing under traffic: the link retrains narrower, the TLPs in flight are replayed, nothing is lost") {
    param_registry::instance().set_pending_text("l.failed_lanes", "9", "test");
    param_registry::instance().set_pending_text("l.fault_time", "60us", "test");
    param_registry::instance().set_pending_text("a.ep.aggregate", "false", "test");  // TLP by TLP
    delivery_queue q("q");
    link_config cfg;
    cfg.lanes = 16;
    link l("l", q, 1, 2, cfg);
    rig::device a("a"), b("b");
    a.ep.attach(l.a());
    b.ep.attach(l.b());
    const std::uint64_t bar2 = 0x8000000000ull;
    a.assign(0x1000000000ull, 0x2000000000ull, 0x3000000000ull, 0x0100);
    b.assign(0x7000000000ull, bar2, 0x9000000000ull, 0x0200);
    const std::vector<std::uint8_t> data = rig::pattern(4 << 20, 7);
    bool read_ok = false;
    a.job = [&](rig::device& d) {
        sc_core::wait(sc_time(50, SC_US));
        // 64 x 64 KiB writes over ~20 us: the fault at 60 us lands in the middle.
        for (int i = 0; i < 64; ++i) {
            std::vector<std::uint8_t> chunk(data.begin() + i * 65536, data.begin() + (i + 1) * 65536);
            REQUIRE(d.access(tlm::TLM_WRITE_COMMAND, bar2 + i * 65536, chunk.data(), chunk.size()) ==
                    tlm::TLM_OK_RESPONSE);
        }
        std::vector<std::uint8_t> back(data.size());
        read_ok =
            d.access(tlm::TLM_READ_COMMAND, bar2, back.data(), back.size()) == tlm::TLM_OK_RESPONSE && back == data;
    };
    sc_core::sc_start(sc_time(2, sc_core::SC_MS));
    REQUIRE(a.finished);
    CHECK(read_ok);
    CHECK(std::memcmp(b.mem.data(), data.data(), data.size()) == 0);
    CHECK(l.width() == 8);  // lane 9 failed: lanes 0-7
    CHECK(l.replayed() > 0);
    CHECK(l.trained_at() > sc_time(60, SC_US));
}
