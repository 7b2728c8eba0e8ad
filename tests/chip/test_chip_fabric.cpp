// The chip on the NeuronLink fabric (models/chip): its fabric id and route
// table, writes and reads to fabric addresses leaving on the routed port,
// arrivals landing, forwarded or dropped, reducing writes and the
// per-channel counts. Cases drive the chip's register space and network
// directly (chip_rig) with links whose far ends the tests play.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstring>

#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <systemc>

#include "../common/pattern.h"
#include "rig.h"
#include "trn3/dma/fabric_write.h"
#include "trn3/spec/link.h"

using namespace trn3;
using sc_core::sc_time;
using sc_core::SC_US;
using test::chip_rig;

namespace {
// Chip 1 (fabric id 1, on the fabric) with NeuronLink port 3 on a link whose
// far end the test plays: what leaves lands in `out`; chip 9 is routed
// through port 3. With `boot`, the firmware has run (HBM trained).
struct port3_rig {
    delivery_queue queue{"queue"};
    pcie::link nl3{"nl3", queue, 1, 2, pcie::link_config{pcie::generation::gen6, 8}};
    std::vector<pcie::tlp> out;
    chip_rig r{[this](chip::trn3_chip& c) { c.attach_neuronlink(3, nl3); }};
    explicit port3_rig(bool boot) {
        nl3.b().on_receive([this](pcie::tlp& t) { out.push_back(t); });
        if (boot) r.boot();
        r.wr(TRN3_CHIP_ROUTE(9), TRN3_ROUTE_PORT(3));
        r.wr(TRN3_CHIP_FABRIC_ID, 1 | TRN3_FABRIC_ENABLE);
    }
    // The DMA engine's write of `floats` halves to chip 9, tagged `ext`, as
    // the noc passes it on; runs until it has left.
    void send_tagged(std::size_t floats, dma::fabric_write& ext) {
        std::vector<float> v(floats, 0.5f);
        tlm::tlm_generic_payload tx;
        set_access(tx, tlm::TLM_WRITE_COMMAND, TRN3_FABRIC_ADDR(9, TRN3_DEV_HBM_BASE(1)), v.data(),
                   static_cast<unsigned>(floats * 4));
        tx.set_extension(&ext);
        sc_time delay;
        r.noc.out->b_transport(tx, delay);
        tx.clear_extension(&ext);
        CHECK(tx.get_response_status() == tlm::TLM_OK_RESPONSE);
        sc_core::sc_start(sc_time(10, SC_US));
    }
    // A reducing write of `data` (TLP reduction byte `code`) from chip 9 for
    // this chip's `at`, on `channel`; runs until it has landed.
    void arrive_reducing(std::uint64_t at, const std::vector<float>& data, std::uint8_t code, unsigned channel) {
        pcie::tlp t;
        t.type = pcie::tlp_type::mem_write;
        t.requester = 9;
        t.address = TRN3_FABRIC_ADDR(1, at);
        t.length = static_cast<std::uint32_t>(data.size() * 4);
        t.data.resize(t.length);
        std::memcpy(t.data.data(), data.data(), t.length);
        t.reduce = code;
        t.channel = static_cast<std::uint8_t>(channel);
        nl3.b().send(std::move(t), sc_core::sc_time_stamp());
        sc_core::sc_start(sc_time(10, SC_US));
    }
};
}  // namespace

