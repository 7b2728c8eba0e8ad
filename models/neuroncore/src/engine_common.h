// What the parts of a NeuronCore share: the fault that stops an engine, the
// sequencer state an instruction runs with, the numeric format of each ISA
// type, and time in cycles of a clock. Tiles and element access are the
// SBUF/PSUM's (sbuf_psum.h).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include <systemc>

#include "trn3/core/timeline.h"
#include "trn3/core/units.h"
#include "trn3/neuroncore/neuroncore.h"
#include "trn3/numerics/float_format.h"
#include "trn3/spec/isa.h"

namespace trn3::neuroncore {

// Thrown by an instruction's work: the sequencer stops the engine with it.
struct fault {
    error_code code;
    std::string what;
};

using sequencer_registers = std::array<std::uint32_t, isa::registers>;

// One engine's sequencer: its stream, state and registers (sequencer.h runs it).
struct engine_state {
    isa::engine id;
    std::uint64_t start_pc = 0;
    std::uint64_t starts = 0;  // start() calls so far
    engine_status status = engine_status::idle;
    std::uint32_t error = err_none;
    std::uint32_t error_pc = 0;
    sequencer_registers regs{};
    sc_core::sc_event start_event;
    sc_core::sc_time busy_until;
    bool warm = false;  // ran an instruction that ended exactly when this one starts
    int waiting_sem = -1;  // semaphore waited on now (-1: none)
    std::uint32_t waiting_value = 0, waiting_pc = 0;
    timeline::track track;

    // True when the engine finished an instruction exactly now (the Tensor
    // engine then streams on without refilling the array).
    bool back_to_back() const { return warm && sc_core::sc_time_stamp() == busy_until; }
};

inline numerics::format format_of(isa::dtype t) {
    switch (t) {
    case isa::dtype::bf16: return numerics::format::bf16;
    case isa::dtype::fp16: return numerics::format::fp16;
    case isa::dtype::e4m3fn: return numerics::format::e4m3fn;
    case isa::dtype::e5m2: return numerics::format::e5m2;
    case isa::dtype::e2m1: return numerics::format::e2m1;
    default: return numerics::format::fp32;
    }
}

// 1- and 2-byte types: the engines that stream them run at their narrow rate.
inline bool narrow(isa::dtype t) { return isa::dtype_bytes(t) <= 2; }

inline sc_core::sc_time cycles_at(std::uint64_t n, frequency f) {
    return sc_core::sc_time(static_cast<double>(n) / f.hz, sc_core::SC_SEC);
}

}  // namespace trn3::neuroncore
