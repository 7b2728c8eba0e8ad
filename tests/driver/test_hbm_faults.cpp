// Fault campaign (docs/reliability.md): HBM errors under running kernels.
// 200 kernels, each loading a 64 KiB tensor from HBM into SBUF, through the
// real driver, host and chip; before each, a seeded error is injected
// through the stack's INJECT registers (as a test of the memory system
// would): a double-bit (uncorrectable) or a single-bit (corrected) error,
// in a random word of the tensor or outside it. Every kernel either
// stops with an error the driver reports (exec_error) or leaves exactly
// the tensor in SBUF: never a silently wrong tensor.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <vector>

#include "../chip/rig.h"
#include "trn3/kernels/builder.h"

using namespace trn3;
using namespace trn3::kernels;
using driver::status;
using isa::engine;
using test::host_rig;

TEST_CASE("HBM faults: 200 kernels under seeded single- and double-bit errors: each uncorrectable error the kernel "
          "reads stops it with an error, every other kernel leaves the exact tensor") {
    host_rig h;
    constexpr unsigned partitions = 128, floats = 128;  // 64 KiB
    constexpr std::size_t bytes = std::size_t{partitions} * floats * 4;
    unsigned runs = 0, stopped = 0, stopped_as_owed = 0, exact = 0, wrong = 0, expected_stops = 0;
    std::uint64_t ue_counted = 0;
    h.run(
        [&] {
            h.bring_up();
            std::uint64_t in = 0, elsewhere = 0, code = 0;
            REQUIRE(h.device.alloc(bytes, in) == status::ok);
            REQUIRE(h.device.alloc(bytes, elsewhere) == status::ok);
            REQUIRE(h.device.alloc(64 << 10, code) == status::ok);
            std::vector<std::uint8_t> tensor(bytes);
            std::mt19937_64 g(20261202);
            for (auto& b : tensor) b = static_cast<std::uint8_t>(g());
            program p;
            p.on(engine::sync)
                .dma(sbuf(dtype::fp32, 0, partitions, 0, floats),
                     kernels::hbm(dtype::fp32, in, partitions, floats * 4, floats))
                .signal(0, 1)
                .nop()
                .wait(0, 1)
                .halt();
            const auto pcs = p.load(
                [&](std::uint64_t a, const void* d, std::size_t n) { REQUIRE(h.device.write(a, d, n) == status::ok); },
                code);
            for (unsigned i = 0; i < 200; ++i) {
                const unsigned core = i % 8;
                // A fresh tensor (a write replaces the word an earlier error was injected into).
                REQUIRE(h.device.write(in, tensor.data(), bytes) == status::ok);
                std::memset(h.chip.nc[core]->sbuf(0), 0, 4);  // SBUF starts unlike the tensor
                const bool inside = g() % 4 != 0;  // three in four inside the tensor
                const bool double_bit = g() % 2 == 0;
                const std::uint64_t word = (inside ? in : elsewhere) + 8 * (g() % (bytes / 8));
                const unsigned bit = static_cast<unsigned>(g() % 63);
                const std::uint64_t mask = double_bit ? (3ull << bit) : (1ull << bit);
                h.adapter.mmio_write64(h.device.bar0() + TRN3_BAR0_HBM(0) + TRN3_HBM_INJECT_ADDR, word);
                h.adapter.mmio_write64(h.device.bar0() + TRN3_BAR0_HBM(0) + TRN3_HBM_INJECT_MASK, mask);
                REQUIRE(h.device.launch(core, pcs, 1u << static_cast<unsigned>(engine::sync)) == status::ok);
                driver::core_result r;
                const status s = h.device.wait_core(core, 1'000'000, r);
                ++runs;
                const bool owed_stop = inside && double_bit;
                expected_stops += owed_stop;
                if (s == status::exec_error) {
                    ++stopped;
                    stopped_as_owed += owed_stop;
                    REQUIRE(h.device.reset_core(core) == status::ok);
                    continue;
                }
                REQUIRE(s == status::ok);
                // A kernel that finished holds exactly the tensor: partition p, bytes p x 512 on.
                bool same = true;
                for (unsigned part = 0; part < partitions && same; ++part)
                    same = std::memcmp(h.chip.nc[core]->sbuf(part), tensor.data() + part * floats * 4, floats * 4) == 0;
                (same ? exact : wrong) += 1;
            }
            ue_counted = h.adapter.mmio_read32(h.device.bar0() + TRN3_BAR0_HBM(0) + TRN3_HBM_UE_COUNT);
        },
        sc_core::sc_time(200, sc_core::SC_MS));
    INFO("runs " << runs << ", stopped " << stopped << " (owed " << expected_stops << "), exact " << exact);
    CHECK(runs == 200);
    CHECK(wrong == 0);  // never a silently wrong tensor
    CHECK(expected_stops > 50);
    CHECK(stopped == expected_stops);  // every uncorrectable error it read stopped it, and nothing else did
    CHECK(stopped_as_owed == expected_stops);
    CHECK(exact == runs - stopped);
    CHECK(ue_counted == expected_stops);  // the stack counted each poisoned read once
}