TEST_CASE(
    "a write to this chip's own fabric address lands in its HBM and reads back, an access without a route is refused") {
    chip_rig r;
    r.boot();
    r.wr(TRN3_CHIP_FABRIC_ID, 5 | TRN3_FABRIC_ENABLE);
    std::uint64_t v = 0x0A0B0C0D0E0F1011ull;
    const std::uint64_t at = TRN3_DEV_HBM_BASE(1) + 0x4000;
    CHECK(r.noc.access(tlm::TLM_WRITE_COMMAND, TRN3_FABRIC_ADDR(5, at), &v, 8) == tlm::TLM_OK_RESPONSE);
    CHECK(std::memcmp(r.chip.device_memory(at, 8), &v, 8) == 0);
    std::uint64_t back = 0;
    CHECK(r.noc.access(tlm::TLM_READ_COMMAND, TRN3_FABRIC_ADDR(5, at), &back, 8) == tlm::TLM_OK_RESPONSE);
    CHECK(back == v);
    CHECK(r.noc.access(tlm::TLM_WRITE_COMMAND, TRN3_FABRIC_ADDR(6, at), &v, 8) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK(r.noc.access(tlm::TLM_READ_COMMAND, TRN3_FABRIC_ADDR(6, at), &v, 8) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    r.wr(TRN3_CHIP_ROUTE(6), TRN3_ROUTE_PORT(2));  // a port with no link
    CHECK(r.noc.access(tlm::TLM_WRITE_COMMAND, TRN3_FABRIC_ADDR(6, at), &v, 8) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
}

TEST_CASE(
    "a write to another chip's fabric address leaves on the routed NeuronLink port as write TLPs of fabric_mps bytes") {
    port3_rig p(false);
    auto& r = p.r;
    auto& out = p.out;
    const auto data = test::pattern(1000, 3);
    const std::uint64_t at = TRN3_FABRIC_ADDR(9, TRN3_DEV_HBM_BASE(2) + 0x80);  // not 256-byte aligned
    CHECK(r.noc.access(tlm::TLM_WRITE_COMMAND, at, const_cast<std::uint8_t*>(data.data()), 1000) ==
          tlm::TLM_OK_RESPONSE);
    sc_core::sc_start(sc_time(100, SC_US));  // the link trains, the TLPs cross it
    // 128 bytes to the 256-byte boundary, three whole 256-byte TLPs as one aggregate, the 104 left.
    REQUIRE(out.size() == 3);
    CHECK((out[0].address == at && out[0].length == 128 && out[0].count == 1));
    CHECK((out[1].address == at + 128 && out[1].length == 256 && out[1].count == 3));
    CHECK((out[2].address == at + 896 && out[2].length == 104 && out[2].count == 1));
    std::vector<std::uint8_t> joined;
    for (const auto& t : out) {
        CHECK(t.type == pcie::tlp_type::mem_write);
        CHECK(t.requester == 1);  // this chip's fabric id
        joined.insert(joined.end(), t.data.begin(), t.data.end());
    }
    CHECK(joined == data);
}

TEST_CASE("a read of another chip's memory leaves as read requests and takes their completions back, and "
          "without completions it fails after the completion timeout") {
    delivery_queue queue("queue");
    pcie::link nl3("nl3", queue, 1, 2, pcie::link_config{pcie::generation::gen6, 8});
    const std::uint64_t at = TRN3_FABRIC_ADDR(9, TRN3_DEV_HBM_BASE(2) + 0x80);  // not 512-byte aligned
    const auto far = test::pattern(1000, 5);  // chip 9's memory at `at`
    std::vector<pcie::tlp> requests;
    bool answer = true;
    nl3.b().on_receive([&](pcie::tlp& t) {  // chip 9, one hop away
        requests.push_back(t);
        if (!answer) return;
        const auto from = far.begin() + static_cast<std::ptrdiff_t>(t.address - at);
        const std::vector<std::uint8_t> data(from, from + static_cast<std::ptrdiff_t>(t.total_bytes()));
        for (pcie::tlp& c : pcie::data_completions(t, data, 256, 9))
            nl3.b().forward(std::move(c), sc_time(10, sc_core::SC_NS));
    });
    chip_rig r([&](chip::trn3_chip& c) { c.attach_neuronlink(3, nl3); });
    r.wr(TRN3_CHIP_ROUTE(9), TRN3_ROUTE_PORT(3));
    r.wr(TRN3_CHIP_FABRIC_ID, 1 | TRN3_FABRIC_ENABLE);
    std::vector<std::uint8_t> got(1000), lost(64);
    tlm::tlm_response_status answered = tlm::TLM_INCOMPLETE_RESPONSE, unanswered = tlm::TLM_INCOMPLETE_RESPONSE;
    sc_time unanswered_after;
    sc_core::sc_spawn([&] {
        answered = r.noc.access(tlm::TLM_READ_COMMAND, at, got.data(), 1000);  // a thread: reads wait
        answer = false;
        const sc_time t0 = sc_core::sc_time_stamp();
        unanswered = r.noc.access(tlm::TLM_READ_COMMAND, at, lost.data(), 64);
        unanswered_after = sc_core::sc_time_stamp() - t0;
    });
    sc_core::sc_start(sc_time(300, SC_US));
    CHECK(answered == tlm::TLM_OK_RESPONSE);
    CHECK(got == far);
    // Requests of 512 bytes that cross no 512-byte boundary: 384, 512, 104; then the unanswered 64.
    REQUIRE(requests.size() == 4);
    CHECK((requests[0].address == at && requests[0].length == 384));
    CHECK((requests[1].address == at + 384 && requests[1].length == 512));
    CHECK((requests[2].address == at + 896 && requests[2].length == 104));
    for (const auto& t : requests) {
        CHECK(t.type == pcie::tlp_type::mem_read);
        CHECK(t.requester == 1);  // completions come back to this chip's fabric id
    }
    CHECK(unanswered == tlm::TLM_GENERIC_ERROR_RESPONSE);
    CHECK(unanswered_after >= sc_time(50, SC_US));  // chip0.fabric_read_timeout
    CHECK(unanswered_after < sc_time(60, SC_US));
}

TEST_CASE(
    "a write TLP arriving on a NeuronLink port lands in HBM when it is for this chip, and is forwarded on its route when not") {
    delivery_queue queue("queue");
    pcie::link nl3("nl3", queue, 1, 2, pcie::link_config{pcie::generation::gen6, 8});
    pcie::link nl5("nl5", queue, 3, 4, pcie::link_config{pcie::generation::gen6, 8});
    std::vector<pcie::tlp> forwarded;
    nl5.b().on_receive([&](pcie::tlp& t) { forwarded.push_back(t); });
    chip_rig r([&](chip::trn3_chip& c) {
        c.attach_neuronlink(3, nl3);
        c.attach_neuronlink(5, nl5);
    });
    r.boot();
    r.wr(TRN3_CHIP_ROUTE(8), TRN3_ROUTE_PORT(5));
    r.wr(TRN3_CHIP_FABRIC_ID, 4 | TRN3_FABRIC_ENABLE);
    sc_core::sc_start(sc_time(50, SC_US));  // both links up
    auto write_tlp = [](std::uint64_t address, std::uint8_t fill) {
        pcie::tlp t;
        t.type = pcie::tlp_type::mem_write;
        t.address = address;
        t.length = 64;
        t.data.assign(64, fill);
        return t;
    };
    const std::uint64_t at = TRN3_DEV_HBM_BASE(3) + 0x200;
    nl3.b().send(write_tlp(TRN3_FABRIC_ADDR(4, at), 0x44), sc_core::sc_time_stamp());
    nl3.b().send(write_tlp(TRN3_FABRIC_ADDR(8, at), 0x88), sc_core::sc_time_stamp());
    sc_core::sc_start(sc_time(10, SC_US));
    CHECK(r.chip.device_memory(at, 64)[63] == 0x44);
    std::uint64_t landed = 0;
    r.bar0.access(tlm::TLM_READ_COMMAND, TRN3_CHIP_FABRIC_RX_BYTES, &landed, 8);
    CHECK(landed == 64);
    REQUIRE(forwarded.size() == 1);
    CHECK(forwarded[0].address == TRN3_FABRIC_ADDR(8, at));
    CHECK(forwarded[0].data == std::vector<std::uint8_t>(64, 0x88));
}

TEST_CASE("a route with two ports: each flow (source, channel) is forwarded on the port TRN3_ROUTE_PICK names") {
    delivery_queue queue("queue");
    const pcie::link_config cfg{pcie::generation::gen6, 8};
    pcie::link nl3("nl3", queue, 1, 2, cfg), nl5("nl5", queue, 3, 4, cfg), nl7("nl7", queue, 5, 6, cfg);
    std::vector<unsigned> left_on;  // by TLP: the port it left on
    std::vector<pcie::tlp> forwarded;
    nl5.b().on_receive([&](pcie::tlp& t) {
        left_on.push_back(5);
        forwarded.push_back(t);
    });
    nl7.b().on_receive([&](pcie::tlp& t) {
        left_on.push_back(7);
        forwarded.push_back(t);
    });
    chip_rig r([&](chip::trn3_chip& c) {
        c.attach_neuronlink(3, nl3);
        c.attach_neuronlink(5, nl5);
        c.attach_neuronlink(7, nl7);
    });
    r.boot();
    r.wr(TRN3_CHIP_ROUTE(8), TRN3_ROUTE_PORT(5) | TRN3_ROUTE_PORT(7));
    r.wr(TRN3_CHIP_FABRIC_ID, 4 | TRN3_FABRIC_ENABLE);
    sc_core::sc_start(sc_time(50, SC_US));  // the links up
    for (unsigned k = 0; k < 8; ++k) {
        pcie::tlp t;
        t.type = pcie::tlp_type::mem_write;
        t.address = TRN3_FABRIC_ADDR(8, TRN3_DEV_HBM_BASE(0) + 64 * k);
        t.length = 64;
        t.data.assign(64, std::uint8_t(k));
        t.requester = 2;
        t.channel = std::uint8_t(k % 4);
        nl3.b().send(std::move(t), sc_core::sc_time_stamp());
    }
    sc_core::sc_start(sc_time(10, SC_US));
    REQUIRE(forwarded.size() == 8);
    std::vector<std::uint8_t> order[4];  // per channel, in the order they left
    for (std::size_t i = 0; i < forwarded.size(); ++i) {
        const unsigned c = forwarded[i].channel;
        CHECK(left_on[i] == ((2 + 8 + c) % 2 == 0 ? 5u : 7u));  // pick 0: the lower port
        order[c].push_back(forwarded[i].data[0]);
    }
    for (unsigned c = 0; c < 4; ++c) CHECK(order[c] == std::vector<std::uint8_t>{std::uint8_t(c), std::uint8_t(c + 4)});
}

TEST_CASE("FABRIC_ID and the route table read back what is written, and every route resets to no route") {
    chip_rig r;
    for (unsigned d = 0; d < TRN3_FABRIC_CHIPS; ++d) CHECK(r.rd(TRN3_CHIP_ROUTE(d)) == TRN3_ROUTE_NONE);
    CHECK(r.rd(TRN3_CHIP_FABRIC_ID) == 0);  // off the fabric until the host enables it
    CHECK(!r.chip.control->fabric_enabled());
    r.wr(TRN3_CHIP_FABRIC_ID, 0x7F00 | 17 | TRN3_FABRIC_ENABLE);  // bits outside the fields are dropped
    r.wr(TRN3_CHIP_ROUTE(200), 3);
    CHECK(r.rd(TRN3_CHIP_FABRIC_ID) == (17 | TRN3_FABRIC_ENABLE));
    CHECK(r.chip.control->fabric_id() == 17);
    CHECK(r.chip.control->fabric_enabled());
    CHECK(r.chip.control->route(200) == 3);
    CHECK(r.chip.control->route(199) == TRN3_ROUTE_NONE);
    CHECK(r.chip.control->route(TRN3_FABRIC_CHIPS) == TRN3_ROUTE_NONE);  // beyond the table
}

TEST_CASE(
    "a chip off the fabric takes no fabric write: it drops arrivals (counted, ERR_STATUS.FABRIC) and refuses its own") {
    delivery_queue queue("queue");
    pcie::link nl3("nl3", queue, 1, 2, pcie::link_config{pcie::generation::gen6, 8});
    chip_rig r([&](chip::trn3_chip& c) { c.attach_neuronlink(3, nl3); });
    r.boot();
    sc_core::sc_start(sc_time(50, SC_US));  // the link is up; FABRIC_ID still 0: off the fabric
    const std::uint64_t at = TRN3_DEV_HBM_BASE(0) + 0x100;
    pcie::tlp t;
    t.type = pcie::tlp_type::mem_write;
    t.address = TRN3_FABRIC_ADDR(0, at);  // chip 0: the id an unprogrammed chip would have had
    t.length = 64;
    t.data.assign(64, 0x5A);
    nl3.b().send(std::move(t), sc_core::sc_time_stamp());
    sc_core::sc_start(sc_time(10, SC_US));
    CHECK(r.chip.device_memory(at, 64)[0] == 0);  // not taken for its own
    CHECK(r.rd(TRN3_CHIP_FABRIC_DROPPED) == 1);
    CHECK((r.rd(TRN3_CHIP_ERR_STATUS) & TRN3_ERR_FABRIC) != 0);
    std::uint64_t v = 1;
    CHECK(r.noc.access(tlm::TLM_WRITE_COMMAND, TRN3_FABRIC_ADDR(0, at), &v, 8) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
}

TEST_CASE("a reducing write leaves with its reduction, channel and traffic class in each TLP, and one arriving for "
          "this chip reduces into HBM as it lands, counted on its channel") {
    port3_rig p(true);
    auto& r = p.r;
    auto& out = p.out;
    sc_core::sc_start(sc_time(50, SC_US));  // the link is up
    const numerics::reduction sum_fp32{numerics::reduce_op::sum, numerics::reduce_type::fp32};

    // Leaving: the DMA engine's reducing write, as the noc passes it on.
    dma::fabric_write ext(3, &sum_fp32, 5);  // from queue 3, reducing, traffic class 5
    p.send_tagged(128, ext);  // 512 bytes: two 256-byte TLPs, as one aggregate
    REQUIRE(out.size() == 1);
    CHECK(out[0].count == 2);
    CHECK(out[0].reduce == dma::tlp_code(sum_fp32));
    CHECK(out[0].channel == 3);
    CHECK(out[0].traffic_class == 5);

    // Arriving for this chip (id 1): the memory's values plus the data's.
    const std::uint64_t at = TRN3_DEV_HBM_BASE(2) + 0x100;
    const std::vector<float> held = {1.0f, 2.0f, -3.0f, 8.0f}, data = {0.5f, 0.25f, 3.0f, -0.125f};
    std::memcpy(r.chip.device_memory(at, 16), held.data(), 16);
    p.arrive_reducing(at, data, dma::tlp_code(sum_fp32), 5);
    std::uint64_t on_channel = 0, on_other = 0;
    r.bar0.access(tlm::TLM_READ_COMMAND, TRN3_CHIP_FABRIC_RX_CHANNEL(5), &on_channel, 8);
    r.bar0.access(tlm::TLM_READ_COMMAND, TRN3_CHIP_FABRIC_RX_CHANNEL(0), &on_other, 8);
    CHECK(on_channel == 16);  // counted on the channel it came on
    CHECK(on_other == 0);
    std::vector<float> now(4);
    std::memcpy(now.data(), r.chip.device_memory(at, 16), 16);
    CHECK(now == std::vector<float>{1.5f, 2.25f, 0.0f, 7.875f});
}

TEST_CASE("a reducing write with an operand reduces the bytes FABRIC_OPERAND(channel) away into where it lands, "
          "and one whose operand is not memory is dropped") {
    port3_rig p(true);
    auto& r = p.r;
    auto& out = p.out;
    sc_core::sc_start(sc_time(50, SC_US));  // the link is up
    const numerics::reduction sum_fp32{numerics::reduce_op::sum, numerics::reduce_type::fp32};

    // Leaving: the operand bit rides in the reduction's byte.
    dma::fabric_write ext(3, &sum_fp32, 0, true);
    p.send_tagged(64, ext);
    REQUIRE(out.size() == 1);
    CHECK(out[0].reduce == dma::tlp_code(sum_fp32, true));
    CHECK(dma::operand_of_tlp_code(out[0].reduce));
    CHECK(dma::reduction_of_tlp_code(out[0].reduce).op == numerics::reduce_op::sum);

    // Arriving: the input 1 GiB below where the data lands (a wrapped offset), the output left as it was.
    const std::uint64_t output = TRN3_DEV_HBM_BASE(2) + (1ull << 30), input = TRN3_DEV_HBM_BASE(2);
    const std::uint64_t offset = input - output;  // mod 2^64
    r.bar0.access(tlm::TLM_WRITE_COMMAND, TRN3_CHIP_FABRIC_OPERAND(6), const_cast<std::uint64_t*>(&offset), 8);
    std::uint64_t back = 0;
    r.bar0.access(tlm::TLM_READ_COMMAND, TRN3_CHIP_FABRIC_OPERAND(6), &back, 8);
    CHECK(back == offset);
    const std::vector<float> in = {1.0f, 2.0f, -3.0f, 8.0f}, data = {0.5f, 0.25f, 3.0f, -0.125f},
                             stale = {100.0f, 100.0f, 100.0f, 100.0f};
    std::memcpy(r.chip.device_memory(input, 16), in.data(), 16);
    std::memcpy(r.chip.device_memory(output, 16), stale.data(), 16);
    auto landing = [&](std::uint64_t at, unsigned channel) {
        p.arrive_reducing(at, data, dma::tlp_code(sum_fp32, true), channel);
    };
    landing(output, 6);
    std::vector<float> now(4);
    std::memcpy(now.data(), r.chip.device_memory(output, 16), 16);
    CHECK(now == std::vector<float>{1.5f, 2.25f, 0.0f, 7.875f});  // input + data, the stale values gone
    std::memcpy(now.data(), r.chip.device_memory(input, 16), 16);
    CHECK(now == in);  // the input as it was
    CHECK(r.rd(TRN3_CHIP_FABRIC_DROPPED) == 0);

    // Channel 7's offset is 0: the landing reduces into itself, as a plain reducing write.
    landing(output, 7);
    std::memcpy(now.data(), r.chip.device_memory(output, 16), 16);
    CHECK(now == std::vector<float>{2.0f, 2.5f, 3.0f, 7.75f});

    // An operand where no memory answers (past stack 2's 36 GiB), or outside
    // the chip's device address space (in the fabric window): dropped,
    // counted, reported; nothing written, nothing landed.
    const std::uint64_t unmapped = TRN3_DEV_HBM_BASE(2) + (40ull << 30) - output,
                        fabric = TRN3_FABRIC_ADDR(0, TRN3_DEV_HBM_BASE(2)) - output;
    r.bar0.access(tlm::TLM_WRITE_COMMAND, TRN3_CHIP_FABRIC_OPERAND(8), const_cast<std::uint64_t*>(&unmapped), 8);
    r.bar0.access(tlm::TLM_WRITE_COMMAND, TRN3_CHIP_FABRIC_OPERAND(9), const_cast<std::uint64_t*>(&fabric), 8);
    for (unsigned channel : {8u, 9u}) {
        INFO("channel " << channel);
        landing(output, channel);
        std::memcpy(now.data(), r.chip.device_memory(output, 16), 16);
        CHECK(now == std::vector<float>{2.0f, 2.5f, 3.0f, 7.75f});
        CHECK(r.rd(TRN3_CHIP_FABRIC_DROPPED) == channel - 7);  // one each
        CHECK((r.rd(TRN3_CHIP_ERR_STATUS) & TRN3_ERR_FABRIC) != 0);
        std::uint64_t landed = 0;
        r.bar0.access(tlm::TLM_READ_COMMAND, TRN3_CHIP_FABRIC_RX_CHANNEL(channel), &landed, 8);
        CHECK(landed == 0);
    }
}

TEST_CASE("a timing-only write leaves as TLPs without data, and one arriving for this chip takes the memory's time, "
          "moves nothing and is counted on its channel") {
    port3_rig p(true);
    auto& r = p.r;
    auto& out = p.out;
    auto& nl3 = p.nl3;
    sc_core::sc_start(sc_time(50, SC_US));  // the link is up

    std::vector<std::uint8_t> buffer(4096, 0x5A);
    tlm::tlm_generic_payload tx;
    set_access(tx, tlm::TLM_WRITE_COMMAND, TRN3_FABRIC_ADDR(9, TRN3_DEV_HBM_BASE(1)), buffer.data(), 4096);
    timing_only no_data;
    tx.set_extension(&no_data);
    sc_time delay;
    r.noc.out->b_transport(tx, delay);
    tx.clear_extension(&no_data);
    CHECK(tx.get_response_status() == tlm::TLM_OK_RESPONSE);
    sc_core::sc_start(sc_time(10, SC_US));
    REQUIRE(out.size() == 1);
    CHECK(out[0].no_data);
    CHECK(out[0].data.empty());
    CHECK(out[0].total_bytes() == 4096);  // on the wire for as long as the data would be

    const std::uint64_t at = TRN3_DEV_HBM_BASE(2) + 0x1000;
    const auto before = test::pattern(512, 9);
    std::memcpy(r.chip.device_memory(at, 512), before.data(), 512);
    pcie::tlp t;
    t.type = pcie::tlp_type::mem_write;
    t.requester = 9;
    t.address = TRN3_FABRIC_ADDR(1, at);
    t.length = 256;
    t.count = 2;
    t.no_data = true;
    t.reduce = dma::tlp_code({numerics::reduce_op::sum, numerics::reduce_type::fp32});
    t.channel = 4;
    nl3.b().send(std::move(t), sc_core::sc_time_stamp());
    sc_core::sc_start(sc_time(10, SC_US));
    std::uint64_t landed = 0;
    r.bar0.access(tlm::TLM_READ_COMMAND, TRN3_CHIP_FABRIC_RX_CHANNEL(4), &landed, 8);
    CHECK(landed == 512);
    CHECK(std::memcmp(r.chip.device_memory(at, 512), before.data(), 512) == 0);  // neither written nor reduced
}
