// MCU speed: millions of RV32 instructions per wall second of a compute loop
// (ALU, a load and a store into SRAM, a branch) inside the MCU model, with
// its time kept against the global quantum. The median of three runs.
//
//   build/release/bench/mcu_bench [--quick]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "trn3/core/entry.h"
#include "trn3/mcu/mcu.h"

using namespace trn3;

int sc_main(int argc, char** argv) {
    const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
    tlm::tlm_global_quantum::instance().set(sc_core::sc_time(1, sc_core::SC_US));
    mcu::mcu m("mcu0", {TRN3_MCU_BENCH_LOOP, "", ""});
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    std::vector<double> mips;
    for (int run = 0; run < (quick ? 1 : 3); ++run) {
        if (run) m.reset();
        const std::uint64_t before = m.instructions();
        const auto w0 = std::chrono::steady_clock::now();
        while (m.tohost() == 0) sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
        const double n = static_cast<double>(m.instructions() - before);
        mips.push_back(n / wall / 1e6);
        std::printf("  run %d: %.0f M instructions in %.3f s: %.0f MIPS (tohost %u)\n", run + 1, n / 1e6, wall,
                    mips.back(), m.tohost());
        if (m.tohost() != 1) return 1;
    }
    std::sort(mips.begin(), mips.end());
    std::printf("MCU compute loop: %.0f MIPS (median of %zu)\n", mips[mips.size() / 2], mips.size());
    return 0;
}

int main(int argc, char** argv) { return systemc_entry(argc, argv); }
