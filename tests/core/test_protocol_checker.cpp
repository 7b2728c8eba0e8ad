#include <catch2/catch.hpp>

#include <cstring>

#include <tlm_utils/simple_target_socket.h>

#include "../common/test_initiator.h"
#include "trn3/core/dmi_cache.h"
#include "trn3/core/protocol_checker.h"
#include "trn3/core/sparse_memory.h"
#include "trn3/core/traffic_generator.h"

using namespace trn3;

namespace {
enum class flaw { none, no_response, read_ignores_enables, write_ignores_enables, dmi_wrong_range, debug_side_effect };

// A 256-byte memory that breaks one rule on purpose.
struct broken_target : sc_core::sc_module {
    tlm_utils::simple_target_socket<broken_target> in{"in"};
    unsigned char mem[256] = {};
    flaw f;
    broken_target(const sc_core::sc_module_name& n, flaw which) : sc_core::sc_module(n), f(which) {
        in.register_b_transport(this, &broken_target::b_transport);
        in.register_get_direct_mem_ptr(this, &broken_target::get_dmi);
        in.register_transport_dbg(this, &broken_target::dbg);
    }
    void b_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time&) {
        if (f == flaw::no_response) return;
        unsigned char* p = mem + tx.get_address();
        const unsigned char* be = tx.get_byte_enable_ptr();
        for (unsigned i = 0; i < tx.get_data_length(); ++i) {
            bool on = !be || be[i % tx.get_byte_enable_length()] == TLM_BYTE_ENABLED;
            if (tx.is_read() && (on || f == flaw::read_ignores_enables)) tx.get_data_ptr()[i] = p[i];
            if (tx.is_write() && (on || f == flaw::write_ignores_enables)) p[i] = tx.get_data_ptr()[i];
        }
        tx.set_response_status(tlm::TLM_OK_RESPONSE);
    }
    bool get_dmi(tlm::tlm_generic_payload&, tlm::tlm_dmi& d) {
        d.set_dmi_ptr(mem);
        d.set_start_address(f == flaw::dmi_wrong_range ? 128 : 0);
        d.set_end_address(255);
        d.allow_read_write();
        return true;
    }
    unsigned dbg(tlm::tlm_generic_payload& tx) {
        if (tx.is_read()) std::memcpy(tx.get_data_ptr(), mem + tx.get_address(), tx.get_data_length());
        if (f == flaw::debug_side_effect) mem[tx.get_address()]++;  // a read-to-clear style side effect
        return tx.get_data_length();
    }
};

// A test initiator that can also send byte enables.
struct initiator : test::initiator {
    using test::initiator::initiator;
    void access(tlm::tlm_command cmd, std::uint64_t addr, unsigned char* data, unsigned len,
                unsigned char* be = nullptr, unsigned be_len = 0) {
        tlm::tlm_generic_payload tx;
        set_access(tx, cmd, addr, data, len);
        tx.set_byte_enable_ptr(be);
        tx.set_byte_enable_length(be_len);
        sc_core::sc_time d;
        out->b_transport(tx, d);
    }
};

struct bench {
    initiator cpu{"cpu"};
    broken_target target;
    protocol_checker* checker;
    explicit bench(flaw f) : target("target", f) {
        set_protocol_checks(true);
        checker = connect(cpu.out, target.in);
        cpu.dmi.set_observer(checker);
        sc_core::sc_start(sc_core::SC_ZERO_TIME);
    }
};

unsigned char half_enabled[4] = {TLM_BYTE_ENABLED, TLM_BYTE_DISABLED, TLM_BYTE_ENABLED, TLM_BYTE_DISABLED};
}  // namespace

TEST_CASE("connect inserts no checker when checks are off") {
    set_protocol_checks(false);
    initiator cpu("cpu");
    broken_target t("t", flaw::none);
    CHECK(connect(cpu.out, t.in) == nullptr);
}

TEST_CASE("a well-behaved target passes every check") {
    bench b(flaw::none);
    unsigned char data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    b.cpu.access(tlm::TLM_WRITE_COMMAND, 0, data, 8);
    b.cpu.access(tlm::TLM_WRITE_COMMAND, 16, data, 8, half_enabled, 4);
    b.cpu.access(tlm::TLM_READ_COMMAND, 16, data, 8, half_enabled, 4);
    tlm::tlm_generic_payload tx;
    tx.set_read();
    tx.set_address(0);
    tlm::tlm_dmi d;
    REQUIRE(b.cpu.out->get_direct_mem_ptr(tx, d));
    b.cpu.dmi.insert(d);
    CHECK(b.cpu.dmi.lookup(0, 8, false) != nullptr);
    CHECK(b.checker->violations() == 0);
}

TEST_CASE("the checker catches a target that sets no response status") {
    bench b(flaw::no_response);
    unsigned char data[4] = {};
    b.cpu.access(tlm::TLM_READ_COMMAND, 0, data, 4);
    REQUIRE(b.checker->violations() == 1);
    CHECK_THAT(b.checker->reports()[0], Catch::Contains("without a response status"));
}

TEST_CASE("the checker catches a read that overwrites byte-disabled bytes") {
    bench b(flaw::read_ignores_enables);
    std::memset(b.target.mem, 0xaa, sizeof b.target.mem);
    unsigned char data[4] = {};
    b.cpu.access(tlm::TLM_READ_COMMAND, 0, data, 4, half_enabled, 4);
    REQUIRE(b.checker->violations() == 1);
    CHECK_THAT(b.checker->reports()[0], Catch::Contains("read wrote byte 1 whose byte enable is off"));
}

