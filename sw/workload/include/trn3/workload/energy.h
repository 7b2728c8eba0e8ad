// Activity-based energy of a step: what each component did (matmul FLOPs
// by type, HBM bytes, payload bits over each link medium's SerDes, bits
// through switches and retimers) times an energy per unit, plus each
// component's idle power for the step's time. No SystemC: the workload
// program fills the activity from the platform's counters.
//
// The defaults are estimates from public figures, each with its source in
// docs/workloads.md ("Energy"); every one is a param of the workload
// program (workload.energy.*).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace trn3::workload {

struct energy_params {
    double pj_per_flop_bf16 = 0.5;  // bf16, fp16, fp8 matmul FLOP
    double pj_per_flop_mx = 0.15;  // MXFP8, MXFP4
    double pj_per_hbm_byte = 31.2;  // HBM3E, 3.9 pJ/bit
    std::map<std::string, double> pj_per_bit_medium;  // SerDes, both ends of a link, by medium name
    double pj_per_bit_default = 5.0;  // a medium not in the map
    double pj_per_bit_switch = 3.0;  // switch core (SerDes counted with the link)
    double pj_per_bit_retimer = 8.0;  // each retimer a bit crosses
    double idle_w_chip = 140, idle_w_switch = 60, idle_w_retimer = 2, idle_w_nic = 25, idle_w_host = 150;
};

struct energy_activity {
    double seconds = 0;
    double flops_bf16 = 0, flops_mx = 0;
    double hbm_bytes = 0;
    struct medium {
        double bytes = 0, retimer_bytes = 0;  // retimer_bytes: bytes x retimers crossed
        bool switched = false;
    };
    std::map<std::string, medium> media;
    unsigned chips = 0, switches = 0, retimers = 0, nics = 0, hosts = 0;
};

// Joules by what spent them, in a fixed order: compute, HBM, each medium's
// SerDes ("links <medium>"), switches, retimers, idle (chips, switches,
// retimers, NICs, hosts).
struct energy_breakdown {
    std::vector<std::pair<std::string, double>> joules;
    double total() const;
};

energy_breakdown step_energy(const energy_params& p, const energy_activity& a);

}  // namespace trn3::workload
