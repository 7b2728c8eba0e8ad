#include "trn3/driver/nic_device.h"

#include <cstring>

#include "trn3/spec/pci.h"

namespace trn3::driver {

status nic_device::probe(const std::vector<pci_function>& functions, unsigned index) {
    for (const auto& fn : functions)
        if (fn.vendor == TRN3_PCI_VENDOR_AMAZON && fn.device == TRN3_PCI_DEVICE_NIC && index-- == 0) return probe(fn);
    return status::no_device;
}

status nic_device::probe(const pci_function& function) {
    const pci_function* f = &function;
    if (f->vendor != TRN3_PCI_VENDOR_AMAZON || f->device != TRN3_PCI_DEVICE_NIC) return status::no_device;
    bdf_ = f->bdf;
    for (const auto& b : f->bars) {
        if (b.index == 0) bar0_ = b.base;
        if (b.index == 4) bar4_ = b.base;
    }
    if (!bar0_ || !bar4_ || rd(TRN3_NIC_ID) != TRN3_NIC_ID_VALUE) return status::no_device;
    node_ = rd(TRN3_NIC_NODE) | std::uint64_t{rd(TRN3_NIC_NODE + 4)} << 32;
    for (std::uint32_t v = 0; v < TRN3_NIC_QPS; ++v) {
        const std::uint32_t e[4] = {static_cast<std::uint32_t>(TRN3_MSI_WINDOW_BASE), 0, msi_data_base_ + v, 0};
        host_.mmio_write(bar4_ + v * TRN3_MSIX_ENTRY_SIZE, e, sizeof e);
        host_.request_irq(msi_data_base_ + v, [this, v] { ++qps_[v].interrupts; });
    }
    host_.config().write(bdf_, TRN3_PCI_MSIX_CAP + TRN3_MSIX_CONTROL, 2, TRN3_MSIX_ENABLE);
    return status::ok;
}

status nic_device::create_qp(unsigned q, std::uint32_t pd, unsigned entries) {
    if (!bar0_ || q >= TRN3_NIC_QPS || entries == 0 || (entries & (entries - 1))) return status::bad_argument;
    queue_pair& p = qps_[q];
    p.sq = host_.alloc_dma(bdf_, entries * sizeof(trn3_nic_wqe));
    p.rq = host_.alloc_dma(bdf_, entries * sizeof(trn3_nic_rqe));
    // Every send and every receive entry may be owed a completion at once.
    p.cq = host_.alloc_dma(bdf_, 2 * entries * sizeof(trn3_nic_cqe));
    if (!p.sq.cpu || !p.rq.cpu || !p.cq.cpu) return status::out_of_memory;
    p.entries = entries;
    const std::uint64_t b = TRN3_NIC_QP(q);
    wr(b + TRN3_NIC_QP_CONTROL, 0);
    wr64(b + TRN3_NIC_SQ_BASE, p.sq.bus_address);
    wr(b + TRN3_NIC_SQ_SIZE, entries);
    wr64(b + TRN3_NIC_RQ_BASE, p.rq.bus_address);
    wr(b + TRN3_NIC_RQ_SIZE, entries);
    wr64(b + TRN3_NIC_CQ_BASE, p.cq.bus_address);
    wr(b + TRN3_NIC_CQ_SIZE, 2 * entries);
    p.sq_tail = rd(b + TRN3_NIC_SQ_HEAD);
    wr(b + TRN3_NIC_SQ_TAIL, p.sq_tail);
    p.rq_tail = rd(b + TRN3_NIC_RQ_HEAD);
    wr(b + TRN3_NIC_RQ_TAIL, p.rq_tail);
    p.cq_head = rd(b + TRN3_NIC_CQ_TAIL);
    wr(b + TRN3_NIC_CQ_HEAD, p.cq_head);
    // Every slot shows "not written" for the pass in which it is next written
    // (the NIC's counters carry on from an earlier use of the queue pair).
    const unsigned cq_entries = 2 * entries;
    for (unsigned slot = 0; slot < cq_entries; ++slot) {
        const std::uint32_t next = p.cq_head + ((slot - p.cq_head) & (cq_entries - 1));  // when it is written next
        reinterpret_cast<trn3_nic_cqe*>(p.cq.cpu)[slot].phase = ((next / cq_entries) & 1) == 0 ? 0 : 1;
    }
    wr(b + TRN3_NIC_QP_PD, pd);
    wr(b + TRN3_NIC_QP_VECTOR, q);
    wr(b + TRN3_NIC_QP_CONTROL, TRN3_NIC_QP_ENABLE);
    return status::ok;
}

status nic_device::reg_mr(unsigned index, std::uint8_t tag, std::uint64_t bus_address, std::uint64_t bytes,
                          std::uint32_t pd, std::uint32_t access, std::uint32_t& key) {
    if (!bar0_ || index >= TRN3_NIC_MRS || access == 0) return status::bad_argument;
    key = index | std::uint32_t{tag} << 8;
    const std::uint64_t b = TRN3_NIC_MR(index);
    wr(b + TRN3_NIC_MR_ACCESS, 0);  // not valid while it changes
    wr64(b + TRN3_NIC_MR_ADDR, bus_address);
    wr64(b + TRN3_NIC_MR_LENGTH, bytes);
    wr(b + TRN3_NIC_MR_KEY, key);
    wr(b + TRN3_NIC_MR_PD, pd);
    wr(b + TRN3_NIC_MR_ACCESS, access);
    return status::ok;
}

status nic_device::dereg_mr(unsigned index) {
    if (!bar0_ || index >= TRN3_NIC_MRS) return status::bad_argument;
    wr(TRN3_NIC_MR(index) + TRN3_NIC_MR_ACCESS, 0);
    return status::ok;
}

status nic_device::post_send(unsigned q, const trn3_nic_wqe& w) {
    if (!valid_qp(q)) return status::bad_argument;
    queue_pair& p = qps_[q];
    if (p.sq_tail - rd(TRN3_NIC_QP(q) + TRN3_NIC_SQ_HEAD) >= p.entries) return status::queue_full;
    std::memcpy(p.sq.cpu + sizeof w * (p.sq_tail & (p.entries - 1)), &w, sizeof w);
    wr(TRN3_NIC_QP(q) + TRN3_NIC_SQ_TAIL, ++p.sq_tail);
    return status::ok;
}

status nic_device::post_recv(unsigned q, const trn3_nic_rqe& r) {
    if (!valid_qp(q)) return status::bad_argument;
    queue_pair& p = qps_[q];
    if (p.rq_tail - rd(TRN3_NIC_QP(q) + TRN3_NIC_RQ_HEAD) >= p.entries) return status::queue_full;
    std::memcpy(p.rq.cpu + sizeof r * (p.rq_tail & (p.entries - 1)), &r, sizeof r);
    wr(TRN3_NIC_QP(q) + TRN3_NIC_RQ_TAIL, ++p.rq_tail);
    return status::ok;
}

status nic_device::poll_cq(unsigned q, trn3_nic_cqe& out, std::uint64_t timeout_ns) {
    if (!valid_qp(q)) return status::bad_argument;
    queue_pair& p = qps_[q];
    auto ready = [&] { return cq_ready(q); };
    if (!ready() && !host_.wait_until(ready, timeout_ns)) return status::timeout;
    std::memcpy(&out, p.cq.cpu + sizeof out * (p.cq_head & (2 * p.entries - 1)), sizeof out);
    wr(TRN3_NIC_QP(q) + TRN3_NIC_CQ_HEAD, ++p.cq_head);
    return status::ok;
}

bool nic_device::cq_ready(unsigned q) const {
    if (!valid_qp(q)) return false;
    const queue_pair& p = qps_[q];
    const unsigned cq_entries = 2 * p.entries;
    const std::uint8_t phase = ((p.cq_head / cq_entries) & 1) == 0 ? 1 : 0;
    return reinterpret_cast<const trn3_nic_cqe*>(p.cq.cpu)[p.cq_head & (cq_entries - 1)].phase == phase;
}

status nic_device::destroy_qp(unsigned q) {
    if (!valid_qp(q)) return status::bad_argument;
    wr(TRN3_NIC_QP(q) + TRN3_NIC_QP_CONTROL, 0);
    qps_[q].entries = 0;
    return status::ok;
}

std::uint64_t nic_device::rdma_errors() {
    return rd(TRN3_NIC_RDMA_ERRORS) | std::uint64_t{rd(TRN3_NIC_RDMA_ERRORS + 4)} << 32;
}

std::uint32_t nic_device::qp_status(unsigned q) {
    return q < TRN3_NIC_QPS ? rd(TRN3_NIC_QP(q) + TRN3_NIC_QP_STATUS) : ~0u;
}

}  // namespace trn3::driver
