// Isolation (docs/reliability.md). First, a device's DMA reaches only the host
// memory the IOMMU maps for it. 1,000 seeded random DMA transfers of the
// chip's queue 0, through the real driver, host, IOMMU and chip, aimed at
// host memory the device has no mapping for: canary buffers the host
// allocated right after the one mapped buffer (identity mapped, so a
// translation that failed open would land in them), random bus addresses
// anywhere in 48 bits, and transfers that start in the mapped buffer and run
// past its end. Each direction: the device reading host memory into its
// HBM, and writing its HBM into host memory. No byte escapes: every canary
// keeps its pattern, no canary byte reaches device memory, and the queue
// goes on working. Second, the boot ROM runs only the image the chip was
// provisioned with: 1,000 images with one bit flipped, each booted from a
// warm reset, are all refused. Third, the firmware's mailbox takes any
// request the host writes: 100,000 random ones are each answered in time
// with exactly the status the protocol owes, and its state stays whole.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <random>

#include "../chip/rig.h"
#include "trn3/spec/mailbox.h"
#include "trn3/spec/mcu.h"

using namespace trn3;
using driver::status;
using test::host_rig;

namespace {
constexpr std::size_t buffer_bytes = 64 << 10;
constexpr unsigned canaries = 4;
constexpr std::uint8_t canary_byte = 0xC3, mapped_byte = 0x11, device_byte = 0x5A;
}  // namespace

TEST_CASE("isolation: 1,000 random device DMA transfers outside the IOMMU's mappings move 0 bytes, each is an "
          "error the driver reports, and the queue goes on working") {
    host_rig h;
    std::uint64_t attempts = 0, errors = 0, oks = 0, device_at = 0;
    std::uint64_t canary_bytes_changed = 0, canary_bytes_in_device = 0, mapped_bytes_out_of_pattern = 0;
    status last = status::timeout;
    h.run(
        [&] {
            h.bring_up();
            // The mapped buffer, then canaries right after it in host memory (never mapped).
            const driver::dma_buffer mapped = h.adapter.alloc_dma(h.device.bdf(), buffer_bytes);
            std::vector<driver::dma_buffer> canary;
            for (unsigned i = 0; i < canaries; ++i) canary.push_back(h.adapter.alloc_unmapped(buffer_bytes));
            REQUIRE(canary[0].bus_address == mapped.bus_address + buffer_bytes);  // adjacent: a straddle reaches it
            std::memset(mapped.cpu, mapped_byte, buffer_bytes);
            for (const auto& c : canary) std::memset(c.cpu, canary_byte, buffer_bytes);
            REQUIRE(h.device.alloc(buffer_bytes, device_at) == status::ok);
            const std::vector<std::uint8_t> fill(buffer_bytes, device_byte);
            REQUIRE(h.device.write(device_at, fill.data(), fill.size()) == status::ok);

            std::mt19937_64 rng(20261202);
            auto uniform = [&](std::uint64_t lo, std::uint64_t hi) {
                return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
            };
            for (unsigned i = 0; i < 1000; ++i) {
                const bool to_device = uniform(0, 1) == 1;
                const std::size_t bytes = uniform(1, 16 << 10);
                std::uint64_t bus = 0;
                switch (uniform(0, 2)) {
                case 0: {  // inside a canary
                    const auto& c = canary[uniform(0, canaries - 1)];
                    bus = c.bus_address + uniform(0, buffer_bytes - bytes);
                    break;
                }
                case 1:  // anywhere in 48 bits but the mapped buffer
                    do bus = uniform(0, (1ull << 48) - bytes);
                    while (bus + bytes > mapped.bus_address && bus < mapped.bus_address + buffer_bytes);
                    break;
                default:  // from inside the mapped buffer past its end
                    bus = mapped.bus_address + buffer_bytes - uniform(1, std::min<std::size_t>(bytes, 4096));
                    if (bus + bytes <= mapped.bus_address + buffer_bytes) bus = mapped.bus_address + buffer_bytes - 1;
                    break;
                }
                const std::size_t n = std::min<std::size_t>(bytes, buffer_bytes);
                const status s = h.device.copy(bus, device_at + uniform(0, buffer_bytes - n), n, to_device);
                ++attempts;
                (s == status::ok ? oks : errors) += 1;
            }
            // The queue still works: a mapped transfer moves exactly.
            last = h.device.copy(mapped.bus_address, device_at, 4096, false);
            for (const auto& c : canary)
                canary_bytes_changed +=
                    std::count_if(c.cpu, c.cpu + buffer_bytes, [](std::uint8_t b) { return b != canary_byte; });
            std::vector<std::uint8_t> device(buffer_bytes);
            REQUIRE(h.device.read(device.data(), device_at, device.size()) == status::ok);
            canary_bytes_in_device = std::count(device.begin(), device.end(), canary_byte);
            // The mapped buffer holds only its own pattern and the device's (a straddle's in-bounds part).
            mapped_bytes_out_of_pattern = std::count_if(mapped.cpu, mapped.cpu + buffer_bytes, [](std::uint8_t b) {
                return b != mapped_byte && b != device_byte;
            });
        },
        sc_core::sc_time(2, sc_core::SC_SEC));
    INFO(attempts << " attempts: " << errors << " errors, " << oks << " ok");
    CHECK(attempts == 1000);
    CHECK(canary_bytes_changed == 0);
    CHECK(canary_bytes_in_device == 0);
    CHECK(mapped_bytes_out_of_pattern == 0);
    CHECK(last == status::ok);
    // Every transfer touched an unmapped page: the IOMMU faulted on each, and
    // the driver reports each as failed (writes to host memory too, which
    // the chip completes without knowing the IOMMU dropped them).
    CHECK(h.host0.iommu0.faults() >= 1000);
    CHECK(errors == 1000);
    CHECK(oks == 0);
}

