// The MCU's SHA-256 engine through its registers (spec/mcu.h): FIPS 180-4's
// example digests, the time it takes, and the errors it reports.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "../common/test_initiator.h"
#include "trn3/mcu/hash_engine.h"

using namespace trn3;
using sc_core::SC_NS;
using sc_core::sc_time;

namespace {
constexpr std::uint32_t base = 0x20000000;  // the memory the engine sees, as the MCU's SRAM

struct rig {
    std::vector<std::uint8_t> sram = std::vector<std::uint8_t>(4096);
    mcu::hash_engine engine{"hash", [this](std::uint32_t a, std::uint32_t n) -> const std::uint8_t* {
                                return a - base < sram.size() && n <= sram.size() - (a - base)
                                           ? sram.data() + (a - base)
                                           : nullptr;
                            }};
    test::initiator cpu{"cpu"};
    rig() { cpu.out.bind(engine.in); }

    // An access at `at` of simulated time (the initiator's local offset).
    std::uint32_t read(std::uint32_t off, sc_time at = sc_core::SC_ZERO_TIME) {
        std::uint32_t v = 0;
        REQUIRE(cpu.access(tlm::TLM_READ_COMMAND, off, &v, 4, &at) == tlm::TLM_OK_RESPONSE);
        return v;
    }
    void write(std::uint32_t off, std::uint32_t v, sc_time at = sc_core::SC_ZERO_TIME) {
        REQUIRE(cpu.access(tlm::TLM_WRITE_COMMAND, off, &v, 4, &at) == tlm::TLM_OK_RESPONSE);
    }
    void start(const std::string& message, sc_time at = sc_core::SC_ZERO_TIME) {
        std::memcpy(sram.data(), message.data(), message.size());
        write(TRN3_MCU_HASH_SRC, base, at);
        write(TRN3_MCU_HASH_LEN, static_cast<std::uint32_t>(message.size()), at);
        write(TRN3_MCU_HASH_CTRL, TRN3_MCU_HASH_CTRL_START, at);
    }
    // The digest as hex, from the registers' little-endian words.
    std::string digest(sc_time at) {
        std::string s;
        char byte[3];
        for (unsigned i = 0; i < TRN3_MCU_HASH_DIGEST_WORDS; ++i) {
            const std::uint32_t w = read(TRN3_MCU_HASH_DIGEST + 4 * i, at);
            for (unsigned j = 0; j < 4; ++j) {
                std::snprintf(byte, sizeof byte, "%02x", (w >> (8 * j)) & 0xff);
                s += byte;
            }
        }
        return s;
    }
};
}  // namespace

TEST_CASE("the SHA-256 engine gives FIPS 180-4's digests, busy for its latency and 64 ns per 64-byte block") {
    rig r;
    // "abc": one block; 100 ns to start + 64 ns.
    r.start("abc");
    CHECK(r.read(TRN3_MCU_HASH_STATUS, sc_time(163, SC_NS)) == TRN3_MCU_HASH_STATUS_BUSY);
    CHECK(r.read(TRN3_MCU_HASH_DIGEST, sc_time(163, SC_NS)) == 0);  // nothing to read while busy
    CHECK(r.read(TRN3_MCU_HASH_STATUS, sc_time(164, SC_NS)) == TRN3_MCU_HASH_STATUS_DONE);
    CHECK(r.digest(sc_time(164, SC_NS)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    // 56 bytes: the padding takes a second block.
    const sc_time t0(1, sc_core::SC_US);
    r.start("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", t0);
    CHECK(r.read(TRN3_MCU_HASH_STATUS, t0 + sc_time(227, SC_NS)) == TRN3_MCU_HASH_STATUS_BUSY);
    CHECK(r.digest(t0 + sc_time(228, SC_NS)) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    // Nothing: the padding block alone.
    r.start("", sc_time(2, sc_core::SC_US));
    CHECK(r.digest(sc_time(3, sc_core::SC_US)) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST_CASE("the SHA-256 engine refuses a range outside its memory and a start while busy, with ERROR") {
    rig r;
    r.write(TRN3_MCU_HASH_SRC, base + 4000);
    r.write(TRN3_MCU_HASH_LEN, 97);  // past the end by one byte
    r.write(TRN3_MCU_HASH_CTRL, TRN3_MCU_HASH_CTRL_START);
    CHECK(r.read(TRN3_MCU_HASH_STATUS) == TRN3_MCU_HASH_STATUS_ERROR);
    r.write(TRN3_MCU_HASH_SRC, 0x1000);  // the ROM, which this rig's engine does not see
    r.write(TRN3_MCU_HASH_LEN, 4);
    r.write(TRN3_MCU_HASH_CTRL, TRN3_MCU_HASH_CTRL_START);
    CHECK(r.read(TRN3_MCU_HASH_STATUS) == TRN3_MCU_HASH_STATUS_ERROR);
    // A good start clears the error; a second one while busy sets it again
    // and leaves the first to finish.
    r.start("abc");
    CHECK(r.read(TRN3_MCU_HASH_STATUS) == TRN3_MCU_HASH_STATUS_BUSY);
    r.write(TRN3_MCU_HASH_CTRL, TRN3_MCU_HASH_CTRL_START, sc_time(10, SC_NS));
    CHECK(r.read(TRN3_MCU_HASH_STATUS, sc_time(10, SC_NS)) == (TRN3_MCU_HASH_STATUS_BUSY | TRN3_MCU_HASH_STATUS_ERROR));
    CHECK(r.digest(sc_time(200, SC_NS)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(r.read(TRN3_MCU_HASH_STATUS, sc_time(200, SC_NS)) == TRN3_MCU_HASH_STATUS_DONE);
}
