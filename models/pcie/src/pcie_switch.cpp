#include "trn3/pcie/pcie_switch.h"

#include <algorithm>

#include <fmt/format.h>

#include "trn3/core/error.h"
#include "trn3/core/log.h"
#include "trn3/spec/device.h"
#include "trn3/spec/pci.h"

namespace trn3::pcie {

using sc_core::SC_NS;
using sc_core::sc_time;

namespace {

struct preset_info {
    const char* name;
    unsigned ports, port_lanes;
    const char* gen;
    double latency_ns;
};

const preset_info presets[] = {
    {"gen1-160", 20, 8, "gen6", 120},  {"gen2-320", 40, 8, "gen6", 120},  {"tray-32", 4, 8, "gen6", 120},
    {"pex144-x8", 18, 8, "gen6", 120}, {"pex144-x4", 36, 4, "gen6", 120}, {"ualink-72", 72, 4, "ualink", 100},
    {"tray-64", 4, 16, "gen6", 120},   {"tray-128", 4, 32, "gen6", 120},  {"tray-256", 4, 64, "gen6", 120},
};

// The preset param refuses other names, so the lookup always finds one.
const preset_info& find_preset(const std::string& name) {
    for (const auto& p : presets)
        if (name == p.name) return p;
    return presets[0];
}

one_of<std::string> preset_choices() {
    one_of<std::string> c;
    for (const auto& p : presets) c.values.push_back(p.name);
    return c;
}

}  // namespace

pcie_switch::pcie_switch(const sc_core::sc_module_name& name, const switch_config& defaults)
    : component(name, frequency{1e9}),
      preset(this, "preset", defaults.preset, "the switch's part: ports, lanes per port, generation, latency",
             preset_choices()),
      ports(this, "ports", defaults.ports ? defaults.ports : find_preset(preset.get()).ports,
            "ports (default: the preset's)", range<std::uint64_t>{1, 256}),
      port_lanes(this, "port_lanes", defaults.port_lanes ? defaults.port_lanes : find_preset(preset.get()).port_lanes,
                 "lanes per port (default: the preset's)", range<std::uint64_t>{1, 64}),
      generation_name(this, "generation", find_preset(preset.get()).gen, "gen5, gen6 or ualink", generation_choices()),
      latency(this, "latency", sc_time(find_preset(preset.get()).latency_ns, SC_NS),
              "port to port: a TLP's last flit in to its first flit out"),
      upstream_port(this, "upstream_port", defaults.upstream_port, "the upstream port; -1: none (fabric switch)",
                    range<std::int64_t>{-1, 255}),
      forwarded_(this, "forwarded", "TLPs forwarded (an aggregate counts its TLPs)"),
      unsupported_(this, "unsupported", "requests nothing claimed (Unsupported Request)"),
      acs_violations_(this, "acs_violations", "peer-to-peer requests blocked by ACS egress control"),
      p2p_(this, "p2p", "requests routed port to port without the root"),
      unexpected_(this, "unexpected_completions", "completions no port's bus range holds") {
    const preset_info& p = find_preset(preset.get());
    total_lanes_ = p.ports * p.port_lanes;
    if (ports.get() * port_lanes.get() > total_lanes_)
        throw config_error(fmt::format("{}: {} ports x{} need {} lanes; the {} switch has {}", this->name(),
                                       ports.get(), port_lanes.get(), ports.get() * port_lanes.get(), p.name,
                                       total_lanes_));
    up_ = upstream_port.get();
    if (up_ >= static_cast<int>(ports.get()))
        throw config_error(
            fmt::format("{}.upstream_port: {} is not one of the {} ports", this->name(), up_, ports.get()));
    const unsigned speed =
        spec_of(parse_generation(generation_name.get(), std::string(this->name()) + ".generation")).speed_code;
    ports_.resize(ports.get());
    unsigned k = 0;
    for (unsigned i = 0; i < ports_.size(); ++i) {
        port_state& ps = ports_[i];
        ps.downstream = static_cast<int>(i) != up_;
        config_space& c = ps.config;
        c.init_type1(TRN3_PCI_VENDOR_AMAZON, ps.downstream ? TRN3_PCI_DEVICE_SWITCH_DN : TRN3_PCI_DEVICE_SWITCH_UP);
        c.init_pcie_cap(ps.downstream ? TRN3_PCIE_TYPE_DOWNSTREAM : TRN3_PCIE_TYPE_UPSTREAM, speed, port_lanes.get());
        c.init_aer();
        if (ps.downstream) {
            c.add_ext_capability(TRN3_PCI_EXT_CAP_ID_ACS, TRN3_PCI_ACS_CAP, 1);
            const std::uint16_t caps = TRN3_ACS_REQUEST_REDIRECT | TRN3_ACS_COMPLETION_REDIRECT |
                                       TRN3_ACS_UPSTREAM_FORWARDING | TRN3_ACS_EGRESS_CONTROL;
            c.init(TRN3_PCI_ACS_CAP + TRN3_ACS_CAPS, 2, caps);
            c.init(TRN3_PCI_ACS_CAP + TRN3_ACS_CONTROL, 2, 0, caps);
            ++k;
        }
        c.on_read([this, i](std::uint16_t) {
            port_state& s = ports_[i];
            if (s.end) {
                const link& l = s.end->owner();
                s.config.set_link_status(l.phy().speed_code, s.end->width(), s.end->up(), l.phy().flit_mode);
            }
        });
    }
    // Downstream ports past 32 are functions 1.. of the first 32 devices,
    // which then say they are multi-function.
    if (k > TRN3_PCI_DEVICES_PER_BUS) {
        for (unsigned i = 0, d = 0; i < ports_.size(); ++i)
            if (ports_[i].downstream && d++ < TRN3_PCI_DEVICES_PER_BUS)
                ports_[i].config.set_bits(TRN3_PCI_HEADER_TYPE, 1, TRN3_PCI_HEADER_TYPE_MULTI_FUNCTION);
    }
}

void pcie_switch::attach(unsigned port, link_end& end) {
    if (port >= ports_.size())
        throw config_error(fmt::format("{}: port {} does not exist ({} ports)", name(), port, ports_.size()));
    if (ports_[port].end) throw config_error(fmt::format("{}: port {} is already connected", name(), port));
    if (end.owner().lanes.get() > port_lanes.get())
        throw config_error(fmt::format("{}: link {} is x{}, port {} is x{}", name(), end.owner().name(),
                                       end.owner().lanes.get(), port, port_lanes.get()));
    ports_[port].end = &end;
    end.on_receive([this, port](tlp& t) { receive(port, t); });
}

std::uint16_t pcie_switch::port_bdf(unsigned port) const {
    if (up_ < 0) return 0;
    const config_space& upc = ports_[static_cast<unsigned>(up_)].config;
    if (static_cast<int>(port) == up_) return TRN3_PCI_BDF(upc.get(TRN3_PCI_PRIMARY_BUS, 1), 0, 0);
    unsigned k = 0;
    for (unsigned i = 0; i < port; ++i) k += ports_[i].downstream ? 1 : 0;
    return TRN3_PCI_BDF(upc.secondary_bus(), k % TRN3_PCI_DEVICES_PER_BUS, k / TRN3_PCI_DEVICES_PER_BUS);
}

int pcie_switch::downstream_for_bus(unsigned bus) const {
    for (unsigned i = 0; i < ports_.size(); ++i)
        if (ports_[i].downstream && ports_[i].config.routes_bus(bus)) return static_cast<int>(i);
    return -1;
}

int pcie_switch::downstream_for_address(std::uint64_t a) const {
    for (unsigned i = 0; i < ports_.size(); ++i)
        if (ports_[i].downstream && ports_[i].config.routes_address(a)) return static_cast<int>(i);
    return -1;
}

void pcie_switch::send_out(unsigned out, tlp&& t, int in) {
    forwarded_ += t.count;
    ports_[out].end->forward(std::move(t), latency.get(), in >= 0 ? ports_[static_cast<unsigned>(in)].end : nullptr);
}

void pcie_switch::receive(unsigned port, tlp& t) {
    if (t.is_config()) route_config(port, t);
    else if (!t.is_request()) route_completion(port, t);
    else route_memory(port, t);
}

void pcie_switch::unsupported(unsigned in, tlp& t, std::uint32_t aer_bit) {
    unsupported_ += t.count;
    log().debug("unsupported request on port {}: {}", in, describe(t));
    ports_[in].config.report_error(aer_bit);
    if (t.posted()) return;
    tlp c = completion_for(t, cpl_status::unsupported, port_bdf(in));
    ports_[in].end->forward(std::move(c), latency.get());
}

void pcie_switch::route_config(unsigned in, tlp& t) {
    if (static_cast<int>(in) != up_) return unsupported(in, t, TRN3_AER_UNSUPPORTED_REQUEST);
    const unsigned bus = TRN3_PCI_BDF_BUS(t.completer);
    const bool type0 = t.type == tlp_type::cfg_read0 || t.type == tlp_type::cfg_write0;
    const bool is_write = t.type == tlp_type::cfg_write0 || t.type == tlp_type::cfg_write1;
    config_space* target = nullptr;
    config_space& upc = ports_[in].config;
    if (type0) {
        if (TRN3_PCI_BDF_DEV(t.completer) == 0 && TRN3_PCI_BDF_FN(t.completer) == 0) target = &upc;
    } else if (bus == upc.secondary_bus()) {
        const unsigned k = TRN3_PCI_BDF_DEV(t.completer) + 32 * TRN3_PCI_BDF_FN(t.completer);
        for (unsigned i = 0, d = 0; i < ports_.size(); ++i)
            if (ports_[i].downstream && d++ == k) target = &ports_[i].config;
    } else {
        const int j = downstream_for_bus(bus);
        if (j < 0) return unsupported(in, t, TRN3_AER_UNSUPPORTED_REQUEST);
        port_state& out = ports_[static_cast<unsigned>(j)];
        if (!out.end) return unsupported(in, t, TRN3_AER_UNSUPPORTED_REQUEST);
        if (bus == out.config.secondary_bus()) {
            // Only device 0 lives below a downstream port.
            if (TRN3_PCI_BDF_DEV(t.completer) != 0) return unsupported(in, t, 0);
            if (!out.end->up()) {
                // Still training (or failed): retry later / nothing there.
                const bool training = !out.end->owner().training_failed();
                tlp c = completion_for(t, training ? cpl_status::config_retry : cpl_status::unsupported,
                                       port_bdf(static_cast<unsigned>(j)));
                ports_[in].end->forward(std::move(c), latency.get());
                return;
            }
            t.type = is_write ? tlp_type::cfg_write0 : tlp_type::cfg_read0;
        }
        return send_out(static_cast<unsigned>(j), std::move(t));
    }
    if (!target) return unsupported(in, t, 0);
    // At most a DW, naturally aligned, inside the 4 KiB: anything else is unsupported.
    if (t.address >= TRN3_PCI_CONFIG_SIZE || !config_space::well_formed(unsigned(t.address), t.length) ||
        (is_write && t.data.size() < t.length))
        return unsupported(in, t, TRN3_AER_UNSUPPORTED_REQUEST);
    const std::uint16_t reg = static_cast<std::uint16_t>(t.address);
    tlp c = completion_for(t, cpl_status::success, t.completer);
    if (is_write) {
        std::uint32_t v = 0;
        for (unsigned b = 0; b < t.length && b < 4; ++b) v |= std::uint32_t(t.data[b]) << (8 * b);
        target->write(reg, t.length, v);
    } else {
        const std::uint32_t v = target->read(reg, t.length);
        c.type = tlp_type::completion_data;
        c.length = t.length;
        c.data.resize(t.length);
        for (unsigned b = 0; b < t.length; ++b) c.data[b] = static_cast<std::uint8_t>(v >> (8 * b));
    }
    ports_[in].end->forward(std::move(c), latency.get());
}

void pcie_switch::set_fabric_route(unsigned dest, std::vector<unsigned> ports) {
    for (unsigned port : ports)
        if (port >= ports_.size())
            throw config_error(fmt::format("{}: route to port {} of {}", name(), port, ports_.size()));
    std::sort(ports.begin(), ports.end());
    if (fabric_routes_.size() <= dest) fabric_routes_.resize(dest + 1);
    fabric_routes_[dest] = std::move(ports);
}

int pcie_switch::fabric_port(unsigned source, unsigned dest, unsigned channel) const {
    if (dest >= fabric_routes_.size() || fabric_routes_[dest].empty()) return -1;
    const auto& equal = fabric_routes_[dest];
    const unsigned out = equal[TRN3_ROUTE_PICK(source, dest, channel, equal.size())];
    return ports_[out].end ? static_cast<int>(out) : -1;
}

void pcie_switch::route_memory(unsigned in, tlp& t) {
    if (up_ < 0 && !fabric_routes_.empty() && t.address >= (std::uint64_t(1) << 40)) {
        // A fabric address: route by the destination chip.
        const std::uint64_t dest = (t.address >> 40) - 1;
        const int out =
            dest < fabric_routes_.size() ? fabric_port(t.requester, static_cast<unsigned>(dest), t.channel) : -1;
        if (out < 0) return unsupported(in, t, TRN3_AER_UNSUPPORTED_REQUEST);
        p2p_ += t.count;
        return send_out(static_cast<unsigned>(out), std::move(t), static_cast<int>(in));
    }
    const bool from_up = static_cast<int>(in) == up_;
    const int j = downstream_for_address(t.address);
    if (from_up) {
        if (j < 0 || !ports_[static_cast<unsigned>(j)].end) return unsupported(in, t, TRN3_AER_UNSUPPORTED_REQUEST);
        return send_out(static_cast<unsigned>(j), std::move(t));
    }
    const std::uint64_t acs = ports_[in].config.get(TRN3_PCI_ACS_CAP + TRN3_ACS_CONTROL, 2);
    if (t.type != tlp_type::message && j >= 0 && static_cast<unsigned>(j) == in) {
        // Back down the port it came from: only a request redirected
        // upstream by a switch below may pass, upstream (ACS Upstream Forwarding).
        if (!(acs & TRN3_ACS_UPSTREAM_FORWARDING) || up_ < 0) return unsupported(in, t, TRN3_AER_UNSUPPORTED_REQUEST);
    } else if (t.type != tlp_type::message && j >= 0) {
        if (!ports_[static_cast<unsigned>(j)].end) return unsupported(in, t, TRN3_AER_UNSUPPORTED_REQUEST);
        if (acs & TRN3_ACS_EGRESS_CONTROL) {
            acs_violations_ += t.count;
            return unsupported(in, t, TRN3_AER_ACS_VIOLATION);
        }
        if (!(acs & TRN3_ACS_REQUEST_REDIRECT) || up_ < 0) {
            p2p_ += t.count;
            return send_out(static_cast<unsigned>(j), std::move(t));
        }
    }
    if (up_ < 0 || !ports_[static_cast<unsigned>(up_)].end) return unsupported(in, t, TRN3_AER_UNSUPPORTED_REQUEST);
    send_out(static_cast<unsigned>(up_), std::move(t));
}

void pcie_switch::route_completion(unsigned in, tlp& t) {
    if (up_ < 0 && !fabric_routes_.empty()) {
        // A fabric switch: a completion goes back to its requester, a chip's fabric id.
        const int out = fabric_port(t.completer, t.requester, t.channel);
        if (out >= 0) return send_out(static_cast<unsigned>(out), std::move(t), static_cast<int>(in));
        unexpected_ += t.count;
        return;
    }

    const int j = downstream_for_bus(TRN3_PCI_BDF_BUS(t.requester));
    if (j >= 0 && static_cast<unsigned>(j) != in && ports_[static_cast<unsigned>(j)].end) {
        const std::uint64_t acs = ports_[in].config.get(TRN3_PCI_ACS_CAP + TRN3_ACS_CONTROL, 2);
        if (!ports_[in].downstream || !(acs & TRN3_ACS_COMPLETION_REDIRECT) || up_ < 0)
            return send_out(static_cast<unsigned>(j), std::move(t));
    }
    if (static_cast<int>(in) != up_ && up_ >= 0 && ports_[static_cast<unsigned>(up_)].end)
        return send_out(static_cast<unsigned>(up_), std::move(t));
    unexpected_ += t.count;
    log().debug("unexpected completion on port {}: {}", in, describe(t));
}

}  // namespace trn3::pcie
