#include <catch2/catch.hpp>

#include <memory>
#include <tuple>
#include <vector>

#include "trn3/core/message_link.h"

using namespace trn3;
using sc_core::SC_NS;
using sc_core::sc_time;

namespace {
using record = std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t>;  // time ps, dst, src, seq

// Four devices in a star of links around a hub device with one port per link.
// Every leaf sends two messages timed to arrive at the hub at the same
// instant, so the hub sees eight simultaneous deliveries.
struct network {
    delivery_queue queue;
    std::vector<std::unique_ptr<message_port>> leaf, hub;
    std::vector<std::unique_ptr<message_link>> links;
    std::vector<record> log;

    network(const std::string& name, bool reverse) : queue((name + "_queue").c_str()) {
        std::vector<int> order = {0, 1, 2, 3};
        if (reverse) order = {3, 2, 1, 0};
        leaf.resize(4);
        hub.resize(4);
        links.resize(4);
        for (int i : order) {
            // Ids come from the topology (leaf i = 10 + i, hub port i = 20 + i).
            leaf[i] = std::make_unique<message_port>(name + ".leaf" + std::to_string(i), 10 + i);
            hub[i] = std::make_unique<message_port>(name + ".hub" + std::to_string(i), 20 + (3 - i));
            links[i] = std::make_unique<message_link>((name + "_link" + std::to_string(i)).c_str(), queue, *leaf[i],
                                                      *hub[i], sc_time(100, SC_NS), bandwidth{1e9});
            hub[i]->on_receive(
                [this](message& m) { log.emplace_back(m.delivered.value(), m.dst_port, m.src_port, m.seq); });
        }
    }
    void send_all(bool reverse) {
        std::vector<int> order = {0, 1, 2, 3};
        if (reverse) order = {3, 2, 1, 0};
        for (int i : order) {
            message m;
            m.bytes = 0;
            leaf[i]->send(m, sc_time(0, SC_NS));
            leaf[i]->send(m, sc_time(0, SC_NS));
        }
    }
};
}  // namespace

