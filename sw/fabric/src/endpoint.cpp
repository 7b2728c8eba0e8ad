// The reliable-datagram endpoint: a NIC queue pair, and the provider's
// message protocol over it (protocol.h): eager and rendezvous sends, tag
// matching, the receive reorder window, RNR retries with back-off, RMA.
#include <algorithm>
#include <cstring>

#include "provider.h"
#include "trn3/fabric/fi_trn3.h"

namespace trn3::fabric {

namespace {

constexpr std::uint64_t rx_flag = 1ull << 63;  // wr_id of a receive bounce buffer

struct recv_op {
    void* context = nullptr;
    void* buf = nullptr;
    std::size_t len = 0;
    void* desc = nullptr;
    fi_addr_t src = FI_ADDR_UNSPEC;
    std::uint64_t tag = 0, ignore = 0;
    bool tagged = false;
    bool report = true;
};

struct arrival {
    wire_address src;
    wire_header h;
    // Eager data: still in its receive bounce buffer (`in_slot`, while it is
    // being delivered), or kept (an unexpected or early message).
    const std::uint8_t* in_slot = nullptr;
    std::vector<std::uint8_t> kept;
    const std::uint8_t* data() const { return in_slot ? in_slot : kept.data(); }
    void keep() {
        if (in_slot) kept.assign(in_slot, in_slot + h.length);
        in_slot = nullptr;
    }
};

struct tx_op {
    enum kind_t { eager, rts, fin, rma, rdv_read } kind = eager;
    void* context = nullptr;
    std::uint64_t cq_flags = 0;
    bool report = true;
    int slot = -1;
    trn3_nic_wqe wqe{};
    unsigned retries = 0;
    std::uint64_t retry_at = 0;  // ns; 0: not waiting to be retried
    bool sent = false, fin_received = false;  // rts
    std::uint16_t fin_status = 0;
    // rdv_read: the receive it fills and the sender's operation
    recv_op recv;
    wire_header header;
    wire_address peer;
};

}  // namespace

struct endpoint_object {
    fid_ep fid{};
    domain_object* domain = nullptr;
    av_object* av = nullptr;
    cq_object *tx_cq = nullptr, *rx_cq = nullptr;
    bool tx_selective = false, rx_selective = false;
    bool enabled = false;
    unsigned qp = 0;
    std::uint16_t incarnation = 0;
    driver::dma_buffer pool;  // rx_slots then tx_slots bounce buffers
    unsigned pool_index = 0;
    std::uint32_t pool_key = 0;
    std::vector<int> free_tx;
    std::map<std::uint64_t, tx_op> ops;  // by wr_id
    std::uint64_t next_op = 1;
    std::deque<std::uint64_t> deferred;  // ops waiting for a send queue entry or a bounce buffer, in order
    std::map<wire_address, std::uint64_t> next_seq, expected;
    std::map<wire_address, std::map<std::uint64_t, arrival>> held;  // early arrivals
    std::list<recv_op> posted_msg, posted_tagged;
    std::list<arrival> unexpected_msg, unexpected_tagged;

