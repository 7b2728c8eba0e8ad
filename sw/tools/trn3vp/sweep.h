// `trn3vp sweep`: many simulations from one file of parameter sets, each
// point its own `trn3vp run` process (a SystemC kernel elaborates once per
// process), in local processes (-j N) or shared among the ranks of an MPI
// job, gathered into one CSV and JSON, and a plot (docs/sweeps.md).
//
// The sweep file (JSON):
//   {
//     "platform": "nl32x2",                               the platform (a grid may vary "platform" too)
//     "params":   {"nl32x2.trays": 2, ...},               set at every point
//     "grid":     {"nl32x2.switch_gen": [1, 2, 3], ...},  every combination (in key order, the last fastest)
//     "points":   [{"collectives.op": "all_reduce"}, ...], each crossed with the grid (default: one empty)
//     "figures":  {"busbw": "<regex, group 1 a number>", ...},   read from each point's report
//     "stats":    ["nl32x2.r0_t0_c0.dma0.bytes", ...],    stats of each point (a glob sums its matches)
//     "plot":     {"x": "<a grid param>", "y": "<a figure>", "series": "<a grid param>",
//                  "where": {"<a grid param>": <value>, ...}}   optional; where: only those rows
//   }
// Every point's row has its params, its exit code, whether it passed, its
// simulated time in us, its figures and stats; the JSON adds its wall
// time. Rows are in point order however the points were run, so the CSV
// is the same for any -j and any number of ranks.
#pragma once

#include <string>

namespace trn3 {

struct sweep_options {
    std::string file;
    std::string out_dir = "sweep";
    unsigned jobs = 1;  // processes at once, on each rank
    bool dry_run = false;  // list the points and stop
};

// Returns the exit code: 0 every point passed, 1 one failed; a bad sweep
// file is a config_error.
int run_sweep(const sweep_options& o, const std::string& self_exe);

}  // namespace trn3
