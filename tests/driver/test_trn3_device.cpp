// The driver's device layer (sw/driver trn3_device) over a real chip behind
// a real host (tests/chip/rig.h): probe (BARs, MSI-X, rings), device memory
// allocation, transfers through DMA queue 0, kernels and their
// notifications, the firmware's boot and mailbox, and the counters.
#include <catch2/catch.hpp>

#include <cstring>

#include <fmt/format.h>

#include "../chip/rig.h"
#include "../common/pattern.h"
#include "trn3/kernels/builder.h"
#include "trn3/spec/mailbox.h"
#include "trn3/spec/pci.h"

namespace Catch {
template <>
struct StringMaker<trn3::driver::status> {
    static std::string convert(trn3::driver::status s) { return trn3::driver::status_name(s); }
};
}  // namespace Catch

using namespace trn3;
using namespace trn3::kernels;
using driver::status;
using isa::engine;
using test::host_rig;

namespace {

constexpr std::uint64_t GiB = 1ull << 30;
constexpr unsigned mask_of(engine e) { return 1u << static_cast<unsigned>(e); }

// Allocates device memory for `p`, writes it there through the driver and
// returns each engine's start address.
std::array<std::uint64_t, isa::engine_count> load(host_rig& h, const program& p) {
    std::uint64_t at = 0;
    REQUIRE(h.device.alloc(64 << 10, at) == status::ok);
    return p.load(
        [&](std::uint64_t a, const void* d, std::size_t n) { REQUIRE(h.device.write(a, d, n) == status::ok); }, at);
}

// A kernel whose Vector engine sets SBUF partition 0, byte 0 to `value`.
program memset_kernel(float value) {
    program p;
    p.on(engine::vector).memset(sbuf(dtype::fp32, 0, 1, 0, 1), value).halt();
    return p;
}

float sbuf0(host_rig& h, unsigned core) {
    float x = 0;
    std::memcpy(&x, h.chip.nc[core]->sbuf(0), 4);
    return x;
}

}  // namespace

TEST_CASE("probe takes the Trainium3 among the enumerated functions: its bdf and BARs, its CHIP_ID checked") {
    host_rig h;
    status s = status::timeout;
    h.run([&] {
        h.enumerate();
        s = h.device.probe(h.functions);
    });
    REQUIRE(s == status::ok);
    const driver::pci_function& chip = h.functions.at(1);
    CHECK(h.device.bdf() == 0x0100);
    CHECK(h.device.function().device == TRN3_PCI_DEVICE_TRN3);
    CHECK(h.device.bar0() == chip.bars.at(0).base);
    CHECK(h.device.bar2() == chip.bars.at(1).base);
    CHECK(h.chip.ep.bdf() == 0x0100);
    REQUIRE_FALSE(h.adapter.lines.empty());
    CHECK(h.adapter.lines.back() ==
          fmt::format("trn3 01:00.0: BAR0 {:#x} BAR2 {:#x}, Gen6 x16", chip.bars.at(0).base, chip.bars.at(1).base));
}

TEST_CASE("probe programs all 32 MSI-X vectors to the MSI window with data 0x7300 + vector, and enables MSI-X") {
    host_rig h;
    std::vector<std::uint32_t> table(4 * TRN3_MSIX_VECTORS);
    std::uint32_t control = 0;
    h.run([&] {
        h.probe();
        const std::uint64_t bar4 = h.functions.at(1).bars.at(2).base;
        for (unsigned v = 0; v < TRN3_MSIX_VECTORS; ++v)
            h.adapter.mmio_read(bar4 + v * TRN3_MSIX_ENTRY_SIZE, &table[4 * v], TRN3_MSIX_ENTRY_SIZE);
        control = h.adapter.config().read(h.device.bdf(), TRN3_PCI_MSIX_CAP + TRN3_MSIX_CONTROL, 2);
    });
    for (unsigned v = 0; v < TRN3_MSIX_VECTORS; ++v) {
        CHECK(table[4 * v + TRN3_MSIX_ENTRY_ADDR_LO / 4] == TRN3_MSI_WINDOW_BASE);
        CHECK(table[4 * v + TRN3_MSIX_ENTRY_ADDR_HI / 4] == 0);
        CHECK(table[4 * v + TRN3_MSIX_ENTRY_DATA / 4] == 0x7300 + v);
        CHECK(table[4 * v + TRN3_MSIX_ENTRY_CONTROL / 4] == 0);  // unmasked
    }
    CHECK((control & TRN3_MSIX_ENABLE) != 0);
    CHECK((control & TRN3_MSIX_FUNCTION_MASK) == 0);
}

