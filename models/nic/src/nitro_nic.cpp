#include "trn3/nic/nitro_nic.h"

#include <cstring>

#include <fmt/format.h>

#include "trn3/core/payload.h"
#include "trn3/ethernet/frame.h"
#include "trn3/spec/pci.h"

namespace trn3::nic {

using ethernet::get_field;
using ethernet::put_field;
using sc_core::sc_time;

namespace {
bool power_of_two(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

std::vector<std::uint8_t> header(std::uint8_t op, std::uint8_t status, std::uint32_t imm, std::uint64_t token,
                                 std::uint64_t offset, std::uint32_t key, std::uint32_t length, bool timing) {
    std::vector<std::uint8_t> h(TRN3_RDMA_HEADER_BYTES, 0);
    put_field<std::uint8_t>(h, TRN3_RDMA_OP, op);
    put_field<std::uint8_t>(h, TRN3_RDMA_STATUS, status);
    put_field<std::uint16_t>(h, TRN3_RDMA_FLAGS, timing ? TRN3_RDMA_TIMING_ONLY : 0);
    put_field<std::uint32_t>(h, TRN3_RDMA_IMM, imm);
    put_field<std::uint64_t>(h, TRN3_RDMA_TOKEN, token);
    put_field<std::uint64_t>(h, TRN3_RDMA_OFFSET, offset);
    put_field<std::uint32_t>(h, TRN3_RDMA_KEY, key);
    put_field<std::uint32_t>(h, TRN3_RDMA_LENGTH, length);
    return h;
}
}  // namespace

nitro_nic::nitro_nic(const sc_core::sc_module_name& name, std::uint64_t node, std::uint64_t first_port_id)
    : reg_block(name, frequency{1e9}), ep("ep", TRN3_PCI_DEVICE_NIC, 1 << 20, 4096, TRN3_PCI_CLASS_NETWORK),
      srd("srd", node, 2, first_port_id),
      wqe_cost(this, "wqe_cost", sc_time(100, sc_core::SC_NS), "the NIC's time per send-queue entry, after its read",
               range<sc_time>{sc_time(0, sc_core::SC_NS), sc_time(1, sc_core::SC_MS)}),
      response_timeout(this, "response_timeout", sc_time(50, sc_core::SC_MS),
                       "a request without a response this long completes with TRANSPORT (its response was lost "
                       "with its connection)",
                       range<sc_time>{sc_time(1, sc_core::SC_US), sc_time(10, sc_core::SC_SEC)}),
      max_outstanding(this, "max_outstanding", byte_count{64 << 20},
                      "request bytes a queue pair may have awaiting responses (the NIC holds them); past it the "
                      "send queue waits",
                      range<byte_count>{byte_count{1}, byte_count{1ull << 34}}),
      node_(node & TRN3_ETH_NODE_MASK), requests_(this, "requests", "requests sent (send-queue entries that passed)"),
      responses_(this, "responses", "responses received"),
      rdma_refused_(this, "rdma_refused", "inbound requests refused: key, bounds, domain or access"),
      rnr_(this, "rnr", "inbound SEND or WRITE_IMM without a fitting receive buffer"),
      local_errors_(this, "local_errors", "send-queue entries completed with an error before sending"),
      response_timeouts_(this, "response_timeouts", "requests completed with TRANSPORT: no response in time"),
      completions_dropped_(this, "completions_dropped", "completions for a stopped or disabled queue pair"),
      bytes_sent_(this, "bytes_sent", "request data bytes sent"),
      bytes_received_(this, "bytes_received", "data bytes written into host memory") {
    auto add = [&](const std::string& leaf, std::uint64_t offset, unsigned width, std::uint64_t reset, access a,
                   const char* d) {
        owned_.push_back(std::make_unique<reg>(regs, leaf, offset, width, reset, a, d));
        return owned_.back().get();
    };
    add("id", TRN3_NIC_ID, 4, TRN3_NIC_ID_VALUE, access::ro, "identifies a Nitro-v6 NIC");
    add("node", TRN3_NIC_NODE, 8, node_, access::ro, "the NIC's network address");
    ports_ = add("ports", TRN3_NIC_PORTS, 4, 0x3, access::ro, "bit per Ethernet port whose link is up");
    rdma_errors_reg_ = add("rdma_errors", TRN3_NIC_RDMA_ERRORS, 8, 0, access::ro, "inbound requests refused");
    last_error_ = add("last_error", TRN3_NIC_LAST_ERROR, 4, 0, access::ro, "qp | status << 16 of the last refusal");
    error_vector_ =
        add("error_vector", TRN3_NIC_ERROR_VECTOR, 4, TRN3_NIC_NO_VECTOR, access::rw, "MSI-X vector of refusals");
    for (unsigned q = 0; q < TRN3_NIC_QPS; ++q) {
        const std::uint64_t b = TRN3_NIC_QP(q);
        auto r = [&](const char* leaf, std::uint64_t off, unsigned width, access a, const char* d,
                     std::uint64_t reset = 0) {
            return add(fmt::format("qp{}_{}", q, leaf), b + off, width, reset, a, d);
        };
        qp_regs p{};
        p.sq_base = r("sq_base", TRN3_NIC_SQ_BASE, 8, access::rw, "send queue ring");
        p.sq_size = r("sq_size", TRN3_NIC_SQ_SIZE, 4, access::rw, "send queue entries");
        p.sq_tail = r("sq_tail", TRN3_NIC_SQ_TAIL, 4, access::rw, "send doorbell");
        p.sq_head = r("sq_head", TRN3_NIC_SQ_HEAD, 4, access::ro, "send entries taken");
        p.rq_base = r("rq_base", TRN3_NIC_RQ_BASE, 8, access::rw, "receive queue ring");
        p.rq_size = r("rq_size", TRN3_NIC_RQ_SIZE, 4, access::rw, "receive queue entries");
        p.rq_tail = r("rq_tail", TRN3_NIC_RQ_TAIL, 4, access::rw, "receive buffers posted");
        p.rq_head = r("rq_head", TRN3_NIC_RQ_HEAD, 4, access::ro, "receive buffers used");
        p.cq_base = r("cq_base", TRN3_NIC_CQ_BASE, 8, access::rw, "completion ring");
        p.cq_size = r("cq_size", TRN3_NIC_CQ_SIZE, 4, access::rw, "completion entries");
        p.cq_head = r("cq_head", TRN3_NIC_CQ_HEAD, 4, access::rw, "completions consumed");
        p.cq_tail = r("cq_tail", TRN3_NIC_CQ_TAIL, 4, access::ro, "completions written");
        p.pd = r("pd", TRN3_NIC_QP_PD, 4, access::rw, "protection domain");
        p.vector = r("vector", TRN3_NIC_QP_VECTOR, 4, access::rw, "MSI-X vector per completion", TRN3_NIC_NO_VECTOR);
        p.control = r("control", TRN3_NIC_QP_CONTROL, 4, access::rw, "bit 0 enable");
        p.status = r("status", TRN3_NIC_QP_STATUS, 4, access::ro, "0, or the error that stopped it");
        p.sq_tail->on_write([this](reg&, std::uint64_t) { ring(); });
        p.control->on_write([this, q](reg& c, std::uint64_t old) {
            // Enabling a queue pair clears the error that stopped it;
            // disabling it drops its requests and its SRD connections (their
            // next use starts a new epoch, docs/scaleout.md).
            if (c.value() & TRN3_NIC_QP_ENABLE) qps_[q].status->set(TRN3_NIC_QP_OK);
            else if (old & TRN3_NIC_QP_ENABLE) disable(q);
            ring();
        });
        qps_.push_back(p);
    }
    for (unsigned i = 0; i < TRN3_NIC_MRS; ++i) {
        const std::uint64_t b = TRN3_NIC_MR(i);
        auto r = [&](const char* leaf, std::uint64_t off, unsigned width, const char* d) {
            return add(fmt::format("mr{}_{}", i, leaf), b + off, width, 0, access::rw, d);
        };
        mrs_.push_back({r("addr", TRN3_NIC_MR_ADDR, 8, "bus address"), r("length", TRN3_NIC_MR_LENGTH, 8, "bytes"),
                        r("key", TRN3_NIC_MR_KEY, 4, "key"), r("pd", TRN3_NIC_MR_PD, 4, "protection domain"),
                        r("access", TRN3_NIC_MR_ACCESS, 4, "access bits; 0: not valid")});
    }
    ep.bar0.bind(in);
    ep.bar2.bind(window.in);
    dma.bind(ep.dma);
    srd.on_deliver([this](srd_engine::inbound& m) {
        inbound_.push_back(inbound_item{std::move(m)});
        inbound_event_.notify(sc_core::SC_ZERO_TIME);
    });
    SC_HAS_PROCESS(nitro_nic);
    SC_THREAD(send_engine);
    SC_THREAD(receive_engine);
}

void nitro_nic::ring() {
    ++doorbells_;
    doorbell_.notify(sc_core::SC_ZERO_TIME);
}

void nitro_nic::disable(unsigned q) {
    for (auto it = pending_.begin(); it != pending_.end();)
        it = it->second.qp == q ? pending_.erase(it) : std::next(it);
    outstanding_[q] = 0;
    srd.reset_qp(static_cast<std::uint16_t>(q));
}

void nitro_nic::end_of_elaboration() {
    // A port without an Ethernet link is down from the start.
    std::uint64_t up = 0;
    for (unsigned p = 0; p < srd.port_count(); ++p) up |= std::uint64_t{srd.port_usable(p)} << p;
    ports_->set(up);
}

void nitro_nic::set_link_down(unsigned port, bool down) {
    srd.set_port_down(port, down);
    const std::uint64_t bit = std::uint64_t{1} << port;
    ports_->set(down ? ports_->value() & ~bit : ports_->value() | bit);
}

bool nitro_nic::host_access(tlm::tlm_command cmd, std::uint64_t address, void* data, std::uint64_t bytes, bool timing) {
    if (bytes == 0) return true;
    if (!timing) return access_and_wait(dma.operator->(), cmd, address, data, bytes) == tlm::TLM_OK_RESPONSE;
    tlm::tlm_generic_payload tx;
    set_access(tx, cmd, address, untouched_.get(bytes), static_cast<unsigned>(bytes));
    timing_only no_data;
    tx.set_extension(&no_data);
    sc_time delay = sc_core::SC_ZERO_TIME;
    dma->b_transport(tx, delay);
    tx.clear_extension(&no_data);
    sc_core::wait(delay);
    return tx.get_response_status() == tlm::TLM_OK_RESPONSE;
}

bool nitro_nic::qp_usable(unsigned q) const {
    return q < qps_.size() && (qps_[q].control->value() & TRN3_NIC_QP_ENABLE) &&
           qps_[q].status->value() == TRN3_NIC_QP_OK;
}

bool nitro_nic::region(std::uint32_t key, std::uint32_t pd, std::uint32_t need, std::uint64_t offset,
                       std::uint64_t length, std::uint64_t& bus) const {
    const std::uint32_t index = TRN3_NIC_KEY_INDEX(key);
    if (index >= mrs_.size()) return false;
    const mr_regs& m = mrs_[index];
    if (!m.access->value() || m.key->value() != key || m.pd->value() != pd || (m.access->value() & need) != need)
        return false;
    if (offset > m.length->value() || length > m.length->value() - offset) return false;
    bus = m.addr->value() + offset;
    return true;
}

bool nitro_nic::local_buffer(std::uint32_t lkey, std::uint32_t pd, std::uint64_t addr, std::uint64_t length) const {
    const std::uint32_t index = TRN3_NIC_KEY_INDEX(lkey);
    if (index >= mrs_.size() || addr < mrs_[index].addr->value()) return false;
    std::uint64_t bus = 0;
    return region(lkey, pd, TRN3_NIC_ACCESS_LOCAL, addr - mrs_[index].addr->value(), length, bus);
}

bool nitro_nic::complete(unsigned q, const trn3_nic_cqe& c) {
    qp_regs& p = qps_[q];
    if (!qp_usable(q)) {  // stopped or disabled: its completions go nowhere
        ++completions_dropped_;
        return false;
    }
    const std::uint32_t size = static_cast<std::uint32_t>(p.cq_size->value());
    const std::uint32_t head = static_cast<std::uint32_t>(p.cq_head->value());
    const std::uint32_t tail = static_cast<std::uint32_t>(p.cq_tail->value());
    if (!power_of_two(size)) {
        p.status->set(TRN3_NIC_QP_BAD_RING);
        return false;
    }
    if (tail - head >= size) {
        p.status->set(TRN3_NIC_QP_CQ_OVERRUN);
        log().warn("qp {}: completion queue full, the queue pair stops", q);
        return false;
    }
    trn3_nic_cqe e = c;
    e.phase = ((tail / size) & 1) == 0 ? 1 : 0;
    p.cq_tail->set(tail + 1);  // the slot is this completion's before the write waits (two engines complete)
    if (!host_access(tlm::TLM_WRITE_COMMAND, p.cq_base->value() + sizeof e * (tail & (size - 1)), &e, sizeof e)) {
        p.status->set(TRN3_NIC_QP_BAD_RING);
        return false;
    }
    if (p.vector->value() != TRN3_NIC_NO_VECTOR) ep.raise_msix(static_cast<unsigned>(p.vector->value()));
    return true;
}

// ---- sending ----

void nitro_nic::send_engine() {
    unsigned next = 0;
    for (;;) {
        const std::uint64_t seen = doorbells_;  // a doorbell during the pass makes it look again
        bool any = false;
        for (unsigned i = 0; i < TRN3_NIC_QPS && !any; ++i) {
            const unsigned q = (next + i) % TRN3_NIC_QPS;
            if (serve(q)) {
                any = true;
                next = q + 1;
            }
        }
        if (!any && seen == doorbells_) wait(doorbell_);
    }
}

bool nitro_nic::serve(unsigned q) {
    qp_regs& p = qps_[q];
    const std::uint32_t head = static_cast<std::uint32_t>(p.sq_head->value());
    const std::uint32_t tail = static_cast<std::uint32_t>(p.sq_tail->value());
    if (!qp_usable(q) || head == tail) return false;
    const std::uint32_t size = static_cast<std::uint32_t>(p.sq_size->value());
    if (!power_of_two(size) || tail - head > size) {  // more entries posted than the ring holds
        p.status->set(TRN3_NIC_QP_BAD_RING);
        return false;
    }
    // Requests outstanding hold their data in the NIC: past max_outstanding
    // bytes, the next waits for completions (each rings the doorbell).
    if (outstanding_[q] >= max_outstanding.get().bytes) return false;
    trn3_nic_wqe w{};
    if (!host_access(tlm::TLM_READ_COMMAND, p.sq_base->value() + sizeof w * (head & (size - 1)), &w, sizeof w)) {
        p.status->set(TRN3_NIC_QP_BAD_RING);
        return false;
    }
    wait(wqe_cost.get());
    if (!qp_usable(q) || static_cast<std::uint32_t>(p.sq_head->value()) != head) return true;  // changed meanwhile
    p.sq_head->set(head + 1);
    const auto fail = [&](std::uint32_t status) {
        ++local_errors_;
        trn3_nic_cqe c{};
        c.wr_id = w.wr_id;
        c.status = status;
        c.opcode = w.opcode;
        complete(q, c);
        return true;
    };
    const bool known = w.opcode == TRN3_NIC_OP_SEND || w.opcode == TRN3_NIC_OP_WRITE ||
                       w.opcode == TRN3_NIC_OP_WRITE_IMM || w.opcode == TRN3_NIC_OP_READ;
    const bool timing = w.flags & TRN3_NIC_WQE_TIMING_ONLY;
    if (!known || (w.flags & ~TRN3_NIC_WQE_TIMING_ONLY) || w.reserved || w.reserved2 ||
        w.length > TRN3_NIC_MAX_MESSAGE || (w.dst_node & ~TRN3_ETH_NODE_MASK) || w.dst_qp >= TRN3_NIC_QPS)
        return fail(TRN3_NIC_ST_BAD_REQUEST);
    const std::uint32_t pd = static_cast<std::uint32_t>(p.pd->value());
    if (!local_buffer(w.lkey, pd, w.local_addr, w.length)) return fail(TRN3_NIC_ST_LOCAL_PROTECTION);
    const std::uint64_t token = next_token_++;
    std::vector<std::uint8_t> message =
        header(w.opcode, 0, w.imm, token, w.remote_offset, w.rkey, w.opcode == TRN3_NIC_OP_READ ? w.length : 0, timing);
    std::uint64_t bytes = TRN3_RDMA_HEADER_BYTES;
    if (w.opcode != TRN3_NIC_OP_READ) {
        bytes += w.length;
        // Timing only: the header travels, the data is read for its time and not carried.
        if (!timing) message.resize(bytes);
        if (!host_access(tlm::TLM_READ_COMMAND, w.local_addr,
                         timing ? nullptr : message.data() + TRN3_RDMA_HEADER_BYTES, w.length, timing))
            return fail(TRN3_NIC_ST_LOCAL_DMA);
        bytes_sent_ += w.length;
    }
    pending_[token] = pending{q, w};
    response_deadlines_.emplace(sc_core::sc_time_stamp() + response_timeout.get(), token);
    inbound_event_.notify(sc_core::SC_ZERO_TIME);  // the receive engine minds the deadline
    outstanding_[q] += w.length;
    ++requests_;
    srd.post_send(static_cast<std::uint16_t>(q), w.dst_node, w.dst_qp, bytes, std::move(message),
                  [this, token](bool ok, const sc_time&) {
                      if (ok) return;  // its response completes it
                      inbound_item failed;
                      failed.transport_failure = true;
                      failed.failed_token = token;
                      inbound_.push_back(std::move(failed));
                      inbound_event_.notify(sc_core::SC_ZERO_TIME);
                  });
    return true;
}

// ---- receiving ----

bool nitro_nic::take_pending(std::uint64_t token, pending& out) {
    const auto it = pending_.find(token);
    if (it == pending_.end()) return false;
    out = it->second;
    pending_.erase(it);
    outstanding_[out.qp] -= out.wqe.length;
    ring();  // room for the next request
    return true;
}

void nitro_nic::fail_request(std::uint64_t token) {
    pending r;
    if (!take_pending(token, r)) return;
    trn3_nic_cqe c{};
    c.wr_id = r.wqe.wr_id;
    c.status = TRN3_NIC_ST_TRANSPORT;
    c.opcode = r.wqe.opcode;
    complete(r.qp, c);
}

void nitro_nic::receive_engine() {
    for (;;) {
        // Requests whose response did not come in time (it was lost with
        // its connection) complete with TRANSPORT: none waits forever.
        while (!response_deadlines_.empty() && response_deadlines_.begin()->first <= sc_core::sc_time_stamp()) {
            const std::uint64_t token = response_deadlines_.begin()->second;
            response_deadlines_.erase(response_deadlines_.begin());
            if (pending_.count(token)) ++response_timeouts_;
            fail_request(token);
        }
        if (inbound_.empty()) {
            if (response_deadlines_.empty()) wait(inbound_event_);
            else wait(response_deadlines_.begin()->first - sc_core::sc_time_stamp(), inbound_event_);
            continue;
        }
        inbound_item item = std::move(inbound_.front());
        inbound_.pop_front();
        if (item.transport_failure) {
            fail_request(item.failed_token);
            continue;
        }
        const sc_time now = sc_core::sc_time_stamp();
        if (item.msg.when > now) wait(item.msg.when - now);  // the data is in the NIC then
        if (item.msg.data.size() < TRN3_RDMA_HEADER_BYTES) continue;  // not an RDMA message: nothing to do
        if (get_field<std::uint8_t>(item.msg.data, TRN3_RDMA_OP) & TRN3_RDMA_RESPONSE) on_response(item.msg);
        else on_request(item.msg);
    }
}

void nitro_nic::respond(const srd_engine::inbound& request, std::uint8_t status, std::vector<std::uint8_t> data,
                        std::uint64_t timing_bytes) {
    std::vector<std::uint8_t> m = header(get_field<std::uint8_t>(request.data, TRN3_RDMA_OP) | TRN3_RDMA_RESPONSE,
                                         status, 0, get_field<std::uint64_t>(request.data, TRN3_RDMA_TOKEN), 0, 0,
                                         static_cast<std::uint32_t>(data.size() + timing_bytes), timing_bytes != 0);
    m.insert(m.end(), data.begin(), data.end());
    const std::uint64_t bytes = m.size() + timing_bytes;
    srd.post_send(request.dst_qp, request.src_node, request.src_qp, bytes, std::move(m), {});
}

void nitro_nic::refuse(unsigned q, std::uint32_t status) {
    ++rdma_refused_;
    rdma_errors_reg_->set(rdma_errors_reg_->value() + 1);
    last_error_->set(q | status << 16);
    if (error_vector_->value() != TRN3_NIC_NO_VECTOR) ep.raise_msix(static_cast<unsigned>(error_vector_->value()));
}

void nitro_nic::on_request(srd_engine::inbound& m) {
    const std::uint8_t op = get_field<std::uint8_t>(m.data, TRN3_RDMA_OP);
    const std::uint64_t offset = get_field<std::uint64_t>(m.data, TRN3_RDMA_OFFSET);
    const std::uint32_t key = get_field<std::uint32_t>(m.data, TRN3_RDMA_KEY);
    const std::uint16_t flags = get_field<std::uint16_t>(m.data, TRN3_RDMA_FLAGS);
    const bool timing = flags & TRN3_RDMA_TIMING_ONLY;
    const std::uint64_t length =
        op == TRN3_NIC_OP_READ ? get_field<std::uint32_t>(m.data, TRN3_RDMA_LENGTH) : m.bytes - TRN3_RDMA_HEADER_BYTES;
    const unsigned q = m.dst_qp;
    // Its data all there, or (timing only) the header alone.
    if ((flags & ~TRN3_RDMA_TIMING_ONLY) || m.data.size() != (timing ? TRN3_RDMA_HEADER_BYTES : m.bytes))
        return respond(m, TRN3_NIC_ST_BAD_REQUEST);
    if (!qp_usable(q)) {
        refuse(q, TRN3_NIC_ST_REMOTE_ACCESS);
        return respond(m, TRN3_NIC_ST_REMOTE_ACCESS);
    }
    qp_regs& p = qps_[q];
    const std::uint32_t pd = static_cast<std::uint32_t>(p.pd->value());
    std::uint8_t* data = timing ? nullptr : m.data.data() + TRN3_RDMA_HEADER_BYTES;
    std::uint64_t bus = 0;
    if (op == TRN3_NIC_OP_WRITE || op == TRN3_NIC_OP_WRITE_IMM || op == TRN3_NIC_OP_READ) {
        const std::uint32_t need = op == TRN3_NIC_OP_READ ? TRN3_NIC_ACCESS_REMOTE_READ : TRN3_NIC_ACCESS_REMOTE_WRITE;
        if (!region(key, pd, need, offset, length, bus)) {
            refuse(q, TRN3_NIC_ST_REMOTE_ACCESS);
            return respond(m, TRN3_NIC_ST_REMOTE_ACCESS);
        }
    } else if (op != TRN3_NIC_OP_SEND) {
        return respond(m, TRN3_NIC_ST_BAD_REQUEST);
    }
    if (op == TRN3_NIC_OP_READ) {
        std::vector<std::uint8_t> out(timing ? 0 : length);
        if (!host_access(tlm::TLM_READ_COMMAND, bus, out.data(), length, timing))
            return respond(m, TRN3_NIC_ST_LOCAL_DMA);
        return respond(m, TRN3_NIC_ST_OK, std::move(out), timing ? length : 0);
    }
    // SEND and WRITE_IMM take a receive buffer; a WRITE_IMM's only carries its completion.
    trn3_nic_rqe rqe{};
    const bool needs_buffer = op != TRN3_NIC_OP_WRITE;
    if (needs_buffer) {
        const std::uint32_t head = static_cast<std::uint32_t>(p.rq_head->value());
        const std::uint32_t size = static_cast<std::uint32_t>(p.rq_size->value());
        const std::uint32_t tail = static_cast<std::uint32_t>(p.rq_tail->value());
        if (head == tail) {
            ++rnr_;
            return respond(m, TRN3_NIC_ST_RNR);
        }
        if (!power_of_two(size) || tail - head > size ||
            !host_access(tlm::TLM_READ_COMMAND, p.rq_base->value() + sizeof rqe * (head & (size - 1)), &rqe,
                         sizeof rqe)) {
            p.status->set(TRN3_NIC_QP_BAD_RING);
            return respond(m, TRN3_NIC_ST_RNR);
        }
        p.rq_head->set(head + 1);
    }
    trn3_nic_cqe c{};
    c.wr_id = rqe.wr_id;
    c.opcode = op == TRN3_NIC_OP_SEND ? TRN3_NIC_OP_RECV : TRN3_NIC_OP_RECV | TRN3_NIC_OP_WRITE_IMM;
    c.src_qp = m.src_qp;
    c.src_node = m.src_node;
    c.imm = get_field<std::uint32_t>(m.data, TRN3_RDMA_IMM);
    c.bytes = static_cast<std::uint32_t>(length);
    if (op == TRN3_NIC_OP_SEND) {
        if (rqe.length < length) {
            ++rnr_;
            c.status = TRN3_NIC_ST_RNR;
            complete(q, c);
            return respond(m, TRN3_NIC_ST_RNR);
        }
        if (!local_buffer(rqe.lkey, pd, rqe.addr, length)) {
            c.status = TRN3_NIC_ST_LOCAL_PROTECTION;
            complete(q, c);
            refuse(q, TRN3_NIC_ST_LOCAL_PROTECTION);
            return respond(m, TRN3_NIC_ST_REMOTE_ACCESS);
        }
        bus = rqe.addr;
    }
    if (!host_access(tlm::TLM_WRITE_COMMAND, bus, data, length, timing)) {
        if (needs_buffer) {
            c.status = TRN3_NIC_ST_LOCAL_DMA;
            complete(q, c);
        }
        return respond(m, TRN3_NIC_ST_LOCAL_DMA);
    }
    bytes_received_ += length;
    if (needs_buffer) complete(q, c);
    respond(m, TRN3_NIC_ST_OK);
}

void nitro_nic::on_response(srd_engine::inbound& m) {
    ++responses_;
    pending r;
    if (!take_pending(get_field<std::uint64_t>(m.data, TRN3_RDMA_TOKEN), r)) return;  // a stale or forged token
    trn3_nic_cqe c{};
    c.wr_id = r.wqe.wr_id;
    c.opcode = r.wqe.opcode;
    c.status = get_field<std::uint8_t>(m.data, TRN3_RDMA_STATUS);
    if (c.status == TRN3_NIC_ST_OK && r.wqe.opcode == TRN3_NIC_OP_READ) {
        // The bytes asked for, carried or (as the request was) timing only.
        const bool timing = r.wqe.flags & TRN3_NIC_WQE_TIMING_ONLY;
        const std::uint64_t got = m.bytes - TRN3_RDMA_HEADER_BYTES;
        const bool as_asked =
            (get_field<std::uint16_t>(m.data, TRN3_RDMA_FLAGS) == (timing ? TRN3_RDMA_TIMING_ONLY : 0)) &&
            m.data.size() == (timing ? TRN3_RDMA_HEADER_BYTES : m.bytes);
        if (got != r.wqe.length || !as_asked) c.status = TRN3_NIC_ST_REMOTE_ACCESS;
        else if (!host_access(tlm::TLM_WRITE_COMMAND, r.wqe.local_addr,
                              timing ? nullptr : m.data.data() + TRN3_RDMA_HEADER_BYTES, got, timing))
            c.status = TRN3_NIC_ST_LOCAL_DMA;
        else bytes_received_ += got;
    }
    if (c.status == TRN3_NIC_ST_OK) c.bytes = r.wqe.length;
    complete(r.qp, c);
}

}  // namespace trn3::nic
