// The Nitro-v6 NIC on its host's PCIe, driven by its driver (sw/driver
// nic_device): two Graviton4 hosts, each with a NIC on its root port, the
// NICs' four Ethernet ports on one switch. Each host's software runs on
// its own host. Send and receive, RDMA write, write with immediate data and
// read, and the protection of memory regions: 1,000 random requests with a
// wrong key, bounds, protection domain or access move no byte.
#define SC_INCLUDE_DYNAMIC_PROCESSES  // sc_spawn for the link failure
#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "nic_rig.h"

using namespace trn3;
using driver::status;

namespace {

using test::node_a;
using test::node_b;
using test::pd_a;
using test::pd_b;
using test::rig;
using test::side;

trn3_nic_wqe request(std::uint8_t op, const driver::dma_buffer& local, std::uint32_t lkey, std::uint32_t length,
                     std::uint64_t wr_id) {
    trn3_nic_wqe w{};
    w.opcode = op;
    w.dst_node = node_b;
    w.dst_qp = 0;
    w.local_addr = local.bus_address;
    w.length = length;
    w.lkey = lkey;
    w.wr_id = wr_id;
    return w;
}

trn3_nic_cqe completion(driver::nic_device& dev) {
    trn3_nic_cqe c{};
    REQUIRE(dev.poll_cq(0, c, 10'000'000) == status::ok);
    return c;
}

}  // namespace

TEST_CASE("nic: 100 messages of 1 byte to 64 KiB go host to host through the NICs, byte-exact and in order") {
    rig r;
    constexpr unsigned count = 100, max_bytes = 64 << 10;
    std::vector<std::vector<std::uint8_t>> sent;
    std::mt19937_64 g(3);
    for (unsigned i = 0; i < count; ++i) {
        sent.emplace_back(1 + g() % max_bytes);
        for (auto& x : sent.back()) x = static_cast<std::uint8_t>(g());
    }
    unsigned matched = 0;
    bool posted = false;
    r.run(
        [&] {
            r.a.bring_up(pd_a);
            const driver::dma_buffer buf = r.a.dev.alloc(max_bytes);
            std::uint32_t lkey = 0;
            REQUIRE(r.a.dev.reg_mr(0, 1, buf.bus_address, max_bytes, pd_a, TRN3_NIC_ACCESS_LOCAL, lkey) == status::ok);
            REQUIRE(r.a.adapter.wait_until([&] { return posted; }, 10'000'000, 1000));
            for (unsigned i = 0; i < count; ++i) {
                std::memcpy(buf.cpu, sent[i].data(), sent[i].size());
                REQUIRE(r.a.dev.post_send(0, request(TRN3_NIC_OP_SEND, buf, lkey, sent[i].size(), i)) == status::ok);
                const trn3_nic_cqe c = completion(r.a.dev);  // the buffer is free again
                REQUIRE(c.status == TRN3_NIC_ST_OK);
                CHECK(c.wr_id == i);
                CHECK(c.bytes == sent[i].size());
            }
        },
        [&] {
            r.b.bring_up(pd_b);
            const driver::dma_buffer bufs = r.b.dev.alloc(std::size_t{count} * max_bytes);
            std::uint32_t lkey = 0;
            REQUIRE(r.b.dev.reg_mr(3, 5, bufs.bus_address, bufs.size, pd_b, TRN3_NIC_ACCESS_LOCAL, lkey) == status::ok);
            for (unsigned i = 0; i < count; ++i) {
                const trn3_nic_rqe rq{bufs.bus_address + std::uint64_t{i} * max_bytes, max_bytes, lkey, 1000 + i, 0};
                REQUIRE(r.b.dev.post_recv(0, rq) == status::ok);
            }
            posted = true;  // host a waits for this (shared memory of the test, not of the hosts)
            for (unsigned i = 0; i < count; ++i) {
                const trn3_nic_cqe c = completion(r.b.dev);
                REQUIRE(c.status == TRN3_NIC_ST_OK);
                CHECK(c.opcode == TRN3_NIC_OP_RECV);
                CHECK(c.wr_id == 1000 + i);
                CHECK(c.src_node == node_a);
                REQUIRE(c.bytes == sent[i].size());
                matched += std::memcmp(bufs.cpu + std::size_t{i} * max_bytes, sent[i].data(), c.bytes) == 0;
            }
        });
    CHECK(matched == count);
}

