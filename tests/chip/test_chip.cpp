// The Trainium3 chip as a composition (models/chip): the BAR0 register map
// reaches the right blocks, the device address map, the control block's
// registers (identity, LNC, core reset, error causes and their interrupt,
// routes), and the error causes the other blocks report. Most cases drive
// the chip's register space and network directly (chip_rig); the last ones
// go through its PCIe endpoint from a host (host_rig).
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstring>

#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <systemc>

#include "../common/pattern.h"
#include "rig.h"
#include "trn3/dma/fabric_write.h"
#include "trn3/kernels/builder.h"
#include "trn3/spec/link.h"
#include "trn3/spec/mailbox.h"
#include "trn3/spec/pci.h"

using namespace trn3;
using namespace trn3::kernels;
using isa::engine;
using sc_core::sc_time;
using sc_core::SC_US;
using test::chip_rig;

namespace {

constexpr std::uint64_t GiB = 1ull << 30;

unsigned core_state(chip_rig& r, unsigned c) {
    return static_cast<unsigned>(TRN3_CORE_STATE(r.rd(TRN3_CHIP_CORE_STATE), c));
}

// Loads `p` into HBM stack 0 at `base` (the cores fetch it through the network).
std::array<std::uint64_t, isa::engine_count> load(chip_rig& r, const program& p, std::uint64_t base) {
    return p.load([&](std::uint64_t a, const void* d, std::size_t n) { std::memcpy(r.chip.device_memory(a, n), d, n); },
                  base);
}

// LAUNCH_PC for every engine in `mask`, then LAUNCH.
void launch(chip_rig& r, unsigned core, const std::array<std::uint64_t, isa::engine_count>& pcs, unsigned mask) {
    for (unsigned e = 0; e < isa::engine_count; ++e)
        if (mask & (1u << e)) r.wr(TRN3_CHIP_LAUNCH_PC(e), pcs[e], 8);
    r.wr(TRN3_CHIP_LAUNCH, TRN3_LAUNCH_VALUE(core, mask));
}

constexpr unsigned mask_of(engine e) { return 1u << static_cast<unsigned>(e); }

// Programs DMA queue q with a one-entry-per-descriptor ring and its records in
// device memory (HBM stack 1) and submits `d`.
void submit_device_ring(chip_rig& r, unsigned q, const trn3_dma_descriptor& d) {
    const std::uint64_t ring = TRN3_DEV_HBM_BASE(1) + 0x100000 * q, records = ring + 0x10000;
    std::memcpy(r.chip.device_memory(ring, sizeof d), &d, sizeof d);
    r.wr(TRN3_BAR0_DMA(q) + TRN3_DMA_RING_BASE, ring, 8);
    r.wr(TRN3_BAR0_DMA(q) + TRN3_DMA_RING_SIZE, 4);
    r.wr(TRN3_BAR0_DMA(q) + TRN3_DMA_CPL_BASE, records, 8);
    r.wr(TRN3_BAR0_DMA(q) + TRN3_DMA_CONTROL, TRN3_DMA_CONTROL_ENABLE | TRN3_DMA_CONTROL_DEVICE_RING);
    r.wr(TRN3_BAR0_DMA(q) + TRN3_DMA_TAIL, 1);
}

}  // namespace

TEST_CASE("BAR0 + 0 is the control block: ID reads 0x1D0F7364 and VERSION 1.0, and neither takes a write") {
    chip_rig r;
    CHECK(r.rd(TRN3_CHIP_ID) == TRN3_CHIP_ID_VALUE);
    CHECK(r.rd(TRN3_CHIP_ID) == TRN3_CHIP_ID_VALUE);
    CHECK(r.rd(TRN3_CHIP_VERSION) == TRN3_CHIP_VERSION_VALUE);
    r.wr(TRN3_CHIP_ID, 0);
    r.wr(TRN3_CHIP_VERSION, 0);
    CHECK(r.rd(TRN3_CHIP_ID) == TRN3_CHIP_ID_VALUE);
    CHECK(r.rd(TRN3_CHIP_VERSION) == TRN3_CHIP_VERSION_VALUE);
}

TEST_CASE("HBM stack s's controller answers at BAR0 + 0x20000 + s x 0x1000, each its own") {
    chip_rig r;
    for (unsigned s = 0; s < TRN3_DEV_HBM_STACKS; ++s) {
        CHECK(TRN3_BAR0_HBM(s) == 0x20000u + 0x1000u * s);
        CHECK(r.rd(TRN3_BAR0_HBM(s) + TRN3_HBM_ID) == TRN3_HBM_ID_VALUE);
        r.wr(TRN3_BAR0_HBM(s) + TRN3_HBM_INJECT_ADDR, 0x1000ull * (s + 1), 8);  // RW; no mask written, no error
    }
    for (unsigned s = 0; s < TRN3_DEV_HBM_STACKS; ++s)
        CHECK(r.rd(TRN3_BAR0_HBM(s) + TRN3_HBM_INJECT_ADDR, 8) == 0x1000ull * (s + 1));
}

