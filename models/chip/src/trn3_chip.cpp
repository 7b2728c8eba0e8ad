#include "trn3/chip/trn3_chip.h"

#include <fmt/format.h>

#include "trn3/core/error.h"
#include "trn3/core/payload.h"
#include "trn3/core/protocol_checker.h"
#include "trn3/dma/fabric_write.h"
#include "trn3/numerics/reduce.h"
#include "trn3/spec/link.h"
#include "trn3/spec/mailbox.h"
#include "trn3/spec/mcu.h"
#include "trn3/spec/pci.h"

namespace trn3::chip {

namespace {
std::array<neuroncore::neuroncore*, TRN3_DEV_CORES> raw(
    std::array<std::unique_ptr<neuroncore::neuroncore>, TRN3_DEV_CORES>& v) {
    std::array<neuroncore::neuroncore*, TRN3_DEV_CORES> r{};
    for (unsigned i = 0; i < v.size(); ++i) r[i] = v[i].get();
    return r;
}
}  // namespace

trn3_chip::trn3_chip(const sc_core::sc_module_name& name, const mcu::mcu::images& firmware)
    : component(name, frequency{1.4e9}), ep("ep", TRN3_PCI_DEVICE_TRN3, TRN3_BAR0_SIZE, TRN3_BAR2_SIZE),
      mcu0("mcu0", firmware), dma0("dma0", 4), hbm_stripe("hbm_stripe", TRN3_DEV_HBM_STACKS), noc("noc"), regs("regs"),
      to_host("to_host"), hbm_errors_(this, "hbm_uncorrectable", "uncorrectable HBM errors reported") {
    for (unsigned c = 0; c < TRN3_DEV_CORES; ++c)
        nc[c] = std::make_unique<neuroncore::neuroncore>(fmt::format("nc{}", c).c_str());
    for (unsigned s = 0; s < TRN3_DEV_HBM_STACKS; ++s)
        hbm[s] = std::make_unique<hbm::hbm_stack>(fmt::format("hbm{}", s).c_str(), true);
    control = std::make_unique<chip_control>("control", raw(nc));

    // Device memory.
    for (unsigned s = 0; s < TRN3_DEV_HBM_STACKS; ++s)
        noc.map(hbm[s]->in, TRN3_DEV_HBM_BASE(s), hbm[s]->size.get().bytes, fmt::format("hbm{}", s));
    noc.map(hbm_stripe.in, TRN3_DEV_HBM_STRIPED_BASE, TRN3_DEV_HBM_STRIPED_SIZE, "hbm_striped");
    for (unsigned c = 0; c < TRN3_DEV_CORES; ++c) {
        if (nc[c]->sbuf_bytes() > TRN3_DEV_SBUF_STRIDE)
            throw config_error(fmt::format("{}: SBUF of {} bytes does not fit its {}-byte window", nc[c]->name(),
                                           nc[c]->sbuf_bytes(), TRN3_DEV_SBUF_STRIDE));
        noc.map(nc[c]->sbuf_port, TRN3_DEV_SBUF_BASE(c), nc[c]->sbuf_bytes(), fmt::format("nc{}_sbuf", c));
    }
    connect(hbm_stripe.out, noc.in);
    for (auto& core : nc) connect(core->mem, noc.in);
    connect(dma0.device, noc.in);
    connect(ep.bar2, noc.in);
    // Other chips' memory, over NeuronLink; and the way in for writes that arrive.
    noc.map(fabric_out, TRN3_FABRIC_ADDR(0, 0), std::uint64_t(TRN3_FABRIC_CHIPS) << TRN3_FABRIC_SHIFT, "fabric");
    fabric_out.register_b_transport(this, &trn3_chip::fabric_transport);
    if (fabric_read_request.get() & (fabric_read_request.get() - 1))
        throw config_error(
            fmt::format("param {} = {}: a power of two", fabric_read_request.name(), fabric_read_request.get()));
    fabric_reads_ =
        std::make_unique<pcie::requester>(static_cast<unsigned>(fabric_read_tags.get()), fabric_read_timeout.get());
    connect(fabric_in, noc.in);

    // The register space: behind BAR0 for the host, the MCU's chip window for the firmware.
    connect(ep.bar0, regs.in);
    connect(mcu0.chip, regs.in);
    regs.map(control->in, TRN3_BAR0_CHIP, TRN3_BAR0_CHIP_BLOCK_SIZE, "control");
    regs.map(mcu0.mailbox0.host, TRN3_BAR0_MAILBOX, TRN3_BAR0_MAILBOX_BLOCK_SIZE, "mailbox");
    for (unsigned s = 0; s < TRN3_DEV_HBM_STACKS; ++s)
        regs.map(hbm[s]->ctrl, TRN3_BAR0_HBM(s), TRN3_BAR0_HBM_BLOCK_SIZE, fmt::format("hbm{}", s));
    for (unsigned c = 0; c < TRN3_DEV_CORES; ++c)
        regs.map(nc[c]->ctrl, TRN3_BAR0_CORE(c), TRN3_BAR0_CORE_BLOCK_SIZE, fmt::format("nc{}", c));
    regs.map(dma0.in, TRN3_BAR0_DMA(0), TRN3_DMA_QUEUE_BLOCK_SIZE * TRN3_DMA_QUEUES_MAX, "dma");
    control->set_dma_queues(static_cast<unsigned>(dma0.queues.get()));
    control->dma_pending = [this](unsigned w) { return dma0.pending_word(w); };

    // Device requests into host memory.
    connect(dma0.host, to_host.in);
    connect(control->host, to_host.in);
    to_host.map(ep.dma, 0, ~0ull, "pcie");

    // Interrupts.
    control->boot_status = [this] { return mcu0.boot_status(); };
    control->reset_mcu = [this] {
        mcu0.mailbox0.reset();
        mcu0.request_reset();
    };
    control->raise_msix = [this](unsigned v) { ep.raise_msix(v); };
    dma0.raise_msix = [this](unsigned v) { ep.raise_msix(v); };
    dma0.queue_error = [this](unsigned q) { control->report_error(TRN3_ERR_DMA(q)); };
    dma0.fabric_rx_bytes = [this](unsigned channel) { return control->fabric_rx_bytes(channel); };
    mailbox_track_ = timeline::instance().track_of(*this, ".mailbox");
    mcu0.mailbox0.mcu_irq.on_change([this](bool level) {
        if (level) timeline::instance().instant(mailbox_track_, "request (host rang)", sc_core::sc_time_stamp());
    });
    mcu0.mailbox0.host_irq.on_change([this](bool level) {
        if (!level) return;
        timeline::instance().instant(mailbox_track_, "response (MCU rang)", sc_core::sc_time_stamp());
        ep.raise_msix(TRN3_MSIX_MAILBOX);
    });
    for (unsigned s = 0; s < TRN3_DEV_HBM_STACKS; ++s)
        hbm[s]->mem_error.on_change([this, s](bool level) {
            if (level) {
                ++hbm_errors_;
                control->report_error(TRN3_ERR_HBM(s));
            }
            hbm_irqs_high_ += level ? 1 : -1u;
            mcu0.intc0.line(TRN3_MCU_IRQ_HBM).set(hbm_irqs_high_ != 0);
        });
}

void trn3_chip::attach_port(unsigned port, pcie::link_end& end) {
    if (port >= TRN3_NEURONLINK_PORTS)
        throw config_error(
            fmt::format("{}: NeuronLink port {} does not exist ({} ports)", name(), port, TRN3_NEURONLINK_PORTS));
    if (nl_[port]) throw config_error(fmt::format("{}: NeuronLink port {} is already connected", name(), port));
    nl_[port] = &end;
    nl_[port]->on_receive([this, port](pcie::tlp& t) { fabric_receive(port, t); });
}

void trn3_chip::attach_neuronlink_far_end(unsigned port, pcie::link& l) { attach_port(port, l.b()); }

void trn3_chip::attach_neuronlink(unsigned port, pcie::link& l) {
    attach_port(port, l.a());
    regs.map(l.in, TRN3_BAR0_LINK(port), TRN3_LINK_BLOCK_SIZE, fmt::format("nl{}", port));
    control->add_neuronlink_port(port);
    l.irq.on_change([this](bool level) {
        link_irqs_high_ += level ? 1 : -1u;
        mcu0.intc0.line(TRN3_MCU_IRQ_LINK).set(link_irqs_high_ != 0);
    });
}

void trn3_chip::hold_fabric(bool on) {
    fabric_held_ = on;
    if (!on) fabric_released_.notify(sc_core::SC_ZERO_TIME);
}

void trn3_chip::fabric_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay) {
    // Held by the fabric manager: a thread waits (b_transport's callers are
    // the DMA queues' and engines' threads), keeping its time ahead of now.
    while (fabric_held_ && sc_core::sc_get_current_process_handle().proc_kind() == sc_core::SC_THREAD_PROC_)
        sc_core::wait(fabric_released_);
    // The noc passes the offset from TRN3_FABRIC_ADDR(0, 0).
    const std::uint64_t address = tx.get_address() + TRN3_FABRIC_ADDR(0, 0);
    const unsigned dest = TRN3_FABRIC_ID(address);
    const std::uint64_t bytes = tx.get_data_length();
    tx.set_response_status(tlm::TLM_OK_RESPONSE);
    // Off the fabric (the host has not enabled it) or without a route: the
    // access is refused, and the DMA descriptor that made it fails.
    const auto* tag = tx.get_extension<dma::fabric_write>();
    const unsigned me = control->fabric_id();
    const int port = port_towards(me, dest, tag ? tag->channel : 0);
    const bool local = dest == me;
    if (!control->fabric_enabled() || (!local && port < 0)) {
        ++fabric_unroutable_;
        tx.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    if (!tx.is_write()) {
        if (!local) return fabric_read(tx, delay, unsigned(port));
        tx.set_address(TRN3_FABRIC_OFFSET(address));  // this chip's own memory, without leaving the chip
        fabric_in->b_transport(tx, delay);
        tx.set_address(address - TRN3_FABRIC_ADDR(0, 0));
        return;
    }
    // TLPs of fabric_mps bytes, equal ones as one aggregate (docs/pcie.md);
    // a reducing write (the DMA engine's TRN3_DESC_REDUCE) says so in each.
    const unsigned char* data = tx.get_data_ptr();

    const bool no_data = tx.get_extension<timing_only>() != nullptr;  // TLPs as long, without their data
    const sc_core::sc_time when = sc_core::sc_time_stamp() + delay;
    for (const pcie::tlp_piece& p : pcie::split_access(address, bytes, static_cast<unsigned>(fabric_mps.get()), true)) {
        pcie::tlp t;
        t.type = pcie::tlp_type::mem_write;
        t.requester = static_cast<std::uint16_t>(control->fabric_id());
        t.address = p.address;
        t.length = p.length;
        t.count = p.count;
        t.reduce = tag && tag->reduce ? dma::tlp_code(tag->reduction, tag->operand) : 0;
        t.channel = tag ? tag->channel : 0;
        t.traffic_class = tag ? tag->traffic_class : 0;
        t.no_data = no_data;
        if (!no_data) {
            t.data.reserve(t.total_bytes() + 64);
            t.data.assign(data + p.offset, data + p.offset + t.total_bytes());
        }
        fabric_sent_ += t.count;
        if (local) deliver_local(t);
        else nl_[unsigned(port)]->send(std::move(t), when);
    }
    if (!local) {
        const sc_core::sc_time free = nl_[unsigned(port)]->wire_free(tag ? tag->traffic_class : 0);
        const sc_core::sc_time now = sc_core::sc_time_stamp();
        if (free > now + delay) delay = free - now;  // posted: back-pressure from the wire
    }
}

// A read of another chip's memory: requests of fabric_read_request bytes
// (as tags allow), then their completions, which come back by the route
// tables to this chip's fabric id. The initiator's thread waits for them.
void trn3_chip::fabric_read(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay, unsigned port) {
    if (sc_core::sc_get_current_process_handle().proc_kind() != sc_core::SC_THREAD_PROC_) {
        ++fabric_read_errors_;  // a method cannot wait for completions: a model error, refused
        tx.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
        return;
    }
    sc_core::wait(delay);
    delay = sc_core::SC_ZERO_TIME;
    const std::uint16_t me = static_cast<std::uint16_t>(control->fabric_id());
    struct open_read {
        std::uint16_t tag;
        std::uint64_t offset, bytes;
    };
    std::vector<open_read> open;
    std::size_t collected = 0;
    bool unsupported = false, failed = false;
    auto collect = [&] {
        const open_read& o = open[collected++];
        pcie::requester::result r = fabric_reads_->wait(o.tag);
        if (!r.ok()) {
            ++fabric_read_errors_;
            (r.status != pcie::cpl_status::success ? unsupported : failed) = true;
            return;
        }
        std::memcpy(tx.get_data_ptr() + o.offset, r.data.data(), o.bytes);
    };
    const std::uint64_t address = tx.get_address() + TRN3_FABRIC_ADDR(0, 0);
    for (const pcie::tlp_piece& p :
         pcie::split_access(address, tx.get_data_length(), static_cast<unsigned>(fabric_read_request.get()), true)) {
        if (fabric_reads_->outstanding() == fabric_read_tags.get() && collected < open.size()) collect();
        pcie::tlp t;
        t.type = pcie::tlp_type::mem_read;
        t.requester = me;
        t.address = p.address;
        t.length = p.length;
        t.count = p.count;
        t.tag = fabric_reads_->open(t.total_bytes(), me);
        open.push_back({t.tag, p.offset, t.total_bytes()});
        fabric_read_requests_ += t.count;
        nl_[port]->send(std::move(t), sc_core::sc_time_stamp());
    }
    while (collected < open.size()) collect();
    if (unsupported) tx.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    else if (failed) tx.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
}

// A write TLP for this chip lands in its memory. Timing only (no_data): the
// same accesses, carrying trn3::timing_only and pointing at a buffer nobody
// reads; nothing moved, nothing reduced.
void trn3_chip::deliver_local(pcie::tlp& t) {
    const std::uint64_t bytes = t.total_bytes();
    if (!t.no_data && t.data.size() != bytes) return drop();  // a TLP whose data is not its length
    tlm::tlm_generic_payload tx;
    if (t.no_data) tx.set_extension(new timing_only);  // the payload owns it
    sc_core::sc_time delay = t.train_span;
    std::uint8_t* data = t.no_data ? timing_buffer_.get(bytes) : t.data.data();
    auto access = [&](tlm::tlm_command cmd, std::uint8_t* at, std::uint64_t address) {
        set_access(tx, cmd, address, at, static_cast<unsigned>(bytes));
        fabric_in->b_transport(tx, delay);
        return tx.get_response_status() == tlm::TLM_OK_RESPONSE;
    };
    std::vector<std::uint8_t> current;
    if (t.reduce) {
        // Near-memory reduction: the memory's bytes (or, with an operand, the
        // bytes FABRIC_OPERAND(channel) away), reduced with the data, written here.
        if (!t.no_data) current.resize(bytes);
        std::uint8_t* held = t.no_data ? data : current.data();
        const std::uint64_t from = TRN3_FABRIC_OFFSET(t.address) +
                                   (dma::operand_of_tlp_code(t.reduce) ? control->fabric_operand(t.channel) : 0);
        if (from >= TRN3_FABRIC_ADDR(0, 0) || bytes > TRN3_FABRIC_ADDR(0, 0) - from)
            return drop();  // an operand outside this chip's device address space: not memory here
        if (!access(tlm::TLM_READ_COMMAND, held, from) ||
            (!t.no_data && !numerics::reduce_into(dma::reduction_of_tlp_code(t.reduce), held, t.data.data(), bytes)))
            return drop();
        data = held;
        ++fabric_reduced_;
    }
    if (!access(tlm::TLM_WRITE_COMMAND, data, TRN3_FABRIC_OFFSET(t.address))) return drop();
    fabric_received_ += t.count;
    control->fabric_landed(bytes, t.channel);
    dma0.fabric_progress();  // a queue may wait for these bytes
}

// A read request for this chip: its memory, read now, goes back to the
// requester as completions of fabric_mps bytes (an unsupported-request
// completion when the read fails).
void trn3_chip::answer_read(pcie::tlp& t) {
    const std::uint16_t me = static_cast<std::uint16_t>(control->fabric_id());
    std::vector<std::uint8_t> data(t.total_bytes());
    tlm::tlm_generic_payload tx;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    set_access(tx, tlm::TLM_READ_COMMAND, TRN3_FABRIC_OFFSET(t.address), data.data(),
               static_cast<unsigned>(data.size()));
    fabric_in->b_transport(tx, delay);
    const int port = port_towards(me, t.requester, t.channel);
    if (port < 0) return drop();  // no way back: the requester times out
    ++fabric_reads_answered_;
    std::vector<pcie::tlp> cpls;
    if (tx.get_response_status() == tlm::TLM_OK_RESPONSE)
        cpls = pcie::data_completions(t, data, static_cast<unsigned>(fabric_mps.get()), me);
    else cpls.push_back(pcie::completion_for(t, pcie::cpl_status::unsupported, me));
    for (pcie::tlp& c : cpls) nl_[unsigned(port)]->forward(std::move(c), delay + forward_latency.get());
}

// A fabric TLP this chip cannot take or pass on: posted, so nobody waits for
// it; it is counted, and the chip's host hears of it (ERR_STATUS.FABRIC).
void trn3_chip::drop() {
    ++fabric_unroutable_;
    control->fabric_dropped();
}

int trn3_chip::port_towards(unsigned source, unsigned dest, unsigned channel) const {
    const std::uint32_t ports = control->route(dest) & ((1u << TRN3_NEURONLINK_PORTS) - 1);
    const unsigned n = static_cast<unsigned>(__builtin_popcount(ports));
    if (n == 0) return -1;
    unsigned pick = TRN3_ROUTE_PICK(source, dest, channel, n);
    for (unsigned p = 0; p < TRN3_NEURONLINK_PORTS; ++p)
        if ((ports & TRN3_ROUTE_PORT(p)) && pick-- == 0) return nl_[p] ? int(p) : -1;
    return -1;
}

void trn3_chip::pass_on(unsigned dest, pcie::tlp& t, unsigned from) {
    const bool completion = t.type == pcie::tlp_type::completion || t.type == pcie::tlp_type::completion_data;
    const int port = port_towards(completion ? t.completer : t.requester, dest, t.channel);
    if (port < 0) return drop();
    fabric_forwarded_ += t.count;
    nl_[unsigned(port)]->forward(std::move(t), forward_latency.get(), nl_[from]);
}

void trn3_chip::fabric_receive(unsigned port, pcie::tlp& t) {
    // A chip its host has not put on the fabric takes nothing: before its id
    // is programmed it must not mistake another chip's write for its own.
    if (!control->fabric_enabled()) return drop();
    const unsigned me = control->fabric_id();
    if (t.type == pcie::tlp_type::completion || t.type == pcie::tlp_type::completion_data) {
        // Completions go back to their requester, a chip's fabric id.
        if (t.requester != me) return pass_on(t.requester, t, port);
        if (!fabric_reads_->complete(t)) drop();  // no read waits for it (timed out)
        return;
    }
    if ((t.type != pcie::tlp_type::mem_write && t.type != pcie::tlp_type::mem_read) ||
        t.address < TRN3_FABRIC_ADDR(0, 0))
        return drop();
    const unsigned dest = TRN3_FABRIC_ID(t.address);
    if (dest != me) return pass_on(dest, t, port);
    if (t.type == pcie::tlp_type::mem_write) deliver_local(t);
    else answer_read(t);
}

unsigned char* trn3_chip::device_memory(std::uint64_t address, std::uint64_t bytes) {
    const unsigned s = static_cast<unsigned>(address / TRN3_DEV_HBM_STRIDE);
    const std::uint64_t off = address % TRN3_DEV_HBM_STRIDE;
    if (s >= TRN3_DEV_HBM_STACKS || off + bytes > hbm[s]->size.get().bytes) return nullptr;
    return hbm[s]->data() + off;
}

}  // namespace trn3::chip
