// simulation: the params that belong to the whole run, the run loop, the
// progress line and the end-of-run summary.
//
// params:  sim.quantum          global TLM quantum (temporal decoupling)
//          sim.duration         stop after this much simulated time; 0 = when the platform stops
//          sim.protocol_checks  insert a protocol checker on every connect()ed socket pair
//          sim.progress         print a progress line every this many wall seconds; 0 = never
//          sim.heap_noise       unrelated timed events kept pending (a determinism check, heap_noise.h)
//
// Construct it before the platform (its params must exist before any model
// asks for them), then build the platform, then run().
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <systemc>

#include "trn3/core/param.h"
#include "trn3/core/window_sync.h"

namespace trn3 {

struct run_summary {
    sc_core::sc_time simulated;
    double wall_seconds = 0;
    std::uint64_t transactions = 0;
    std::string text() const;  // the lines every run ends with
};

class simulation {
public:
    param<sc_core::sc_time> quantum;
    param<sc_core::sc_time> duration;
    param<bool> protocol_checks;
    param<double> progress_seconds;
    param<std::uint64_t> heap_noise_events;

    simulation();
    // Runs until the platform calls sc_stop(), nothing is left to do, or
    // sim.duration has passed. With `windows` (a platform cut for a
    // distributed run, window_sync.h): in its windows, until `finished_at()`
    // gives a time on every rank at a boundary (the simulated time is the
    // latest of them); the progress line is the leader's, printed between
    // windows.
    run_summary run(window_sync* windows = nullptr,
                    const std::function<std::optional<sc_core::sc_time>()>& finished_at = {});
};

}  // namespace trn3
