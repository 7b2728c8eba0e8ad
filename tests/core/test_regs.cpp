#include <catch2/catch.hpp>

#include <cstring>

#include "../common/test_initiator.h"
#include "trn3/core/error.h"
#include "trn3/core/payload.h"
#include "trn3/core/reg.h"
#include "trn3/core/reg_block.h"

using namespace trn3;

namespace {
struct device {
    reg_bank regs{"dev.regs"};
    reg id{regs, "id", 0x00, 4, 0x1d0f7564, access::ro, "vendor and device id"};
    reg scratch{regs, "scratch", 0x04, 4, 0, access::rw, "scratch"};
    reg irq_status{regs, "irq_status", 0x08, 4, 0, access::w1c, "pending interrupts"};
    reg irq_set{regs, "irq_set", 0x0c, 4, 0, access::w1s, "raise interrupts"};
    reg doorbell{regs, "doorbell", 0x10, 4, 0, access::wo, "doorbell"};
    reg ctrl{regs, "ctrl", 0x18, 8, 0x5, access::rw, "control"};
    int reads_of_status = 0;
    std::uint64_t last_doorbell = 0;
    device() {
        ctrl.field("busy", 0, 1, access::ro).field("ack", 4, 4, access::w1c);
        irq_status.on_read([this](reg&) { ++reads_of_status; });
        doorbell.on_write([this](reg& r, std::uint64_t) { last_doorbell = r.value(); });
    }
};

tlm::tlm_response_status access_bytes(reg_bank& bank, tlm::tlm_command cmd, std::uint64_t addr, void* data,
                                      unsigned len, bool debug = false, unsigned char* be = nullptr,
                                      unsigned be_len = 0) {
    tlm::tlm_generic_payload tx;
    set_access(tx, cmd, addr, data, len);
    tx.set_byte_enable_ptr(be);
    tx.set_byte_enable_length(be_len);
    bank.transport(tx, debug);
    return tx.get_response_status();
}

std::uint32_t read32(reg_bank& bank, std::uint64_t addr, bool debug = false) {
    std::uint32_t v = 0xdeadbeef;
    REQUIRE(access_bytes(bank, tlm::TLM_READ_COMMAND, addr, &v, 4, debug) == tlm::TLM_OK_RESPONSE);
    return v;
}
void write32(reg_bank& bank, std::uint64_t addr, std::uint32_t v) {
    REQUIRE(access_bytes(bank, tlm::TLM_WRITE_COMMAND, addr, &v, 4) == tlm::TLM_OK_RESPONSE);
}
}  // namespace

TEST_CASE("a RO register reads its reset value and ignores writes") {
    device d;
    CHECK(read32(d.regs, 0x00) == 0x1d0f7564);
    write32(d.regs, 0x00, 0);
    CHECK(read32(d.regs, 0x00) == 0x1d0f7564);
}

TEST_CASE("a W1C register clears exactly the bits written as one") {
    device d;
    d.irq_status.set(0b1011);
    write32(d.regs, 0x08, 0b0010);
    CHECK(d.irq_status.value() == 0b1001);
    write32(d.regs, 0x08, 0);
    CHECK(d.irq_status.value() == 0b1001);
}

TEST_CASE("a W1S register sets exactly the bits written as one") {
    device d;
    write32(d.regs, 0x0c, 0b0100);
    write32(d.regs, 0x0c, 0b0001);
    CHECK(d.irq_set.value() == 0b0101);
}

TEST_CASE("a WO register reads as zero and its write handler sees the value") {
    device d;
    write32(d.regs, 0x10, 42);
    CHECK(d.last_doorbell == 42);
    CHECK(read32(d.regs, 0x10) == 0);
}

TEST_CASE("fields override the register policy on their bits") {
    device d;  // ctrl reset 0x5: busy (RO) = 1, bit 2 (RW) = 1
    d.ctrl.set(0xf5);
    std::uint64_t v = 0xf0;  // try to clear busy, clear bit 2, write-one-to-clear all of ack
    REQUIRE(access_bytes(d.regs, tlm::TLM_WRITE_COMMAND, 0x18, &v, 8) == tlm::TLM_OK_RESPONSE);
    CHECK(d.ctrl.value() == 0x01);
    CHECK(d.ctrl.get_field("busy") == 1);
    CHECK(d.ctrl.get_field("ack") == 0);
}