    nic_state& nic() const { return *domain->nic; }
    std::uint8_t* slot_cpu(int slot) const { return pool.cpu + std::size_t(slot) * slot_bytes; }
    std::uint64_t slot_bus(int slot) const { return pool.bus_address + std::uint64_t(slot) * slot_bytes; }
};

namespace {

void charge_copy(endpoint_object* ep, std::size_t bytes) {
    if (bytes >= copy_bytes_per_ns) ep->nic().host.sleep_ns(bytes / copy_bytes_per_ns);
}

void push(cq_object* cq, const cq_object::entry& e) {
    if (cq) cq->entries.push_back(e);
}

cq_object::entry entry_of(void* context, std::uint64_t flags, std::size_t len, void* buf, std::uint64_t data,
                          std::uint64_t tag) {
    cq_object::entry e;
    e.e = fi_cq_tagged_entry{context, flags, len, buf, data, tag};
    return e;
}

// ---- sending ----

void post_or_defer(endpoint_object* ep, std::uint64_t id) {
    if (ep->deferred.empty()) {
        const driver::status s = ep->nic().dev.post_send(ep->qp, ep->ops[id].wqe);
        if (s == driver::status::ok) return;
    }
    ep->deferred.push_back(id);
}

void drain_deferred(endpoint_object* ep) {
    while (!ep->deferred.empty()) {
        const std::uint64_t id = ep->deferred.front();
        auto it = ep->ops.find(id);
        if (it != ep->ops.end()) {
            tx_op& op = it->second;
            if (op.kind == tx_op::fin && op.slot < 0) {  // a fin waits for a bounce buffer
                if (ep->free_tx.empty()) return;
                op.slot = ep->free_tx.back();
                ep->free_tx.pop_back();
                std::memcpy(ep->slot_cpu(op.slot), &op.header, sizeof op.header);
                op.wqe.local_addr = ep->slot_bus(op.slot);
            }
            if (ep->nic().dev.post_send(ep->qp, op.wqe) != driver::status::ok) return;
        }
        ep->deferred.pop_front();
    }
}

trn3_nic_wqe wqe_to(const wire_address& to, std::uint8_t opcode, std::uint64_t id) {
    trn3_nic_wqe w{};
    w.opcode = opcode;
    w.dst_node = to.node;
    w.dst_qp = to.qp;
    w.wr_id = id;
    return w;
}

void send_fin(endpoint_object* ep, const wire_address& to, std::uint64_t token, std::uint32_t status) {
    const std::uint64_t id = ep->next_op++;
    tx_op& op = ep->ops[id];
    op.kind = tx_op::fin;
    op.report = false;
    op.header.type = msg_fin;
    op.header.status = static_cast<std::uint16_t>(status);
    op.header.token = token;
    op.header.src_incarnation = ep->incarnation;
    op.header.dst_incarnation = to.incarnation;
    op.wqe = wqe_to(to, TRN3_NIC_OP_SEND, id);
    op.wqe.length = sizeof(wire_header);
    op.wqe.lkey = ep->pool_key;
    ep->deferred.push_back(id);  // takes a bounce buffer when one is free
    drain_deferred(ep);
}

void release_slot(endpoint_object* ep, tx_op& op) {
    if (op.slot >= 0) ep->free_tx.push_back(op.slot);
    op.slot = -1;
}

void complete_tx(endpoint_object* ep, const tx_op& op, std::uint32_t nic_status) {
    if (nic_status == TRN3_NIC_ST_OK) {
        if (op.report) push(ep->tx_cq, entry_of(op.context, op.cq_flags, 0, nullptr, 0, 0));
        return;
    }
    cq_object::entry e = entry_of(op.context, op.cq_flags, 0, nullptr, 0, 0);
    e.err = errno_of_nic_status(nic_status);
    e.prov_errno = static_cast<int>(nic_status);
    push(ep->tx_cq, e);  // errors are reported whether or not a completion was asked for
}

// ---- receiving ----

bool matches(const endpoint_object* ep, const recv_op& r, const arrival& a) {
    if (r.src != FI_ADDR_UNSPEC) {
        wire_address want;
        if (!ep->av || !ep->av->lookup(r.src, want) || !(want == a.src)) return false;
    }
    return !r.tagged || ((r.tag ^ a.h.tag) & ~r.ignore) == 0;
}

void report_recv(endpoint_object* ep, const recv_op& r, const arrival& a, std::size_t n, int err,
                 std::uint32_t nic_status = TRN3_NIC_ST_OK) {
    if (!r.report && !err) return;
    std::uint64_t flags = FI_RECV | (r.tagged ? FI_TAGGED : FI_MSG);
    if (a.h.flags & flag_cq_data) flags |= FI_REMOTE_CQ_DATA;
    cq_object::entry e = entry_of(r.context, flags, n, r.buf, a.h.cq_data, a.h.tag);
    e.src = ep->av ? ep->av->find(a.src) : FI_ADDR_NOTAVAIL;
    e.err = err;
    e.prov_errno = static_cast<int>(nic_status);
    if (err == FI_ETRUNC) e.olen = a.h.length - n;
    push(ep->rx_cq, e);
}

void consume(endpoint_object* ep, const recv_op& r, const arrival& a) {
    const std::size_t n = std::min<std::uint64_t>(a.h.length, r.len);
    const int trunc = a.h.length > r.len ? FI_ETRUNC : 0;
    if (a.h.type == msg_eager) {
        if (n) std::memcpy(r.buf, a.data(), n);
        charge_copy(ep, n);
        report_recv(ep, r, a, n, trunc);
        return;
    }
    // rts: read the data straight into the receive buffer.
    mr_object* mr = n ? ep->domain->region_of(r.buf, n, r.desc) : nullptr;
    if (n == 0 || !mr) {
        send_fin(ep, a.src, a.h.token, n ? TRN3_NIC_ST_LOCAL_PROTECTION : TRN3_NIC_ST_OK);
        report_recv(ep, r, a, 0, n ? FI_EACCES : trunc, n ? TRN3_NIC_ST_LOCAL_PROTECTION : TRN3_NIC_ST_OK);
        return;
    }
    const std::uint64_t id = ep->next_op++;
    tx_op& op = ep->ops[id];
    op.kind = tx_op::rdv_read;
    op.recv = r;
    op.header = a.h;
    op.peer = a.src;
    op.wqe = wqe_to(a.src, TRN3_NIC_OP_READ, id);
    op.wqe.local_addr = mr->bus_of(r.buf);
    op.wqe.length = static_cast<std::uint32_t>(n);
    op.wqe.lkey = static_cast<std::uint32_t>(mr->fid.key);
    op.wqe.remote_offset = a.h.offset;
    op.wqe.rkey = a.h.rkey;
    post_or_defer(ep, id);
}

void deliver(endpoint_object* ep, arrival&& a) {
    const bool tagged = a.h.flags & flag_tagged;
    auto& posted = tagged ? ep->posted_tagged : ep->posted_msg;
    for (auto it = posted.begin(); it != posted.end(); ++it)
        if (matches(ep, *it, a)) {
            const recv_op r = *it;
            posted.erase(it);
            consume(ep, r, a);
            return;
        }
    a.keep();  // its bounce buffer goes back to the NIC
    (tagged ? ep->unexpected_tagged : ep->unexpected_msg).push_back(std::move(a));
}

void repost(endpoint_object* ep, unsigned slot) {
    const trn3_nic_rqe r{ep->slot_bus(int(slot)), slot_bytes, ep->pool_key, rx_flag | slot, 0};
    ep->nic().dev.post_recv(ep->qp, r);  // never full: the ring holds every bounce buffer
}

void on_fin(endpoint_object* ep, const wire_header& h) {
    auto it = ep->ops.find(h.token);
    if (it == ep->ops.end() || it->second.kind != tx_op::rts) return;  // stale or forged
    tx_op& op = it->second;
    if (!op.sent) {  // the fin overtook the rts's own completion
        op.fin_received = true;
        op.fin_status = h.status;
        return;
    }
    complete_tx(ep, op, h.status);
    ep->ops.erase(it);
}

void on_receive(endpoint_object* ep, const trn3_nic_cqe& c) {
    const unsigned slot = static_cast<unsigned>(c.wr_id & ~rx_flag);
    if (slot >= rx_slots) return;
    if (c.opcode == (TRN3_NIC_OP_RECV | TRN3_NIC_OP_WRITE_IMM)) {
        repost(ep, slot);
        if (c.status == TRN3_NIC_ST_OK)
            push(ep->rx_cq,
                 entry_of(nullptr, FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA, c.bytes, nullptr, c.imm, 0));
        return;
    }
    wire_header h;
    const bool well_formed = c.status == TRN3_NIC_ST_OK && c.bytes >= sizeof h;
    if (well_formed) std::memcpy(&h, ep->slot_cpu(int(slot)), sizeof h);
    arrival a;
    a.src = wire_address{c.src_node, c.src_qp, h.src_incarnation, {}};
    a.h = h;
    const bool eager_ok =
        well_formed && h.type == msg_eager && h.length <= eager_bytes && c.bytes == sizeof h + h.length;
    const bool rts_ok = well_formed && h.type == msg_rts && c.bytes == sizeof h;
    if (eager_ok) a.in_slot = ep->slot_cpu(int(slot)) + sizeof h;  // copied once, to where it is received
    const bool ours =
        (eager_ok || rts_ok || (well_formed && h.type == msg_fin)) && h.dst_incarnation == ep->incarnation;
    if (!ours) return repost(ep, slot);  // not this protocol's, or for an earlier endpoint on this queue pair
    if (h.type == msg_fin) {
        repost(ep, slot);
        return on_fin(ep, h);
    }
    std::uint64_t& expected = ep->expected[a.src];
    if (h.seq != expected) {
        if (h.seq > expected) {  // early: kept until the ones before it came
            a.keep();
            ep->held[a.src].emplace(h.seq, std::move(a));
        }  // else a duplicate (SRD delivers once; a defence only)
        return repost(ep, slot);
    }
    const wire_address src = a.src;
    deliver(ep, std::move(a));
    repost(ep, slot);
    ++expected;
    auto& early = ep->held[src];
    while (!early.empty() && early.begin()->first == expected) {
        deliver(ep, std::move(early.begin()->second));
        early.erase(early.begin());
        ++expected;
    }
}

void on_completion(endpoint_object* ep, const trn3_nic_cqe& c) {
    if (c.wr_id & rx_flag) return on_receive(ep, c);
    auto it = ep->ops.find(c.wr_id);
    if (it == ep->ops.end()) return;
    tx_op& op = it->second;
    if (c.status == TRN3_NIC_ST_RNR) {  // retried for as long as it takes (protocol.h)
        const unsigned doublings = std::min(op.retries, 16u);
        op.retry_at = ep->nic().host.now_ns() + std::min(rnr_backoff_ns << doublings, rnr_backoff_max_ns);
        ++op.retries;
        return;
    }
    switch (op.kind) {
    case tx_op::eager:
    case tx_op::rma:
        release_slot(ep, op);
        complete_tx(ep, op, c.status);
        break;
    case tx_op::rts:
        release_slot(ep, op);
        if (c.status == TRN3_NIC_ST_OK) {
            op.sent = true;
            if (!op.fin_received) return;  // completes when the receiver's fin comes
            complete_tx(ep, op, op.fin_status);
        } else {
            complete_tx(ep, op, c.status);
        }
        break;
    case tx_op::fin: release_slot(ep, op); break;
    case tx_op::rdv_read: {
        send_fin(ep, op.peer, op.header.token, c.status);
        arrival a;
        a.src = op.peer;
        a.h = op.header;
        const std::size_t n = op.wqe.length;
        if (c.status == TRN3_NIC_ST_OK) report_recv(ep, op.recv, a, n, a.h.length > n ? FI_ETRUNC : 0);
        else report_recv(ep, op.recv, a, 0, errno_of_nic_status(c.status), c.status);
        break;
    }
    }
    ep->ops.erase(c.wr_id);
}

// ---- the application's calls ----

ssize_t post_receive(endpoint_object* ep, const recv_op& r) {
    if (!ep->enabled) return -FI_EOPBADSTATE;
    if (ep->domain->device_memory(r.desc)) return -FI_EOPNOTSUPP;  // device memory: RMA only
    auto& unexpected = r.tagged ? ep->unexpected_tagged : ep->unexpected_msg;
    for (auto it = unexpected.begin(); it != unexpected.end(); ++it)
        if (matches(ep, r, *it)) {
            const arrival a = std::move(*it);
            unexpected.erase(it);
            consume(ep, r, a);
            return 0;
        }
    (r.tagged ? ep->posted_tagged : ep->posted_msg).push_back(r);
    return 0;
}

struct send_args {
    const void* buf = nullptr;
    std::size_t len = 0;
    void* desc = nullptr;
    fi_addr_t dest = 0;
    void* context = nullptr;
    bool tagged = false;
    std::uint64_t tag = 0;
    bool has_data = false;
    std::uint64_t data = 0;
    bool report = true, inject = false;
};

ssize_t send_message(endpoint_object* ep, const send_args& s) {
    if (!ep->enabled) return -FI_EOPBADSTATE;
    wire_address to;
    if (!ep->av || !ep->av->lookup(s.dest, to)) return -FI_EINVAL;
    if (s.len > TRN3_NIC_MAX_MESSAGE || (s.inject && s.len > eager_bytes)) return -FI_EMSGSIZE;
    if (s.len && !s.buf) return -FI_EINVAL;
    if (ep->domain->device_memory(s.desc)) return -FI_EOPNOTSUPP;  // device memory: RMA only
    mr_object* mr = nullptr;
    if (s.len > eager_bytes && !(mr = ep->domain->region_of(s.buf, s.len, s.desc))) return -FI_EINVAL;
    if (ep->free_tx.empty()) progress(ep);
    if (ep->free_tx.empty()) return -FI_EAGAIN;
    const std::uint64_t id = ep->next_op++;
    tx_op& op = ep->ops[id];
    op.slot = ep->free_tx.back();
    ep->free_tx.pop_back();
    wire_header h;
    h.type = s.len > eager_bytes ? msg_rts : msg_eager;
    h.flags = static_cast<std::uint8_t>((s.tagged ? flag_tagged : 0) | (s.has_data ? flag_cq_data : 0));
    h.cq_data = static_cast<std::uint32_t>(s.data);
    h.seq = ep->next_seq[to]++;
    h.tag = s.tag;
    h.length = s.len;
    h.src_incarnation = ep->incarnation;
    h.dst_incarnation = to.incarnation;
    op.kind = h.type == msg_rts ? tx_op::rts : tx_op::eager;
    op.wqe = wqe_to(to, TRN3_NIC_OP_SEND, id);
    op.wqe.local_addr = ep->slot_bus(op.slot);
    op.wqe.lkey = ep->pool_key;
    op.wqe.length = sizeof h;
    if (op.kind == tx_op::eager) {
        if (s.len) std::memcpy(ep->slot_cpu(op.slot) + sizeof h, s.buf, s.len);
        op.wqe.length += static_cast<std::uint32_t>(s.len);
    } else {
        h.offset = std::uint64_t(static_cast<const std::uint8_t*>(s.buf) - mr->pinned.cpu);
        h.rkey = static_cast<std::uint32_t>(mr->fid.key);
        h.token = id;
    }
    std::memcpy(ep->slot_cpu(op.slot), &h, sizeof h);
    op.context = s.context;
    op.cq_flags = FI_SEND | (s.tagged ? FI_TAGGED : FI_MSG);
    op.report = s.report && !s.inject;
    charge_copy(ep, op.kind == tx_op::eager ? s.len : 0);
    post_or_defer(ep, id);
    return 0;
}

struct rma_args {
    std::uint8_t opcode = TRN3_NIC_OP_WRITE;
    const void* buf = nullptr;
    std::size_t len = 0;
    void* desc = nullptr;
    fi_addr_t peer = 0;
    std::uint64_t addr = 0, key = 0, data = 0;
    void* context = nullptr;
    bool report = true, inject = false, timing = false;
};

ssize_t rma(endpoint_object* ep, const rma_args& a) {
    if (!ep->enabled) return -FI_EOPBADSTATE;
    wire_address to;
    if (!ep->av || !ep->av->lookup(a.peer, to)) return -FI_EINVAL;
    if (a.len > TRN3_NIC_MAX_MESSAGE || (a.inject && a.len > eager_bytes)) return -FI_EMSGSIZE;
    if (a.key > 0xFFFFFFFFull || (a.len && !a.buf)) return -FI_EINVAL;
    if (a.inject && ep->domain->device_memory(a.desc)) return -FI_EOPNOTSUPP;  // injected bytes are copied by the CPU
    const std::uint64_t id = ep->next_op;
    trn3_nic_wqe w = wqe_to(to, a.opcode, id);
    w.length = static_cast<std::uint32_t>(a.len);
    w.remote_offset = a.addr;
    w.rkey = static_cast<std::uint32_t>(a.key);
    w.imm = static_cast<std::uint32_t>(a.data);
    if (a.timing) w.flags = TRN3_NIC_WQE_TIMING_ONLY;
    int slot = -1;
    if (a.inject) {
        if (ep->free_tx.empty()) progress(ep);
        if (ep->free_tx.empty()) return -FI_EAGAIN;
        slot = ep->free_tx.back();
        ep->free_tx.pop_back();
        if (a.len) std::memcpy(ep->slot_cpu(slot), a.buf, a.len);
        charge_copy(ep, a.len);
        w.local_addr = ep->slot_bus(slot);
        w.lkey = ep->pool_key;
    } else {
        mr_object* mr = a.len ? ep->domain->region_of(a.buf, a.len, a.desc) : nullptr;
        if (a.len && !mr) return -FI_EINVAL;
        if (mr) {
            w.local_addr = mr->bus_of(a.buf);
            w.lkey = static_cast<std::uint32_t>(mr->fid.key);
        }
    }
    ++ep->next_op;
    tx_op& op = ep->ops[id];
    op.kind = tx_op::rma;
    op.slot = slot;
    op.wqe = w;
    op.context = a.context;
    op.cq_flags = FI_RMA | (a.opcode == TRN3_NIC_OP_READ ? FI_READ : FI_WRITE);
    op.report = a.report && !a.inject;
    post_or_defer(ep, id);
    return 0;
}

endpoint_object* ep_of(fid_ep* f) { return reinterpret_cast<endpoint_object*>(f); }
endpoint_object* ep_of(fid* f) { return reinterpret_cast<endpoint_object*>(f); }

// fi_msg
ssize_t msg_recv(fid_ep* f, void* buf, std::size_t len, void* desc, fi_addr_t src, void* context) {
    return post_receive(ep_of(f), recv_op{context, buf, len, desc, src, 0, 0, false, !ep_of(f)->rx_selective});
}
ssize_t msg_recvmsg(fid_ep* f, const fi_msg* m, std::uint64_t flags) {
    if (m->iov_count > 1) return -FI_EINVAL;
    endpoint_object* ep = ep_of(f);
    const bool report = !ep->rx_selective || (flags & FI_COMPLETION);
    return post_receive(ep, recv_op{m->context, m->iov_count ? m->msg_iov[0].iov_base : nullptr,
                                    m->iov_count ? m->msg_iov[0].iov_len : 0, m->desc ? m->desc[0] : nullptr, m->addr,
                                    0, 0, false, report});
}
ssize_t msg_send(fid_ep* f, const void* buf, std::size_t len, void* desc, fi_addr_t dest, void* context) {
    send_args s;
    s.buf = buf, s.len = len, s.desc = desc, s.dest = dest, s.context = context;
    s.report = !ep_of(f)->tx_selective;
    return send_message(ep_of(f), s);
}
ssize_t msg_senddata(fid_ep* f, const void* buf, std::size_t len, void* desc, std::uint64_t data, fi_addr_t dest,
                     void* context) {
    send_args s;
    s.buf = buf, s.len = len, s.desc = desc, s.dest = dest, s.context = context, s.has_data = true, s.data = data;
    s.report = !ep_of(f)->tx_selective;
    return send_message(ep_of(f), s);
}
ssize_t msg_sendmsg(fid_ep* f, const fi_msg* m, std::uint64_t flags) {
    if (m->iov_count > 1) return -FI_EINVAL;
    send_args s;
    s.buf = m->iov_count ? m->msg_iov[0].iov_base : nullptr;
    s.len = m->iov_count ? m->msg_iov[0].iov_len : 0;
    s.desc = m->desc ? m->desc[0] : nullptr;
    s.dest = m->addr, s.context = m->context;
    s.has_data = flags & FI_REMOTE_CQ_DATA, s.data = m->data;
    s.inject = flags & FI_INJECT;
    s.report = !ep_of(f)->tx_selective || (flags & FI_COMPLETION);
    return send_message(ep_of(f), s);
}
ssize_t msg_inject(fid_ep* f, const void* buf, std::size_t len, fi_addr_t dest) {
    send_args s;
    s.buf = buf, s.len = len, s.dest = dest, s.inject = true;
    return send_message(ep_of(f), s);
}
ssize_t msg_injectdata(fid_ep* f, const void* buf, std::size_t len, std::uint64_t data, fi_addr_t dest) {
    send_args s;
    s.buf = buf, s.len = len, s.dest = dest, s.inject = true, s.has_data = true, s.data = data;
    return send_message(ep_of(f), s);
}

// fi_tagged
ssize_t tagged_recv(fid_ep* f, void* buf, std::size_t len, void* desc, fi_addr_t src, std::uint64_t tag,
                    std::uint64_t ignore, void* context) {
    return post_receive(ep_of(f), recv_op{context, buf, len, desc, src, tag, ignore, true, !ep_of(f)->rx_selective});
}
ssize_t tagged_recvmsg(fid_ep* f, const fi_msg_tagged* m, std::uint64_t flags) {
    if (m->iov_count > 1) return -FI_EINVAL;
    endpoint_object* ep = ep_of(f);
    const bool report = !ep->rx_selective || (flags & FI_COMPLETION);
    return post_receive(ep, recv_op{m->context, m->iov_count ? m->msg_iov[0].iov_base : nullptr,
                                    m->iov_count ? m->msg_iov[0].iov_len : 0, m->desc ? m->desc[0] : nullptr, m->addr,
                                    m->tag, m->ignore, true, report});
}
ssize_t tagged_send(fid_ep* f, const void* buf, std::size_t len, void* desc, fi_addr_t dest, std::uint64_t tag,
                    void* context) {
    send_args s;
    s.buf = buf, s.len = len, s.desc = desc, s.dest = dest, s.context = context, s.tagged = true, s.tag = tag;
    s.report = !ep_of(f)->tx_selective;
    return send_message(ep_of(f), s);
}
ssize_t tagged_senddata(fid_ep* f, const void* buf, std::size_t len, void* desc, std::uint64_t data, fi_addr_t dest,
                        std::uint64_t tag, void* context) {
    send_args s;
    s.buf = buf, s.len = len, s.desc = desc, s.dest = dest, s.context = context, s.tagged = true, s.tag = tag;
    s.has_data = true, s.data = data;
    s.report = !ep_of(f)->tx_selective;
    return send_message(ep_of(f), s);
}
ssize_t tagged_sendmsg(fid_ep* f, const fi_msg_tagged* m, std::uint64_t flags) {
    if (m->iov_count > 1) return -FI_EINVAL;
    send_args s;
    s.buf = m->iov_count ? m->msg_iov[0].iov_base : nullptr;
    s.len = m->iov_count ? m->msg_iov[0].iov_len : 0;
    s.desc = m->desc ? m->desc[0] : nullptr;
    s.dest = m->addr, s.context = m->context, s.tagged = true, s.tag = m->tag;
    s.has_data = flags & FI_REMOTE_CQ_DATA, s.data = m->data;
    s.inject = flags & FI_INJECT;
    s.report = !ep_of(f)->tx_selective || (flags & FI_COMPLETION);
    return send_message(ep_of(f), s);
}
ssize_t tagged_inject(fid_ep* f, const void* buf, std::size_t len, fi_addr_t dest, std::uint64_t tag) {
    send_args s;
    s.buf = buf, s.len = len, s.dest = dest, s.inject = true, s.tagged = true, s.tag = tag;
    return send_message(ep_of(f), s);
}
ssize_t tagged_injectdata(fid_ep* f, const void* buf, std::size_t len, std::uint64_t data, fi_addr_t dest,
                          std::uint64_t tag) {
    send_args s;
    s.buf = buf, s.len = len, s.dest = dest, s.inject = true, s.tagged = true, s.tag = tag;
    s.has_data = true, s.data = data;
    return send_message(ep_of(f), s);
}

// fi_rma
rma_args rma_of(fid_ep* f, std::uint8_t opcode, const void* buf, std::size_t len, void* desc, fi_addr_t peer,
                std::uint64_t addr, std::uint64_t key, void* context) {
    rma_args a;
    a.opcode = opcode, a.buf = buf, a.len = len, a.desc = desc, a.peer = peer, a.addr = addr, a.key = key;
    a.context = context;
    a.report = !ep_of(f)->tx_selective;
    return a;
}
ssize_t rma_read(fid_ep* f, void* buf, std::size_t len, void* desc, fi_addr_t src, std::uint64_t addr,
                 std::uint64_t key, void* context) {
    return rma(ep_of(f), rma_of(f, TRN3_NIC_OP_READ, buf, len, desc, src, addr, key, context));
}
ssize_t rma_write(fid_ep* f, const void* buf, std::size_t len, void* desc, fi_addr_t dest, std::uint64_t addr,
                  std::uint64_t key, void* context) {
    return rma(ep_of(f), rma_of(f, TRN3_NIC_OP_WRITE, buf, len, desc, dest, addr, key, context));
}
ssize_t rma_writedata(fid_ep* f, const void* buf, std::size_t len, void* desc, std::uint64_t data, fi_addr_t dest,
                      std::uint64_t addr, std::uint64_t key, void* context) {
    rma_args a = rma_of(f, TRN3_NIC_OP_WRITE_IMM, buf, len, desc, dest, addr, key, context);
    a.data = data;
    return rma(ep_of(f), a);
}
ssize_t rma_msg(fid_ep* f, const fi_msg_rma* m, std::uint64_t flags, std::uint8_t opcode) {
    if (m->iov_count > 1 || m->rma_iov_count != 1) return -FI_EINVAL;
    rma_args a =
        rma_of(f, opcode, m->iov_count ? m->msg_iov[0].iov_base : nullptr, m->iov_count ? m->msg_iov[0].iov_len : 0,
               m->desc ? m->desc[0] : nullptr, m->addr, m->rma_iov[0].addr, m->rma_iov[0].key, m->context);
    if (opcode == TRN3_NIC_OP_WRITE && (flags & FI_REMOTE_CQ_DATA)) a.opcode = TRN3_NIC_OP_WRITE_IMM;
    a.data = m->data;
    a.inject = flags & FI_INJECT;
    a.report = !ep_of(f)->tx_selective || (flags & FI_COMPLETION);
    a.timing = flags & FI_TRN3_TIMING_ONLY;
    if (a.timing && a.inject) return -FI_EINVAL;  // an injected buffer is copied by the CPU: there is data
    return rma(ep_of(f), a);
}
ssize_t rma_readmsg(fid_ep* f, const fi_msg_rma* m, std::uint64_t flags) {
    if (flags & FI_INJECT) return -FI_EINVAL;
    return rma_msg(f, m, flags, TRN3_NIC_OP_READ);
}
ssize_t rma_writemsg(fid_ep* f, const fi_msg_rma* m, std::uint64_t flags) {
    return rma_msg(f, m, flags, TRN3_NIC_OP_WRITE);
}
ssize_t rma_inject(fid_ep* f, const void* buf, std::size_t len, fi_addr_t dest, std::uint64_t addr, std::uint64_t key) {
    rma_args a = rma_of(f, TRN3_NIC_OP_WRITE, buf, len, nullptr, dest, addr, key, nullptr);
    a.inject = true;
    return rma(ep_of(f), a);
}
ssize_t rma_injectdata(fid_ep* f, const void* buf, std::size_t len, std::uint64_t data, fi_addr_t dest,
                       std::uint64_t addr, std::uint64_t key) {
    rma_args a = rma_of(f, TRN3_NIC_OP_WRITE_IMM, buf, len, nullptr, dest, addr, key, nullptr);
    a.inject = true;
    a.data = data;
    return rma(ep_of(f), a);
}

// fi_ep, fi_cm and the fid itself
int ep_enable(endpoint_object* ep) {
    if (ep->enabled) return 0;
    if (!ep->av) return -FI_ENOAV;
    if (!ep->tx_cq || !ep->rx_cq) return -FI_ENOCQ;
    nic_state& nic = ep->nic();
    const int q = nic.take(nic.qp_used);
    if (q < 0) return -FI_ENOSPC;
    const int index = nic.take(nic.mr_used);
    if (index < 0) {
        nic.qp_used[q] = false;
        return -FI_ENOSPC;
    }
    ep->pool = nic.host.alloc_dma(nic.dev.bdf(), std::size_t(rx_slots + tx_slots) * slot_bytes);
    const bool qp_made =
        ep->pool.cpu && nic.dev.create_qp(unsigned(q), ep->domain->pd, queue_entries) == driver::status::ok;
    if (!qp_made || nic.dev.reg_mr(unsigned(index), ++nic.mr_tag[index], ep->pool.bus_address, ep->pool.size,
                                   ep->domain->pd, TRN3_NIC_ACCESS_LOCAL, ep->pool_key) != driver::status::ok) {
        if (qp_made) nic.dev.destroy_qp(unsigned(q));
        nic.qp_used[q] = false;
        nic.mr_used[index] = false;
        return -FI_ENOMEM;
    }
    ep->incarnation = nic.next_incarnation++;
    ep->qp = unsigned(q);
    ep->pool_index = unsigned(index);
    for (unsigned s = rx_slots + tx_slots; s-- > rx_slots;) ep->free_tx.push_back(int(s));
    for (unsigned s = 0; s < rx_slots; ++s) repost(ep, s);
    ep->enabled = true;
    return 0;
}

// The provider's own messages (fins: a peer's send completes on them) go out before the queue pair stops,
// waiting at most 1 ms of simulated time.
void flush_fins(endpoint_object* ep) {
    const auto pending = [ep] {
        if (!ep->deferred.empty()) return true;
        for (const auto& [id, op] : ep->ops)
            if (op.kind == tx_op::fin) return true;
        return false;
    };
    driver::host_ops& host = ep->nic().host;
    const std::uint64_t deadline = host.now_ns() + 1'000'000;
    while (pending() && host.now_ns() < deadline) {
        progress(ep);
        if (pending()) host.wait_until([ep] { return nic_has_completion(ep); }, idle_poll_ns, idle_poll_ns);
    }
}

// Senders whose rendezvous this endpoint will never finish learn it: a fin
// with RNR for every ready-to-send it holds or is reading.
void refuse_rendezvous(endpoint_object* ep) {
    for (auto* unexpected : {&ep->unexpected_msg, &ep->unexpected_tagged})
        for (const arrival& a : *unexpected)
            if (a.h.type == msg_rts) send_fin(ep, a.src, a.h.token, TRN3_NIC_ST_RNR);
    for (const auto& [src, early] : ep->held)
        for (const auto& [seq, a] : early)
            if (a.h.type == msg_rts) send_fin(ep, a.src, a.h.token, TRN3_NIC_ST_RNR);
    std::vector<std::uint64_t> reads;
    for (const auto& [id, op] : ep->ops)
        if (op.kind == tx_op::rdv_read) reads.push_back(id);
    for (std::uint64_t id : reads) {
        const tx_op op = ep->ops[id];
        ep->ops.erase(id);
        send_fin(ep, op.peer, op.header.token, TRN3_NIC_ST_RNR);
    }
}

int ep_close(fid* f) {
    endpoint_object* ep = ep_of(f);
    if (ep->enabled) {
        refuse_rendezvous(ep);
        flush_fins(ep);
        nic_state& nic = ep->nic();
        nic.dev.destroy_qp(ep->qp);
        nic.dev.dereg_mr(ep->pool_index);
        nic.qp_used[ep->qp] = false;
        nic.mr_used[ep->pool_index] = false;
    }
    for (cq_object* cq : {ep->tx_cq, ep->rx_cq})
        if (cq) cq->endpoints.erase(std::remove(cq->endpoints.begin(), cq->endpoints.end(), ep), cq->endpoints.end());
    if (ep->av) --ep->av->users;
    --ep->domain->children;
    delete ep;
    return 0;
}

int ep_bind(fid* f, fid* b, std::uint64_t flags) {
    endpoint_object* ep = ep_of(f);
    if (ep->enabled) return -FI_EOPBADSTATE;
    switch (b->fclass) {
    case FI_CLASS_AV:
        if (ep->av) --ep->av->users;
        ep->av = reinterpret_cast<av_object*>(b);
        ++ep->av->users;
        return 0;
    case FI_CLASS_CQ: {
        auto* cq = reinterpret_cast<cq_object*>(b);
        if (!(flags & (FI_TRANSMIT | FI_RECV))) return -FI_EBADFLAGS;
        if (flags & FI_TRANSMIT) ep->tx_cq = cq, ep->tx_selective = flags & FI_SELECTIVE_COMPLETION;
        if (flags & FI_RECV) ep->rx_cq = cq, ep->rx_selective = flags & FI_SELECTIVE_COMPLETION;
        if (std::find(cq->endpoints.begin(), cq->endpoints.end(), ep) == cq->endpoints.end())
            cq->endpoints.push_back(ep);
        return 0;
    }
    case FI_CLASS_CNTR:
    case FI_CLASS_EQ: return -FI_ENOSYS;
    default: return -FI_EINVAL;
    }
}

int ep_control(fid* f, int command, void*) {
    if (command == FI_ENABLE) return ep_enable(ep_of(f));
    return -FI_ENOSYS;
}

int ep_getname(fid* f, void* addr, std::size_t* addrlen) {
    endpoint_object* ep = ep_of(f);
    if (!ep->enabled) return -FI_EOPBADSTATE;
    const wire_address self{ep->nic().dev.node(), static_cast<std::uint16_t>(ep->qp), ep->incarnation, {}};
    const std::size_t room = *addrlen;
    *addrlen = sizeof self;
    if (room < sizeof self) return -FI_ETOOSMALL;
    std::memcpy(addr, &self, sizeof self);
    return 0;
}

ssize_t ep_cancel(fid* f, void* context) {
    endpoint_object* ep = ep_of(f);
    for (auto* posted : {&ep->posted_msg, &ep->posted_tagged})
        for (auto it = posted->begin(); it != posted->end(); ++it)
            if (it->context == context) {
                cq_object::entry e =
                    entry_of(context, FI_RECV | (it->tagged ? FI_TAGGED : FI_MSG), 0, it->buf, 0, it->tag);
                e.err = FI_ECANCELED;
                push(ep->rx_cq, e);
                posted->erase(it);
                return 0;
            }
    return -FI_ENOENT;
}

ssize_t ep_tx_size_left(fid_ep* f) { return static_cast<ssize_t>(ep_of(f)->free_tx.size()); }
ssize_t ep_rx_size_left(fid_ep*) { return queue_entries; }

}  // namespace

void progress(endpoint_object* ep) {
    if (!ep->enabled) return;
    nic_state& nic = ep->nic();
    trn3_nic_cqe c;
    while (nic.dev.cq_ready(ep->qp) && nic.dev.poll_cq(ep->qp, c, 0) == driver::status::ok) on_completion(ep, c);
    const std::uint64_t now = nic.host.now_ns();
    for (auto& [id, op] : ep->ops)
        if (op.retry_at && op.retry_at <= now) {
            op.retry_at = 0;
            ep->deferred.push_back(id);
        }
    drain_deferred(ep);
}

std::uint64_t next_deadline_ns(const endpoint_object* ep) {
    std::uint64_t t = ~0ull;
    if (!ep->deferred.empty()) return ep->nic().host.now_ns();
    for (const auto& [id, op] : ep->ops)
        if (op.retry_at) t = std::min(t, op.retry_at);
    return t;
}

bool nic_has_completion(const endpoint_object* ep) { return ep->enabled && ep->nic().dev.cq_ready(ep->qp); }

int open_endpoint(fid_domain* f, fi_info* info, fid_ep** out, void* context) {
    static fi_ops ops = [] {
        fi_ops o{};
        o.size = sizeof o;
        o.close = ep_close;
        o.bind = ep_bind;
        o.control = ep_control;
        o.ops_open = unsupported;
        return o;
    }();
    static fi_ops_ep ep_ops = [] {
        fi_ops_ep o{};
        o.size = sizeof o;
        o.cancel = ep_cancel;
        o.getopt = [](fid*, int, int, void*, std::size_t*) { return -FI_ENOPROTOOPT; };
        o.setopt = [](fid*, int, int, const void*, std::size_t) { return -FI_ENOPROTOOPT; };
        o.tx_ctx = unsupported;
        o.rx_ctx = unsupported;
        o.rx_size_left = ep_rx_size_left;
        o.tx_size_left = ep_tx_size_left;
        return o;
    }();
    static fi_ops_cm cm_ops = [] {
        fi_ops_cm o{};
        o.size = sizeof o;
        o.setname = unsupported;
        o.getname = ep_getname;
        o.getpeer = unsupported;
        o.connect = unsupported;
        o.listen = unsupported;
        o.accept = unsupported;
        o.reject = unsupported;
        o.shutdown = unsupported;
        o.join = unsupported;
        return o;
    }();
    static fi_ops_msg msg_ops = [] {
        fi_ops_msg o{};
        o.size = sizeof o;
        o.recv = msg_recv;
        o.recvv = unsupported;
        o.recvmsg = msg_recvmsg;
        o.send = msg_send;
        o.sendv = unsupported;
        o.sendmsg = msg_sendmsg;
        o.inject = msg_inject;
        o.senddata = msg_senddata;
        o.injectdata = msg_injectdata;
        return o;
    }();
    static fi_ops_tagged tagged_ops = [] {
        fi_ops_tagged o{};
        o.size = sizeof o;
        o.recv = tagged_recv;
        o.recvv = unsupported;
        o.recvmsg = tagged_recvmsg;
        o.send = tagged_send;
        o.sendv = unsupported;
        o.sendmsg = tagged_sendmsg;
        o.inject = tagged_inject;
        o.senddata = tagged_senddata;
        o.injectdata = tagged_injectdata;
        return o;
    }();
    static fi_ops_rma rma_ops = [] {
        fi_ops_rma o{};
        o.size = sizeof o;
        o.read = rma_read;
        o.readv = unsupported;
        o.readmsg = rma_readmsg;
        o.write = rma_write;
        o.writev = unsupported;
        o.writemsg = rma_writemsg;
        o.inject = rma_inject;
        o.writedata = rma_writedata;
        o.injectdata = rma_injectdata;
        return o;
    }();
    if (info && info->ep_attr && info->ep_attr->type != FI_EP_RDM && info->ep_attr->type != FI_EP_UNSPEC)
        return -FI_EINVAL;
    auto* ep = new endpoint_object;
    ep->fid.fid.fclass = FI_CLASS_EP;
    ep->fid.fid.context = context;
    ep->fid.fid.ops = &ops;
    ep->fid.ops = &ep_ops;
    ep->fid.cm = &cm_ops;
    ep->fid.msg = &msg_ops;
    ep->fid.rma = &rma_ops;
    ep->fid.tagged = &tagged_ops;
    ep->domain = reinterpret_cast<domain_object*>(f);
    ++ep->domain->children;
    *out = &ep->fid;
    return 0;
}

}  // namespace trn3::fabric
