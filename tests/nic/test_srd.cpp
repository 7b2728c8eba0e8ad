// SRD over a small leaf-spine network: two NICs (dual ToR: each port to its
// own ToR), four ToRs, two spines. Exact delivery under loss and
// reordering, goodput, latency, path avoidance, failure, bad packets.
#define SC_INCLUDE_DYNAMIC_PROCESSES  // sc_spawn for the failure thread
#include <catch2/catch.hpp>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "trn3/ethernet/eth_switch.h"
#include "trn3/nic/srd_engine.h"

using namespace trn3;
using ethernet::eth_switch;
using nic::srd_engine;
using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_US;

namespace {

std::uint64_t counted(const std::string& name) {
    const stat_base* s = stats_registry::instance().find(name);
    REQUIRE(s);
    return s->to_json().get<std::uint64_t>();
}

constexpr std::uint64_t node_a = 0xA, node_b = 0xB;
const bandwidth nic_port_rate{200e9 / 8}, uplink_rate{400e9 / 8};
const sc_time nic_cable(10, SC_NS), uplink_cable(100, SC_NS);

// nic_a ─┬─ tor0 ─┬─ spine0 ─┬─ tor2 ─┬─ nic_b
//        └─ tor1 ─┴─ spine1 ─┴─ tor3 ─┘
// ToR port 0: its NIC; ports 1, 2: spine0, spine1. Spine port t: ToR t.
struct network {
    delivery_queue queue{"queue"};
    srd_engine a{"nic_a", node_a, 2, 100}, b{"nic_b", node_b, 2, 200};
    std::vector<std::unique_ptr<eth_switch>> tors, spines;
    std::vector<std::unique_ptr<message_link>> links;

    network() {
        for (unsigned t = 0; t < 4; ++t)
            tors.push_back(std::make_unique<eth_switch>(("tor" + std::to_string(t)).c_str(), 3, 1000 + 10 * t));
        for (unsigned s = 0; s < 2; ++s)
            spines.push_back(std::make_unique<eth_switch>(("spine" + std::to_string(s)).c_str(), 4, 2000 + 10 * s));
        auto link = [&](message_port& x, message_port& y, sc_time latency, bandwidth rate) -> message_link& {
            links.push_back(std::make_unique<message_link>(("link" + std::to_string(links.size())).c_str(), queue, x, y,
                                                           latency, rate));
            return *links.back();
        };
        for (unsigned p = 0; p < 2; ++p) {
            tors[p]->connect(0, link(a.port(p), tors[p]->port(0), nic_cable, nic_port_rate));
            tors[2 + p]->connect(0, link(b.port(p), tors[2 + p]->port(0), nic_cable, nic_port_rate));
        }
        for (unsigned t = 0; t < 4; ++t)
            for (unsigned s = 0; s < 2; ++s) {
                message_link& l = link(tors[t]->port(1 + s), spines[s]->port(t), uplink_cable, uplink_rate);
                tors[t]->connect(1 + s, l);
                spines[s]->connect(t, l);
            }
        for (unsigned t = 0; t < 4; ++t) {
            const bool side_a = t < 2;
            tors[t]->set_route(side_a ? node_a : node_b, {0});
            tors[t]->set_route(side_a ? node_b : node_a, {1, 2});
        }
        for (auto& s : spines) {
            s->set_route(node_a, {0, 1});
            s->set_route(node_b, {2, 3});
        }
    }
    std::uint64_t sum(const std::vector<std::unique_ptr<eth_switch>>& v, const char* stat) const {
        std::uint64_t n = 0;
        for (const auto& s : v) n += counted(std::string(s->name()) + "." + stat);
        return n;
    }
    std::uint64_t all(const char* stat) const { return sum(tors, stat) + sum(spines, stat); }
};

std::uint64_t stat(const srd_engine& e, const char* leaf) { return counted(std::string(e.name()) + "." + leaf); }

std::vector<std::uint8_t> pattern(std::uint64_t bytes, std::uint64_t seed) {
    std::vector<std::uint8_t> v(bytes);
    std::mt19937_64 g(seed);
    for (auto& x : v) x = static_cast<std::uint8_t>(g());
    return v;
}

void set(const std::string& name, const std::string& value) {
    param_registry::instance().set_pending_text(name, value, "test");
}

// Sends `count` messages each way between the NICs (sizes 0 to 64 KiB,
// random data, three queue pairs each way) and checks that each arrives
// once, whole, in its connection's posting order.
struct exchange {
    struct expected {
        std::uint64_t src_node;
        std::uint16_t src_qp, dst_qp;
        std::vector<std::uint8_t> data;
    };
    std::vector<expected> sent;  // in posting order
    std::vector<srd_engine::inbound> got;
    unsigned completed_ok = 0, completed_failed = 0;