TEST_CASE("a partial write changes only the bytes it covers") {
    device d;
    write32(d.regs, 0x04, 0x11223344);
    std::uint8_t b = 0xaa;
    REQUIRE(access_bytes(d.regs, tlm::TLM_WRITE_COMMAND, 0x06, &b, 1) == tlm::TLM_OK_RESPONSE);
    CHECK(d.scratch.value() == 0x11aa3344);
    std::uint16_t h = 0;
    REQUIRE(access_bytes(d.regs, tlm::TLM_READ_COMMAND, 0x05, &h, 2) == tlm::TLM_OK_RESPONSE);
    CHECK(h == 0xaa33);
}

TEST_CASE("an access spanning several registers reaches each of them") {
    device d;
    d.irq_status.set(0xff);
    std::uint32_t w[2] = {0xcafef00d, 0x0f};  // scratch, then irq_status (W1C)
    REQUIRE(access_bytes(d.regs, tlm::TLM_WRITE_COMMAND, 0x04, w, 8) == tlm::TLM_OK_RESPONSE);
    CHECK(d.scratch.value() == 0xcafef00d);
    CHECK(d.irq_status.value() == 0xf0);
    std::uint8_t r[6];
    REQUIRE(access_bytes(d.regs, tlm::TLM_READ_COMMAND, 0x02, r, 6) == tlm::TLM_OK_RESPONSE);
    const std::uint8_t expect[6] = {0x0f, 0x1d, 0x0d, 0xf0, 0xfe, 0xca};
    CHECK(std::memcmp(r, expect, 6) == 0);
}

TEST_CASE("byte enables keep disabled bytes untouched") {
    device d;
    write32(d.regs, 0x04, 0x11223344);
    std::uint32_t v = 0xaabbccdd;
    unsigned char be[4] = {TLM_BYTE_ENABLED, TLM_BYTE_DISABLED, TLM_BYTE_DISABLED, TLM_BYTE_ENABLED};
    REQUIRE(access_bytes(d.regs, tlm::TLM_WRITE_COMMAND, 0x04, &v, 4, false, be, 4) == tlm::TLM_OK_RESPONSE);
    CHECK(d.scratch.value() == 0xaa2233dd);
}

TEST_CASE("debug accesses run no handlers and bypass policies") {
    device d;
    d.irq_status.set(0x3);
    CHECK(read32(d.regs, 0x08, true) == 0x3);
    CHECK(d.reads_of_status == 0);
    CHECK(read32(d.regs, 0x08) == 0x3);
    CHECK(d.reads_of_status == 1);
    std::uint32_t v = 0x1;
    REQUIRE(access_bytes(d.regs, tlm::TLM_WRITE_COMMAND, 0x08, &v, 4, true) == tlm::TLM_OK_RESPONSE);
    CHECK(d.irq_status.value() == 0x1);  // deposited, not cleared
}

TEST_CASE("an access touching a hole gets an address error and changes nothing") {
    device d;
    std::uint64_t v = ~0ull;
    CHECK(access_bytes(d.regs, tlm::TLM_WRITE_COMMAND, 0x10, &v, 8) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK(d.last_doorbell == 0);
    CHECK(access_bytes(d.regs, tlm::TLM_READ_COMMAND, 0x100, &v, 4) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
}

TEST_CASE("overlapping registers are refused when declared") {
    reg_bank bank{"bad"};
    reg a{bank, "a", 0x0, 4, 0, access::rw, ""};
    CHECK_THROWS_WITH(reg(bank, "b", 0x2, 4, 0, access::rw, ""), "bad: registers a and b overlap");
}

TEST_CASE("reset returns every register to its reset value") {
    device d;
    write32(d.regs, 0x04, 7);
    d.regs.reset();
    CHECK(d.scratch.value() == 0);
    CHECK(d.ctrl.value() == 0x5);
}

namespace {
struct one_reg_block : trn3::reg_block {
    trn3::reg r{regs, "r", 0x0, 4, 0x11223344, trn3::access::rw, "a register"};
    explicit one_reg_block(const sc_core::sc_module_name& n) : reg_block(n, trn3::frequency{1e9}) {}
};
}  // namespace

TEST_CASE("a register block's debug access returns the bytes it transferred: all of them, or none when it fails") {
    one_reg_block b("b");
    test::initiator cpu("cpu");
    cpu.out.bind(b.in);
    std::uint32_t v = 0;
    tlm::tlm_generic_payload tx;
    trn3::set_access(tx, tlm::TLM_READ_COMMAND, 0x0, &v, 4);
    CHECK(cpu.out->transport_dbg(tx) == 4);
    CHECK(v == 0x11223344);
    trn3::set_access(tx, tlm::TLM_READ_COMMAND, 0x100, &v, 4);  // no register there
    CHECK(cpu.out->transport_dbg(tx) == 0);
    CHECK(tx.get_response_status() == tlm::TLM_ADDRESS_ERROR_RESPONSE);
}