TEST_CASE("simultaneous deliveries arrive in key order whatever the construction and send order") {
    network forward("fwd", false);
    network backward("bwd", true);
    forward.send_all(false);
    backward.send_all(true);
    sc_core::sc_start();
    REQUIRE(forward.log.size() == 8);
    CHECK(forward.log == backward.log);
    // Key order: time, destination id, source id, sequence.
    std::vector<record> expected;
    for (std::uint64_t dst = 20; dst < 24; ++dst)
        for (std::uint64_t seq = 0; seq < 2; ++seq) expected.emplace_back(100'000, dst, 10 + (23 - dst), seq);
    CHECK(forward.log == expected);
}

TEST_CASE("a message is delivered at start + bytes/bandwidth + latency and reserves the wire") {
    delivery_queue q("q");
    message_port a("a", 1), b("b", 2);
    message_link link("link", q, a, b, sc_time(50, SC_NS), bandwidth{8e9});  // 8 GB/s: 32 ns per 256 B
    std::vector<std::uint64_t> arrivals;  // ps
    b.on_receive([&](message& m) { arrivals.push_back(m.delivered.value()); });
    message m;
    m.bytes = 256;
    CHECK(a.send(m, sc_time(0, SC_NS)) == sc_time(82, SC_NS));
    CHECK(a.send(m, sc_time(0, SC_NS)) == sc_time(114, SC_NS));  // waits for the wire
    CHECK(a.send(m, sc_time(200, SC_NS)) == sc_time(282, SC_NS));  // wire idle again
    CHECK(link.wire_free(a) == sc_time(232, SC_NS));
    sc_core::sc_start();
    CHECK(arrivals == std::vector<std::uint64_t>{82'000, 114'000, 282'000});
}

TEST_CASE("the two directions of a link do not share a wire") {
    delivery_queue q("q");
    message_port a("a", 1), b("b", 2);
    message_link link("link", q, a, b, sc_time(10, SC_NS), bandwidth{1e9});
    message m;
    m.bytes = 100;
    CHECK(a.send(m, sc_core::SC_ZERO_TIME) == sc_time(110, SC_NS));
    CHECK(b.send(m, sc_core::SC_ZERO_TIME) == sc_time(110, SC_NS));
}

TEST_CASE("the payload arrives intact with its kind") {
    delivery_queue q("q");
    message_port a("a", 1), b("b", 2);
    message_link link("link", q, a, b, sc_time(10, SC_NS), bandwidth{1e9});
    std::vector<std::uint8_t> got;
    std::uint32_t kind = 0;
    b.on_receive([&](message& m) {
        got = m.data;
        kind = m.kind;
    });
    message m;
    m.kind = 7;
    m.data = {1, 2, 3, 4};
    m.bytes = 4;
    a.send(std::move(m), sc_core::SC_ZERO_TIME);
    sc_core::sc_start();
    CHECK(got == std::vector<std::uint8_t>{1, 2, 3, 4});
    CHECK(kind == 7);
}

TEST_CASE("a link with zero latency is refused: it could not be cut between processes") {
    delivery_queue q("q");
    message_port a("a", 1), b("b", 2);
    param_registry::instance().set_pending_text("link.latency", "0ns", "test");
    CHECK_THROWS_WITH(message_link("link", q, a, b, sc_time(10, SC_NS), bandwidth{1e9}),
                      Catch::Contains("link.latency") && Catch::Contains("outside its range"));
}

TEST_CASE("a port cannot be on two links") {
    delivery_queue q("q");
    message_port a("a", 1), b("b", 2), c("c", 3);
    message_link l1("l1", q, a, b, sc_time(10, SC_NS), bandwidth{1e9});
    CHECK_THROWS_WITH(message_link("l2", q, a, c, sc_time(10, SC_NS), bandwidth{1e9}),
                      "l2: port a is already on a link");
}

TEST_CASE("strict priority: a higher traffic class passes lower-class traffic queued before it, which finishes "
          "later by its wire time, within a class order is kept, and fifo ignores classes") {
    // 8 GB/s: 32 ns per 256 B; 50 ns latency. Sent in this order, all at
    // time 0 but `h` at 10 ns: m0 (class 0, 2560 B), m1 (0), h (3), m2 (0), h2 (1).
    struct one_link {
        delivery_queue q;
        message_port a, b;
        message_link link;
        explicit one_link(const std::string& n)
            : q((n + "_q").c_str()), a(n + ".a", 1), b(n + ".b", 2),
              link((n + "_link").c_str(), q, a, b, sc_time(50, SC_NS), bandwidth{8e9}) {}
    };
    one_link strict_link("strict"), fifo_link("fifo");
    auto run = [](one_link& l, bool strict) {
        message_port& a = l.a;
        message_link& link = l.link;
        link.set_strict_priority(a, strict);
        auto send = [&](std::uint64_t bytes, std::uint8_t cls, double at_ns) {
            message m;
            m.bytes = bytes;
            m.traffic_class = cls;
            return a.send(m, sc_time(at_ns, SC_NS)).value() / 1000;  // ns
        };
        std::vector<std::uint64_t> delivered = {send(2560, 0, 0), send(256, 0, 0), send(256, 3, 10), send(256, 0, 0),
                                                send(256, 1, 0)};
        std::vector<std::uint64_t> free = {link.wire_free(a, 0).value() / 1000, link.wire_free(a, 1).value() / 1000,
                                           link.wire_free(a, 3).value() / 1000};
        return std::make_pair(delivered, free);
    };
    const auto [strict, strict_free] = run(strict_link, true);
    // m0 [0, 320] and m1 [320, 352] were given their times; h starts at
    // once [10, 42] and pushes class 0's free time to 384; m2 [384, 416];
    // h2 (class 1) after h [42, 74], pushing class 0 to 448.
    CHECK(strict == std::vector<std::uint64_t>{370, 402, 92, 466, 124});
    CHECK(strict_free == std::vector<std::uint64_t>{448, 74, 42});
    const auto [fifo, fifo_free] = run(fifo_link, false);
    CHECK(fifo == std::vector<std::uint64_t>{370, 402, 434, 466, 498});
    CHECK(fifo_free == std::vector<std::uint64_t>{448, 448, 448});  // one queue: every class sees the whole wire
}

TEST_CASE("a port's lead is checked on every send, and a proxy port hands its messages on with their delivery "
          "times (a distributed run's cut)") {
    delivery_queue q("q");
    message_port a("a", 1), b("b", 2);
    message_link l("link", q, a, b, sc_time(10, SC_NS), bandwidth{1e9});
    a.set_lead(sc_time(100, SC_NS));
    std::vector<message> forwarded;
    b.make_remote([&](message&& m) { forwarded.push_back(std::move(m)); });
    CHECK(b.remote());
    message m;
    m.bytes = 100;  // 100 ns at 1 GB/s
    CHECK_THROWS_WITH(a.send(m, sc_time(99, SC_NS)), Catch::Contains("inside its lead of 100 ns"));
    CHECK(a.send(m, sc_time(100, SC_NS)) == sc_time(210, SC_NS));
    REQUIRE(forwarded.size() == 1);
    CHECK(forwarded[0].delivered == sc_time(210, SC_NS));
    CHECK(forwarded[0].src_port == 1);
    CHECK(forwarded[0].dst_port == 2);
    sc_core::sc_start(sc_time(1, sc_core::SC_US));
    CHECK(q.delivered() == 0);  // nothing went through this process's queue
}

TEST_CASE("a control message takes no wire time: it passes queued data and arrives a latency after it is sent") {
    delivery_queue queue("queue");
    message_port a("a", 1), b("b", 2);
    message_link l("l", queue, a, b, sc_time(100, SC_NS), bandwidth{1e9});  // 1 byte per ns
    std::vector<std::pair<std::uint64_t, bool>> got;  // delivery time in ns, control
    b.on_receive([&](message& m) { got.emplace_back(m.delivered.value() / 1000, m.control); });
    message data;
    data.bytes = 1000;  // 1 us of wire
    a.send(data, sc_time(0, SC_NS));
    message ctl;
    ctl.control = true;
    ctl.bytes = 1000;  // ignored
    const sc_time at = a.send(ctl, sc_time(0, SC_NS));
    a.send(data, sc_time(0, SC_NS));  // after the first: the control message took none of the wire
    sc_core::sc_start();
    CHECK(at == sc_time(100, SC_NS));
    REQUIRE(got.size() == 3);
    CHECK(got[0] == std::make_pair(std::uint64_t(100), true));
    CHECK(got[1] == std::make_pair(std::uint64_t(1100), false));
    CHECK(got[2] == std::make_pair(std::uint64_t(2100), false));
    CHECK(l.wire_free(a) == sc_time(2000, SC_NS));
}
