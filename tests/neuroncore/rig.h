// A NeuronCore with 4 GiB of device memory, for kernel tests.
#pragma once

#include <cstring>

#include "../common/test_initiator.h"
#include "trn3/core/sparse_memory.h"
#include "trn3/kernels/builder.h"
#include "trn3/neuroncore/neuroncore.h"

namespace trn3::test {

struct core_rig {
    neuroncore::neuroncore core{"nc0"};
    sparse_memory device{"device", byte_count{4ull << 30}};
    initiator host{"host"};  // drives the control registers

    core_rig() {
        core.mem.bind(device.in);
        host.out.bind(core.ctrl);
        sc_core::sc_start(sc_core::SC_ZERO_TIME);
    }
    void write(std::uint64_t address, const void* data, std::size_t bytes) {
        std::memcpy(device.data() + address, data, bytes);
    }
    // Loads the program at 3 GiB (above any test data), starts its engines,
    // runs until they have all stopped; returns the simulated time it took.
    sc_core::sc_time run(const kernels::program& p) {
        auto pcs = p.load([this](std::uint64_t a, const void* d, std::size_t n) { write(a, d, n); }, 0xC000'0000);
        const sc_core::sc_time start = sc_core::sc_time_stamp();
        for (unsigned e = 0; e < isa::engine_count; ++e)
            if (!p.on(static_cast<isa::engine>(e)).code().empty()) core.start(static_cast<isa::engine>(e), pcs[e]);
        sc_core::sc_start();  // returns when nothing is left to happen
        return sc_core::sc_time_stamp() - start;
    }
    // run() on a core reset first: semaphores at 0, as a fresh launch (a
    // second program on the same core would otherwise start with the first's
    // counts, its waits met early).
    sc_core::sc_time run_from_reset(const kernels::program& p) {
        core.reset();
        return run(p);
    }
    std::uint64_t reg(std::uint64_t offset, unsigned bytes = 4) {
        std::uint64_t v = 0;
        host.access(tlm::TLM_READ_COMMAND, offset, &v, bytes);
        return v;
    }
    void set_reg(std::uint64_t offset, std::uint64_t value, unsigned bytes = 4) {
        host.access(tlm::TLM_WRITE_COMMAND, offset, &value, bytes);
    }
    float sbuf_f32(unsigned partition, std::uint64_t offset) {
        float v;
        std::memcpy(&v, core.sbuf(partition) + offset, 4);
        return v;
    }
};

}  // namespace trn3::test