TEST_CASE("NeuronCore c's registers sit at BAR0 + 0x100000 + c x 0x10000") {
    chip_rig r;
    for (unsigned c = 0; c < TRN3_DEV_CORES; ++c) r.wr(TRN3_BAR0_CORE(c) + 0x400 + 4 * 7, 100 + c);  // semaphore 7
    for (unsigned c = 0; c < TRN3_DEV_CORES; ++c) {
        CHECK(TRN3_BAR0_CORE(c) == 0x100000u + 0x10000u * c);
        CHECK(r.chip.nc[c]->semaphore(7) == 100 + c);
    }
}

TEST_CASE("DMA queue q's registers sit at BAR0 + 0x200000 + q x 0x100, and the engine moves bytes between HBM stacks") {
    chip_rig r;
    r.boot();
    const auto data = test::pattern(8192, 1);
    std::memcpy(r.chip.device_memory(TRN3_DEV_HBM_BASE(0) + 0x5000, data.size()), data.data(), data.size());
    submit_device_ring(r, 7, {TRN3_DEV_HBM_BASE(0) + 0x5000, TRN3_DEV_HBM_BASE(2) + 0x7000, 8192, 0, 0x77});
    sc_core::sc_start(sc_time(20, SC_US));
    CHECK(TRN3_BAR0_DMA(7) == 0x200700u);
    CHECK(r.rd(TRN3_BAR0_DMA(7) + TRN3_DMA_HEAD) == 1);
    CHECK(r.rd(TRN3_BAR0_DMA(7) + TRN3_DMA_STATUS) == TRN3_DMA_STATE_IDLE);
    CHECK(std::memcmp(r.chip.device_memory(TRN3_DEV_HBM_BASE(2) + 0x7000, data.size()), data.data(), data.size()) == 0);
    trn3_dma_completion c{};
    std::memcpy(&c, r.chip.device_memory(TRN3_DEV_HBM_BASE(1) + 0x700000 + 0x10000, sizeof c), sizeof c);
    CHECK(c.status == 0);
    CHECK(c.length == 8192);
    CHECK(c.user == 0x77);
    CHECK(r.rd(TRN3_BAR0_DMA(6) + TRN3_DMA_HEAD) == 0);  // its neighbours saw nothing
    CHECK(r.rd(TRN3_BAR0_DMA(8) + TRN3_DMA_HEAD) == 0);
}

TEST_CASE(
    "the mailbox's host side is at BAR0 + 0x10000: the firmware answers a request there and MSI-X vector 0 is raised") {
    chip_rig r;
    r.boot();
    trn3_mbox_request rq{};
    rq.command = TRN3_MBOX_CMD_VERSION;
    rq.tag = 0x1234abcd;
    std::uint64_t header = 0;
    std::memcpy(&header, &rq, 8);
    r.wr(TRN3_BAR0_MAILBOX + TRN3_MBOX_REQUEST, header, 8);
    CHECK_FALSE(r.chip.ep.msix_pending(TRN3_MSIX_MAILBOX));
    r.wr(TRN3_BAR0_MAILBOX + TRN3_MBOX_H2M_DOORBELL, TRN3_MBOX_DOORBELL_RING);
    sc_core::sc_start(sc_time(100, SC_US));
    CHECK(r.rd(TRN3_BAR0_MAILBOX + TRN3_MBOX_M2H_DOORBELL) == TRN3_MBOX_DOORBELL_PENDING);
    const std::uint64_t header_back = r.rd(TRN3_BAR0_MAILBOX + TRN3_MBOX_RESPONSE, 8);
    trn3_mbox_response answer{};
    std::memcpy(&answer, &header_back, 8);
    CHECK(answer.status == TRN3_MBOX_STATUS_OK);
    CHECK(answer.length == sizeof(trn3_mbox_version));
    CHECK(answer.tag == 0x1234abcdu);  // echoed
    CHECK(r.rd(TRN3_BAR0_MAILBOX + TRN3_MBOX_RESPONSE + offsetof(trn3_mbox_response, payload) +
               offsetof(trn3_mbox_version, protocol_version)) == TRN3_MBOX_PROTOCOL_VERSION);
    CHECK(r.chip.ep.msix_pending(TRN3_MSIX_MAILBOX));  // MSI-X is not enabled: the vector waits as pending
}