TEST_CASE("probe sets up DMA queue 0 (256 descriptors, their records, enabled) and the 64-entry notification ring") {
    host_rig h;
    std::uint64_t ring = 0, records = 0, notify = 0;
    std::uint32_t size = 0, control = 0, notify_size = 0, notify_control = 0;
    h.run([&] {
        h.probe();
        const std::uint64_t q0 = h.device.bar0() + TRN3_BAR0_DMA(0);
        h.adapter.mmio_read(q0 + TRN3_DMA_RING_BASE, &ring, 8);
        h.adapter.mmio_read(q0 + TRN3_DMA_CPL_BASE, &records, 8);
        size = h.adapter.mmio_read32(q0 + TRN3_DMA_RING_SIZE);
        control = h.adapter.mmio_read32(q0 + TRN3_DMA_CONTROL);
        h.adapter.mmio_read(h.device.bar0() + TRN3_BAR0_NOTIFY + TRN3_NOTIFY_BASE, &notify, 8);
        notify_size = h.bar0_read(TRN3_BAR0_NOTIFY + TRN3_NOTIFY_SIZE);
        notify_control = h.bar0_read(TRN3_BAR0_NOTIFY + TRN3_NOTIFY_CONTROL);
    });
    CHECK(size == 256);
    CHECK(control == TRN3_DMA_CONTROL_ENABLE);  // ring in host memory
    CHECK(notify_size == 64);
    CHECK(notify_control == TRN3_NOTIFY_CONTROL_ENABLE);
    // Host memory from the host's DMA base (1 GiB), in the order probe asks for it: ring, records, bounce buffer, notifications.
    CHECK(ring == GiB);
    CHECK(records == GiB + 256 * 32);
    CHECK(notify == GiB + 256 * 32 + 4096 + (4 << 20));
}

TEST_CASE("probe answers no_device without a Trainium3, and for a function whose BAR0 does not read CHIP_ID") {
    host_rig h;
    status none = status::ok, wrong = status::ok;
    h.run([&] {
        h.enumerate();
        none = h.device.probe(std::vector<driver::pci_function>{h.functions.at(0)});  // the root port only
        driver::pci_function f = h.functions.at(1);
        f.bars.at(0).base += TRN3_BAR0_MAILBOX;  // reads the mailbox, not the chip's ID
        wrong = h.device.probe(f);
    });
    CHECK(none == status::no_device);
    CHECK(wrong == status::no_device);
}

TEST_CASE("every call before a successful probe answers no_device") {
    host_rig h;
    std::vector<status> got;
    h.run([&] {
        std::uint64_t a = 0;
        std::uint8_t b[16] = {};
        driver::firmware_info info;
        driver::core_result result;
        got = {h.device.wait_boot(1000),      h.device.handshake(info),
               h.device.alloc(4096, a),       h.device.write(0, b, sizeof b),
               h.device.read(b, 0, sizeof b), h.device.copy(GiB, 0, sizeof b, true),
               h.device.launch(0, {}, 1),     h.device.wait_core(0, 1000, result),
               h.device.reset_core(0)};
    });
    for (status s : got) CHECK(s == status::no_device);
}

TEST_CASE("probe reports out_of_memory when the host has no memory left for the rings") {
    param_registry::instance().set_pending_text("host0.ddr.size", "1028MiB", "test");  // 4 MiB above the DMA base
    host_rig h;
    status s = status::ok;
    h.run([&] {
        h.enumerate();
        s = h.device.probe(h.functions);  // ring and records fit, the 4 MiB bounce buffer does not
    });
    CHECK(s == status::out_of_memory);
}

TEST_CASE("alloc is first fit from HBM stack 0, rounding every size up to 4 KiB") {
    host_rig h;
    std::uint64_t a = 1, b = 1, c = 1;
    h.run([&] {
        h.probe();
        CHECK(h.device.alloc(1, a) == status::ok);
        CHECK(h.device.alloc(5000, b) == status::ok);
        CHECK(h.device.alloc(4096, c) == status::ok);
    });
    CHECK(a == TRN3_DEV_HBM_BASE(0));
    CHECK(b == TRN3_DEV_HBM_BASE(0) + 0x1000);
    CHECK(c == TRN3_DEV_HBM_BASE(0) + 0x3000);
}

