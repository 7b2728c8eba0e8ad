#include "trn3/workload/energy.h"

namespace trn3::workload {

double energy_breakdown::total() const {
    double t = 0;
    for (const auto& [what, j] : joules) t += j;
    return t;
}

energy_breakdown step_energy(const energy_params& p, const energy_activity& a) {
    constexpr double pj = 1e-12;
    energy_breakdown e;
    e.joules.emplace_back("compute", (a.flops_bf16 * p.pj_per_flop_bf16 + a.flops_mx * p.pj_per_flop_mx) * pj);
    e.joules.emplace_back("HBM", a.hbm_bytes * p.pj_per_hbm_byte * pj);
    double switched_bits = 0, retimer_bits = 0;
    for (const auto& [name, m] : a.media) {
        const auto it = p.pj_per_bit_medium.find(name);
        const double per_bit = it == p.pj_per_bit_medium.end() ? p.pj_per_bit_default : it->second;
        e.joules.emplace_back("links " + name, m.bytes * 8 * per_bit * pj);
        if (m.switched) switched_bits += m.bytes * 8;
        retimer_bits += m.retimer_bytes * 8;
    }
    e.joules.emplace_back("switches", switched_bits * p.pj_per_bit_switch * pj);
    e.joules.emplace_back("retimers", retimer_bits * p.pj_per_bit_retimer * pj);
    e.joules.emplace_back("idle chips", a.chips * p.idle_w_chip * a.seconds);
    e.joules.emplace_back("idle switches", a.switches * p.idle_w_switch * a.seconds);
    e.joules.emplace_back("idle retimers", a.retimers * p.idle_w_retimer * a.seconds);
    e.joules.emplace_back("idle NICs", a.nics * p.idle_w_nic * a.seconds);
    e.joules.emplace_back("idle hosts", a.hosts * p.idle_w_host * a.seconds);
    return e;
}

}  // namespace trn3::workload
