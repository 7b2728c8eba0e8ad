#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "../common/test_initiator.h"
#include "trn3/core/payload.h"
#include "trn3/hbm/ecc.h"
#include "trn3/hbm/hbm_stack.h"
#include "trn3/spec/device.h"

using namespace trn3;
using namespace trn3::hbm;
using sc_core::sc_time;

namespace {
using test::initiator;

struct rig {
    hbm_stack stack{"hbm0"};
    initiator cpu{"cpu"};
    initiator mcu{"mcu"};
    rig() {
        cpu.out.bind(stack.in);
        mcu.out.bind(stack.ctrl);
        sc_core::sc_start(sc_core::SC_ZERO_TIME);
    }
    tlm::tlm_response_status access(tlm::tlm_command cmd, std::uint64_t addr, void* data, unsigned len,
                                    sc_time* latency = nullptr, bool timing_only_access = false) {
        tlm::tlm_generic_payload tx;
        set_access(tx, cmd, addr, data, len);
        timing_only marker;
        if (timing_only_access) tx.set_extension(&marker);
        sc_time delay = offset;
        cpu.out->b_transport(tx, delay);
        if (latency) *latency = delay - offset;
        if (timing_only_access) tx.clear_extension(&marker);
        return tx.get_response_status();
    }
    std::uint64_t reg(std::uint64_t offset_in_bank, std::uint64_t write_value = 0, bool write = false) {
        std::uint64_t v = write_value;
        const unsigned len = offset_in_bank == TRN3_HBM_IRQ_STATUS || offset_in_bank == TRN3_HBM_IRQ_ENABLE ||
                                     offset_in_bank == TRN3_HBM_ID
                                 ? 4
                                 : 8;
        REQUIRE(mcu.access(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND, offset_in_bank, &v, len) ==
                tlm::TLM_OK_RESPONSE);
        return v;
    }
    // Issue accesses as if they arrived this far in the future (loosely
    // timed: the initiator's local time offset), so channels start idle.
    sc_time offset{0, sc_core::SC_NS};
};
}  // namespace