TEST_CASE("isolation: 1,000 firmware images, each with one bit flipped at a random position, are all refused by the "
          "boot ROM, and the image as provisioned still boots") {
    chip::trn3_chip chip("chip0", test::build_images(test::boot::through_boot_rom));
    mcu::mcu& m = chip.mcu0;
    const std::uint32_t base = m.sysctl0.image_base() - TRN3_MCU_SRAM_BASE, size = m.sysctl0.image_size();
    REQUIRE(size > 0);
    REQUIRE(base + size <= m.sram_bytes());
    const std::vector<std::uint8_t> pristine(m.sram_debug(base), m.sram_debug(base) + size);
    // Runs the boot ROM from a warm reset until it decides: the status it reaches.
    auto boot = [&] {
        m.reset();
        for (int i = 0; i < 1000; ++i) {
            sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_US));
            const std::uint32_t s = m.boot_status();
            if (s == TRN3_BOOT_REFUSED || s == TRN3_BOOT_VERIFIED || s == TRN3_BOOT_RUNNING) return s;
        }
        return m.boot_status();
    };
    std::mt19937_64 rng(20261202);
    unsigned refused = 0;
    std::vector<std::uint32_t> accepted;  // the bit positions of flipped images that were not refused
    std::vector<std::uint32_t> statuses;  // and the boot status each reached

    for (unsigned i = 0; i < 1000; ++i) {
        std::memcpy(m.sram_debug(base), pristine.data(), size);
        const std::uint32_t bit = std::uniform_int_distribution<std::uint32_t>(0, size * 8 - 1)(rng);
        *m.sram_debug(base + bit / 8) ^= static_cast<std::uint8_t>(1u << (bit % 8));
        const std::uint32_t s = boot();
        if (s == TRN3_BOOT_REFUSED) {
            ++refused;
        } else {
            accepted.push_back(bit);
            statuses.push_back(s);
        }
    }
    if (!accepted.empty()) UNSCOPED_INFO("first not refused: bit " << accepted[0] << ", boot status " << statuses[0]);

    CHECK(refused == 1000);
    CHECK(accepted.empty());
    std::memcpy(m.sram_debug(base), pristine.data(), size);
    const std::uint32_t good = boot();
    CHECK((good == TRN3_BOOT_VERIFIED || good == TRN3_BOOT_RUNNING));
}

