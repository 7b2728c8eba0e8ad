// The domain and what it opens besides endpoints: memory regions, address
// vectors, completion queues.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "provider.h"
#include "trn3/spec/device.h"

namespace trn3::fabric {
namespace {

// ---- memory regions ----

int mr_close(fid* f) {
    auto* mr = reinterpret_cast<mr_object*>(f);
    nic_state& nic = *mr->domain->nic;
    nic.dev.dereg_mr(mr->index);
    if (!mr->device_memory) nic.host.unpin(nic.dev.bdf(), mr->pinned);
    nic.mr_used[mr->index] = false;
    mr->domain->mrs.remove(mr);
    delete mr;
    return 0;
}

// Registers `len` bytes at `buf`: host memory (pinned and mapped in the
// IOMMU), or with neuron >= 0 that Neuron device's memory from device
// address `buf` (the chip's BAR2: the NIC reaches it peer to peer).
int register_region(domain_object* d, const void* buf, std::size_t len, std::uint64_t access, std::uint64_t flags,
                    int neuron, fid_mr** out, void* context) {
    static fi_ops ops = close_only(mr_close);
    if ((!buf && neuron < 0) || len == 0 || flags != 0 || len > TRN3_NIC_MAX_MESSAGE * 4ull) return -FI_EINVAL;
    nic_state& nic = *d->nic;
    driver::dma_buffer pinned;
    if (neuron >= 0) {
        const auto& bars = d->fabric->bound.neuron_bar2;
        const auto at = reinterpret_cast<std::uintptr_t>(buf);
        if (std::size_t(neuron) >= bars.size() || at > TRN3_BAR2_SIZE || len > TRN3_BAR2_SIZE - at) return -FI_EINVAL;
        pinned = {bars[std::size_t(neuron)] + at, static_cast<std::uint8_t*>(const_cast<void*>(buf)), len};
    }
    const int index = nic.take(nic.mr_used);
    if (index < 0) return -FI_ENOSPC;
    if (neuron < 0) pinned = nic.host.pin(nic.dev.bdf(), const_cast<void*>(buf), len);
    if (!pinned.bus_address) {
        nic.mr_used[index] = false;
        return -FI_ENOMEM;
    }
    // Sent data larger than eager_bytes is read by the receiver (rendezvous), so FI_SEND needs remote read.
    std::uint32_t nic_access = TRN3_NIC_ACCESS_LOCAL;
    if (access & (FI_REMOTE_READ | FI_SEND)) nic_access |= TRN3_NIC_ACCESS_REMOTE_READ;
    if (access & FI_REMOTE_WRITE) nic_access |= TRN3_NIC_ACCESS_REMOTE_WRITE;
    std::uint32_t key = 0;
    const std::uint8_t tag = ++nic.mr_tag[index];  // a stale key of this entry is refused
    if (nic.dev.reg_mr(index, tag, pinned.bus_address, len, d->pd, nic_access, key) != driver::status::ok) {
        if (neuron < 0) nic.host.unpin(nic.dev.bdf(), pinned);
        nic.mr_used[index] = false;
        return -FI_EINVAL;
    }
    auto* mr = new mr_object;
    mr->fid.fid.fclass = FI_CLASS_MR;
    mr->fid.fid.context = context;
    mr->fid.fid.ops = &ops;
    mr->fid.mem_desc = mr;
    mr->fid.key = key;
    mr->domain = d;
    mr->pinned = pinned;
    mr->index = static_cast<unsigned>(index);
    mr->device_memory = neuron >= 0;
    d->mrs.push_back(mr);
    *out = &mr->fid;
    return 0;
}

int mr_reg(fid* f, const void* buf, std::size_t len, std::uint64_t access, std::uint64_t, std::uint64_t,
           std::uint64_t flags, fid_mr** out, void* context) {
    return register_region(reinterpret_cast<domain_object*>(f), buf, len, access, flags, -1, out, context);
}

int mr_regv(fid* f, const iovec* iov, std::size_t count, std::uint64_t access, std::uint64_t offset, std::uint64_t key,
            std::uint64_t flags, fid_mr** out, void* context) {
    if (count != 1) return -FI_EINVAL;
    return mr_reg(f, iov[0].iov_base, iov[0].iov_len, access, offset, key, flags, out, context);
}

// FI_HMEM_SYSTEM is host memory; FI_HMEM_NEURON a Trainium3 chip's memory
// (attr->device.neuron: its index in the binding); no other device kind.
int mr_regattr(fid* f, const fi_mr_attr* attr, std::uint64_t flags, fid_mr** out) {
    if (!attr || attr->iov_count != 1) return -FI_EINVAL;
    if (attr->iface != FI_HMEM_SYSTEM && attr->iface != FI_HMEM_NEURON) return -FI_ENOSYS;
    if (attr->iface == FI_HMEM_NEURON && attr->device.neuron < 0) return -FI_EINVAL;
    const int neuron = attr->iface == FI_HMEM_NEURON ? attr->device.neuron : -1;
    return register_region(reinterpret_cast<domain_object*>(f), attr->mr_iov[0].iov_base, attr->mr_iov[0].iov_len,
                           attr->access, flags, neuron, out, attr->context);
}

// ---- address vectors ----

int av_close(fid* f) {
    auto* av = reinterpret_cast<av_object*>(f);
    if (av->users) return -FI_EBUSY;
    --av->domain->children;
    delete av;
    return 0;
}

int av_insert(fid_av* f, const void* addr, std::size_t count, fi_addr_t* fi_addr, std::uint64_t flags, void*) {
    auto* av = reinterpret_cast<av_object*>(f);
    if (flags != 0 || (count && !addr)) return -FI_EINVAL;
    for (std::size_t i = 0; i < count; ++i) {
        wire_address a;
        std::memcpy(&a, static_cast<const std::uint8_t*>(addr) + i * sizeof a, sizeof a);
        if (a.qp >= TRN3_NIC_QPS) {
            if (fi_addr) fi_addr[i] = FI_ADDR_NOTAVAIL;
            return static_cast<int>(i);
        }
        av->table.push_back(a);
        av->valid.push_back(true);
        if (fi_addr) fi_addr[i] = av->table.size() - 1;
    }
    return static_cast<int>(count);
}

int av_remove(fid_av* f, fi_addr_t* fi_addr, std::size_t count, std::uint64_t) {
    auto* av = reinterpret_cast<av_object*>(f);
    for (std::size_t i = 0; i < count; ++i) {
        if (fi_addr[i] >= av->valid.size() || !av->valid[fi_addr[i]]) return -FI_EINVAL;
        av->valid[fi_addr[i]] = false;
    }
    return 0;
}

int av_lookup(fid_av* f, fi_addr_t fi_addr, void* addr, std::size_t* addrlen) {
    auto* av = reinterpret_cast<av_object*>(f);
    wire_address a;
    if (!av->lookup(fi_addr, a)) return -FI_EINVAL;
    std::memcpy(addr, &a, std::min(*addrlen, sizeof a));
    *addrlen = sizeof a;
    return 0;
}

const char* av_straddr(fid_av*, const void* addr, char* buf, std::size_t* len) {
    wire_address a;
    std::memcpy(&a, addr, sizeof a);
    char text[64];
    const int n = std::snprintf(text, sizeof text, "trn3vp://%012llx:%u", static_cast<unsigned long long>(a.node),
                                unsigned{a.qp});
    if (*len > 0) {
        std::memcpy(buf, text, std::min<std::size_t>(*len - 1, std::size_t(n)));
        buf[std::min<std::size_t>(*len - 1, std::size_t(n))] = '\0';
    }
    *len = std::size_t(n) + 1;
    return buf;
}

int av_open(fid_domain* f, fi_av_attr* attr, fid_av** out, void* context) {
    static fi_ops ops = close_only(av_close);
    static fi_ops_av av_ops = [] {
        fi_ops_av o{};
        o.size = sizeof o;
        o.insert = av_insert;
        o.insertsvc = unsupported;
        o.insertsym = unsupported;
        o.remove = av_remove;
        o.lookup = av_lookup;
        o.straddr = av_straddr;
        o.av_set = unsupported;
        return o;
    }();
    if (attr && attr->type == FI_AV_MAP) return -FI_ENOSYS;
    if (attr && attr->flags != 0) return -FI_EINVAL;
    auto* av = new av_object;
    av->fid.fid.fclass = FI_CLASS_AV;
    av->fid.fid.context = context;
    av->fid.fid.ops = &ops;
    av->fid.ops = &av_ops;
    av->domain = reinterpret_cast<domain_object*>(f);
    ++av->domain->children;
    *out = &av->fid;
    return 0;
}

// ---- completion queues ----

int cq_close(fid* f) {
    auto* cq = reinterpret_cast<cq_object*>(f);
    if (!cq->endpoints.empty()) return -FI_EBUSY;
    --cq->domain->children;
    delete cq;
    return 0;
}

// Reaps the NIC for every endpoint of the queue; if nothing is there,
// waits in simulated time for the next NIC completion or retry, at most
// `wait_ns`.
void drive(cq_object* cq, std::uint64_t wait_ns) {
    for (auto* ep : cq->endpoints) progress(ep);
    if (!cq->entries.empty() || wait_ns == 0) return;
    driver::host_ops& host = cq->domain->nic->host;
    std::uint64_t deadline = host.now_ns() + wait_ns;
    for (auto* ep : cq->endpoints) deadline = std::min(deadline, next_deadline_ns(ep));
    const std::uint64_t now = host.now_ns();
    host.wait_until(
        [cq] {
            for (auto* ep : cq->endpoints)
                if (nic_has_completion(ep)) return true;
            return false;
        },
        deadline > now ? deadline - now : 0, wait_ns);
    for (auto* ep : cq->endpoints) progress(ep);
}

ssize_t take_entries(cq_object* cq, void* buf, std::size_t count, fi_addr_t* src) {
    if (cq->entries.empty()) return -FI_EAGAIN;
    if (cq->entries.front().err) return -FI_EAVAIL;
    std::size_t n = 0;
    while (n < count && !cq->entries.empty() && !cq->entries.front().err) {
        const auto& e = cq->entries.front();
        std::memcpy(static_cast<std::uint8_t*>(buf) + n * cq->entry_bytes, &e.e, cq->entry_bytes);
        if (src) src[n] = e.src;
        cq->entries.pop_front();
        ++n;
    }
    return static_cast<ssize_t>(n);
}

ssize_t cq_readfrom(fid_cq* f, void* buf, std::size_t count, fi_addr_t* src) {
    auto* cq = reinterpret_cast<cq_object*>(f);
    drive(cq, idle_poll_ns);
    return take_entries(cq, buf, count, src);
}

ssize_t cq_read(fid_cq* f, void* buf, std::size_t count) { return cq_readfrom(f, buf, count, nullptr); }

ssize_t cq_sreadfrom(fid_cq* f, void* buf, std::size_t count, fi_addr_t* src, const void*, int timeout_ms) {
    auto* cq = reinterpret_cast<cq_object*>(f);
    driver::host_ops& host = cq->domain->nic->host;
    const std::uint64_t hour_ns = 3'600'000'000'000ull;  // "forever" is an hour of simulated time
    const std::uint64_t deadline = host.now_ns() + (timeout_ms < 0 ? hour_ns : std::uint64_t(timeout_ms) * 1'000'000);
    for (;;) {
        const std::uint64_t now = host.now_ns();
        drive(cq, now < deadline ? std::min<std::uint64_t>(deadline - now, 1'000'000) : 0);
        const ssize_t n = take_entries(cq, buf, count, src);
        if (n != -FI_EAGAIN || host.now_ns() >= deadline) return n;
    }
}

ssize_t cq_sread(fid_cq* f, void* buf, std::size_t count, const void* cond, int timeout_ms) {
    return cq_sreadfrom(f, buf, count, nullptr, cond, timeout_ms);
}

ssize_t cq_readerr(fid_cq* f, fi_cq_err_entry* buf, std::uint64_t) {
    auto* cq = reinterpret_cast<cq_object*>(f);
    if (cq->entries.empty() || !cq->entries.front().err) return -FI_EAGAIN;
    const auto e = cq->entries.front();
    cq->entries.pop_front();
    void* const err_data = buf->err_data;  // the caller's (API 1.5); the provider has no error data
    *buf = fi_cq_err_entry{};
    buf->op_context = e.e.op_context;
    buf->flags = e.e.flags;
    buf->len = e.e.len;
    buf->buf = e.e.buf;
    buf->data = e.e.data;
    buf->tag = e.e.tag;
    buf->olen = e.olen;
    buf->err = e.err;
    buf->prov_errno = e.prov_errno;
    buf->err_data = err_data;
    buf->err_data_size = 0;
    return 1;
}

const char* cq_strerror(fid_cq*, int prov_errno, const void*, char* buf, std::size_t len) {
    const char* text = nic_status_name(static_cast<std::uint32_t>(prov_errno));
    if (buf && len) {
        std::strncpy(buf, text, len - 1);
        buf[len - 1] = '\0';
    }
    return text;
}

int cq_open(fid_domain* f, fi_cq_attr* attr, fid_cq** out, void* context) {
    static fi_ops ops = close_only(cq_close);
    static fi_ops_cq cq_ops = [] {
        fi_ops_cq o{};
        o.size = sizeof o;
        o.read = cq_read;
        o.readfrom = cq_readfrom;
        o.readerr = cq_readerr;
        o.sread = cq_sread;
        o.sreadfrom = cq_sreadfrom;
        o.signal = unsupported;
        o.strerror = cq_strerror;
        return o;
    }();
    std::size_t bytes = sizeof(fi_cq_entry);
    if (attr) {
        switch (attr->format) {
        case FI_CQ_FORMAT_UNSPEC:
        case FI_CQ_FORMAT_CONTEXT: bytes = sizeof(fi_cq_entry); break;
        case FI_CQ_FORMAT_MSG: bytes = sizeof(fi_cq_msg_entry); break;
        case FI_CQ_FORMAT_DATA: bytes = sizeof(fi_cq_data_entry); break;
        case FI_CQ_FORMAT_TAGGED: bytes = sizeof(fi_cq_tagged_entry); break;
        default: return -FI_ENOSYS;
        }
        if (attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC) return -FI_ENOSYS;
        if (attr->flags != 0) return -FI_EINVAL;
    }
    auto* cq = new cq_object;
    cq->fid.fid.fclass = FI_CLASS_CQ;
    cq->fid.fid.context = context;
    cq->fid.fid.ops = &ops;
    cq->fid.ops = &cq_ops;
    cq->domain = reinterpret_cast<domain_object*>(f);
    ++cq->domain->children;
    cq->entry_bytes = bytes;
    *out = &cq->fid;
    return 0;
}

// ---- the domain ----

int domain_close(fid* f) {
    auto* d = reinterpret_cast<domain_object*>(f);
    if (!d->mrs.empty() || d->children) return -FI_EBUSY;
    delete d;
    return 0;
}

}  // namespace

mr_object* domain_object::region_of(const void* p, std::size_t bytes, void* desc) const {
    const auto covers = [&](const mr_object* mr) {
        const auto* b = static_cast<const std::uint8_t*>(p);
        return b >= mr->pinned.cpu && bytes <= mr->pinned.size &&
               std::size_t(b - mr->pinned.cpu) <= mr->pinned.size - bytes;
    };
    if (desc) {
        auto* mr = static_cast<mr_object*>(desc);
        return std::find(mrs.begin(), mrs.end(), mr) != mrs.end() && covers(mr) ? mr : nullptr;
    }
    for (auto* mr : mrs)
        if (!mr->device_memory && covers(mr)) return mr;
    return nullptr;
}

bool domain_object::device_memory(void* desc) const {
    auto* mr = static_cast<mr_object*>(desc);
    return desc && std::find(mrs.begin(), mrs.end(), mr) != mrs.end() && mr->device_memory;
}

bool av_object::lookup(fi_addr_t a, wire_address& out) const {
    if (a >= table.size() || !valid[a]) return false;
    out = table[a];
    return true;
}

fi_addr_t av_object::find(const wire_address& a) const {
    for (std::size_t i = 0; i < table.size(); ++i)
        if (valid[i] && table[i] == a) return i;
    return FI_ADDR_NOTAVAIL;
}

int open_domain(fid_fabric* f, fi_info* info, fid_domain** out, void* context) {
    static fi_ops ops = close_only(domain_close);
    static fi_ops_domain domain_ops = [] {
        fi_ops_domain o{};
        o.size = sizeof o;
        o.av_open = av_open;
        o.cq_open = cq_open;
        o.endpoint = open_endpoint;
        o.scalable_ep = unsupported;
        o.cntr_open = unsupported;
        o.poll_open = unsupported;
        o.stx_ctx = unsupported;
        o.srx_ctx = unsupported;
        o.query_atomic = unsupported;
        o.query_collective = unsupported;
        o.endpoint2 = unsupported;
        return o;
    }();
    static fi_ops_mr mr_ops = [] {
        fi_ops_mr o{};
        o.size = sizeof o;
        o.reg = mr_reg;
        o.regv = mr_regv;
        o.regattr = mr_regattr;
        return o;
    }();
    // The NIC the fi_info names (its domain name); the first without one.
    auto* fab = reinterpret_cast<fabric_object*>(f);
    std::size_t k = 0;
    if (info && info->domain_attr && info->domain_attr->name) {
        while (k < fab->bound.nics.size() && domain_name(fab->bound.nics[k]) != info->domain_attr->name) ++k;
        if (k == fab->bound.nics.size()) return -FI_ENODEV;
    }
    nic_state* nic = nic_of(fab->bound, k);
    if (!nic) return -FI_ENODEV;
    auto* d = new domain_object;
    d->fid.fid.fclass = FI_CLASS_DOMAIN;
    d->fid.fid.context = context;
    d->fid.fid.ops = &ops;
    d->fid.ops = &domain_ops;
    d->fid.mr = &mr_ops;
    d->fabric = fab;
    d->nic = nic;
    d->pd = nic->next_pd++;
    *out = &d->fid;
    return 0;
}

}  // namespace trn3::fabric
