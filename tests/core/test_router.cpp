#include <catch2/catch.hpp>

#include <cstring>

#include "../common/test_initiator.h"
#include "trn3/core/router.h"
#include "trn3/core/sparse_memory.h"

using namespace trn3;

namespace {
using test::initiator;

struct rig {
    initiator cpu{"cpu"};
    router bus{"bus"};
    sparse_memory low{"low", byte_count{0x1000}};
    sparse_memory high{"high", byte_count{0x1000}};
    rig() {
        cpu.out.bind(bus.in);
        bus.map(low.in, 0x10000, 0x1000, "low");
        bus.map(high.in, 0x20000, 0x800, "high");  // window smaller than the memory
        sc_core::sc_start(sc_core::SC_ZERO_TIME);
    }
};
}  // namespace

TEST_CASE("an overlapping region is refused and the error names both regions") {
    router bus("bus");
    sparse_memory a("a", byte_count{0x2000});
    sparse_memory b("b", byte_count{0x2000});
    bus.map(a.in, 0x0, 0x2000, "dram");
    CHECK_THROWS_WITH(bus.map(b.in, 0x1000, 0x2000, "sram"),
                      "bus: region 'sram' [0x1000, 0x2fff] overlaps region 'dram' [0x0, 0x1fff]");
}

TEST_CASE("each target sees addresses relative to its base") {
    rig s;
    std::uint32_t v = 0xabcd1234;
    tlm::tlm_generic_payload tx;
    set_access(tx, tlm::TLM_WRITE_COMMAND, 0x20010, &v, 4);
    sc_core::sc_time d;
    s.cpu.out->b_transport(tx, d);
    REQUIRE(tx.is_response_ok());
    CHECK(tx.get_address() == 0x20010);  // the router restores the address
    std::uint32_t seen;
    std::memcpy(&seen, s.high.data() + 0x10, 4);
    CHECK(seen == 0xabcd1234);
    REQUIRE(s.cpu.access(tlm::TLM_WRITE_COMMAND, 0x10000, &v, 4) == tlm::TLM_OK_RESPONSE);
    std::memcpy(&seen, s.low.data(), 4);
    CHECK(seen == 0xabcd1234);
}

TEST_CASE("an unmapped address, or an access running past its region, gets an address error") {
    rig s;
    std::uint64_t v = 0;
    CHECK(s.cpu.access(tlm::TLM_READ_COMMAND, 0x0, &v, 8) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK(s.cpu.access(tlm::TLM_READ_COMMAND, 0x18000, &v, 8) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK(s.cpu.access(tlm::TLM_READ_COMMAND, 0x107fc, &v, 8) == tlm::TLM_OK_RESPONSE);
    CHECK(s.cpu.access(tlm::TLM_READ_COMMAND, 0x10ffc, &v, 8) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK(s.cpu.access(tlm::TLM_READ_COMMAND, 0x207fc, &v, 8) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK(stats_registry::instance().to_json()["bus.address_errors"] == 4);
}

TEST_CASE("a DMI grant is translated into the bus map and clipped to the region") {
    rig s;
    tlm::tlm_generic_payload tx;
    tx.set_read();
    tx.set_address(0x20100);
    tlm::tlm_dmi dmi;
    REQUIRE(s.cpu.out->get_direct_mem_ptr(tx, dmi));
    CHECK(dmi.get_start_address() == 0x20000);
    CHECK(dmi.get_end_address() == 0x207ff);
    CHECK(dmi.get_dmi_ptr() == s.high.data());
}

TEST_CASE("an invalidation from a target reaches initiators in bus addresses") {
    rig s;
    s.high.invalidate_dmi();
    REQUIRE(s.cpu.invalidations == 1);
    CHECK(s.cpu.last_invalidation.first == 0x20000);
    CHECK(s.cpu.last_invalidation.second == 0x207ff);
}

TEST_CASE("debug transport is routed and clipped to its region") {
    rig s;
    std::memcpy(s.low.data() + 0xff8, "ABCDEFGH", 8);
    char buf[16] = {};
    tlm::tlm_generic_payload tx;
    tx.set_read();
    tx.set_address(0x10ff8);
    tx.set_data_ptr(reinterpret_cast<unsigned char*>(buf));
    tx.set_data_length(16);
    CHECK(s.cpu.out->transport_dbg(tx) == 8);
    CHECK(std::memcmp(buf, "ABCDEFGH", 8) == 0);
}

TEST_CASE("the memory map prints every region in address order") {
    rig s;
    CHECK(s.bus.memory_map_text() == "bus memory map:\n"
                                     "  0x000000010000 - 0x000000010fff        4KiB  low\n"
                                     "  0x000000020000 - 0x0000000207ff        2KiB  high\n");
}