namespace {
// The answer the firmware owes a request (docs/firmware.md): status and
// payload length, for a chip without NeuronLink ports.
std::pair<std::uint16_t, std::uint16_t> owed(std::uint16_t command, std::uint16_t length, std::uint32_t arg) {
    if (length > TRN3_MBOX_PAYLOAD_MAX) return {TRN3_MBOX_STATUS_BAD_LENGTH, 0};
    auto none = [&](std::uint16_t out) {
        return length != 0 ? std::make_pair<std::uint16_t, std::uint16_t>(TRN3_MBOX_STATUS_BAD_LENGTH, 0)
                           : std::make_pair<std::uint16_t, std::uint16_t>(TRN3_MBOX_STATUS_OK, std::uint16_t(out));
    };
    switch (command) {
    case TRN3_MBOX_CMD_VERSION: return none(sizeof(trn3_mbox_version));
    case TRN3_MBOX_CMD_STATUS: return none(sizeof(trn3_mbox_status));
    case TRN3_MBOX_CMD_TELEMETRY: return none(sizeof(trn3_mbox_telemetry));
    case TRN3_MBOX_CMD_SET_ROUTING_ID: return {length == 4 ? TRN3_MBOX_STATUS_OK : TRN3_MBOX_STATUS_BAD_LENGTH, 0};
    case TRN3_MBOX_CMD_RESET_CORE:
    case TRN3_MBOX_CMD_LINK_STATUS:
    case TRN3_MBOX_CMD_ECC_COUNTERS:
        if (length != 4) return {TRN3_MBOX_STATUS_BAD_LENGTH, 0};
        if (command == TRN3_MBOX_CMD_RESET_CORE)
            return {arg < TRN3_DEV_CORES ? TRN3_MBOX_STATUS_OK : TRN3_MBOX_STATUS_BAD_ARGUMENT, 0};
        if (command == TRN3_MBOX_CMD_LINK_STATUS) return {TRN3_MBOX_STATUS_BAD_ARGUMENT, 0};  // no port attached
        return arg < TRN3_DEV_HBM_STACKS
                   ? std::make_pair<std::uint16_t, std::uint16_t>(TRN3_MBOX_STATUS_OK, sizeof(trn3_mbox_ecc))
                   : std::make_pair<std::uint16_t, std::uint16_t>(TRN3_MBOX_STATUS_BAD_ARGUMENT, 0);
    default: return {TRN3_MBOX_STATUS_UNKNOWN_COMMAND, 0};
    }
}
}  // namespace

TEST_CASE("isolation: 100,000 random mailbox requests from the host: the firmware answers each in time with the status "
          "the protocol owes it, and a known-good request still works after") {
    test::chip_rig r;
    r.boot();
    std::mt19937_64 rng(20261202);
    auto uniform = [&](std::uint64_t lo, std::uint64_t hi) {
        return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
    };
    // One request from the host's side of the mailbox; false if no answer came within 1 ms.
    auto request = [&](const trn3_mbox_request& rq, std::size_t bytes, trn3_mbox_response& rs) {
        REQUIRE(r.bar0.access(tlm::TLM_WRITE_COMMAND, TRN3_BAR0_MAILBOX + TRN3_MBOX_REQUEST,
                              const_cast<trn3_mbox_request*>(&rq),
                              static_cast<unsigned>(bytes)) == tlm::TLM_OK_RESPONSE);
        r.wr(TRN3_BAR0_MAILBOX + TRN3_MBOX_H2M_DOORBELL, TRN3_MBOX_DOORBELL_RING);
        for (int i = 0; i < 1000; ++i) {
            if (r.rd(TRN3_BAR0_MAILBOX + TRN3_MBOX_M2H_DOORBELL) & TRN3_MBOX_DOORBELL_PENDING) {
                REQUIRE(r.bar0.access(tlm::TLM_READ_COMMAND, TRN3_BAR0_MAILBOX + TRN3_MBOX_RESPONSE, &rs, sizeof rs) ==
                        tlm::TLM_OK_RESPONSE);
                r.wr(TRN3_BAR0_MAILBOX + TRN3_MBOX_M2H_DOORBELL, TRN3_MBOX_DOORBELL_CLEAR);
                return true;
            }
            sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_US));
        }
        return false;
    };
    constexpr unsigned requests = 100'000;
    unsigned answered = 0, as_owed = 0, errors = 0;
    std::uint32_t routing_id = 0;
    for (unsigned i = 0; i < requests; ++i) {
        trn3_mbox_request rq{};
        const unsigned pick = static_cast<unsigned>(uniform(0, 3));
        rq.command = static_cast<std::uint16_t>(pick < 2    ? uniform(1, 7)
                                                : pick == 2 ? uniform(0, 15)
                                                            : uniform(0, 0xFFFF));
        const unsigned shape = static_cast<unsigned>(uniform(0, 9));
        rq.length = static_cast<std::uint16_t>(shape < 4   ? (uniform(0, 1) ? 4 : 0)
                                               : shape < 7 ? uniform(0, 8)
                                                           : uniform(0, 0xFFFF));
        rq.tag = static_cast<std::uint32_t>(rng());
        for (auto& b : rq.payload) b = static_cast<std::uint8_t>(rng());
        const std::uint32_t arg = static_cast<std::uint32_t>(uniform(0, 1) ? uniform(0, 16) : rng());
        std::memcpy(rq.payload, &arg, 4);
        trn3_mbox_response rs{};
        if (!request(rq, sizeof rq, rs)) break;
        ++answered;
        const auto [status, length] = owed(rq.command, rq.length, arg);
        if (rs.status == status && rs.length == length && rs.tag == rq.tag) ++as_owed;
        else
            UNSCOPED_INFO("request " << i << ": command " << rq.command << " length " << rq.length << " arg " << arg
                                     << " answered " << rs.status << "/" << rs.length);
        if (status != TRN3_MBOX_STATUS_OK) ++errors;
        if (rq.command == TRN3_MBOX_CMD_SET_ROUTING_ID && status == TRN3_MBOX_STATUS_OK) routing_id = arg;
        if (as_owed != answered) break;
    }
    CHECK(answered == requests);
    CHECK(as_owed == requests);
    // The firmware's state is whole: STATUS counts every request and error and holds the last routing id.
    trn3_mbox_request rq{};
    rq.command = TRN3_MBOX_CMD_STATUS;
    rq.tag = 7;
    trn3_mbox_response rs{};
    REQUIRE(request(rq, sizeof rq, rs));
    CHECK(rs.status == TRN3_MBOX_STATUS_OK);
    trn3_mbox_status st{};
    std::memcpy(&st, rs.payload, sizeof st);
    CHECK(st.commands_served == requests + 1);
    CHECK(st.errors == errors);
    CHECK(st.routing_id == routing_id);
    CHECK(st.boot_status == TRN3_BOOT_RUNNING);
}