TEST_CASE("nic: RDMA write, write with immediate data and read move exactly the bytes asked, into and out of the "
          "region") {
    rig r;
    constexpr std::size_t region_bytes = 1 << 20;
    std::uint32_t rkey = 0;
    bool ready = false, finished = false;
    driver::dma_buffer region;
    r.run(
        [&] {
            r.a.bring_up(pd_a);
            const driver::dma_buffer buf = r.a.dev.alloc(region_bytes);
            std::uint32_t lkey = 0;
            REQUIRE(r.a.dev.reg_mr(0, 1, buf.bus_address, region_bytes, pd_a, TRN3_NIC_ACCESS_LOCAL, lkey) ==
                    status::ok);
            REQUIRE(r.a.adapter.wait_until([&] { return ready; }, 10'000'000, 1000));
            for (std::size_t i = 0; i < region_bytes; ++i) buf.cpu[i] = static_cast<std::uint8_t>(i * 7 + 1);
            // 300 KiB at offset 4096 + 3 of b's region.
            trn3_nic_wqe w = request(TRN3_NIC_OP_WRITE, buf, lkey, 300 << 10, 1);
            w.rkey = rkey;
            w.remote_offset = 4099;
            REQUIRE(r.a.dev.post_send(0, w) == status::ok);
            CHECK(completion(r.a.dev).status == TRN3_NIC_ST_OK);
            // 100 bytes with immediate data 0xC0FFEE at the start.
            w = request(TRN3_NIC_OP_WRITE_IMM, buf, lkey, 100, 2);
            w.rkey = rkey;
            w.imm = 0xC0FFEE;
            REQUIRE(r.a.dev.post_send(0, w) == status::ok);
            CHECK(completion(r.a.dev).status == TRN3_NIC_ST_OK);
            // Read 64 KiB back from offset 4099 into a's buffer at its start (overwriting the pattern).
            std::memset(buf.cpu, 0, 64 << 10);
            w = request(TRN3_NIC_OP_READ, buf, lkey, 64 << 10, 3);
            w.rkey = rkey;
            w.remote_offset = 4099;
            REQUIRE(r.a.dev.post_send(0, w) == status::ok);
            const trn3_nic_cqe c = completion(r.a.dev);
            CHECK(c.status == TRN3_NIC_ST_OK);
            CHECK(c.bytes == 64 << 10);
            bool same = true;
            for (std::size_t i = 0; i < (64 << 10); ++i)
                same = same && buf.cpu[i] == static_cast<std::uint8_t>(i * 7 + 1);
            CHECK(same);
            finished = true;
        },
        [&] {
            r.b.bring_up(pd_b);
            region = r.b.dev.alloc(region_bytes);
            std::memset(region.cpu, 0xEE, region_bytes);
            REQUIRE(r.b.dev.reg_mr(9, 0x42, region.bus_address, region_bytes, pd_b,
                                   TRN3_NIC_ACCESS_LOCAL | TRN3_NIC_ACCESS_REMOTE_WRITE | TRN3_NIC_ACCESS_REMOTE_READ,
                                   rkey) == status::ok);
            CHECK(rkey == (9u | 0x42u << 8));
            const trn3_nic_rqe rq{region.bus_address, 0, rkey, 77, 0};  // for the WRITE_IMM's completion
            REQUIRE(r.b.dev.post_recv(0, rq) == status::ok);
            ready = true;
            const trn3_nic_cqe c = completion(r.b.dev);  // only WRITE_IMM completes at the target
            CHECK(c.opcode == (TRN3_NIC_OP_RECV | TRN3_NIC_OP_WRITE_IMM));
            CHECK(c.imm == 0xC0FFEE);
            CHECK(c.bytes == 100);
            CHECK(c.wr_id == 77);
            REQUIRE(r.b.adapter.wait_until([&] { return finished; }, 10'000'000, 1000));
        });
    // b's region: the write's bytes at 4099, the write-with-immediate's 100 at 0, the rest untouched.
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < region_bytes; ++i) {
        std::uint8_t want = 0xEE;
        if (i < 100) want = static_cast<std::uint8_t>(i * 7 + 1);
        else if (i >= 4099 && i < 4099 + (300 << 10)) want = static_cast<std::uint8_t>((i - 4099) * 7 + 1);
        wrong += region.cpu[i] != want;
    }
    CHECK(wrong == 0);
}

