#include "trn3/pcie/endpoint.h"

#include <cstring>

#include <fmt/format.h>

#include "trn3/core/error.h"
#include "trn3/core/log.h"
#include "trn3/core/payload.h"
#include "trn3/spec/pci.h"

namespace trn3::pcie {

using sc_core::SC_NS;
using sc_core::sc_time;

namespace {
bool power_of_two(std::uint64_t v) { return v >= 16 && (v & (v - 1)) == 0; }
constexpr int msix_bar = TRN3_EP_MSIX_BAR;  // BAR0 registers, BAR2 memory window, this one the MSI-X table and PBA
}  // namespace

endpoint::endpoint(const sc_core::sc_module_name& name, unsigned default_device_id, std::uint64_t default_bar0,
                   std::uint64_t default_bar2, unsigned default_class)
    : component(name, frequency{1e9}),
      device_id(this, "device_id", default_device_id, "PCI device id (vendor is Amazon's 0x1D0F)",
                range<std::uint64_t>{0, 0xFFFF}),
      class_code(this, "class_code", default_class, "PCI class code (base, sub, interface)",
                 range<std::uint64_t>{0, 0xFFFFFF}),
      bar0_size(this, "bar0_size", byte_count{default_bar0}, "BAR0 (registers), a power of two"),
      bar2_size(this, "bar2_size", byte_count{default_bar2}, "BAR2 (memory window, prefetchable), a power of two"),
      msix_vectors(this, "msix_vectors", 32, "MSI-X table entries", range<std::uint64_t>{1, 2048}),
      max_payload(this, "max_payload", 256, "bytes per MWr / CplD (Max_Payload_Size)", range<std::uint64_t>{128, 4096}),
      max_read_request(this, "max_read_request", 512, "bytes per MRd (Max_Read_Request_Size)",
                       range<std::uint64_t>{128, 4096}),
      tags(this, "tags", 256, "reads outstanding at once", range<std::uint64_t>{1, 16384}),
      completion_timeout(this, "completion_timeout", sc_time(1, sc_core::SC_MS), "reads not answered by then fail"),
      aggregate(this, "aggregate", true,
                "equal TLPs of one access travel as one aggregate (same timing, fewer events)"),
      latency(this, "latency", sc_time(10, SC_NS), "endpoint processing, each way"),
      requests_(static_cast<unsigned>(tags.get()), completion_timeout.get()),
      requests_in_(this, "requests_in", "requests received (TLPs)"),
      writes_out_(this, "writes_out", "MWr TLPs sent (MSI-X included)"), reads_out_(this, "reads_out", "MRd TLPs sent"),
      msix_sent_(this, "msix_sent", "MSI-X messages sent"),
      msix_pending_(this, "msix_pending", "MSI-X vectors left pending (masked or disabled)"),
      unsupported_(this, "unsupported", "requests received that no BAR claims, or received UR completions"),
      poisoned_(this, "poisoned", "poisoned TLPs received") {
    for (const auto* p : {&bar0_size, &bar2_size})
        if (!power_of_two(p->get().bytes))
            throw config_error(fmt::format("{}: {} is not a power of two", p->name(), p->get().bytes));
    for (const auto* p : {&max_payload, &max_read_request})
        if (!power_of_two(p->get()))
            throw config_error(fmt::format("{}: {} is not a power of two", p->name(), p->get()));
    dma.register_b_transport(this, &endpoint::dma_transport);

    config_.init_type0(TRN3_PCI_VENDOR_AMAZON, static_cast<std::uint16_t>(device_id.get()),
                       static_cast<std::uint32_t>(class_code.get()), 1);
    config_.init_bar64(0, bar0_size.get().bytes, false);
    config_.init_bar64(2, bar2_size.get().bytes, true);
    config_.init_bar64(msix_bar, msix_bar_size, false);
    config_.init_pcie_cap(TRN3_PCIE_TYPE_ENDPOINT, TRN3_PCIE_SPEED_GEN6, 16);  // until attach() says the link's
    config_.add_capability(TRN3_PCI_CAP_ID_MSIX, TRN3_PCI_MSIX_CAP);
    config_.init(TRN3_PCI_MSIX_CAP + TRN3_MSIX_CONTROL, 2, msix_vectors.get() - 1,
                 TRN3_MSIX_ENABLE | TRN3_MSIX_FUNCTION_MASK);
    config_.init(TRN3_PCI_MSIX_CAP + TRN3_MSIX_TABLE, 4, TRN3_EP_MSIX_BAR);  // at offset 0 of the MSI-X BAR
    config_.init(TRN3_PCI_MSIX_CAP + TRN3_MSIX_PBA, 4, msix_pba_offset | TRN3_EP_MSIX_BAR);
    config_.init_aer();
    config_.on_read([this](std::uint16_t) {
        if (end_) {
            const link& l = end_->owner();
            config_.set_link_status(l.phy().speed_code, end_->width(), end_->up(), l.phy().flit_mode);
        }
    });
    config_.on_write([this](std::uint16_t, unsigned) {
        // MSI-X enabled, the function unmasked, bus mastering on: pending vectors go out.
        for (unsigned v = 0; v < msix_vectors.get(); ++v)
            if (msix_pending(v)) send_msix(v);
    });
    msix_table_.assign(msix_vectors.get() * TRN3_MSIX_ENTRY_SIZE, 0);
    for (unsigned v = 0; v < msix_vectors.get(); ++v)
        msix_table_[v * TRN3_MSIX_ENTRY_SIZE + TRN3_MSIX_ENTRY_CONTROL] = TRN3_MSIX_ENTRY_MASKED;
    msix_pba_.assign((msix_vectors.get() + 63) / 64, 0);
}

void endpoint::attach(link_end& end) {
    if (end_) throw config_error(fmt::format("{}: already attached to a link", name()));
    end_ = &end;
    config_.set(TRN3_PCI_PCIE_CAP + TRN3_PCIE_LINK_CAP, 4,
                TRN3_PCIE_LINK_VALUE(end.owner().phy().speed_code, end.owner().lanes.get()));
    end.on_receive([this](tlp& t) { receive(t); });
}

void endpoint::reply(const tlp& request, cpl_status status, const std::vector<std::uint8_t>& data,
                     const sc_time& delay) {
    const sc_time when = sc_core::sc_time_stamp() + latency.get() + delay;
    if (status != cpl_status::success || data.empty()) {
        end_->send(completion_for(request, status, bdf_), when);
        return;
    }
    for (tlp& c : data_completions(request, data, static_cast<unsigned>(max_payload.get()), bdf_))
        end_->send(std::move(c), when);
}

void endpoint::receive(tlp& t) {
    if (!t.is_request()) {
        if (!requests_.complete(t)) config_.report_error(TRN3_AER_UNEXPECTED_COMPLETION);
        return;
    }
    requests_in_ += t.count;
    if (t.type == tlp_type::cfg_read0 || t.type == tlp_type::cfg_write0) {
        // A config request is at most a DW, naturally aligned, inside the 4 KiB: anything else is unsupported.
        if (t.address >= TRN3_PCI_CONFIG_SIZE || !config_space::well_formed(unsigned(t.address), t.length) ||
            (t.type == tlp_type::cfg_write0 && t.data.size() < t.length)) {
            config_.report_error(TRN3_AER_UNSUPPORTED_REQUEST);
            reply(t, cpl_status::unsupported, {}, sc_core::SC_ZERO_TIME);
            return;
        }
        const std::uint16_t reg = static_cast<std::uint16_t>(t.address);
        if (t.type == tlp_type::cfg_write0) {
            bdf_ = t.completer;  // the function captures its bus and device number
            std::uint32_t v = 0;
            std::memcpy(&v, t.data.data(), std::min<std::size_t>(4, t.data.size()));
            config_.write(reg, t.length, v);
            reply(t, cpl_status::success, {}, sc_core::SC_ZERO_TIME);
        } else {
            const std::uint32_t v = config_.read(reg, t.length);
            std::vector<std::uint8_t> d(t.length);
            std::memcpy(d.data(), &v, t.length);
            tlp c = completion_for(t, cpl_status::success, t.completer);
            c.type = tlp_type::completion_data;
            c.length = t.length;
            c.data = std::move(d);
            end_->send(std::move(c), sc_core::sc_time_stamp() + latency.get());
        }
        return;
    }
    if (!t.is_memory()) {
        if (!t.posted()) reply(t, cpl_status::unsupported, {}, sc_core::SC_ZERO_TIME);
        return;
    }
    serve_request(t);
}

void endpoint::serve_request(tlp& t) {
    const std::uint64_t bytes = t.total_bytes();
    int bar = -1;
    for (int b : {0, 2, msix_bar}) {
        const std::uint64_t base = config_.bar_address(static_cast<unsigned>(b));
        if (base != 0 && t.address >= base && t.address + bytes <= base + config_.bar_size(static_cast<unsigned>(b)))
            bar = b;
    }
    const bool enabled = config_.get(TRN3_PCI_COMMAND, 2) & TRN3_PCI_COMMAND_MEMORY;
    if (bar < 0 || !enabled) {
        unsupported_ += t.count;
        config_.report_error(TRN3_AER_UNSUPPORTED_REQUEST);
        if (!t.posted()) reply(t, cpl_status::unsupported, {}, sc_core::SC_ZERO_TIME);
        return;
    }
    if (t.poisoned) {
        ++poisoned_;
        config_.report_error(TRN3_AER_POISONED_TLP, TRN3_PCI_STATUS_DETECTED_PARITY);
        return;  // a poisoned write is not used
    }
    const std::uint64_t offset = t.address - config_.bar_address(static_cast<unsigned>(bar));
    const bool write = t.type == tlp_type::mem_write;
    // A timing-only TLP (no_data) reaches the BAR as a trn3::timing_only
    // access: charged, moving nothing. A write with less data than its
    // length cannot be used.
    if (write && !t.no_data && t.data.size() < bytes) {
        config_.report_error(TRN3_AER_MALFORMED_TLP);
        return;
    }
    if (bar == msix_bar) {
        if (t.no_data) {  // the table's entries are data: a timing-only access is not one
            config_.report_error(TRN3_AER_UNSUPPORTED_REQUEST);
            if (!t.posted()) reply(t, cpl_status::unsupported, {}, sc_core::SC_ZERO_TIME);
            return;
        }
        return msix_access(t, offset);
    }
    tlm::tlm_generic_payload tx;
    std::vector<std::uint8_t> buffer;
    if (!write && !t.no_data) buffer.resize(bytes);
    unsigned char* data = t.no_data ? untouched_.get(bytes) : write ? t.data.data() : buffer.data();
    set_access(tx, write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND, offset, data, static_cast<unsigned>(bytes));
    timing_only no_data;
    if (t.no_data) tx.set_extension(&no_data);
    // An aggregate is complete when its tail has arrived.
    sc_time delay = t.train_span;
    (bar == 0 ? bar0 : bar2)->b_transport(tx, delay);
    if (t.no_data) tx.clear_extension(&no_data);
    const tlm::tlm_response_status rs = tx.get_response_status();
    if (write) {
        if (rs != tlm::TLM_OK_RESPONSE)
            config_.report_error(TRN3_AER_COMPLETER_ABORT, TRN3_PCI_STATUS_SIG_TARGET_ABORT);
        return;
    }
    if (rs == tlm::TLM_ADDRESS_ERROR_RESPONSE) {
        ++unsupported_;
        reply(t, cpl_status::unsupported, {}, delay);
        return;
    }
    std::vector<tlp> cpls =
        data_completions(t, t.no_data ? nullptr : buffer.data(), bytes, static_cast<unsigned>(max_payload.get()), bdf_);
    const sc_time when = sc_core::sc_time_stamp() + latency.get() + delay;
    for (tlp& c : cpls) {
        c.poisoned = rs != tlm::TLM_OK_RESPONSE;  // e.g. an uncorrectable memory error: the data is poisoned
        end_->send(std::move(c), when);
    }
}

void endpoint::msix_access(tlp& t, std::uint64_t offset) {
    const std::uint64_t bytes = t.total_bytes();
    std::vector<std::uint8_t>* store = nullptr;
    std::uint64_t base = 0;
    std::vector<std::uint8_t> pba_bytes;
    if (offset < msix_table_.size() && offset + bytes <= msix_table_.size()) {
        store = &msix_table_;
    } else if (offset >= msix_pba_offset && offset + bytes <= msix_pba_offset + msix_pba_.size() * 8) {
        pba_bytes.resize(msix_pba_.size() * 8);
        std::memcpy(pba_bytes.data(), msix_pba_.data(), pba_bytes.size());
        store = &pba_bytes;  // read-only
        base = msix_pba_offset;
    }
    if (t.type == tlp_type::mem_write) {
        if (store != &msix_table_) return;  // pending bits are read-only; writes elsewhere are dropped
        std::memcpy(msix_table_.data() + offset, t.data.data(), bytes);
        // Unmasking a vector with its pending bit set sends its message.
        for (unsigned v = static_cast<unsigned>(offset / TRN3_MSIX_ENTRY_SIZE);
             v <= (offset + bytes - 1) / TRN3_MSIX_ENTRY_SIZE && v < msix_vectors.get(); ++v)
            if (msix_pending(v)) send_msix(v);
        return;
    }
    std::vector<std::uint8_t> data(bytes, 0);
    if (store) std::memcpy(data.data(), store->data() + (offset - base), bytes);
    reply(t, cpl_status::success, data, sc_core::SC_ZERO_TIME);
}

bool endpoint::msix_pending(unsigned v) const { return (msix_pba_[v / 64] >> (v % 64)) & 1; }

void endpoint::raise_msix(unsigned vector) {
    if (vector >= msix_vectors.get()) {
        log().warn("MSI-X vector {} does not exist ({} vectors)", vector, msix_vectors.get());
        return;
    }
    msix_pba_[vector / 64] |= std::uint64_t(1) << (vector % 64);
    send_msix(vector);
}

void endpoint::send_msix(unsigned v) {
    const std::uint64_t control = config_.get(TRN3_PCI_MSIX_CAP + TRN3_MSIX_CONTROL, 2);
    const std::uint8_t* e = msix_table_.data() + v * TRN3_MSIX_ENTRY_SIZE;
    std::uint32_t lo, hi, data, vctl;
    std::memcpy(&lo, e + TRN3_MSIX_ENTRY_ADDR_LO, 4);
    std::memcpy(&hi, e + TRN3_MSIX_ENTRY_ADDR_HI, 4);
    std::memcpy(&data, e + TRN3_MSIX_ENTRY_DATA, 4);
    std::memcpy(&vctl, e + TRN3_MSIX_ENTRY_CONTROL, 4);
    const bool master = config_.get(TRN3_PCI_COMMAND, 2) & TRN3_PCI_COMMAND_BUS_MASTER;
    if (!(control & TRN3_MSIX_ENABLE) || (control & TRN3_MSIX_FUNCTION_MASK) || (vctl & TRN3_MSIX_ENTRY_MASKED) ||
        !master || !end_) {
        ++msix_pending_;
        return;
    }
    msix_pba_[v / 64] &= ~(std::uint64_t(1) << (v % 64));
    tlp t;
    t.type = tlp_type::mem_write;
    t.requester = bdf_;
    t.address = (std::uint64_t(hi) << 32) | lo;
    t.length = 4;
    t.data.resize(4);
    std::memcpy(t.data.data(), &data, 4);
    ++msix_sent_;
    ++writes_out_;
    end_->send(std::move(t), sc_core::sc_time_stamp() + latency.get());
}

void endpoint::dma_transport(tlm::tlm_generic_payload& tx, sc_time& delay) {
    const std::uint64_t bytes = tx.get_data_length();
    tx.set_response_status(tlm::TLM_OK_RESPONSE);
    if (bytes == 0) return;
    if (!end_ || !(config_.get(TRN3_PCI_COMMAND, 2) & TRN3_PCI_COMMAND_BUS_MASTER)) {
        log().debug("DMA refused: bus mastering is off");
        tx.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        return;
    }
    unsigned char* data = tx.get_data_ptr();
    // Timing only: TLPs as long, without their data; reads ask for none back.
    const bool no_data = tx.get_extension<timing_only>() != nullptr;
    if (tx.is_write()) {
        const sc_time when = sc_core::sc_time_stamp() + delay + latency.get();
        for (const tlp_piece& p : split(tx.get_address(), bytes, static_cast<unsigned>(max_payload.get()))) {
            tlp t;
            t.type = tlp_type::mem_write;
            t.requester = bdf_;
            t.address = p.address;
            t.length = p.length;
            t.count = p.count;
            t.no_data = no_data;
            if (!no_data) {
                t.data.reserve(std::uint64_t(p.length) * p.count +
                               64);  // room for the link's envelope: no copy per hop
                t.data.assign(data + p.offset, data + p.offset + std::uint64_t(p.length) * p.count);
            }
            writes_out_ += p.count;
            end_->send(std::move(t), when);
        }
        // Posted: the engine may go on once its last TLP is on the wire.
        const sc_time done = end_->wire_free();
        const sc_time now = sc_core::sc_time_stamp();
        if (done > now + delay) delay = done - now;
        return;
    }
    // Reads: synchronise, send every request (as tags allow), collect the answers.
    sc_core::wait(delay + latency.get());
    delay = sc_core::SC_ZERO_TIME;
    struct open_read {
        std::uint16_t tag;
        std::uint64_t offset, bytes;
    };
    std::vector<open_read> open;
    bool ur = false, bad = false;
    auto collect = [&](const open_read& o) {
        requester::result r = requests_.wait(o.tag);
        if (r.timed_out) {
            bad = true;
            config_.report_error(TRN3_AER_COMPLETION_TIMEOUT);
        } else if (r.status != cpl_status::success) {
            ur = true;
            ++unsupported_;
            config_.report_error(0, TRN3_PCI_STATUS_REC_MASTER_ABORT);
        } else {
            if (!no_data) std::memcpy(data + o.offset, r.data.data(), o.bytes);
            if (r.poisoned) {
                bad = true;
                ++poisoned_;
                config_.report_error(TRN3_AER_POISONED_TLP, TRN3_PCI_STATUS_DETECTED_PARITY);
            }
        }
    };
    std::size_t next_to_collect = 0;
    for (const tlp_piece& p : split(tx.get_address(), bytes, static_cast<unsigned>(max_read_request.get()))) {
        // Out of tags: collect our oldest read first (another thread may hold
        // the rest; then open() waits for one of theirs).
        if (requests_.outstanding() == tags.get() && next_to_collect < open.size()) collect(open[next_to_collect++]);
        const std::uint64_t n = std::uint64_t(p.length) * p.count;
        tlp t;
        t.type = tlp_type::mem_read;
        t.requester = bdf_;
        t.address = p.address;
        t.length = p.length;
        t.count = p.count;
        t.no_data = no_data;
        t.tag = requests_.open(n, bdf_, no_data);
        open.push_back({t.tag, p.offset, n});
        reads_out_ += p.count;
        end_->send(std::move(t), sc_core::sc_time_stamp());
    }
    while (next_to_collect < open.size()) collect(open[next_to_collect++]);
    if (ur) tx.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    else if (bad) tx.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
}

}  // namespace trn3::pcie