TEST_CASE(
    "alloc fills a stack before the next, more than a stack is bad_argument, with every stack full, out_of_memory") {
    host_rig h;
    std::vector<std::uint64_t> at(5, 1);
    std::vector<status> got;
    h.run([&] {
        h.probe();
        got.push_back(h.device.alloc(36 * GiB + 1, at[4]));
        got.push_back(h.device.alloc(0, at[4]));
        got.push_back(h.device.alloc(20 * GiB, at[0]));
        got.push_back(h.device.alloc(20 * GiB, at[1]));  // does not fit in what is left of stack 0
        got.push_back(h.device.alloc(16 * GiB, at[2]));  // does
        got.push_back(h.device.alloc(36 * GiB, at[3]));
        got.push_back(h.device.alloc(36 * GiB, at[3]));
        got.push_back(h.device.alloc(16 * GiB, at[4]));
        got.push_back(h.device.alloc(4096, at[4]));
    });
    const std::vector<status> expected = {status::bad_argument, status::bad_argument, status::ok,
                                          status::ok,           status::ok,           status::ok,
                                          status::ok,           status::ok,           status::out_of_memory};
    CHECK(got == expected);
    CHECK(at[0] == TRN3_DEV_HBM_BASE(0));
    CHECK(at[1] == TRN3_DEV_HBM_BASE(1));
    CHECK(at[2] == TRN3_DEV_HBM_BASE(0) + 20 * GiB);
    CHECK(at[3] == TRN3_DEV_HBM_BASE(3));  // the second 36 GiB: stacks 1 and 2 are partly used
}

TEST_CASE("free coalesces with both neighbours, so the freed space is found again first fit") {
    host_rig h;
    std::uint64_t a = 0, b = 0, c = 0, d = 0, again = 0, big = 0;
    h.run([&] {
        h.probe();
        REQUIRE(h.device.alloc(4096, a) == status::ok);
        REQUIRE(h.device.alloc(8192, b) == status::ok);
        REQUIRE(h.device.alloc(4096, c) == status::ok);
        REQUIRE(h.device.alloc(4096, d) == status::ok);  // keeps c's right side in use
        CHECK(h.device.free(a) == status::ok);
        CHECK(h.device.free(c) == status::ok);
        CHECK(h.device.free(b) == status::ok);  // joins a (before) and c (after)
        CHECK(h.device.alloc(16384, big) == status::ok);
        CHECK(h.device.free(d) == status::ok);  // joins the rest of the stack after it
        CHECK(h.device.free(big) == status::ok);
        CHECK(h.device.alloc(36 * GiB, again) == status::ok);  // the whole stack is one free range again
    });
    CHECK(big == a);
    CHECK(again == TRN3_DEV_HBM_BASE(0));
}

TEST_CASE("free of an address that was not allocated, or freed already, is bad_argument") {
    host_rig h;
    std::vector<status> got;
    h.run([&] {
        h.probe();
        std::uint64_t a = 0;
        REQUIRE(h.device.alloc(8192, a) == status::ok);
        got = {h.device.free(a + 4096), h.device.free(TRN3_DEV_HBM_BASE(2)), h.device.free(a), h.device.free(a)};
    });
    CHECK(got == std::vector<status>{status::bad_argument, status::bad_argument, status::ok, status::bad_argument});
}

TEST_CASE("write and read move bytes exactly, through the 4 MiB bounce buffer one descriptor at a time") {
    host_rig h;
    const auto data = test::pattern((9 << 20) + 123, 1);
    std::vector<std::uint8_t> back(data.size());
    std::uint64_t at = 0;
    status w = status::timeout, r = status::timeout;
    std::string counters;
    h.run([&] {
        h.bring_up();
        REQUIRE(h.device.alloc(data.size(), at) == status::ok);
        w = h.device.write(at + 0, data.data(), data.size());
        r = h.device.read(back.data(), at, back.size());
        counters = h.device.counters();
    });
    CHECK(w == status::ok);
    CHECK(r == status::ok);
    CHECK(back == data);
    CHECK(std::memcmp(h.chip.device_memory(at, data.size()), data.data(), data.size()) == 0);
    CHECK(counters.find("neuron/dma_descriptors: 6\n") != std::string::npos);  // 3 each way
}

