#include "trn3/pcie/root_complex.h"

#include <cstring>

#include <fmt/format.h>

#include "trn3/core/error.h"
#include "trn3/core/log.h"
#include "trn3/core/payload.h"
#include "trn3/pcie/requester_id.h"
#include "trn3/spec/pci.h"

namespace trn3::pcie {

using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_US;

namespace {
constexpr std::uint16_t root_bdf = 0;  // the root complex's own requester id (00:00.0 is root port 0's too)
}  // namespace

root_complex::root_complex(const sc_core::sc_module_name& name, unsigned default_root_ports,
                           generation default_generation)
    : component(name, frequency{2.8e9}), root_ports(this, "root_ports", default_root_ports,
                                                    "root ports on bus 0 (devices 0 ..)", range<std::uint64_t>{1, 32}),
      generation_name(this, "generation", generation_text(default_generation),
                      "the root ports' generation (Graviton4: gen5)", generation_choices()),
      lanes(this, "lanes", 16, "lanes per root port", range<std::uint64_t>{1, 32}),
      mmio_base(this, "mmio_base", 0,
                "PCIe address of the mmio socket's offset 0 (0: the socket carries PCIe addresses)", address_range()),
      latency(this, "latency", sc_time(50, SC_NS), "root complex processing, each way"),
      completion_timeout(this, "completion_timeout", sc_time(1, sc_core::SC_MS),
                         "non-posted requests not answered by then fail (PCIe range 50 us - 64 s)"),
      crs_retry(this, "crs_retry", sc_time(1, SC_US), "retry interval after Configuration Retry Status"),
      max_payload(this, "max_payload", 256, "bytes per completion the root sends", range<std::uint64_t>{128, 4096}),
      p2p(this, "p2p", true, "reflect peer-to-peer requests between root ports (and ACS redirects) back down"),
      tags(this, "tags", 256, "CPU requests outstanding at once", range<std::uint64_t>{1, 16384}),
      requests_(static_cast<unsigned>(tags.get()), completion_timeout.get()),
      config_requests_(this, "config_requests", "configuration requests sent"),
      mmio_reads_(this, "mmio_reads", "host reads of PCIe memory"),
      mmio_writes_(this, "mmio_writes", "host writes of PCIe memory"),
      dma_reads_(this, "dma_reads", "device reads of host memory (TLPs)"),
      dma_writes_(this, "dma_writes", "device writes of host memory (TLPs)"),
      msi_(this, "msi", "MSI-X interrupts delivered"),
      unsupported_(this, "unsupported", "requests nothing claimed, either direction"),
      crs_retries_(this, "crs_retries", "configuration requests retried after CRS"),
      timeouts_(this, "timeouts", "completion timeouts"),
      reflected_(this, "p2p_reflected", "peer-to-peer requests reflected back down (TLPs)") {
    ecam.register_b_transport(this, &root_complex::ecam_transport);
    mmio.register_b_transport(this, &root_complex::mmio_transport);
    const phy_spec& spec = spec_of(parse_generation(generation_name.get(), std::string(this->name()) + ".generation"));
    ports_.resize(root_ports.get());
    for (unsigned r = 0; r < ports_.size(); ++r) {
        config_space& c = ports_[r].config;
        c.init_type1(TRN3_PCI_VENDOR_AMAZON, TRN3_PCI_DEVICE_ROOT_PORT);
        c.init_pcie_cap(TRN3_PCIE_TYPE_ROOT_PORT, spec.speed_code, lanes.get());
        c.init_aer();
        c.on_read([this, r](std::uint16_t) {
            port_state& p = ports_[r];
            if (p.end) {
                const link& l = p.end->owner();
                p.config.set_link_status(l.phy().speed_code, p.end->width(), p.end->up(), l.phy().flit_mode);
            }
        });
    }
}

void root_complex::attach(unsigned r, link_end& end) {
    if (r >= ports_.size()) throw config_error(fmt::format("{}: root port {} does not exist", name(), r));
    ports_[r].end = &end;
    end.on_receive([this, r](tlp& t) { receive(r, t); });
}

int root_complex::port_for_bus(unsigned bus) const {
    for (unsigned r = 0; r < ports_.size(); ++r)
        if (ports_[r].config.routes_bus(bus)) return static_cast<int>(r);
    return -1;
}

int root_complex::port_for_address(std::uint64_t a) const {
    for (unsigned r = 0; r < ports_.size(); ++r)
        if (ports_[r].config.routes_address(a)) return static_cast<int>(r);
    return -1;
}

requester::result root_complex::round_trip(port_state& p, tlp&& t, std::uint64_t bytes) {
    const std::uint16_t tag = requests_.open(bytes, root_bdf);
    t.tag = tag;
    p.end->send(std::move(t), sc_core::sc_time_stamp());
    requester::result res = requests_.wait(tag);
    if (res.timed_out) {
        ++timeouts_;
        p.config.report_error(TRN3_AER_COMPLETION_TIMEOUT);
    }
    return res;
}

void root_complex::ecam_transport(tlm::tlm_generic_payload& tx, sc_time& delay) {
    const std::uint64_t a = tx.get_address();
    const unsigned bytes = tx.get_data_length();
    const std::uint16_t bdf = TRN3_ECAM_BDF(a);
    const std::uint16_t reg = static_cast<std::uint16_t>(TRN3_ECAM_REGISTER(a));
    const bool write = tx.is_write();
    unsigned char* data = tx.get_data_ptr();
    tx.set_response_status(tlm::TLM_OK_RESPONSE);
    if ((bytes != 1 && bytes != 2 && bytes != 4) || (reg & (bytes - 1))) {
        tx.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
        return;
    }
    std::uint32_t value = 0;
    if (write) std::memcpy(&value, data, bytes);
    auto answer = [&](std::uint32_t v) {
        if (!write) std::memcpy(data, &v, bytes);
    };
    delay += latency.get();
    const unsigned bus = TRN3_PCI_BDF_BUS(bdf);
    if (bus == 0) {
        const unsigned dev = TRN3_PCI_BDF_DEV(bdf);
        if (dev >= ports_.size() || TRN3_PCI_BDF_FN(bdf) != 0) return answer(0xFFFFFFFFu);
        if (write) ports_[dev].config.write(reg, bytes, value);
        else answer(ports_[dev].config.read(reg, bytes));
        return;
    }
    const int r = port_for_bus(bus);
    if (r < 0 || !ports_[static_cast<unsigned>(r)].end) {
        ++unsupported_;
        return answer(0xFFFFFFFFu);
    }
    port_state& p = ports_[static_cast<unsigned>(r)];
    // Only device 0 lives below a root port.
    if (bus == p.config.secondary_bus() && TRN3_PCI_BDF_DEV(bdf) != 0) return answer(0xFFFFFFFFu);
    // A blocking request from the CPU: synchronise, then wait for the answer.
    sc_core::wait(delay);
    delay = sc_core::SC_ZERO_TIME;
    const sc_time deadline = sc_core::sc_time_stamp() + completion_timeout.get();
    for (;;) {
        tlp t;
        const bool type0 = bus == p.config.secondary_bus();
        t.type = write ? (type0 ? tlp_type::cfg_write0 : tlp_type::cfg_write1)
                       : (type0 ? tlp_type::cfg_read0 : tlp_type::cfg_read1);
        t.requester = root_bdf;
        t.completer = bdf;
        t.address = reg;
        t.length = bytes;
        if (write) {
            t.data.resize(bytes);
            std::memcpy(t.data.data(), &value, bytes);
        }
        ++config_requests_;
        requester::result res = round_trip(p, std::move(t), write ? 0 : bytes);
        if (res.timed_out) {
            tx.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
            return answer(0xFFFFFFFFu);
        }
        if (res.status == cpl_status::config_retry && sc_core::sc_time_stamp() + crs_retry.get() < deadline) {
            ++crs_retries_;
            sc_core::wait(crs_retry.get());
            continue;
        }
        if (res.status != cpl_status::success) {
            if (res.status == cpl_status::unsupported) p.config.report_error(0, TRN3_PCI_STATUS_REC_MASTER_ABORT);
            return answer(0xFFFFFFFFu);
        }
        if (!write) {
            std::uint32_t v = 0;
            std::memcpy(&v, res.data.data(), bytes);
            answer(v);
        }
        return;
    }
}

void root_complex::mmio_transport(tlm::tlm_generic_payload& tx, sc_time& delay) {
    const std::uint64_t a = mmio_base.get() + tx.get_address();
    const unsigned bytes = tx.get_data_length();
    tx.set_response_status(tlm::TLM_OK_RESPONSE);
    delay += latency.get();
    const int r = port_for_address(a);
    if (r < 0 || !ports_[static_cast<unsigned>(r)].end) {
        ++unsupported_;
        if (tx.is_read()) std::memset(tx.get_data_ptr(), 0xFF, bytes);
        return;
    }
    port_state& p = ports_[static_cast<unsigned>(r)];
    tlp t;
    t.requester = root_bdf;
    t.address = a;
    t.length = bytes;
    if (tx.is_write()) {
        ++mmio_writes_;
        t.type = tlp_type::mem_write;
        t.data.assign(tx.get_data_ptr(), tx.get_data_ptr() + bytes);
        p.end->send(std::move(t), sc_core::sc_time_stamp() + delay);  // posted: the CPU goes on
        return;
    }
    ++mmio_reads_;
    sc_core::wait(delay);
    reads_order_.take();  // reads that leave at one time go in a fixed order
    delay = sc_core::SC_ZERO_TIME;
    t.type = tlp_type::mem_read;
    requester::result res = round_trip(p, std::move(t), bytes);
    if (res.timed_out) {
        tx.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        std::memset(tx.get_data_ptr(), 0xFF, bytes);
    } else if (res.status != cpl_status::success) {
        ++unsupported_;
        p.config.report_error(0, TRN3_PCI_STATUS_REC_MASTER_ABORT);
        std::memset(tx.get_data_ptr(), 0xFF, bytes);
    } else {
        std::memcpy(tx.get_data_ptr(), res.data.data(), bytes);
        if (res.poisoned) {
            p.config.report_error(TRN3_AER_POISONED_TLP, TRN3_PCI_STATUS_DETECTED_PARITY);
            tx.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        }
    }
    delay += latency.get();
}

void root_complex::complete_to_device(unsigned port, const tlp& req, const std::vector<std::uint8_t>& data,
                                      cpl_status status, const sc_time& delay) {
    link_end& end = *ports_[port].end;
    const sc_time when = sc_core::sc_time_stamp() + latency.get() + delay;
    if (status != cpl_status::success) {
        end.send(completion_for(req, status, root_bdf), when);
        return;
    }
    const std::uint64_t bytes = req.no_data ? req.total_bytes() : data.size();
    for (tlp& c : data_completions(req, req.no_data ? nullptr : data.data(), bytes, max_payload.get(), root_bdf))
        end.send(std::move(c), when);
}

void root_complex::receive(unsigned port, tlp& t) {
    if (!t.is_request()) {
        // A device's completion coming back up (peer to peer through the root) goes down again.
        const int down = TRN3_PCI_BDF_BUS(t.requester) != 0 ? port_for_bus(TRN3_PCI_BDF_BUS(t.requester)) : -1;
        if (down >= 0 && ports_[static_cast<unsigned>(down)].end) {
            reflected_ += t.count;
            ports_[static_cast<unsigned>(down)].end->forward(std::move(t), latency.get());
            return;
        }
        if (!requests_.complete(t)) {
            ports_[port].config.report_error(TRN3_AER_UNEXPECTED_COMPLETION);
            log().debug("unexpected completion: {}", describe(t));
        }
        return;
    }
    if (t.type == tlp_type::message) return;
    const std::uint64_t a = t.address;
    if (t.type == tlp_type::mem_write && a >= TRN3_MSI_WINDOW_BASE && a < TRN3_MSI_WINDOW_BASE + TRN3_MSI_WINDOW_SIZE) {
        if (t.no_data) {  // an interrupt is its data: a timing-only write raises none
            ++unsupported_;
            ports_[port].config.report_error(TRN3_AER_UNSUPPORTED_REQUEST);
            return;
        }
        ++msi_;
        std::uint32_t v = 0;
        std::memcpy(&v, t.data.data(), std::min<std::size_t>(4, t.data.size()));
        if (msi) msi(v, t.requester);
        return;
    }
    if (!t.is_memory()) {
        ++unsupported_;
        if (!t.posted()) complete_to_device(port, t, {}, cpl_status::unsupported, sc_core::SC_ZERO_TIME);
        return;
    }
    const int peer = port_for_address(a);
    if (peer >= 0) {
        // Peer to peer through the root (between root ports, or an ACS redirect).
        if (p2p.get() && ports_[static_cast<unsigned>(peer)].end) {
            reflected_ += t.count;
            ports_[static_cast<unsigned>(peer)].end->forward(std::move(t), latency.get());
            return;
        }
        ++unsupported_;
        ports_[port].config.report_error(TRN3_AER_UNSUPPORTED_REQUEST);
        if (!t.posted()) complete_to_device(port, t, {}, cpl_status::unsupported, sc_core::SC_ZERO_TIME);
        return;
    }
    // Host memory. An aggregate is complete when its tail has arrived. A
    // timing-only TLP (no_data) is a trn3::timing_only access there.
    const std::uint64_t bytes = t.total_bytes();
    tlm::tlm_generic_payload tx;
    sc_time delay = t.train_span;
    std::vector<std::uint8_t> buffer;
    if (t.type == tlp_type::mem_write) {
        dma_writes_ += t.count;
        if (t.poisoned) {
            ports_[port].config.report_error(TRN3_AER_POISONED_TLP, TRN3_PCI_STATUS_DETECTED_PARITY);
            return;
        }
        if (!t.no_data && t.data.size() < bytes) {  // less data than its length: cannot be used
            ports_[port].config.report_error(TRN3_AER_MALFORMED_TLP);
            return;
        }
        set_access(tx, tlm::TLM_WRITE_COMMAND, a, t.no_data ? untouched_.get(bytes) : t.data.data(),
                   static_cast<unsigned>(bytes));
    } else {
        dma_reads_ += t.count;
        if (!t.no_data) buffer.resize(bytes);
        set_access(tx, tlm::TLM_READ_COMMAND, a, t.no_data ? untouched_.get(bytes) : buffer.data(),
                   static_cast<unsigned>(bytes));
    }
    requester_id id;
    id.bdf = t.requester;
    tx.set_extension(&id);
    timing_only no_data;
    if (t.no_data) tx.set_extension(&no_data);
    host_mem->b_transport(tx, delay);
    if (t.no_data) tx.clear_extension(&no_data);
    tx.clear_extension(&id);
    if (tx.get_response_status() != tlm::TLM_OK_RESPONSE) {
        ++unsupported_;
        ports_[port].config.report_error(TRN3_AER_UNSUPPORTED_REQUEST);
        if (!t.posted()) complete_to_device(port, t, {}, cpl_status::unsupported, sc_core::SC_ZERO_TIME);
        return;
    }
    if (t.type == tlp_type::mem_read) complete_to_device(port, t, std::move(buffer), cpl_status::success, delay);
}

}  // namespace trn3::pcie