    void run(network& n, unsigned count) {
        n.a.on_deliver([this](srd_engine::inbound& in) { got.push_back(std::move(in)); });
        n.b.on_deliver([this](srd_engine::inbound& in) { got.push_back(std::move(in)); });
        std::mt19937_64 g(7);
        for (unsigned i = 0; i < count; ++i)
            for (srd_engine* from : {&n.a, &n.b}) {
                srd_engine* to = from == &n.a ? &n.b : &n.a;
                const auto qp = static_cast<std::uint16_t>(g() % 3);
                const std::uint64_t bytes = i % 50 == 0 ? 0 : g() % (64 * 1024 + 1);
                sent.push_back({from->node(), qp, static_cast<std::uint16_t>(qp + 10), pattern(bytes, g())});
                from->post_send(qp, to->node(), static_cast<std::uint16_t>(qp + 10), bytes, sent.back().data,
                                [this](bool ok, const sc_time&) { ++(ok ? completed_ok : completed_failed); });
            }
        sc_core::sc_start(sc_time(1, sc_core::SC_SEC));
    }
    // Each connection's messages arrived once each, whole, in posting order.
    void check() const {
        REQUIRE(got.size() == sent.size());
        REQUIRE(completed_ok == sent.size());
        REQUIRE(completed_failed == 0);
        for (std::uint64_t src : {node_a, node_b})
            for (std::uint16_t qp = 0; qp < 3; ++qp) {
                std::vector<const std::vector<std::uint8_t>*> want, have;
                for (const auto& e : sent)
                    if (e.src_node == src && e.src_qp == qp) want.push_back(&e.data);
                for (const auto& in : got)
                    if (in.src_node == src && in.src_qp == qp) {
                        CHECK(in.dst_qp == qp + 10);
                        have.push_back(&in.data);
                    }
                REQUIRE(have.size() == want.size());
                for (std::size_t i = 0; i < want.size(); ++i) REQUIRE(*have[i] == *want[i]);
            }
    }
};

}  // namespace

TEST_CASE("messages of 0 to 64 KiB arrive once, whole and in posting order on a clean network") {
    network n;
    exchange x;
    x.run(n, 200);
    x.check();
    CHECK(stat(n.a, "retransmits") == 0);
    CHECK(stat(n.b, "duplicates") == 0);
    CHECK(n.all("overflow") == 0);
    // The packets sprayed over both ToRs and both spines.
    for (const auto& s : n.spines) CHECK(counted(std::string(s->name()) + ".forwarded") > 100);
    for (const auto& t : n.tors) CHECK(counted(std::string(t->name()) + ".forwarded") > 100);
}

TEST_CASE("1 percent loss and 1 percent reordering at every switch: every message once, whole, in order") {
    for (const char* s : {"tor0", "tor1", "tor2", "tor3", "spine0", "spine1"}) {
        set(std::string(s) + ".drop_rate", "0.01");
        set(std::string(s) + ".reorder_rate", "0.01");
    }
    set("nic_a.rto_min", "20us");
    set("nic_b.rto_min", "20us");
    network n;
    exchange x;
    x.run(n, 500);
    x.check();
    const std::uint64_t lost = n.all("fault_drops");
    INFO("frames lost " << lost << ", held back " << n.all("held"));
    CHECK(lost > 100);
    CHECK(n.all("held") > 100);
    // Every lost data packet was sent again (a lost acknowledgement also
    // costs one), and the receivers dropped the copies they already had.
    const std::uint64_t retransmits = stat(n.a, "retransmits") + stat(n.b, "retransmits");
    CHECK(retransmits >= lost / 2);
    CHECK(stat(n.a, "timeouts") + stat(n.b, "timeouts") == retransmits);
    CHECK(stat(n.a, "duplicates") + stat(n.b, "duplicates") > 0);
    CHECK(stat(n.a, "connection_failures") + stat(n.b, "connection_failures") == 0);
}