TEST_CASE(
    "copy() from a host address outside the IOMMU's mappings is a dma_error: device memory unchanged, the queue recovers") {
    host_rig h;
    const std::vector<std::uint8_t> before(4096, 0x5A), after(4096, 0x77);
    std::vector<std::uint8_t> back(4096);
    status stray = status::ok, next = status::timeout;
    std::uint64_t at = 0;
    std::string counters;
    h.run([&] {
        h.bring_up();
        REQUIRE(h.device.alloc(4096, at) == status::ok);
        REQUIRE(h.device.write(at, before.data(), before.size()) == status::ok);
        const driver::dma_buffer unmapped = h.adapter.alloc_unmapped(4096);
        std::memset(unmapped.cpu, 0xC3, 4096);
        stray = h.device.copy(unmapped.bus_address, at, 4096, true);
        REQUIRE(h.device.read(back.data(), at, back.size()) == status::ok);
        next = h.device.write(at, after.data(), after.size());
        counters = h.device.counters();
    });
    CHECK(stray == status::dma_error);
    CHECK(back == before);
    CHECK(next == status::ok);
    CHECK(std::memcmp(h.chip.device_memory(at, 4096), after.data(), 4096) == 0);
    const std::uint64_t faults = h.host0.iommu0.faults();  // one per refused read request
    CHECK(faults >= 1);
    CHECK(counters.find("neuron/dma_errors: 1\n") != std::string::npos);
    CHECK(counters.find(fmt::format("neuron/iommu_faults: {}\n", faults)) != std::string::npos);
    CHECK(counters.find("neuron/err_status: 0x0\n") != std::string::npos);  // the driver cleared the queue's cause
}

TEST_CASE("copy() of 0 bytes, or of more than 4 GiB - 1, is bad_argument") {
    host_rig h;
    std::vector<status> got;
    h.run([&] {
        h.probe();
        got = {h.device.copy(GiB, 0, 0, true), h.device.copy(GiB, 0, 0x100000000ull, false),
               h.device.device_copy(0, 4096, 0)};
    });
    CHECK(got == std::vector<status>{status::bad_argument, status::bad_argument, status::bad_argument});
}

