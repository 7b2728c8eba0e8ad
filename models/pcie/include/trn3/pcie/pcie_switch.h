// A PCIe (or UALink-style) switch: ports of a fixed width, routing by
// address and by id, peer-to-peer between downstream ports under ACS
// controls, per-port contention (each egress link carries one TLP at a
// time), a fixed port-to-port latency.
//
// Presets (param `preset`; ports, port_lanes, generation and latency may
// each be overridden):
//   gen1-160    20 x8, PCIe 6.0, 120 ns   NeuronLink Gen1 switch tray
//   gen2-320    40 x8, PCIe 6.0, 120 ns   Gen2
//   tray-32      4 x8, PCIe 6.0, 120 ns   the NL72x2 compute tray's switch (8 per tray)
//   tray-64/128/256  4 x16/x32/x64        its alternatives (4, 2 or 1 per tray)
//   pex144-x8   18 x8, PCIe 6.0, 120 ns   the 144-lane Gen1 backup, as x8 ports
//   pex144-x4   36 x4, PCIe 6.0, 120 ns   ... as x4 ports
//   ualink-72   72 x4, UALink 200G, 100 ns  Gen3 (no public figure: "lower than the PCIe switches")
//
// Hierarchy. Port `upstream_port` is the switch's upstream port (a PCI-PCI
// bridge, device 0 on the bus above); every other port is a downstream
// bridge on the switch's internal bus (the upstream bridge's secondary bus),
// downstream port k as device k % 32, function k / 32. Their type-1 headers
// (bus numbers, memory windows), PCIe capability (link status from the
// port's link), AER and, on downstream ports, ACS are software's to program,
// through configuration requests from the root. With upstream_port = -1 the
// switch has no upstream (a scale-up fabric switch whose windows the
// platform programs): what no window claims is unsupported.
//
// Routing of a TLP arriving on port i:
//   config   (from upstream only) type 0: the upstream bridge; type 1 to the
//            internal bus: a downstream bridge; to a bus below downstream
//            port j: out j, as type 0 if it is j's secondary bus (device 0
//            only) and type 1 beyond; a link that is still training answers
//            Configuration Retry Status
//   memory   to the downstream port whose window holds the address; from a
//            downstream port to another one (peer to peer) unless ACS on the
//            ingress port redirects it upstream (P2P Request Redirect) or
//            blocks it (P2P Egress Control: ACS violation); a request for the
//            ingress port's own window goes upstream only with ACS Upstream
//            Forwarding on that port (it was redirected by a switch below),
//            else it is unsupported; otherwise upstream
//   completions  by requester bus: the downstream port whose bus range holds it, else upstream
//   messages upstream
// What cannot be routed is an Unsupported Request: non-posted requests get a
// UR completion from the ingress port; posted ones are dropped and logged in
// the ingress port's AER status.
//
// params:  preset, ports, port_lanes, generation, latency, upstream_port
// stats:   forwarded, unsupported, acs_violations, p2p, unexpected_completions
#pragma once

#include <memory>
#include <vector>

#include "trn3/core/component.h"
#include "trn3/core/stats.h"
#include "trn3/pcie/config_space.h"
#include "trn3/pcie/link.h"

namespace trn3::pcie {

// The defaults of a switch's params, as a builder says them:
//   switch_config{"gen1-160"}.fabric().with_ports(18)
// (0 ports or lanes: the preset's).
struct switch_config {
    std::string preset;
    int upstream_port = 0;  // -1: none (a scale-up fabric switch)
    unsigned ports = 0;
    unsigned port_lanes = 0;

    switch_config& fabric() {
        upstream_port = -1;
        return *this;
    }
    switch_config& with_ports(unsigned n) {
        ports = n;
        return *this;
    }
    switch_config& with_port_lanes(unsigned n) {
        port_lanes = n;
        return *this;
    }
};

class pcie_switch : public component {
public:
    param<std::string> preset;
    param<std::uint64_t> ports;
    param<std::uint64_t> port_lanes;
    param<std::string> generation_name;
    param<sc_core::sc_time> latency;
    param<std::int64_t> upstream_port;

    // `defaults` sizes each switch (the params still override it).
    pcie_switch(const sc_core::sc_module_name& name, const switch_config& defaults);

    // Wiring: port p's side of a link.
    void attach(unsigned port, link_end& end);
    config_space& port_config(unsigned port) { return ports_[port].config; }
    unsigned port_count() const { return static_cast<unsigned>(ports_.size()); }
    unsigned total_lanes() const { return total_lanes_; }
    std::uint16_t port_bdf(unsigned port) const;
    // A fabric switch's routes for writes to chip `dest`'s fabric addresses
    // (spec/device.h TRN3_FABRIC_ADDR): the equal ports towards it, of which
    // a TLP takes the one TRN3_ROUTE_PICK names (by source, destination and
    // channel: a flow keeps one path). The platform's fabric manager programs
    // them from the topology.
    void set_fabric_route(unsigned dest, std::vector<unsigned> ports);

private:
    struct port_state {
        config_space config;
        link_end* end = nullptr;
        bool downstream = true;
    };
    void receive(unsigned port, tlp& t);
    void route_config(unsigned in, tlp& t);
    void route_memory(unsigned in, tlp& t);
    void route_completion(unsigned in, tlp& t);
    void unsupported(unsigned in, tlp& t, std::uint32_t aer_bit);
    // `in`: the port it came in on, for flow control (fabric routes), or -1.
    void send_out(unsigned out, tlp&& t, int in = -1);
    int downstream_for_bus(unsigned bus) const;
    int downstream_for_address(std::uint64_t address) const;

    std::vector<port_state> ports_;
    // The port towards `dest` for a TLP from `source` on `channel`, or -1.
    int fabric_port(unsigned source, unsigned dest, unsigned channel) const;

    std::vector<std::vector<unsigned>> fabric_routes_;  // by destination chip: its equal ports (none: no route)
    unsigned total_lanes_ = 0;
    int up_ = 0;
    counter forwarded_, unsupported_, acs_violations_, p2p_, unexpected_;
};

}  // namespace trn3::pcie