TEST_CASE("nic isolation: 1,000 random RDMA requests with a wrong key, bounds, domain or access move 0 bytes, each "
          "refused at the target and reported to the requester") {
    rig r;
    constexpr std::size_t region_bytes = 64 << 10;
    std::uint32_t write_only = 0, read_only = 0, other_domain = 0;
    bool ready = false, finished = false;
    driver::dma_buffer regions[3];
    std::uint64_t refused_seen = 0;
    unsigned reported = 0;
    r.run(
        [&] {
            r.a.bring_up(pd_a);
            const driver::dma_buffer buf = r.a.dev.alloc(region_bytes * 2);
            std::memset(buf.cpu, 0x11, buf.size);
            std::uint32_t lkey = 0;
            REQUIRE(r.a.dev.reg_mr(0, 1, buf.bus_address, buf.size, pd_a, TRN3_NIC_ACCESS_LOCAL, lkey) == status::ok);
            REQUIRE(r.a.adapter.wait_until([&] { return ready; }, 10'000'000, 1000));
            std::mt19937_64 g(20261202);
            for (unsigned i = 0; i < 1000; ++i) {
                const unsigned kind = g() % 5;
                const bool read = g() % 2;
                trn3_nic_wqe w = request(read ? TRN3_NIC_OP_READ : TRN3_NIC_OP_WRITE, buf, lkey,
                                         static_cast<std::uint32_t>(1 + g() % region_bytes), i);
                w.remote_offset = g() % region_bytes;
                switch (kind) {
                case 0:  // a key no region has: another tag, or an empty entry
                    w.rkey = g() % 2 ? (write_only ^ (1 + g() % 255) << 8) : static_cast<std::uint32_t>(20 + g() % 40);
                    break;
                case 1:  // past the region's end
                    w.rkey = read ? read_only : write_only;
                    w.remote_offset = region_bytes - w.length / 2 - 1 + g() % 4096;
                    if (w.remote_offset + w.length <= region_bytes) w.remote_offset = region_bytes;
                    break;
                case 2:  // another protection domain's region
                    w.rkey = other_domain;
                    w.remote_offset = 0;
                    w.length = 1 + g() % 4096;
                    break;
                case 3:  // the access the region does not allow
                    w.rkey = read ? write_only : read_only;
                    w.remote_offset = 0;
                    w.length = 1 + g() % 4096;
                    break;
                default:  // an offset that wraps
                    w.rkey = read ? read_only : write_only;
                    w.remote_offset = ~0ull - g() % 4096;
                    break;
                }
                REQUIRE(r.a.dev.post_send(0, w) == status::ok);
                const trn3_nic_cqe c = completion(r.a.dev);
                reported += c.status == TRN3_NIC_ST_REMOTE_ACCESS && c.wr_id == i;
            }
            // a's buffer kept its bytes: no READ wrote into it.
            std::size_t changed = 0;
            for (std::size_t i = 0; i < buf.size; ++i) changed += buf.cpu[i] != 0x11;
            CHECK(changed == 0);
            finished = true;
        },
        [&] {
            r.b.bring_up(pd_b);
            for (auto& reg : regions) {
                reg = r.b.dev.alloc(region_bytes);
                std::memset(reg.cpu, 0xEE, region_bytes);
            }
            REQUIRE(r.b.dev.reg_mr(1, 3, regions[0].bus_address, region_bytes, pd_b, TRN3_NIC_ACCESS_REMOTE_WRITE,
                                   write_only) == status::ok);
            REQUIRE(r.b.dev.reg_mr(2, 4, regions[1].bus_address, region_bytes, pd_b, TRN3_NIC_ACCESS_REMOTE_READ,
                                   read_only) == status::ok);
            REQUIRE(r.b.dev.reg_mr(3, 5, regions[2].bus_address, region_bytes, pd_b + 1,
                                   TRN3_NIC_ACCESS_REMOTE_READ | TRN3_NIC_ACCESS_REMOTE_WRITE,
                                   other_domain) == status::ok);
            ready = true;
            REQUIRE(r.b.adapter.wait_until([&] { return finished; }, 40'000'000, 1000));
            refused_seen = r.b.dev.rdma_errors();
        });
    CHECK(reported == 1000);
    CHECK(refused_seen == 1000);
    std::size_t changed = 0;
    for (const auto& reg : regions)
        for (std::size_t i = 0; i < region_bytes; ++i) changed += reg.cpu[i] != 0xEE;
    CHECK(changed == 0);
}

