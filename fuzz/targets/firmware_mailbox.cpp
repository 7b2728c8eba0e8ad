// Fuzz target: the host-to-firmware mailbox commands, through the ISS. The
// real firmware (firmware/src/main.c, the build's ELF) runs on the MCU model
// (models/mcu: the RV32IMC hart, its mailbox, timer, watchdog); a host
// writes each request into the mailbox as a driver would and rings the
// doorbell. The input is a list of requests, each
//   command (2 bytes), length (2: what the request says), tag (4),
//   n (1), then n payload bytes (at most 248)
// Every request is answered within 1 ms of simulated time with its own tag,
// a status the protocol has and a length that fits the answer area; after
// the input a VERSION request still answers with the protocol's version,
// and the hart never took an exception (the firmware's state is whole).
//
// libFuzzer sees the coverage of the host code only (the model), not of the
// firmware's RV32 branches, so each answer's (command, status, length)
// class is given to it as extra counters: an input that makes the firmware
// answer in a new way is kept.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include <tlm_utils/simple_initiator_socket.h>

#include "fuzz_check.h"
#include "trn3/core/payload.h"
#include "trn3/mcu/mcu.h"
#include "trn3/spec/mailbox.h"
#include "trn3/spec/mcu.h"

#ifdef TRN3_LIBFUZZER
__attribute__((used, section("__libfuzzer_extra_counters"))) static std::uint8_t answer_classes[17 * 6 * 4];
#else
static std::uint8_t answer_classes[17 * 6 * 4];
#endif

namespace {

using namespace trn3;

// The firmware's folder: $TRN3_FUZZ_FIRMWARE_DIR, else the build's.
std::string firmware_elf() {
    const char* dir = std::getenv("TRN3_FUZZ_FIRMWARE_DIR");
#ifdef TRN3_FUZZ_FIRMWARE_DIR
    if (!dir) dir = TRN3_FUZZ_FIRMWARE_DIR;
#endif
    if (!dir) {
        std::fprintf(stderr, "firmware_mailbox: set TRN3_FUZZ_FIRMWARE_DIR to the build's firmware folder\n");
        std::abort();
    }
    return std::string(dir) + "/trn3_firmware.elf";
}

struct host : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<host> out{"out"};
    explicit host(const sc_core::sc_module_name& n) : sc_module(n) {}
    void access(tlm::tlm_command cmd, std::uint64_t address, void* data, unsigned bytes) {
        tlm::tlm_generic_payload tx;
        set_access(tx, cmd, address, data, bytes);
        sc_core::sc_time delay;
        out->b_transport(tx, delay);
        TRN3_FUZZ_CHECK(tx.is_response_ok());
    }
    std::uint32_t read32(std::uint64_t address) {
        std::uint32_t v = 0;
        access(tlm::TLM_READ_COMMAND, address, &v, 4);
        return v;
    }
    void write32(std::uint64_t address, std::uint32_t v) { access(tlm::TLM_WRITE_COMMAND, address, &v, 4); }
};

// The MCU booted once (no boot ROM: the firmware starts at its entry), the
// host on its mailbox.
struct bench {
    mcu::mcu mcu0{"mcu0", mcu::mcu::images{firmware_elf(), "", ""}};
    host h{"host"};
    bench() {
        h.out.bind(mcu0.mailbox0.host);
        for (int i = 0; i < 100 && mcu0.boot_status() != TRN3_BOOT_RUNNING; ++i)
            sc_core::sc_start(sc_core::sc_time(100, sc_core::SC_US));
        TRN3_FUZZ_CHECK(mcu0.boot_status() == TRN3_BOOT_RUNNING);
    }
    // One request; the answer in `rs`. False: no answer within 1 ms.
    bool request(const trn3_mbox_request& rq, trn3_mbox_response& rs) {
        h.access(tlm::TLM_WRITE_COMMAND, TRN3_MBOX_REQUEST, const_cast<trn3_mbox_request*>(&rq), sizeof rq);
        h.write32(TRN3_MBOX_H2M_DOORBELL, TRN3_MBOX_DOORBELL_RING);
        for (int i = 0; i < 1000; ++i) {
            if (h.read32(TRN3_MBOX_M2H_DOORBELL) & TRN3_MBOX_DOORBELL_PENDING) {
                h.access(tlm::TLM_READ_COMMAND, TRN3_MBOX_RESPONSE, &rs, sizeof rs);
                h.write32(TRN3_MBOX_M2H_DOORBELL, TRN3_MBOX_DOORBELL_CLEAR);
                return true;
            }
            sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_US));
        }
        return false;
    }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static bench b;
    std::size_t at = 0;
    for (unsigned n = 0; n < 16 && at + 9 <= size; ++n) {
        trn3_mbox_request rq{};
        std::memcpy(&rq.command, data + at, 2);
        std::memcpy(&rq.length, data + at + 2, 2);
        std::memcpy(&rq.tag, data + at + 4, 4);
        const std::size_t payload = std::min<std::size_t>({data[at + 8], TRN3_MBOX_PAYLOAD_MAX, size - at - 9});
        std::memcpy(rq.payload, data + at + 9, payload);
        at += 9 + payload;
        trn3_mbox_response rs{};
        TRN3_FUZZ_CHECK(b.request(rq, rs));
        TRN3_FUZZ_CHECK(rs.tag == rq.tag);
        TRN3_FUZZ_CHECK(rs.status <= TRN3_MBOX_STATUS_NOT_AVAILABLE);
        TRN3_FUZZ_CHECK(rs.length <= TRN3_MBOX_PAYLOAD_MAX);
        const unsigned command = rq.command < 16 ? rq.command : 16;
        const unsigned length = rs.length == 0 ? 0 : rs.length <= 8 ? 1 : rs.length <= 64 ? 2 : 3;
        answer_classes[(command * 6 + rs.status) * 4 + length] = 1;
    }
    // The firmware still knows itself, and never trapped.
    trn3_mbox_request version{};
    version.command = TRN3_MBOX_CMD_VERSION;
    version.tag = 0xC0FFEE;
    trn3_mbox_response rs{};
    TRN3_FUZZ_CHECK(b.request(version, rs));
    TRN3_FUZZ_CHECK(rs.status == TRN3_MBOX_STATUS_OK && rs.tag == 0xC0FFEE);
    trn3_mbox_version v{};
    std::memcpy(&v, rs.payload, sizeof v);
    TRN3_FUZZ_CHECK(v.protocol_version == TRN3_MBOX_PROTOCOL_VERSION);
    TRN3_FUZZ_CHECK(b.mcu0.diagnosis().empty());
    TRN3_FUZZ_CHECK(b.mcu0.status() == mcu::mcu::state::running);
    return 0;
}