TEST_CASE("a 64 MiB message runs at over 90 percent of the NIC's 400 Gb/s, at the frame overheads' bound") {
    network n;
    const std::uint64_t bytes = 64ull << 20;
    sc_time done;
    bool ok = false;
    n.a.post_send(0, node_b, 0, bytes, {}, [&](bool k, const sc_time& t) {
        ok = k;
        done = t;
    });
    sc_core::sc_start(sc_time(1, sc_core::SC_SEC));
    REQUIRE(ok);
    const double goodput = static_cast<double>(bytes) / done.to_seconds();  // bytes/s
    const double line = 2 * nic_port_rate.bytes_per_s;
    const double bound = line * 8192.0 / (8192.0 + TRN3_SRD_WIRE_OVERHEAD);  // 98.7%
    INFO("goodput " << goodput * 8 / 1e9 << " Gb/s, bound " << bound * 8 / 1e9);
    CHECK(goodput >= 0.9 * line);
    CHECK(goodput <= bound);
    CHECK(stat(n.b, "bytes_delivered") == bytes);
    CHECK(stat(n.a, "retransmits") == 0);
}

TEST_CASE("a small message's one-way latency is the NIC pipelines, three switches, four cables and their wire time") {
    network n;
    sc_time arrived;
    n.b.on_deliver([&](srd_engine::inbound& in) { arrived = in.when; });
    n.a.post_send(0, node_b, 0, 64, pattern(64, 1), {});
    sc_core::sc_start(sc_time(1, sc_core::SC_MS));
    const std::uint64_t frame = 64 + TRN3_SRD_WIRE_OVERHEAD;
    const sc_time expected = sc_time(1, SC_US) /* tx */ + 3 * sc_time(800, SC_NS) /* switches */ + 2 * nic_cable +
                             2 * uplink_cable + 2 * nic_port_rate.transfer_time(frame) +
                             2 * uplink_rate.transfer_time(frame) + sc_time(1, SC_US) /* rx */;
    CHECK(arrived == expected);
    CHECK(arrived.to_seconds() * 1e6 == Approx(4.64088).epsilon(1e-6));
}

TEST_CASE("a ToR that dies mid-transfer: the connections move to the other ToR and lose nothing") {
    set("nic_a.rto_min", "20us");
    set("nic_b.rto_min", "20us");
    network n;
    exchange x;
    std::uint64_t arrived_at_dead_tor = 0;
    // tor0 (nic_a's port 0) dies 50 us in; its neighbours see their links
    // to it go down (nic_a's port 0, each spine's port 0).
    sc_core::sc_spawn([&] {
        sc_core::wait(sc_time(50, SC_US));
        for (unsigned p = 0; p < 3; ++p) n.tors[0]->set_port_down(p, true);
        n.a.set_port_down(0, true);
        for (auto& s : n.spines) s->set_port_down(0, true);
        // What nic_a had already put on its wire to tor0 (up to a window,
        // 256 frames, 85 us) has arrived 100 us later.
        sc_core::wait(sc_time(100, SC_US));
        arrived_at_dead_tor = counted("tor0.down_drops");
    });
    x.run(n, 300);
    x.check();
    // Only what was in flight through tor0 was lost and sent again (frames
    // into tor0, and frames out of it arriving at the spines' dead ports);
    // once the links were down nothing more went its way.
    const std::uint64_t lost = counted("tor0.down_drops") + n.sum(n.spines, "down_drops");
    CHECK(arrived_at_dead_tor > 0);
    CHECK(counted("tor0.down_drops") == arrived_at_dead_tor);
    CHECK(stat(n.a, "timeouts") + stat(n.b, "timeouts") > 0);
    CHECK(stat(n.a, "timeouts") + stat(n.b, "timeouts") <= lost);
}

TEST_CASE("a destination no switch can reach: the connection fails its messages after max_retries, none is delivered") {
    set("nic_a.rto_min", "5us");
    set("nic_a.max_retries", "3");
    network n;
    unsigned failed = 0;
    for (int i = 0; i < 3; ++i)
        n.a.post_send(0, 0xC, 0, 20000, {}, [&](bool ok, const sc_time&) { failed += ok ? 0 : 1; });
    sc_core::sc_start(sc_time(10, sc_core::SC_MS));
    CHECK(failed == 3);
    CHECK(stat(n.a, "connection_failures") == 1);
    CHECK(n.sum(n.tors, "no_route") > 0);
    // Later messages on the failed connection fail at once.
    n.a.post_send(0, 0xC, 0, 8, {}, [&](bool ok, const sc_time&) { failed += ok ? 0 : 1; });
    CHECK(failed == 4);
}