TEST_CASE("data written to the stack reads back") {
    rig r;
    std::vector<unsigned char> in(4096), out(4096);
    for (unsigned i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(i * 7 + 3);
    REQUIRE(r.access(tlm::TLM_WRITE_COMMAND, (35ull << 30) + 64, in.data(), 4096) == tlm::TLM_OK_RESPONSE);
    REQUIRE(r.access(tlm::TLM_READ_COMMAND, (35ull << 30) + 64, out.data(), 4096) == tlm::TLM_OK_RESPONSE);
    CHECK(in == out);
    // 36 GiB reserved; only the two pages the access touched are resident.
    CHECK(r.stack.store().resident_pages() == 2);
}

TEST_CASE("an unloaded 64-byte read to a closed row takes 114.4 ns") {
    rig r;
    std::uint64_t buf[8];
    sc_time latency;
    REQUIRE(r.access(tlm::TLM_READ_COMMAND, 0x0, buf, 64, &latency) == tlm::TLM_OK_RESPONSE);
    // controller 80 + tRCD 19.4 + tCL 12.5 + second column after tCCD_L 1.667 + one burst 0.833
    CHECK(latency == sc_time(114400, sc_core::SC_PS));
}

TEST_CASE("a 4 KiB read is split over 16 channels and completes with its last piece") {
    rig r;
    std::vector<unsigned char> buf(4096);
    sc_time latency;
    REQUIRE(r.access(tlm::TLM_READ_COMMAND, 0x0, buf.data(), 4096, &latency) == tlm::TLM_OK_RESPONSE);
    for (unsigned c = 0; c < 16; ++c) CHECK(r.stack.channel(c).stats().bursts == 8);
    CHECK(r.stack.channel(16).stats().bursts == 0);
    // Each 256 B piece: 8 columns tCCD_L apart in one bank, then tCL and a burst.
    CHECK(latency == sc_time(80000 + 19400 + 7 * 1667 + 12500 + 833, sc_core::SC_PS));
}

TEST_CASE("an access beyond the stack gets an address error, is counted and raises the interrupt") {
    rig r;
    std::uint64_t v = 0;
    CHECK(r.access(tlm::TLM_READ_COMMAND, (36ull << 30) - 4, &v, 8) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK(r.reg(TRN3_HBM_ADDR_ERRORS) == 1);
    CHECK(r.reg(TRN3_HBM_LAST_ERROR_ADDR) == (36ull << 30) - 4);
    CHECK(r.reg(TRN3_HBM_IRQ_STATUS) == TRN3_HBM_IRQ_ADDRESS);
    CHECK(r.stack.mem_error.level());
    r.reg(TRN3_HBM_IRQ_STATUS, TRN3_HBM_IRQ_ADDRESS, true);  // W1C
    CHECK(!r.stack.mem_error.level());
}

TEST_CASE("a single-bit error injected by param is corrected and counted") {
    param_registry::instance().set_pending_text("hbm0.ecc.inject", "0x1000:0x10", "test");
    rig r;
    std::uint64_t in = 0x1122334455667788ull, out = 0;
    std::memcpy(r.stack.data() + 0x1000, &in, 8);
    REQUIRE(r.access(tlm::TLM_READ_COMMAND, 0x1000, &out, 8) == tlm::TLM_OK_RESPONSE);
    CHECK(out == in);
    CHECK(r.reg(TRN3_HBM_CE_COUNT) == 1);
    CHECK(r.reg(TRN3_HBM_IRQ_STATUS) == TRN3_HBM_IRQ_CORRECTED);
    CHECK(!r.stack.mem_error.level());  // corrected errors are not enabled by default
}

TEST_CASE("a double-bit error returns poisoned data with an error response and raises the interrupt") {
    param_registry::instance().set_pending_text("hbm0.ecc.inject", "0x2008:0x8001", "test");
    rig r;
    std::uint64_t words[4] = {};
    REQUIRE(r.access(tlm::TLM_READ_COMMAND, 0x2000, words, 32) == tlm::TLM_GENERIC_ERROR_RESPONSE);
    CHECK(words[0] == 0);
    CHECK(words[1] == 0x8001);  // exactly the flipped bits
    CHECK(r.reg(TRN3_HBM_UE_COUNT) == 1);
    CHECK(r.reg(TRN3_HBM_LAST_ERROR_ADDR) == 0x2008);
    CHECK(r.stack.mem_error.level());
}

TEST_CASE("a whole-word write repairs a poisoned word, and a partial write corrects a single-bit error") {
    param_registry::instance().set_pending_text("hbm0.ecc.inject", "0x3000:0x3;0x3008:0x4", "test");
    rig r;
    std::uint64_t v = 42;
    REQUIRE(r.access(tlm::TLM_WRITE_COMMAND, 0x3000, &v, 8) == tlm::TLM_OK_RESPONSE);
    std::uint8_t b = 1;
    REQUIRE(r.access(tlm::TLM_WRITE_COMMAND, 0x3008, &b, 1) == tlm::TLM_OK_RESPONSE);
    CHECK(r.reg(TRN3_HBM_CE_COUNT) == 1);  // the read-modify-write corrected it
    std::uint64_t out[2];
    REQUIRE(r.access(tlm::TLM_READ_COMMAND, 0x3000, out, 16) == tlm::TLM_OK_RESPONSE);
    CHECK(out[0] == 42);
    CHECK(out[1] == 1);
}

TEST_CASE("software injects an error through the registers, and DMI is revoked") {
    rig r;
    tlm::tlm_generic_payload tx;
    tx.set_read();
    tx.set_address(0);
    tlm::tlm_dmi dmi;
    REQUIRE(r.cpu.out->get_direct_mem_ptr(tx, dmi));
    r.reg(TRN3_HBM_INJECT_ADDR, 0x4000, true);
    r.reg(TRN3_HBM_INJECT_MASK, 0x100, true);
    CHECK(r.cpu.invalidations == 1);
    CHECK(!r.cpu.out->get_direct_mem_ptr(tx, dmi));
    std::uint64_t v;
    REQUIRE(r.access(tlm::TLM_READ_COMMAND, 0x4000, &v, 8) == tlm::TLM_OK_RESPONSE);
    CHECK(v == 0);
    CHECK(r.reg(TRN3_HBM_CE_COUNT) == 1);
}

TEST_CASE("DMI is granted when no error can appear, with the unloaded latencies") {
    rig r;
    tlm::tlm_generic_payload tx;
    tx.set_read();
    tx.set_address(0x100);
    tlm::tlm_dmi dmi;
    REQUIRE(r.cpu.out->get_direct_mem_ptr(tx, dmi));
    CHECK(dmi.get_end_address() == (36ull << 30) - 1);
    CHECK(dmi.get_read_latency() == sc_time(111900, sc_core::SC_PS));
}

TEST_CASE("a timing-only access is charged its time and moves no data") {
    rig r;
    std::uint64_t v = 0xffff;
    sc_time latency;
    REQUIRE(r.access(tlm::TLM_WRITE_COMMAND, 0x5000, &v, 8, nullptr, true) == tlm::TLM_OK_RESPONSE);
    REQUIRE(r.access(tlm::TLM_READ_COMMAND, 0x6000, &v, 8, &latency, true) == tlm::TLM_OK_RESPONSE);
    CHECK(latency > sc_time(100, sc_core::SC_NS));
    std::uint64_t stored;
    std::memcpy(&stored, r.stack.data() + 0x5000, 8);
    CHECK(stored == 0);
    CHECK(v == 0xffff);
}

TEST_CASE("transient errors follow their rate and repeat exactly for one seed") {
    auto count = [](std::uint64_t seed) {
        ecc_model ecc(1e-3, 1e-4, seed);
        std::vector<unsigned char> buf(4096);
        std::uint64_t ce = 0, ue = 0;
        for (int i = 0; i < 2000; ++i) {  // 1,024,000 words
            ecc_result r = ecc.check_read(static_cast<std::uint64_t>(i) * 4096, buf.data(), 4096);
            ce += r.corrected;
            ue += r.uncorrectable;
        }
        return std::make_pair(ce, ue);
    };
    auto a = count(5), b = count(5), c = count(6);
    CHECK(a == b);
    CHECK(a != c);
    CHECK(a.first == Approx(1024).epsilon(0.15));
    CHECK(a.second == Approx(102).epsilon(0.35));
}

TEST_CASE("an interleave that does not match the geometry is refused") {
    param_registry::instance().set_pending_text("hbm0.interleave",
                                                "offset:8,channel:4,bank_group:2,column:2,bank:2,row", "test");
    CHECK_THROWS_WITH(hbm_stack("hbm0"), Catch::Contains("field 'channel' has 4 bits but the geometry needs 5"));
}

TEST_CASE("an ECC injection outside the stack is refused") {
    param_registry::instance().set_pending_text("hbm0.ecc.inject", "0x900000000000:1", "test");
    CHECK_THROWS_WITH(hbm_stack("hbm0"), Catch::Contains("hbm0.ecc.inject"));
}

namespace {

// Streams `requests` 4 KiB timing-only accesses at the stack's peak rate (open loop); returns the share of the
// stack's peak bandwidth sustained, from the first arrival to the last data (writes: drained by flush).
double streaming_share(rig& r, bool write, unsigned requests, sc_time start) {
    const double peak_bytes_per_s =
        static_cast<double>(r.stack.channels.get()) * r.stack.channel_bandwidth.get().bytes_per_s;
    const unsigned len = 4096;
    const double interval_ps = len / peak_bytes_per_s * 1e12;
    std::vector<unsigned char> buf(len);
    sc_time last = start;
    for (unsigned i = 0; i < requests; ++i) {
        r.offset = start + sc_time::from_value(static_cast<std::uint64_t>(i * interval_ps));
        sc_time latency;
        REQUIRE(r.access(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND, std::uint64_t{i} * len, buf.data(),
                         len, &latency, true) == tlm::TLM_OK_RESPONSE);
        last = std::max(last, r.offset + latency);
    }
    if (write) last = std::max(last, r.stack.flush());
    return static_cast<double>(requests) * len / (last - start).to_seconds() / peak_bytes_per_s;
}

}  // namespace

// The bandwidth engine's default efficiencies are the dram engine's streaming figures: these two cases fail if
// either engine drifts from them.
TEST_CASE("dram engine: 4 KiB streaming reads sustain 90.5 percent of the stack's peak, writes 86.2 percent") {
    rig r;
    CHECK(streaming_share(r, false, 16384, sc_time(1, sc_core::SC_US)) == Approx(0.905).epsilon(0.01));
    CHECK(streaming_share(r, true, 16384, sc_time(1, sc_core::SC_MS)) == Approx(0.862).epsilon(0.01));
}

TEST_CASE("bandwidth engine: streaming reads and writes run at peak x read_efficiency and x write_efficiency, and "
          "an unloaded read takes the closed-row latency") {
    param_registry::instance().set_pending_text("hbm0.timing_model", "bandwidth", "test");
    rig r;
    sc_time unloaded;
    std::uint64_t v = 0;
    REQUIRE(r.access(tlm::TLM_READ_COMMAND, 0x40, &v, 8, &unloaded, true) == tlm::TLM_OK_RESPONSE);
    // tRCD + tCL + the controller (the DMI read latency, 111.9 ns) and 8 bytes' data time.
    CHECK(unloaded.to_seconds() * 1e9 == Approx(111.9 + 8 / (32 * 38.4 * 0.905)).margin(0.001));
    // 64 MiB of reads: their data time at 90.5% of peak, then the last one's 111.9 ns.
    const double peak = 32 * 38.4e9, bytes = 64.0 * (1 << 20);
    CHECK(streaming_share(r, false, 16384, sc_time(10, sc_core::SC_US)) ==
          Approx(bytes / (bytes / (0.905 * peak) + 111.9e-9) / peak).epsilon(0.0005));
    // Writes: their data time at 86.2%, then the controller's 80 ns.
    CHECK(streaming_share(r, true, 16384, sc_time(1, sc_core::SC_MS)) ==
          Approx(bytes / (bytes / (0.862 * peak) + 80e-9) / peak).epsilon(0.0005));
}