TEST_CASE("the checker catches a write that changes byte-disabled bytes") {
    bench b(flaw::write_ignores_enables);
    unsigned char data[4] = {9, 9, 9, 9};
    b.cpu.access(tlm::TLM_WRITE_COMMAND, 0, data, 4, half_enabled, 4);
    REQUIRE(b.checker->violations() == 1);
    CHECK_THAT(b.checker->reports()[0], Catch::Contains("write changed byte 1 whose byte enable is off"));
}

TEST_CASE("the checker catches a DMI grant that does not cover the requested address") {
    bench b(flaw::dmi_wrong_range);
    tlm::tlm_generic_payload tx;
    tx.set_read();
    tx.set_address(16);
    tlm::tlm_dmi d;
    b.cpu.out->get_direct_mem_ptr(tx, d);
    REQUIRE(b.checker->violations() == 1);
    CHECK_THAT(b.checker->reports()[0], Catch::Contains("does not cover the requested address"));
}

TEST_CASE("the checker catches a debug read with side effects") {
    bench b(flaw::debug_side_effect);
    unsigned char buf[4];
    tlm::tlm_generic_payload tx;
    tx.set_read();
    tx.set_address(4);
    tx.set_data_ptr(buf);
    tx.set_data_length(4);
    b.cpu.out->transport_dbg(tx);
    REQUIRE(b.checker->violations() == 1);
    CHECK_THAT(b.checker->reports()[0], Catch::Contains("has side effects"));
}

TEST_CASE("the checker catches an initiator that sends no data pointer or an early response status") {
    bench b(flaw::none);
    tlm::tlm_generic_payload tx;
    tx.set_read();
    tx.set_response_status(tlm::TLM_OK_RESPONSE);
    sc_core::sc_time d;
    b.cpu.out->b_transport(tx, d);
    CHECK(b.checker->violations() == 2);
}

TEST_CASE("the checker catches a DMI access after the grant was invalidated") {
    sparse_memory mem("mem", byte_count{4096});
    initiator cpu("cpu");
    set_protocol_checks(true);
    protocol_checker* checker = connect(cpu.out, mem.in);
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    tlm::tlm_generic_payload tx;
    tx.set_write();
    tx.set_address(0);
    tlm::tlm_dmi d;
    REQUIRE(cpu.out->get_direct_mem_ptr(tx, d));
    unsigned char* stale = d.get_dmi_ptr();
    checker->note_dmi_access(0, 8, true);
    CHECK(checker->violations() == 0);
    mem.invalidate_dmi();
    // A correct initiator (dmi_cache) stops using the pointer...
    cpu.dmi.insert(d);
    cpu.dmi.invalidate(0, ~0ull);
    CHECK(cpu.dmi.lookup(0, 8, true) == nullptr);
    // ...a broken one keeps writing through it, and is reported.
    stale[0] = 1;
    checker->note_dmi_access(0, 1, true);
    REQUIRE(checker->violations() == 1);
    CHECK_THAT(checker->reports()[0], Catch::Contains("after its grant was invalidated"));
}

TEST_CASE("a timing_only payload is held to the data rules, and its target must leave its data alone") {
    // broken_target copies data whatever the payload says: it moves a timing_only payload's data.
    bench b(flaw::none);
    unsigned char scratch[8] = {9, 9, 9, 9, 9, 9, 9, 9};
    tlm::tlm_generic_payload tx;
    tx.set_extension(new timing_only);  // the payload owns it
    set_access(tx, tlm::TLM_READ_COMMAND, 0, scratch, 8);
    sc_core::sc_time d;
    b.cpu.out->b_transport(tx, d);
    REQUIRE(b.checker->violations() == 1);
    CHECK_THAT(b.checker->reports()[0], Catch::Contains("moved data of a timing_only payload"));
}

TEST_CASE("a timing_only payload without a data pointer breaks the base protocol like any other (14.11 e)") {
    bench b(flaw::no_response);  // a target that touches nothing
    tlm::tlm_generic_payload tx;
    tx.set_extension(new timing_only);
    set_access(tx, tlm::TLM_READ_COMMAND, 0, nullptr, 8);
    sc_core::sc_time d;
    b.cpu.out->b_transport(tx, d);
    REQUIRE(b.checker->violations() >= 1);
    CHECK_THAT(b.checker->reports()[0], Catch::Contains("no data pointer"));
}

TEST_CASE("the traffic generator's timing-only charges are legal TLM: the HBM platform runs clean under the checker") {
    // (Through the CLI in test_cli; here the generator against a sparse memory with DMI timing charged.)
    set_protocol_checks(true);
    sparse_memory mem("mem", byte_count{1 << 20});
    traffic_generator::defaults d;
    d.window = byte_count{1 << 16};
    d.count = 64;
    d.dmi_timing = true;
    traffic_generator tg("tg", d);
    protocol_checker* checker = connect(tg.out, mem.in);
    tg.observe_dmi(checker);
    sc_core::sc_start();
    CHECK(tg.finished());
    CHECK(tg.mismatches() == 0);
    CHECK(tg.errors() == 0);
    CHECK(checker->violations() == 0);
}