TEST_CASE("frames that are not valid SRD packets are dropped and counted, never delivered") {
    network n;
    unsigned delivered = 0;
    n.b.on_deliver([&](srd_engine::inbound&) { ++delivered; });
    nic::srd_packet good;
    good.dst_node = node_b;
    good.src_node = node_a;
    good.payload_bytes = 16;
    good.msg_bytes = 16;
    const std::vector<std::uint8_t> payload(16, 0x5a);
    message ok = nic::encode(good, payload.data());
    REQUIRE(nic::decode(ok));
    std::vector<message> bad;
    auto broken = [&](auto change) {
        message m = ok;
        change(m);
        REQUIRE_FALSE(nic::decode(m));
        bad.push_back(m);
    };
    broken([](message& m) { m.data.resize(10); });  // shorter than the header
    broken([](message& m) { m.data[TRN3_ETH_PROTO] = 0; });  // another protocol
    broken([](message& m) { m.data[TRN3_SRD_TYPE] = 9; });  // an unknown type
    broken([](message& m) { m.data[TRN3_SRD_MSG_OFFSET] = 8; });  // payload beyond its message
    broken([](message& m) { m.data.push_back(0); });  // more data than the header says
    broken([](message& m) { m.data[TRN3_SRD_FLAGS] = 1; });  // reserved bits set
    broken([](message& m) { m.data[TRN3_SRD_MSG_BYTES + 7] = 0x40; });  // a message of 2^62 bytes
    // A timing-only packet may carry its message's leading bytes (a header) in the first packet only.
    nic::srd_packet later = good;
    later.msg_bytes = 32;
    later.msg_offset = 16;
    nic::srd_packet first = later;
    first.msg_offset = 0;
    const std::optional<nic::srd_packet> prefixed = nic::decode(nic::encode(first, payload.data(), 8));
    REQUIRE(prefixed);
    CHECK(prefixed->carried == 8);
    CHECK_FALSE(prefixed->has_payload);
    bad.push_back(nic::encode(later, payload.data(), 8));
    REQUIRE_FALSE(nic::decode(bad.back()));
    // Sent into nic_b from tor2's NIC-facing port.
    for (message& m : bad) n.tors[2]->port(0).send(m, sc_time(1, SC_US));  // at least the port's lead
    sc_core::sc_start(sc_time(1, sc_core::SC_MS));
    CHECK(stat(n.b, "malformed") == bad.size());
    CHECK(delivered == 0);
    CHECK(stat(n.b, "acks_sent") == 0);
}

TEST_CASE("a switch wired with more ports than its radix, or given a port speed it lacks, is refused") {
    set("big.port_speed", "400Gb/s");
    REQUIRE_THROWS_WITH(eth_switch("big", 33, 0), Catch::Contains("radix of 32"));
    set("odd.port_speed", "300Gb/s");
    REQUIRE_THROWS_AS(eth_switch("odd", 4, 0), config_error);
}

TEST_CASE("a timing-only message with a 32-byte prefix: the prefix arrives as its data, and it takes the time of "
          "the same message with all its bytes") {
    network n;
    const std::uint64_t bytes = 1 << 20;
    const std::vector<std::uint8_t> whole = pattern(bytes, 3), prefix = pattern(32, 4);
    std::vector<srd_engine::inbound> got;
    n.b.on_deliver([&](srd_engine::inbound& in) { got.push_back(std::move(in)); });
    double whole_us = 0, prefixed_us = 0, empty_us = 0;
    // A prefix must fit in the first packet; anything else is neither all nor none of the bytes. (Checked
    // before the simulation runs: an exception in sc_main after SystemC's threads ran confuses ASan.)
    CHECK_THROWS_AS(n.a.post_send(0, node_b, 5, bytes, pattern(9000, 5), {}), std::invalid_argument);
    sc_core::sc_spawn([&] {
        sc_core::sc_event done;
        auto send = [&](std::vector<std::uint8_t> data) {
            const sc_time start = sc_core::sc_time_stamp();
            bool ok = false;
            n.a.post_send(0, node_b, 5, bytes, std::move(data), [&](bool k, const sc_time&) {
                ok = k;
                done.notify();
            });
            sc_core::wait(done);
            REQUIRE(ok);
            return (sc_core::sc_time_stamp() - start).to_seconds() * 1e6;
        };
        whole_us = send(whole);
        prefixed_us = send(prefix);
        empty_us = send({});
    });
    sc_core::sc_start(sc_time(1, sc_core::SC_SEC));
    REQUIRE(got.size() == 3);
    CHECK(got[0].data == whole);
    CHECK(got[1].bytes == bytes);
    CHECK(got[1].data == prefix);
    CHECK(got[2].bytes == bytes);
    CHECK(got[2].data.empty());
    INFO("whole " << whole_us << " us, prefixed " << prefixed_us << " us, no data " << empty_us << " us");
    CHECK(whole_us > 20);  // 1 MiB at 400 Gb/s
    CHECK(prefixed_us == Approx(whole_us).epsilon(0.02));
    CHECK(empty_us == Approx(whole_us).epsilon(0.02));
}
