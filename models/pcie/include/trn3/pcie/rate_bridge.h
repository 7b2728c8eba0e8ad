// A Gen6-to-Gen5 converter (NL72x2 puts two beside each Graviton4, whose
// root ports are Gen5): joins a link of one generation to a link of
// another and forwards every TLP with a fixed latency. Configuration
// software does not see it (like a retimer, but each side is its own link
// and trains on its own).
//
// params: latency
// stats:  forwarded
#pragma once

#include "trn3/core/component.h"
#include "trn3/core/stats.h"
#include "trn3/pcie/link.h"

namespace trn3::pcie {

class rate_bridge : public component {
public:
    param<sc_core::sc_time> latency{this, "latency", sc_core::sc_time(40, sc_core::SC_NS),
                                    "ingress to egress, each direction"};

    explicit rate_bridge(const sc_core::sc_module_name& name) : component(name, frequency{1e9}) {}

    // The host side (towards the root) and the device side.
    void attach(link_end& host_side, link_end& device_side) {
        host_side.on_receive([this, &device_side](tlp& t) { pass(device_side, t); });
        device_side.on_receive([this, &host_side](tlp& t) { pass(host_side, t); });
    }

private:
    void pass(link_end& out, tlp& t) {
        forwarded_ += t.count;
        out.forward(std::move(t), latency.get());
    }
    counter forwarded_{this, "forwarded", "TLPs forwarded (an aggregate counts its TLPs)"};
};

}  // namespace trn3::pcie