TEST_CASE("isolation: a request left in the mailbox of a hung firmware is not served by the firmware after MCU_RESET") {
    // The firmware hangs at 1 ms; a request rung after that is never answered.
    param_registry::instance().set_pending_text("chip0.mcu0.hang_at", "1ms", "test");
    test::chip_rig r;
    auto ring = [&](std::uint16_t command, std::uint32_t tag) {
        trn3_mbox_request rq{};
        rq.command = command;
        rq.tag = tag;
        REQUIRE(r.bar0.access(tlm::TLM_WRITE_COMMAND, TRN3_BAR0_MAILBOX + TRN3_MBOX_REQUEST, &rq, sizeof rq) ==
                tlm::TLM_OK_RESPONSE);
        r.wr(TRN3_BAR0_MAILBOX + TRN3_MBOX_H2M_DOORBELL, TRN3_MBOX_DOORBELL_RING);
    };
    r.boot();
    sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
    ring(TRN3_MBOX_CMD_STATUS, 0xDEAD);
    sc_core::sc_start(sc_core::sc_time(2, sc_core::SC_MS));
    CHECK((r.rd(TRN3_BAR0_MAILBOX + TRN3_MBOX_M2H_DOORBELL) & TRN3_MBOX_DOORBELL_PENDING) == 0);  // hung

    // The host resets the MCU: the mailbox is cleared with it, so the new
    // firmware finds no request, and the old tag never comes back.
    r.wr(TRN3_CHIP_MCU_RESET, TRN3_MCU_RESET_KEY);
    CHECK(r.rd(TRN3_CHIP_BOOT_STATUS) != TRN3_BOOT_RUNNING);
    CHECK((r.rd(TRN3_BAR0_MAILBOX + TRN3_MBOX_H2M_DOORBELL) & TRN3_MBOX_DOORBELL_PENDING) == 0);
    r.boot();
    sc_core::sc_start(sc_core::sc_time(100, sc_core::SC_US));
    CHECK((r.rd(TRN3_BAR0_MAILBOX + TRN3_MBOX_M2H_DOORBELL) & TRN3_MBOX_DOORBELL_PENDING) == 0);

    // A new request is answered, with its own tag.
    ring(TRN3_MBOX_CMD_VERSION, 0xBEEF);
    bool answered = false;
    for (int i = 0; i < 1000 && !answered; ++i) {
        sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_US));
        answered = (r.rd(TRN3_BAR0_MAILBOX + TRN3_MBOX_M2H_DOORBELL) & TRN3_MBOX_DOORBELL_PENDING) != 0;
    }
    REQUIRE(answered);
    trn3_mbox_response rs{};
    REQUIRE(r.bar0.access(tlm::TLM_READ_COMMAND, TRN3_BAR0_MAILBOX + TRN3_MBOX_RESPONSE, &rs, sizeof rs) ==
            tlm::TLM_OK_RESPONSE);
    CHECK(rs.tag == 0xBEEF);
    CHECK(rs.status == TRN3_MBOX_STATUS_OK);
    CHECK(r.chip.mcu0.watchdog0.resets() == 0);  // the host's reset, not the watchdog's
}
