#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>

#include "../common/test_initiator.h"
#include "trn3/core/sparse_memory.h"
#include "trn3/core/sparse_store.h"

using namespace trn3;

namespace {
// The memory under test with an initiator bound to it.
struct rig {
    sparse_memory mem;
    test::initiator cpu{"cpu"};
    rig(const char* name, byte_count size) : mem(name, size) {
        cpu.out.bind(mem.in);
        sc_core::sc_start(sc_core::SC_ZERO_TIME);
    }
};

tlm::tlm_response_status transport(rig& r, tlm::tlm_command cmd, std::uint64_t addr, void* data, unsigned len,
                                   sc_core::sc_time* delay_out = nullptr) {
    sc_core::sc_time delay;
    auto status = r.cpu.access(cmd, addr, data, len, &delay);
    if (delay_out) *delay_out = delay;
    return status;
}
}  // namespace

TEST_CASE("144 GiB is reserved in under 10 ms and stays under 1 MiB resident after one page is touched") {
    const std::uint64_t rss_before = process_resident_bytes();
    auto t0 = std::chrono::steady_clock::now();
    rig m("hbm", byte_count{144ull << 30});
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    // Generous bound: this is a correctness check that reservation is lazy,
    // not a timing benchmark (bench/core_bench measures it).
    CHECK(ms < 10.0 * 10);
    std::uint64_t v = 0x0123456789abcdefull;
    REQUIRE(transport(m, tlm::TLM_WRITE_COMMAND, (100ull << 30) + 8, &v, 8) == tlm::TLM_OK_RESPONSE);
    CHECK(m.mem.resident_pages() == 1);
#ifndef __SANITIZE_ADDRESS__  // AddressSanitizer's shadow memory makes the process RSS meaningless
    CHECK(process_resident_bytes() - rss_before < (1u << 20));
#else
    (void)rss_before;
#endif
}

TEST_CASE("data written is read back, and latency is annotated") {
    rig m("mem", byte_count{1 << 20});
    char in[16] = "hello, trainium";
    char out[16] = {};
    sc_core::sc_time d;
    REQUIRE(transport(m, tlm::TLM_WRITE_COMMAND, 0x1000, in, 16, &d) == tlm::TLM_OK_RESPONSE);
    CHECK(d == m.mem.write_latency.get());
    REQUIRE(transport(m, tlm::TLM_READ_COMMAND, 0x1000, out, 16, &d) == tlm::TLM_OK_RESPONSE);
    CHECK(d == m.mem.read_latency.get());
    CHECK(std::memcmp(in, out, 16) == 0);
}

TEST_CASE("an access past the end gets an address error and is counted") {
    rig m("mem", byte_count{4096});
    std::uint64_t v = 0;
    CHECK(transport(m, tlm::TLM_READ_COMMAND, 4092, &v, 8) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK(transport(m, tlm::TLM_READ_COMMAND, ~0ull - 2, &v, 8) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK(stats_registry::instance().to_json()["mem.address_errors"] == 2);
}

TEST_CASE("DMI covers the whole memory and shows the same bytes") {
    rig m("mem", byte_count{1 << 20});
    std::uint32_t v = 0xfeedface;
    REQUIRE(transport(m, tlm::TLM_WRITE_COMMAND, 0x40, &v, 4) == tlm::TLM_OK_RESPONSE);
    tlm::tlm_generic_payload tx;
    tx.set_address(0x40);
    tx.set_read();
    tlm::tlm_dmi dmi;
    REQUIRE(m.cpu.out->get_direct_mem_ptr(tx, dmi));
    CHECK(dmi.get_start_address() == 0);
    CHECK(dmi.get_end_address() == (1u << 20) - 1);
    CHECK(dmi.is_read_write_allowed());
    std::uint32_t seen;
    std::memcpy(&seen, dmi.get_dmi_ptr() + 0x40, 4);
    CHECK(seen == 0xfeedface);
}

TEST_CASE("a reservation the host refuses is a clear error, not a crash") {
    // 2^62 bytes exceeds the 47-bit user address space even with NORESERVE.
    CHECK_THROWS_WITH(sparse_memory("huge", byte_count{1ull << 62}), Catch::StartsWith("huge: cannot reserve"));
}

TEST_CASE("zero clears a range: partial pages byte by byte, whole pages given back to the host") {
    trn3::sparse_store s("zero-test", 64 << 10);
    std::memset(s.data(), 0xa5, 64 << 10);
    REQUIRE(s.resident_pages() == 16);
    s.zero(100, 3 * 4096 + 50);  // the rest of page 0, pages 1-2 whole, 150 bytes of page 3
    CHECK(s.resident_pages() == 14);  // pages 1 and 2 went back

    for (std::size_t i = 0; i < (64u << 10); ++i) {
        const bool cleared = i >= 100 && i < 100 + 3 * 4096 + 50;
        if (s.data()[i] != (cleared ? 0 : 0xa5)) FAIL("byte " << i << " is " << int(s.data()[i]));
    }

    s.zero(5, 10);  // within one page
    CHECK(s.data()[4] == 0xa5);
    CHECK(s.data()[5] == 0);
    CHECK(s.data()[14] == 0);
    CHECK(s.data()[15] == 0xa5);
    s.zero(0, 64 << 10);
    CHECK(s.resident_pages() == 0);
    CHECK(s.data()[70] == 0);
    CHECK_THROWS_AS(s.zero(60 << 10, 8 << 10), std::out_of_range);
}