TEST_CASE("launch starts a kernel and wait_core returns when its notification arrives") {
    host_rig h;
    status launched = status::timeout, waited = status::timeout;
    driver::core_result result{7, 7};
    std::uint64_t took_ns = 0;
    h.run([&] {
        h.bring_up();
        const auto pcs = load(h, memset_kernel(2.5f));
        const std::uint64_t t0 = h.now_ns();
        launched = h.device.launch(3, pcs, mask_of(engine::vector));
        waited = h.device.wait_core(3, 1'000'000, result);
        took_ns = h.now_ns() - t0;
    });
    CHECK(launched == status::ok);
    CHECK(waited == status::ok);
    CHECK(result.status == 0);
    CHECK(result.error == 0);
    CHECK(sbuf0(h, 3) == 2.5f);
    CHECK(took_ns < 100'000);  // woken by the notification's interrupt, not by the 1 ms poll
}

TEST_CASE(
    "a kernel stopped on an error: exec_error with the engine's code, reset_core clears its cause and the core runs again") {
    host_rig h;
    status bad = status::ok, good = status::timeout;
    driver::core_result result;
    std::uint32_t err_before = 0, err_after = 0;
    std::string counters;
    h.run([&] {
        h.bring_up();
        program p;
        p.on(engine::vector)
            .matmul(psum(dtype::fp32, 0, 1, 0, 1), sbuf(dtype::bf16, 0, 1, 0, 1), sbuf(dtype::bf16, 0, 1, 2, 1));
        REQUIRE(h.device.launch(5, load(h, p), mask_of(engine::vector)) == status::ok);
        bad = h.device.wait_core(5, 1'000'000, result);
        err_before = h.bar0_read(TRN3_CHIP_ERR_STATUS);
        REQUIRE(h.device.reset_core(5) == status::ok);
        err_after = h.bar0_read(TRN3_CHIP_ERR_STATUS);
        REQUIRE(h.device.launch(5, load(h, memset_kernel(4.0f)), mask_of(engine::vector)) == status::ok);
        driver::core_result ok_result;
        good = h.device.wait_core(5, 1'000'000, ok_result);
        counters = h.device.counters();
    });
    CHECK(bad == status::exec_error);
    CHECK(result.status == 1);
    CHECK(result.error == neuroncore::err_illegal);
    CHECK(err_before == TRN3_ERR_CORE(5));
    CHECK(err_after == 0);
    CHECK(good == status::ok);
    CHECK(sbuf0(h, 5) == 4.0f);
    CHECK(counters.find("neuron/kernel_errors: 1\n") != std::string::npos);
    CHECK(counters.find("neuron/core_resets: 1\n") != std::string::npos);
}

TEST_CASE("wait_core returns its own core's result and keeps the others' for their own waits") {
    host_rig h;
    status first = status::timeout, second = status::timeout;
    driver::core_result r2, r1;
    h.run([&] {
        h.bring_up();
        program bad;
        bad.on(engine::scalar).memset(sbuf(dtype::fp32, 0, 1, 1u << 20, 1), 1.0f).halt();  // outside SBUF: error 2
        REQUIRE(h.device.launch(1, load(h, bad), mask_of(engine::scalar)) == status::ok);
        REQUIRE(h.device.launch(2, load(h, memset_kernel(1.0f)), mask_of(engine::vector)) == status::ok);
        h.adapter.sleep_ns(50'000);  // both have stopped: core 1's notification comes first
        second = h.device.wait_core(2, 1'000'000, r2);
        first = h.device.wait_core(1, 1'000'000, r1);
    });
    CHECK(second == status::ok);
    CHECK(r2.status == 0);
    CHECK(first == status::exec_error);
    CHECK(r1.error == neuroncore::err_out_of_bounds);
}

TEST_CASE("wait_core answers timeout for a kernel that does not stop in time") {
    host_rig h;
    status s = status::ok;
    std::uint64_t waited_ns = 0;
    h.run([&] {
        h.bring_up();
        program p;
        p.on(engine::sync).nop().wait(9, 1).halt();  // nobody signals semaphore 9
        REQUIRE(h.device.launch(2, load(h, p), mask_of(engine::sync)) == status::ok);
        driver::core_result result;
        const std::uint64_t t0 = h.now_ns();
        s = h.device.wait_core(2, 200'000, result);
        waited_ns = h.now_ns() - t0;
    });
    CHECK(s == status::timeout);
    CHECK(waited_ns >= 200'000);
    CHECK(waited_ns < 300'000);
}

TEST_CASE("launch, wait_core and reset_core refuse a core beyond 7, launch an engine mask of 0 or above 0x1F") {
    host_rig h;
    std::vector<status> got;
    h.run([&] {
        h.probe();
        driver::core_result result;
        got = {h.device.launch(8, {}, 1), h.device.launch(0, {}, 0), h.device.launch(0, {}, 0x20),
               h.device.wait_core(8, 1000, result), h.device.reset_core(8)};
    });
    CHECK(got == std::vector<status>(5, status::bad_argument));
}

TEST_CASE("wait_boot answers ok once the boot ROM has verified the firmware and the firmware runs") {
    host_rig h(test::boot::through_boot_rom);
    status s = status::timeout;
    std::uint32_t boot = 0;
    h.run([&] {
        h.probe();
        s = h.device.wait_boot(10'000'000);
        boot = h.bar0_read(TRN3_CHIP_BOOT_STATUS);
    });
    CHECK(s == status::ok);
    CHECK(boot == TRN3_BOOT_RUNNING);
    CHECK_THAT(h.chip.mcu0.console(), Catch::StartsWith("boot: firmware image verified\n"));
}

TEST_CASE("wait_boot answers firmware_refused as soon as the boot ROM refuses a tampered image, not at its timeout") {
    param_registry::instance().set_pending_text("chip0.mcu0.fuse_digest", std::string(63, '0') + "1", "test");
    host_rig h(test::boot::through_boot_rom);
    status s = status::ok;
    std::uint64_t waited_ns = 0;
    h.run([&] {
        h.probe();
        const std::uint64_t t0 = h.now_ns();
        s = h.device.wait_boot(15'000'000);
        waited_ns = h.now_ns() - t0;
    });
    CHECK(s == status::firmware_refused);
    CHECK(waited_ns < 5'000'000);
    CHECK_THAT(h.chip.mcu0.console(), Catch::Contains("firmware image refused"));
}

TEST_CASE("wait_boot answers firmware_timeout when the firmware is not running within the timeout") {
    host_rig h(test::boot::through_boot_rom);
    status s = status::ok;
    h.run([&] {
        h.probe();
        s = h.device.wait_boot(5'000);  // the boot ROM is still hashing the image (about 16 us)
    });
    CHECK(s == status::firmware_timeout);
}

TEST_CASE("handshake reads the firmware's version, protocol and build over the mailbox") {
    host_rig h;
    status s = status::timeout;
    driver::firmware_info info;
    h.run([&] {
        h.bring_up();
        s = h.device.handshake(info);
    });
    CHECK(s == status::ok);
    CHECK(info.protocol == TRN3_MBOX_PROTOCOL_VERSION);
    CHECK(info.version == 0x00000002u);  // 0.2
    CHECK(info.build == "trn3vp mcu firmware");
    CHECK(info.uptime_us > 0);
}

TEST_CASE("counters() dumps the function's identity and link, the chip's state and the driver's counts, sysfs style") {
    host_rig h;
    std::string counters;
    h.run([&] {
        h.bring_up();
        std::uint64_t at = 0;
        REQUIRE(h.device.alloc(5000, at) == status::ok);
        const auto data = test::pattern(5000, 2);
        REQUIRE(h.device.write(at, data.data(), data.size()) == status::ok);
        counters = h.device.counters();
    });
    const std::string d = "/sys/bus/pci/devices/0000:01:00.0/";
    CHECK(counters ==
          d + "vendor: 0x1d0f\n" + d + "device: 0x7364\n" + d + "current_link_speed: 64 GT/s\n" + d +
              "current_link_width: 16\n" + d + "neuron/boot_status: 4\n" + d + "neuron/core_state: 0x0000\n" + d +
              "neuron/err_status: 0x0\n" + d + "neuron/lnc: 1\n" + d + "neuron/dma_descriptors: 1\n" + d +
              "neuron/dma_bytes: 5000\n" + d + "neuron/dma_errors: 0\n" + d + "neuron/iommu_faults: 0\n" + d +
              "neuron/kernels: 0\n" + d + "neuron/kernel_errors: 0\n" + d + "neuron/core_resets: 0\n" + d +
              "neuron/firmware_recoveries: 0\n" + d + "neuron/interrupts: mailbox 0 notify 0 dma 1 error 0\n" + d +
              "neuron/device_memory_used: 8192\n");
}

TEST_CASE("device_copy moves bytes between device addresses with one descriptor") {
    host_rig h;
    const auto data = test::pattern(100000, 3);
    std::uint64_t src = 0, dst = 0;
    status s = status::timeout;
    std::string counters;
    h.run([&] {
        h.bring_up();
        REQUIRE(h.device.alloc(data.size(), src) == status::ok);
        REQUIRE(h.device.write(src, data.data(), data.size()) == status::ok);
        dst = TRN3_DEV_HBM_BASE(2) + 0x1000;  // not allocated: device_copy takes any device address
        s = h.device.device_copy(src, dst, data.size());
        counters = h.device.counters();
    });
    CHECK(s == status::ok);
    CHECK(std::memcmp(h.chip.device_memory(dst, data.size()), data.data(), data.size()) == 0);
    CHECK(counters.find("neuron/dma_descriptors: 2\n") != std::string::npos);
}

TEST_CASE(
    "program_fabric writes one ROUTE per chip then FABRIC_ID with ENABLE, and refuses an id or a table beyond 256 chips") {
    host_rig h;
    std::vector<status> got;
    h.run([&] {
        h.probe();
        got = {h.device.program_fabric(3, {TRN3_ROUTE_NONE, TRN3_ROUTE_PORT(2), 0x80003}),
               h.device.program_fabric(256, {}), h.device.program_fabric(0, std::vector<std::uint32_t>(257, 1))};
        h.bar0_read(TRN3_CHIP_FABRIC_ID);  // a read: the posted writes before it have arrived
    });
    CHECK(got == std::vector<status>{status::ok, status::bad_argument, status::bad_argument});
    CHECK(h.chip.control->fabric_id() == 3);
    CHECK(h.chip.control->fabric_enabled());
    CHECK(h.chip.control->route(0) == TRN3_ROUTE_NONE);
    CHECK(h.chip.control->route(1) == TRN3_ROUTE_PORT(2));
    CHECK(h.chip.control->route(2) == 0x80003);  // ports 0, 1 and 19
    CHECK(h.chip.control->route(3) == TRN3_ROUTE_NONE);  // untouched
}

TEST_CASE("telemetry and ecc_counters report what the firmware reads from the chip: every stack trained, no errors") {
    host_rig h;
    trn3_mbox_telemetry t{};
    trn3_mbox_ecc e{};
    status st = status::timeout, se = status::timeout;
    h.run([&] {
        h.bring_up();
        st = h.device.telemetry(t);
        se = h.device.ecc_counters(3, e);
    });
    CHECK(st == status::ok);
    CHECK(t.hbm_ready == 0xF);
    CHECK(t.ports_present == 0);  // no NeuronLink on this rig
    CHECK(t.uncorrectable_total == 0);
    CHECK(se == status::ok);
    CHECK(e.train_status == 2);
    CHECK(e.uncorrectable == 0);
}

TEST_CASE("firmware_reset_core has the firmware reset the core: its semaphores clear") {
    host_rig h;
    std::uint32_t before = 0;
    status s = status::timeout;
    h.run([&] {
        h.bring_up();
        h.adapter.mmio_write32(h.device.bar0() + TRN3_BAR0_CORE(3) + 0x400 + 4 * 11, 9);  // semaphore 11
        before = h.bar0_read(TRN3_BAR0_CORE(3) + 0x400 + 4 * 11);
        s = h.device.firmware_reset_core(3);
    });
    CHECK(before == 9);
    CHECK(s == status::ok);
    CHECK(h.chip.nc[3]->semaphore(11) == 0);
}

// Fails today: the driver turns every status other than OK in the firmware's
// answer into firmware_timeout ("the firmware did not answer"), though the
// firmware answered, saying the argument was bad.
TEST_CASE("a mailbox request the firmware refuses for its argument answers bad_argument, not firmware_timeout") {
    host_rig h;
    std::vector<status> got;
    h.run([&] {
        h.bring_up();
        trn3_mbox_ecc e{};
        trn3_mbox_link l{};
        got = {h.device.ecc_counters(4, e), h.device.link_status(7, l), h.device.firmware_reset_core(8)};
    });
    CHECK(got == std::vector<status>(3, status::bad_argument));
}

TEST_CASE("a chip with 32 DMA queues: the driver refuses queue 32, and ERR_STATUS's bit shared by queues 1 and 17 "
          "stays set until both are recovered") {
    param_registry::instance().set_pending_text("chip0.dma0.queues", "32", "test");
    host_rig h;
    unsigned queues = 0;
    status missing = status::ok, first = status::ok, second = status::ok;
    std::uint32_t err_after_first = 0, err_after_second = 0;
    h.run([&] {
        h.bring_up();
        REQUIRE(h.device.dma_queues(queues) == status::ok);
        std::uint64_t rings = 0;
        REQUIRE(h.device.alloc(1 << 20, rings) == status::ok);
        // A source between HBM stacks 0 and 1: no target, the queue stops with a device error.
        const trn3_dma_descriptor bad{TRN3_DEV_HBM_BASE(0) + 40 * GiB, TRN3_DEV_HBM_BASE(2), 64, 0, 1};
        missing = h.device.load_device_queue(32, rings, {bad});
        for (const unsigned q : {1u, 17u}) {
            REQUIRE(h.device.load_device_queue(q, rings + (q << 14), {bad}) == status::ok);
            REQUIRE(h.device.start_device_queue(q) == status::ok);
        }
        first = h.device.queue_finished(17, 1'000'000, 1000);
        err_after_first = h.adapter.mmio_read32(h.device.bar0() + TRN3_CHIP_ERR_STATUS);
        second = h.device.queue_finished(1, 1'000'000, 1000);
        err_after_second = h.adapter.mmio_read32(h.device.bar0() + TRN3_CHIP_ERR_STATUS);
    });
    CHECK(queues == 32);
    CHECK(missing == status::bad_argument);
    CHECK(first == status::dma_error);
    CHECK(second == status::dma_error);
    CHECK(TRN3_ERR_DMA(1) == TRN3_ERR_DMA(17));
    CHECK((err_after_first & TRN3_ERR_DMA(1)) != 0);  // queue 1 is still stopped
    CHECK((err_after_second & TRN3_ERR_DMA(1)) == 0);
}

TEST_CASE("queues_finished sees 40 queues done in two DMA_PENDING reads, recovers the one that stopped and no other, "
          "stops one that waits forever and one never rung, and refuses queues the chip lacks") {
    param_registry::instance().set_pending_text("chip0.dma0.queues", "48", "test");
    host_rig h;
    status at_once = status::ok, all_done = status::ok, one_stopped = status::ok, one_waits = status::ok;
    status edges = status::ok, never_rung = status::ok, outside = status::ok, wrapped = status::ok;
    std::uint64_t pending_ns = 0, one_by_one_ns = 0;
    std::vector<std::uint32_t> heads;
    std::uint32_t err_after = 0, control_after = 1, neighbours_control = 0, pending_after = 1;
    h.run([&] {
        h.bring_up();
        std::uint64_t rings = 0;
        REQUIRE(h.device.alloc(1 << 22, rings) == status::ok);
        const trn3_dma_descriptor copy{TRN3_DEV_HBM_BASE(0) + 0x5000, TRN3_DEV_HBM_BASE(2) + 0x5000, 4096, 0, 1};
        const trn3_dma_descriptor bad{TRN3_DEV_HBM_BASE(0) + 40 * GiB, TRN3_DEV_HBM_BASE(2), 64, 0, 2};
        const trn3_dma_descriptor never{1, 0, 0, TRN3_DESC_WAIT_FABRIC, 3};  // no fabric bytes ever land
        auto load_all = [&](unsigned odd_queue, const trn3_dma_descriptor& odd) {
            for (unsigned q = 1; q <= 40; ++q)
                REQUIRE(h.device.load_device_queue(q, rings + (q << 15), {q == odd_queue ? odd : copy}) == status::ok);
        };
        auto start_all = [&](unsigned skip = 0) {
            for (unsigned q = 1; q <= 40; ++q)
                if (q != skip) REQUIRE(h.device.start_device_queue(q) == status::ok);
        };
        // Waited for at once, as soon as rung: every queue has run its descriptor.
        load_all(0, copy);
        start_all();
        at_once = h.device.queues_finished(1, 40, 1'000'000, 1000);
        for (unsigned q = 1; q <= 40; ++q) heads.push_back(h.bar0_read(TRN3_BAR0_DMA(q) + TRN3_DMA_HEAD));
        edges = std::max(h.device.queues_finished(31, 2, 1000, 1000), h.device.queues_finished(1, 47, 1000, 1000));

        load_all(0, copy);
        start_all();
        h.adapter.sleep_ns(50'000);
        std::uint64_t t0 = h.now_ns();
        all_done = h.device.queues_finished(1, 40, 1'000'000, 1000);
        pending_ns = h.now_ns() - t0;
        load_all(0, copy);
        start_all();
        h.adapter.sleep_ns(50'000);
        t0 = h.now_ns();
        for (unsigned q = 1; q <= 40; ++q) REQUIRE(h.device.queue_finished(q, 1'000'000, 1000) == status::ok);
        one_by_one_ns = h.now_ns() - t0;

        load_all(35, bad);  // queues 3 and 19 share its ERR_STATUS bit
        start_all();
        one_stopped = h.device.queues_finished(1, 40, 1'000'000, 1000);
        err_after = h.bar0_read(TRN3_CHIP_ERR_STATUS);
        control_after = h.bar0_read(TRN3_BAR0_DMA(35) + TRN3_DMA_CONTROL);
        neighbours_control =
            h.bar0_read(TRN3_BAR0_DMA(3) + TRN3_DMA_CONTROL) & h.bar0_read(TRN3_BAR0_DMA(19) + TRN3_DMA_CONTROL);

        load_all(7, never);  // (queue 35 runs again: it copies)
        start_all();
        one_waits = h.device.queues_finished(1, 40, 100'000, 1000);
        pending_after = h.bar0_read(TRN3_CHIP_DMA_PENDING(0)) | h.bar0_read(TRN3_CHIP_DMA_PENDING(1));

        load_all(0, copy);
        start_all(12);  // queue 12 is loaded, never rung: its bit is clear with nothing run
        never_rung = h.device.queues_finished(1, 40, 1'000'000, 1000);

        outside = h.device.queues_finished(40, 9, 1000, 1000);  // queue 48 is not the chip's
        wrapped = h.device.queues_finished(1, 0xFFFFFFFFu, 1000, 1000);
    });
    CHECK(at_once == status::ok);
    CHECK(heads == std::vector<std::uint32_t>(40, 1));
    CHECK(edges == status::ok);
    CHECK(all_done == status::ok);
    // Two reads of DMA_PENDING and one of ERR_STATUS against two reads a queue.
    CHECK(pending_ns * 10 < one_by_one_ns);
    CHECK(one_stopped == status::dma_error);
    CHECK((err_after & TRN3_ERR_DMA(35)) == 0);  // recovered
    CHECK(control_after == 0);  // stopped, its failed descriptor dropped: the next load runs it again
    CHECK((neighbours_control & TRN3_DMA_CONTROL_ENABLE) != 0);  // done queues sharing the bit are left alone
    CHECK(one_waits == status::timeout);
    CHECK(pending_after == 0);  // the waiting queue was stopped
    CHECK(never_rung == status::timeout);
    CHECK(outside == status::bad_argument);
    CHECK(wrapped == status::bad_argument);
}
