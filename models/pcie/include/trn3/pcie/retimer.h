// A retimer: a pass-through element in the middle of a link that recovers
// and re-drives the signal. It adds its latency to every TLP that crosses
// the link and takes part in link training: each retimer splits the link
// into one more segment that equalises on its own (phases 2 and 3 run once
// per segment), and a dead retimer keeps the link in Detect.
//
// A retimer is not a message hop: its latency is part of its link's, so a
// TLP costs one delivery per link however many retimers it crosses.
//
// params: latency  time through the retimer (vendors: < 10 ns; the spec allows more)
//         healthy  false: the retimer is dead and its link cannot train
#pragma once

#include "trn3/core/component.h"

namespace trn3::pcie {

class retimer : public component {
public:
    param<sc_core::sc_time> latency{this, "latency", sc_core::sc_time(10, sc_core::SC_NS),
                                    "time through the retimer, each direction"};
    param<bool> healthy{this, "healthy", true, "false: the retimer is dead and its link stays in Detect"};

    explicit retimer(const sc_core::sc_module_name& name) : component(name, frequency{1e9}) {}
};

}  // namespace trn3::pcie