TEST_CASE("DMA_QUEUES reads 16 by default, and queue 16 (inside the DMA window) has no register") {
    chip_rig r;
    CHECK(r.rd(TRN3_CHIP_DMA_QUEUES) == 16);
    std::uint32_t v = 0;
    CHECK(r.bar0.access(tlm::TLM_READ_COMMAND, TRN3_BAR0_DMA(16), &v, 4) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
}

TEST_CASE(
    "with dma0.queues = 48 DMA_QUEUES reads 48, queue 47 moves bytes and queue 40 stopping sets ERR_STATUS bit 8 + 40 mod 16") {
    param_registry::instance().set_pending_text("chip0.dma0.queues", "48", "test");
    chip_rig r;
    r.boot();
    CHECK(r.rd(TRN3_CHIP_DMA_QUEUES) == 48);
    const auto data = test::pattern(4096, 2);
    std::memcpy(r.chip.device_memory(TRN3_DEV_HBM_BASE(0) + 0x5000, data.size()), data.data(), data.size());
    submit_device_ring(r, 47, {TRN3_DEV_HBM_BASE(0) + 0x5000, TRN3_DEV_HBM_BASE(3) + 0x9000, 4096, 0, 0x47});
    sc_core::sc_start(sc_time(20, SC_US));
    CHECK(r.rd(TRN3_BAR0_DMA(47) + TRN3_DMA_HEAD) == 1);
    CHECK(std::memcmp(r.chip.device_memory(TRN3_DEV_HBM_BASE(3) + 0x9000, data.size()), data.data(), data.size()) == 0);
    // Queue 40 stops on an error: ERR_STATUS bit 8 + 40 mod 16 (queues 16 apart share it), never an HBM stack's.
    submit_device_ring(r, 40, {TRN3_DEV_HBM_BASE(0) + 40 * GiB, TRN3_DEV_HBM_BASE(2), 64, 0, 1});
    sc_core::sc_start(sc_time(20, SC_US));
    CHECK(TRN3_DMA_STATUS_STATE(r.rd(TRN3_BAR0_DMA(40) + TRN3_DMA_STATUS)) == TRN3_DMA_STATE_ERROR);
    CHECK(r.rd(TRN3_CHIP_ERR_STATUS) == (1u << 16));
    CHECK(TRN3_ERR_DMA(40) == TRN3_ERR_DMA(8));
}

TEST_CASE("DMA_PENDING has a bit per queue with descriptors left: set at the doorbell, clear once done or stopped") {
    param_registry::instance().set_pending_text("chip0.dma0.queues", "48", "test");
    chip_rig r;
    r.boot();
    CHECK(TRN3_CHIP_DMA_PENDING(1) == 0x84u);
    for (unsigned w = 0; w < TRN3_DMA_PENDING_WORDS; ++w) CHECK(r.rd(TRN3_CHIP_DMA_PENDING(w)) == 0);
    // Queue 3 copies, queue 33 waits for fabric bytes that never come, queue 40 reads outside the stacks.
    submit_device_ring(r, 3, {TRN3_DEV_HBM_BASE(0) + 0x5000, TRN3_DEV_HBM_BASE(3) + 0x9000, 4096, 0, 3});
    submit_device_ring(r, 33, {1, 0, 0, TRN3_DESC_WAIT_FABRIC, 33});
    submit_device_ring(r, 40, {TRN3_DEV_HBM_BASE(0) + 40 * GiB, TRN3_DEV_HBM_BASE(2), 64, 0, 40});
    CHECK(r.rd(TRN3_CHIP_DMA_PENDING(0)) == (1u << 3));  // at the doorbell, before any of it ran
    CHECK(r.rd(TRN3_CHIP_DMA_PENDING(1)) == ((1u << 1) | (1u << 8)));
    sc_core::sc_start(sc_time(20, SC_US));
    CHECK(r.rd(TRN3_BAR0_DMA(3) + TRN3_DMA_HEAD) == 1);
    CHECK(r.rd(TRN3_CHIP_DMA_PENDING(0)) == 0);  // done
    CHECK(r.rd(TRN3_CHIP_DMA_PENDING(1)) == (1u << 1));  // 33 still waits; 40 stopped (ERR_STATUS says so)
    CHECK(r.rd(TRN3_CHIP_ERR_STATUS) == TRN3_ERR_DMA(40));
    for (unsigned w = 2; w < TRN3_DMA_PENDING_WORDS; ++w) CHECK(r.rd(TRN3_CHIP_DMA_PENDING(w)) == 0);
    r.wr(TRN3_BAR0_DMA(33) + TRN3_DMA_CONTROL, 0);  // disabled: nothing left it will run
    CHECK(r.rd(TRN3_CHIP_DMA_PENDING(1)) == 0);
}

TEST_CASE("NL_PORTS has a bit per attached NeuronLink port, whose link registers sit at BAR0 + 0x30000 + p x 0x100") {
    delivery_queue queue("queue");
    pcie::link nl3("nl3", queue, 1, 2, pcie::link_config{pcie::generation::gen6, 8});
    pcie::link nl5("nl5", queue, 3, 4, pcie::link_config{pcie::generation::gen6, 16});
    chip_rig r([&](chip::trn3_chip& c) {
        c.attach_neuronlink(3, nl3);
        c.attach_neuronlink(5, nl5);
        // Wiring, so refused while wiring (an exception thrown once SystemC
        // has run also trips ASan's stack check: docs/reliability.md).
        CHECK_THROWS_WITH(c.attach_neuronlink(20, nl3), Catch::Contains("NeuronLink port 20 does not exist"));
    });
    CHECK(r.rd(TRN3_CHIP_NL_PORTS) == (TRN3_NL_PORT(3) | TRN3_NL_PORT(5)));
    CHECK(TRN3_BAR0_LINK(3) == 0x30300u);
    CHECK(TRN3_LINK_LANES_CONFIGURED(r.rd(TRN3_BAR0_LINK(3) + TRN3_LINK_LANES)) == 8);
    CHECK(TRN3_LINK_LANES_CONFIGURED(r.rd(TRN3_BAR0_LINK(5) + TRN3_LINK_LANES)) == 16);
    std::uint32_t v = 0;
    CHECK(r.bar0.access(tlm::TLM_READ_COMMAND, TRN3_BAR0_LINK(4) + TRN3_LINK_LANES, &v, 4) ==
          tlm::TLM_ADDRESS_ERROR_RESPONSE);  // no link there: no registers
}

TEST_CASE("a BAR0 offset no block claims is an address error") {
    chip_rig r;
    std::uint32_t v = 0;
    for (std::uint64_t off : {0x1000ull, TRN3_BAR0_MAILBOX + 0x1000ull, TRN3_BAR0_HBM(4) + 0ull, 0x300000ull,
                              TRN3_BAR0_DMA(TRN3_DMA_QUEUES) + 0ull, TRN3_BAR0_SIZE - 4})
        CHECK(r.bar0.access(tlm::TLM_READ_COMMAND, off, &v, 4) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
}

TEST_CASE("device_memory() gives HBM stack s at s x 64 GiB, 36 GiB each, and nothing outside the stacks") {
    chip_rig r;
    for (unsigned s = 0; s < TRN3_DEV_HBM_STACKS; ++s) {
        CHECK(r.chip.device_memory(TRN3_DEV_HBM_BASE(s), 1) == r.chip.hbm[s]->data());
        CHECK(r.chip.device_memory(TRN3_DEV_HBM_BASE(s) + 36 * GiB - 8, 8) == r.chip.hbm[s]->data() + 36 * GiB - 8);
        CHECK(r.chip.device_memory(TRN3_DEV_HBM_BASE(s) + 36 * GiB - 4, 8) == nullptr);  // runs past the stack
        CHECK(r.chip.device_memory(TRN3_DEV_HBM_BASE(s) + 40 * GiB, 1) == nullptr);  // between stacks
    }
    CHECK(TRN3_DEV_HBM_BASE(3) == 0x3000000000ull);
    CHECK(r.chip.device_memory(TRN3_DEV_HBM_BASE(4), 1) == nullptr);
}

TEST_CASE(
    "the network reaches HBM stack s at s x 64 GiB once the firmware has trained it, other addresses are errors") {
    chip_rig r;
    std::uint64_t v = 0x0123456789ABCDEFull;
    CHECK(r.noc.access(tlm::TLM_WRITE_COMMAND, TRN3_DEV_HBM_BASE(2) + 0x40, &v, 8) !=
          tlm::TLM_OK_RESPONSE);  // untrained
    r.boot();
    for (unsigned s = 0; s < TRN3_DEV_HBM_STACKS; ++s)
        CHECK(r.rd(TRN3_BAR0_HBM(s) + TRN3_HBM_TRAIN_STATUS) ==
              TRN3_HBM_TRAIN_READY);  // the firmware trained every stack
    for (unsigned s = 0; s < TRN3_DEV_HBM_STACKS; ++s) {
        std::uint64_t w = 0x1111111111111111ull * (s + 1);
        CHECK(r.noc.access(tlm::TLM_WRITE_COMMAND, TRN3_DEV_HBM_BASE(s) + 35 * GiB, &w, 8) == tlm::TLM_OK_RESPONSE);
        CHECK(std::memcmp(r.chip.device_memory(TRN3_DEV_HBM_BASE(s) + 35 * GiB, 8), &w, 8) == 0);
    }
    CHECK(r.noc.access(tlm::TLM_READ_COMMAND, TRN3_DEV_HBM_BASE(1) + 36 * GiB, &v, 8) ==
          tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK(r.noc.access(tlm::TLM_READ_COMMAND, TRN3_DEV_HBM_STRIPED_BASE + TRN3_DEV_HBM_STRIPED_SIZE - 8, &v, 8) ==
          tlm::TLM_ADDRESS_ERROR_RESPONSE);  // past the stacks' end
    CHECK(r.noc.access(tlm::TLM_READ_COMMAND, TRN3_DEV_SBUF_BASE(TRN3_DEV_CORES), &v, 8) ==
          tlm::TLM_ADDRESS_ERROR_RESPONSE);  // past the last core's SBUF: nothing
}

TEST_CASE("each core's SBUF is device memory at 448 GiB + c x 32 MiB, partition a / 256 KiB at byte a mod 256 KiB, "
          "in its latency plus its bytes at the port's bandwidth") {
    chip_rig r;
    r.boot();
    // 1 KiB across the end of core 3's partition 5 into partition 6.
    const std::uint64_t at = 6 * (256 << 10) - 512;
    auto data = test::pattern(1024, 3);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    CHECK(r.noc.access(tlm::TLM_WRITE_COMMAND, TRN3_DEV_SBUF_BASE(3) + at, data.data(), 1024, &delay) ==
          tlm::TLM_OK_RESPONSE);
    // 20 ns, then 1,024 bytes at 528 GB/s (1.939 ns), as the noc adds nothing of its own here.
    CHECK(delay.to_seconds() * 1e9 == Approx(20 + 1024 / 528.0).epsilon(1e-3));
    CHECK(std::memcmp(r.chip.nc[3]->sbuf(5) + (256 << 10) - 512, data.data(), 512) == 0);
    CHECK(std::memcmp(r.chip.nc[3]->sbuf(6), data.data() + 512, 512) == 0);
    CHECK(r.chip.nc[2]->sbuf(5)[(256 << 10) - 512] != data[0]);  // another core's SBUF kept its bytes
    std::vector<std::uint8_t> back(1024);
    CHECK(r.noc.access(tlm::TLM_READ_COMMAND, TRN3_DEV_SBUF_BASE(3) + at, back.data(), 1024) == tlm::TLM_OK_RESPONSE);
    CHECK(back == data);
    // Past the 32 MiB of SBUF, or across its end: an address error, nothing written.
    std::uint64_t v = 0x5A5A5A5A5A5A5A5Aull;
    CHECK(r.noc.access(tlm::TLM_WRITE_COMMAND, TRN3_DEV_SBUF_BASE(7) + (32 << 20) - 4, &v, 8) ==
          tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK(r.chip.nc[7]->sbuf(127)[(256 << 10) - 4] == 0);
}

TEST_CASE("the striped window puts granule after granule on stack after stack, each stack's part from its byte 0") {
    param_registry::instance().set_pending_text("chip0.hbm_stripe.granule", "4KiB", "test");
    chip_rig r;
    r.boot();
    // 20 KiB from 1 KiB into granule 6 of the window: granules 6..11, on
    // stacks 2, 3, 0, 1, 2, 3 at their bytes 4 KiB (granules 6, 7) and 8 KiB (8..11).
    const std::uint64_t at = 6 * 4096 + 1024, bytes = 20 * 1024;
    auto data = test::pattern(bytes, 7);
    CHECK(r.noc.access(tlm::TLM_WRITE_COMMAND, TRN3_DEV_HBM_STRIPED_BASE + at, data.data(), unsigned(bytes)) ==
          tlm::TLM_OK_RESPONSE);
    for (std::uint64_t x = at; x < at + bytes; x += 512) {
        const std::uint64_t granule = x / 4096, stack = granule % 4, offset = granule / 4 * 4096 + x % 4096;
        INFO("byte " << x << " of the window: stack " << stack << " byte " << offset);
        CHECK(*r.chip.device_memory(TRN3_DEV_HBM_BASE(stack) + offset, 1) == data[x - at]);
    }
    std::vector<std::uint8_t> back(bytes);
    CHECK(r.noc.access(tlm::TLM_READ_COMMAND, TRN3_DEV_HBM_STRIPED_BASE + at, back.data(), unsigned(bytes)) ==
          tlm::TLM_OK_RESPONSE);
    CHECK(back == data);
    // Timing: 1 MiB in 4 KiB stripes is a quarter on each stack, read at
    // once, where 1 MiB of one stack streams from it alone (each from an
    // idle chip: 1 ms apart): 431 against 971 ns (a quarter of the streaming
    // time, the same latency of about 0.11 us).
    std::vector<std::uint8_t> mib(1 << 20);
    sc_core::sc_time striped(1, sc_core::SC_MS), one_stack(2, sc_core::SC_MS);
    const sc_core::sc_time striped_at = striped, one_stack_at = one_stack;
    CHECK(r.noc.access(tlm::TLM_READ_COMMAND, TRN3_DEV_HBM_STRIPED_BASE + GiB, mib.data(), 1 << 20, &striped) ==
          tlm::TLM_OK_RESPONSE);
    CHECK(r.noc.access(tlm::TLM_READ_COMMAND, TRN3_DEV_HBM_BASE(1) + 2 * GiB, mib.data(), 1 << 20, &one_stack) ==
          tlm::TLM_OK_RESPONSE);
    INFO("striped " << (striped - striped_at) << ", one stack " << (one_stack - one_stack_at));
    CHECK((striped - striped_at) * 2 < one_stack - one_stack_at);
    // Past a stack's 36 GiB (window byte 4 x 36 GiB on): the stack's address error.
    std::uint64_t v = 0;
    CHECK(r.noc.access(tlm::TLM_READ_COMMAND, TRN3_DEV_HBM_STRIPED_BASE + 4 * 36 * GiB, &v, 8) ==
          tlm::TLM_ADDRESS_ERROR_RESPONSE);
    // What a stack refuses is refused whole, before any stack sees it: a
    // write with byte enables across two stacks changes neither.
    std::vector<std::uint8_t> eight(8192, 0xEE);
    unsigned char enables[4] = {0xFF, 0, 0xFF, 0};
    tlm::tlm_generic_payload tx;
    sc_core::sc_time delay;
    tx.set_command(tlm::TLM_WRITE_COMMAND);
    tx.set_address(TRN3_DEV_HBM_STRIPED_BASE + 4096);  // granules 1 and 2: stacks 1 and 2
    tx.set_data_ptr(eight.data());
    tx.set_data_length(8192);
    tx.set_streaming_width(8192);
    tx.set_byte_enable_ptr(enables);
    tx.set_byte_enable_length(4);
    r.chip.hbm_stripe.in.get_base_interface().b_transport(tx, delay);
    CHECK(tx.get_response_status() == tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    CHECK(*r.chip.device_memory(TRN3_DEV_HBM_BASE(1), 1) != 0xEE);
    CHECK(*r.chip.device_memory(TRN3_DEV_HBM_BASE(2), 1) != 0xEE);
    tx.set_byte_enable_ptr(nullptr);
    tx.set_streaming_width(4);  // a streaming write
    tx.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    r.chip.hbm_stripe.in.get_base_interface().b_transport(tx, delay);
    CHECK(tx.get_response_status() == tlm::TLM_BURST_ERROR_RESPONSE);
    CHECK(tx.get_streaming_width() == 4);
    CHECK(*r.chip.device_memory(TRN3_DEV_HBM_BASE(1), 1) != 0xEE);
}

TEST_CASE("CORE_RESET resets exactly the cores whose bits are written, keeps their SBUF, and reads as 0") {
    chip_rig r;
    r.wr(TRN3_BAR0_CORE(2) + 0x400 + 4 * 9, 5);
    r.wr(TRN3_BAR0_CORE(3) + 0x400 + 4 * 9, 6);
    std::memset(r.chip.nc[2]->sbuf(5), 0xA5, 16);
    r.wr(TRN3_CHIP_CORE_RESET, TRN3_CORE_RESET_BIT(2));
    CHECK(r.chip.nc[2]->semaphore(9) == 0);
    CHECK(r.chip.nc[3]->semaphore(9) == 6);
    CHECK(r.chip.nc[2]->sbuf(5)[15] == 0xA5);  // SBUF keeps its contents
    CHECK(r.rd(TRN3_CHIP_CORE_RESET) == 0);
}

TEST_CASE(
    "CORE_RESET stops a kernel blocked on a semaphore: CORE_STATE goes from running to idle and the core launches again") {
    chip_rig r;
    r.boot();
    program blocked;
    blocked.on(engine::sync).nop().wait(9, 1).halt();
    launch(r, 4, load(r, blocked, 0x100000), mask_of(engine::sync));
    sc_core::sc_start(sc_time(10, SC_US));
    CHECK(core_state(r, 4) == TRN3_CORE_STATE_RUNNING);
    r.wr(TRN3_CHIP_CORE_RESET, TRN3_CORE_RESET_BIT(4));
    CHECK(core_state(r, 4) == TRN3_CORE_STATE_IDLE);
    program p;
    p.on(engine::vector).memset(sbuf(dtype::fp32, 0, 1, 0, 1), 3.5f).halt();
    launch(r, 4, load(r, p, 0x200000), mask_of(engine::vector));
    sc_core::sc_start(sc_time(10, SC_US));
    float x = 0;
    std::memcpy(&x, r.chip.nc[4]->sbuf(0), 4);
    CHECK(x == 3.5f);
    CHECK(core_state(r, 4) == TRN3_CORE_STATE_IDLE);
    CHECK(r.rd(TRN3_CHIP_ERR_STATUS) == 0);
}

TEST_CASE("a kernel that stops on an error sets ERR_STATUS bit c and CORE_STATE 2, and raises the error vector") {
    chip_rig r;
    r.boot();
    program p;
    p.on(engine::vector)
        .matmul(psum(dtype::fp32, 0, 1, 0, 1), sbuf(dtype::bf16, 0, 1, 0, 1), sbuf(dtype::bf16, 0, 1, 2, 1));
    launch(r, 6, load(r, p, 0x100000), mask_of(engine::vector));
    CHECK_FALSE(r.chip.control->error_irq.level());
    sc_core::sc_start(sc_time(10, SC_US));
    CHECK(r.rd(TRN3_CHIP_ERR_STATUS) == TRN3_ERR_CORE(6));
    CHECK(core_state(r, 6) == TRN3_CORE_STATE_ERROR);
    CHECK(r.chip.nc[6]->error(engine::vector) == neuroncore::err_illegal);
    CHECK(r.chip.control->error_irq.level());
    CHECK(r.chip.ep.msix_pending(TRN3_MSIX_ERROR));
    for (unsigned c = 0; c < TRN3_DEV_CORES; ++c)
        if (c != 6) CHECK(core_state(r, c) == TRN3_CORE_STATE_IDLE);
}

TEST_CASE(
    "ERR_STATUS is write-1-to-clear: writing 0 keeps a cause, writing its bit clears it and lowers the error interrupt") {
    chip_rig r;
    CHECK(r.rd(TRN3_CHIP_ERR_STATUS) == 0);
    r.wr(TRN3_CHIP_FW_EVENT, TRN3_FW_EVENT_REPORT);  // a cause: the firmware's event
    CHECK(r.rd(TRN3_CHIP_ERR_STATUS) == TRN3_ERR_FIRMWARE);
    CHECK(r.chip.control->error_irq.level());
    CHECK(r.chip.ep.msix_pending(TRN3_MSIX_ERROR));
    r.wr(TRN3_CHIP_ERR_STATUS, 0);
    r.wr(TRN3_CHIP_ERR_STATUS, TRN3_ERR_CORE(0));  // another bit: no effect on this one
    CHECK(r.rd(TRN3_CHIP_ERR_STATUS) == TRN3_ERR_FIRMWARE);
    CHECK(r.chip.control->error_irq.level());
    r.wr(TRN3_CHIP_ERR_STATUS, TRN3_ERR_FIRMWARE);
    CHECK(r.rd(TRN3_CHIP_ERR_STATUS) == 0);
    CHECK_FALSE(r.chip.control->error_irq.level());
}

TEST_CASE(
    "ERR_ENABLE (reset: all) chooses the causes that interrupt: a disabled cause is recorded and interrupts once enabled") {
    chip_rig r;
    CHECK(r.rd(TRN3_CHIP_ERR_ENABLE) == 0xFFFFFFFFu);
    r.wr(TRN3_CHIP_ERR_ENABLE, ~TRN3_ERR_FIRMWARE);
    r.wr(TRN3_CHIP_FW_EVENT, TRN3_FW_EVENT_REPORT);
    CHECK(r.rd(TRN3_CHIP_ERR_STATUS) == TRN3_ERR_FIRMWARE);
    CHECK_FALSE(r.chip.control->error_irq.level());
    CHECK_FALSE(r.chip.ep.msix_pending(TRN3_MSIX_ERROR));
    r.wr(TRN3_CHIP_ERR_ENABLE, TRN3_ERR_FIRMWARE);
    CHECK(r.chip.control->error_irq.level());
    CHECK(r.chip.ep.msix_pending(TRN3_MSIX_ERROR));
}

TEST_CASE("LNC resets to 1, holds 1 or 2, and ignores other values") {
    chip_rig r;
    CHECK(r.rd(TRN3_CHIP_LNC) == 1);
    r.wr(TRN3_CHIP_LNC, 2);
    CHECK(r.rd(TRN3_CHIP_LNC) == 2);
    CHECK(r.chip.control->lnc() == 2);
    for (std::uint32_t bad : {0u, 3u, 4u, 0xFFFFFFFFu}) {
        r.wr(TRN3_CHIP_LNC, bad);
        CHECK(r.rd(TRN3_CHIP_LNC) == 2);
    }
    r.wr(TRN3_CHIP_LNC, 1);
    CHECK(r.rd(TRN3_CHIP_LNC) == 1);
}

TEST_CASE("a DMA queue that stops on an error sets ERR_STATUS bit 8 + q") {
    chip_rig r;
    r.boot();
    // The source lies between stacks 0 and 1: no target.
    submit_device_ring(r, 3, {TRN3_DEV_HBM_BASE(0) + 40 * GiB, TRN3_DEV_HBM_BASE(2), 64, 0, 1});
    sc_core::sc_start(sc_time(20, SC_US));
    CHECK(r.rd(TRN3_BAR0_DMA(3) + TRN3_DMA_STATUS) == TRN3_DMA_STATUS_VALUE(TRN3_DMA_STATE_ERROR, TRN3_DMA_ERR_DEVICE));
    CHECK(r.rd(TRN3_CHIP_ERR_STATUS) == TRN3_ERR_DMA(3));
    CHECK(TRN3_ERR_DMA(3) == (1u << 11));
    CHECK(r.chip.ep.msix_pending(TRN3_MSIX_ERROR));
}

TEST_CASE(
    "an uncorrectable error in HBM stack s, injected through its controller, sets ERR_STATUS bit 24 + s, and the firmware reports its event") {
    chip_rig r;
    r.boot();
    const std::uint64_t word = 0x123440;
    std::uint32_t expected = 0;
    for (unsigned s = 0; s < TRN3_DEV_HBM_STACKS; ++s) {
        r.wr(TRN3_BAR0_HBM(s) + TRN3_HBM_INJECT_ADDR, word, 8);
        r.wr(TRN3_BAR0_HBM(s) + TRN3_HBM_INJECT_MASK, 0x3, 8);  // two bits: uncorrectable
        std::uint64_t v = 0;
        CHECK(r.noc.access(tlm::TLM_READ_COMMAND, TRN3_DEV_HBM_BASE(s) + word, &v, 8) ==
              tlm::TLM_GENERIC_ERROR_RESPONSE);
        CHECK(r.chip.hbm[s]->mem_error.level());
        expected |= TRN3_ERR_HBM(s);
        CHECK(r.rd(TRN3_CHIP_ERR_STATUS) == expected);
    }
    CHECK(expected == 0x0F000000u);
    sc_core::sc_start(sc_time(200, SC_US));  // the firmware's handler runs
    CHECK(r.rd(TRN3_CHIP_ERR_STATUS) == (expected | TRN3_ERR_FIRMWARE));
}

TEST_CASE(
    "through PCIe the chip is 1d0f:7364 with BAR0 16 MiB, BAR2 512 GiB prefetchable, BAR4 64 KiB, 32 MSI-X vectors") {
    test::host_rig h;
    std::uint32_t id = 0, version = 0;
    h.run([&] {
        h.enumerate();
        for (const auto& f : h.functions)
            if (f.device == TRN3_PCI_DEVICE_TRN3) {
                id = h.adapter.mmio_read32(f.bars[0].base + TRN3_CHIP_ID);
                version = h.adapter.mmio_read32(f.bars[0].base + TRN3_CHIP_VERSION);
            }
    });
    REQUIRE(h.functions.size() == 2);  // the root port and the chip
    const driver::pci_function& f = h.functions[1];
    CHECK(f.vendor == TRN3_PCI_VENDOR_AMAZON);
    CHECK(f.device == TRN3_PCI_DEVICE_TRN3);
    CHECK(f.class_code == TRN3_PCI_CLASS_ACCELERATOR);
    CHECK(f.msix_vectors == 32);
    REQUIRE(f.bars.size() == 3);
    CHECK((f.bars[0].index == 0 && f.bars[0].size == TRN3_BAR0_SIZE && !f.bars[0].prefetchable));
    CHECK((f.bars[1].index == 2 && f.bars[1].size == TRN3_BAR2_SIZE && f.bars[1].prefetchable && f.bars[1].is64));
    CHECK((f.bars[2].index == TRN3_EP_MSIX_BAR && f.bars[2].size == 64ull << 10 && !f.bars[2].prefetchable));
    CHECK(id == TRN3_CHIP_ID_VALUE);
    CHECK(version == TRN3_CHIP_VERSION_VALUE);
}

TEST_CASE(
    "through PCIe BAR2 maps the device address map from 0: a host write lands in HBM stack s, an unclaimed address reads all ones") {
    test::host_rig h;
    std::uint64_t back = 0, hole = 0;
    const std::uint64_t v = 0xFEEDFACECAFEBEEFull;
    h.run([&] {
        h.bring_up();
        std::uint64_t w = v;
        h.adapter.mmio_write(h.device.bar2() + TRN3_DEV_HBM_BASE(3) + 0x100, &w, 8);
        h.adapter.mmio_read(h.device.bar2() + TRN3_DEV_HBM_BASE(3) + 0x100, &back, 8);
        h.adapter.mmio_read(h.device.bar2() + TRN3_DEV_HBM_BASE(0) + 40 * GiB, &hole, 8);
    });
    CHECK(std::memcmp(h.chip.device_memory(TRN3_DEV_HBM_BASE(3) + 0x100, 8), &v, 8) == 0);
    CHECK(back == v);
    CHECK(hole == ~0ull);
}

TEST_CASE(
    "through PCIe a stopped kernel writes a notification (core, status, error, sequence) and raises vector 2, and a full ring drops it") {
    test::host_rig h;
    std::vector<trn3_notification> entries(2);
    std::uint32_t head_full = 0, head_after = 0;
    trn3_notification fourth{};
    std::string counters;
    h.run([&] {
        h.bring_up();
        // A two-entry ring of our own in place of the driver's.
        const driver::dma_buffer ring = h.adapter.alloc_dma(h.device.bdf(), 2 * sizeof(trn3_notification));
        const std::uint64_t q = h.device.bar0() + TRN3_BAR0_NOTIFY;
        const std::uint32_t head0 = h.bar0_read(TRN3_BAR0_NOTIFY + TRN3_NOTIFY_HEAD);
        REQUIRE(head0 == 0);
        h.adapter.mmio_write32(q + TRN3_NOTIFY_CONTROL, 0);
        h.adapter.mmio_write64(q + TRN3_NOTIFY_BASE, ring.bus_address);
        h.adapter.mmio_write32(q + TRN3_NOTIFY_SIZE, 2);
        h.adapter.mmio_write32(q + TRN3_NOTIFY_TAIL, 0);
        h.adapter.mmio_write32(q + TRN3_NOTIFY_CONTROL, TRN3_NOTIFY_CONTROL_ENABLE);
        program good;
        good.on(engine::vector).memset(sbuf(dtype::fp32, 0, 1, 0, 1), 1.0f).halt();
        program bad;
        bad.on(engine::scalar).memset(sbuf(dtype::fp32, 0, 1, 1u << 20, 1), 1.0f).halt();  // outside SBUF: error 2
        std::uint64_t code = 0;
        REQUIRE(h.device.alloc(1 << 20, code) == driver::status::ok);
        auto put = [&](const program& p, std::uint64_t at) {
            return p.load([&](std::uint64_t a, const void* d,
                              std::size_t n) { REQUIRE(h.device.write(a, d, n) == driver::status::ok); },
                          at);
        };
        const auto good_pcs = put(good, code), bad_pcs = put(bad, code + 0x10000);
        auto run_on = [&](unsigned core, const std::array<std::uint64_t, isa::engine_count>& pcs, unsigned mask) {
            REQUIRE(h.device.launch(core, pcs, mask) == driver::status::ok);
            h.adapter.sleep_ns(50'000);
        };
        run_on(1, good_pcs, mask_of(engine::vector));
        run_on(2, bad_pcs, mask_of(engine::scalar));
        run_on(3, good_pcs, mask_of(engine::vector));  // the ring is full: dropped
        head_full = h.bar0_read(TRN3_BAR0_NOTIFY + TRN3_NOTIFY_HEAD);
        std::memcpy(entries.data(), ring.cpu, 2 * sizeof(trn3_notification));
        h.adapter.mmio_write32(q + TRN3_NOTIFY_TAIL, 2);  // consumed both
        run_on(4, good_pcs, mask_of(engine::vector));
        head_after = h.bar0_read(TRN3_BAR0_NOTIFY + TRN3_NOTIFY_HEAD);
        std::memcpy(&fourth, ring.cpu, sizeof fourth);
        counters = h.device.counters();
    });
    CHECK(head_full == 2);
    CHECK((entries[0].core == 1 && entries[0].status == TRN3_NOTIFY_STATUS_DONE && entries[0].error == 0 &&
           entries[0].sequence == 1));
    CHECK((entries[1].core == 2 && entries[1].status == TRN3_NOTIFY_STATUS_ERROR &&
           entries[1].error == neuroncore::err_out_of_bounds && entries[1].sequence == 2));
    CHECK(head_after == 3);
    CHECK((fourth.core == 4 && fourth.status == TRN3_NOTIFY_STATUS_DONE &&
           fourth.sequence == 3));  // entry 0 again; the dropped one took no number
    CHECK(counters.find("neuron/interrupts: mailbox 0 notify 3 dma") !=
          std::string::npos);  // vector 2, once per entry written
}