TEST_CASE("nic: a bad send-queue entry completes with its error and sends nothing, and a SEND without a receive "
          "buffer gets RNR") {
    rig r;
    r.run(
        [&] {
            r.a.bring_up(pd_a);
            const driver::dma_buffer buf = r.a.dev.alloc(4096);
            std::uint32_t lkey = 0;
            REQUIRE(r.a.dev.reg_mr(0, 1, buf.bus_address, 4096, pd_a, TRN3_NIC_ACCESS_LOCAL, lkey) == status::ok);
            trn3_nic_wqe w = request(9, buf, lkey, 16, 1);  // unknown opcode
            REQUIRE(r.a.dev.post_send(0, w) == status::ok);
            CHECK(completion(r.a.dev).status == TRN3_NIC_ST_BAD_REQUEST);
            w = request(TRN3_NIC_OP_SEND, buf, lkey, 8192, 2);  // past the local region
            REQUIRE(r.a.dev.post_send(0, w) == status::ok);
            CHECK(completion(r.a.dev).status == TRN3_NIC_ST_LOCAL_PROTECTION);
            w = request(TRN3_NIC_OP_SEND, buf, lkey ^ 0x100, 16, 3);  // a stale local key
            REQUIRE(r.a.dev.post_send(0, w) == status::ok);
            CHECK(completion(r.a.dev).status == TRN3_NIC_ST_LOCAL_PROTECTION);
            CHECK(stats_registry::instance().find("a_nic.requests")->to_json() == 0);
            w = request(TRN3_NIC_OP_SEND, buf, lkey, 16, 4);  // b posted no receive buffer
            REQUIRE(r.a.dev.post_send(0, w) == status::ok);
            CHECK(completion(r.a.dev).status == TRN3_NIC_ST_RNR);
        },
        [&] { r.b.bring_up(pd_b); });
    CHECK(stats_registry::instance().find("b_nic.rnr")->to_json() == 1);
}

TEST_CASE("nic: a request whose response is lost (the target's links fail as it answers) completes with TRANSPORT "
          "after response_timeout, not never") {
    param_registry::instance().set_pending_text("a_nic.response_timeout", "200us", "test");
    rig r;
    trn3_nic_cqe got{};
    bool ready = false;
    std::uint32_t rkey = 0;
    // The moment b's NIC has taken the request, both its links go down:
    // its acknowledgement is out, its response cannot leave.
    sc_core::sc_spawn([&] {
        while (stats_registry::instance().find("b_nic.srd.messages_delivered")->to_json() == 0)
            sc_core::wait(sc_core::sc_time(10, sc_core::SC_NS));
        r.b.nic.set_link_down(0, true);
        r.b.nic.set_link_down(1, true);
    });
    r.run(
        [&] {
            r.a.bring_up(pd_a);
            const driver::dma_buffer buf = r.a.dev.alloc(4096);
            std::uint32_t lkey = 0;
            REQUIRE(r.a.dev.reg_mr(0, 1, buf.bus_address, 4096, pd_a, TRN3_NIC_ACCESS_LOCAL, lkey) == status::ok);
            REQUIRE(r.a.adapter.wait_until([&] { return ready; }, 10'000'000, 1000));
            trn3_nic_wqe w = request(TRN3_NIC_OP_WRITE, buf, lkey, 64, 5);
            w.rkey = rkey;
            REQUIRE(r.a.dev.post_send(0, w) == status::ok);
            got = completion(r.a.dev);
        },
        [&] {
            r.b.bring_up(pd_b);
            const driver::dma_buffer region = r.b.dev.alloc(4096);
            REQUIRE(r.b.dev.reg_mr(1, 1, region.bus_address, 4096, pd_b, TRN3_NIC_ACCESS_REMOTE_WRITE, rkey) ==
                    status::ok);
            ready = true;
        });
    CHECK(got.wr_id == 5);
    CHECK(got.status == TRN3_NIC_ST_TRANSPORT);
    CHECK(stats_registry::instance().find("a_nic.response_timeouts")->to_json() == 1);
    CHECK(stats_registry::instance().find("b_nic.srd.connection_failures")->to_json() == 1);
}

TEST_CASE("nic: a NIC with no Ethernet link shows its ports down, and a request fails with TRANSPORT at once") {
    delivery_queue queue{"queue"};
    side lone{"lone", queue, node_a, 100};
    trn3_nic_cqe got{};
    bool done = false;
    lone.host.run("software", [&] {
        lone.bring_up(pd_a);
        CHECK(lone.dev.ports_up() == 0);
        const driver::dma_buffer buf = lone.dev.alloc(4096);
        std::uint32_t lkey = 0;
        REQUIRE(lone.dev.reg_mr(0, 1, buf.bus_address, 4096, pd_a, TRN3_NIC_ACCESS_LOCAL, lkey) == status::ok);
        REQUIRE(lone.dev.post_send(0, request(TRN3_NIC_OP_SEND, buf, lkey, 64, 9)) == status::ok);
        got = completion(lone.dev);
        done = true;
        sc_core::sc_stop();
    });
    sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_MS));
    REQUIRE(done);
    CHECK(got.wr_id == 9);
    CHECK(got.status == TRN3_NIC_ST_TRANSPORT);
    CHECK(lone.nic.srd.port_usable(0) == false);
    CHECK(stats_registry::instance().find("lone_nic.srd.packets_sent")->to_json() == 0);
}
