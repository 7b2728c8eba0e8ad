// The Nitro-v6 NIC's host driver (spec/nic.h): probe, queue pairs, memory
// regions, posting work and reaping completions. Host-compiled C++ over
// host_ops, like the Trainium3 driver; what the libfabric provider sits on.
//
//   probe()      the n-th 1d0f:7a00 among the enumerated functions: its BARs,
//                MSI-X (every vector to the host's MSI window, data
//                msi_data_base + vector), the node address
//   create_qp()  rings of `entries` send and receive entries and 2 x entries
//                completions in host memory the NIC may reach, in protection
//                domain `pd`, completions raising vector q
//   reg_mr()     region `index` over host memory, key = index | tag << 8
//   post_send()  / post_recv(): an entry and its doorbell (queue_full when the ring is)
//   poll_cq()    the next completion (phase bit), waiting at most timeout_ns
//
// Every call returns a status; none throws or hangs.
#pragma once

#include <cstdint>
#include <vector>

#include "trn3/driver/host_ops.h"
#include "trn3/driver/pci_enum.h"
#include "trn3/driver/trn3_device.h"
#include "trn3/spec/nic.h"

namespace trn3::driver {

class nic_device {
public:
    // MSI-X data of a host's i-th NIC: msi_data_of(i) + vector, above the
    // ranges of the host's chips (trn3_device: 0x7300 + 0x100 per chip, up to 16 chips).
    static constexpr std::uint32_t msi_data_of(unsigned nic_index) { return 0xA000 + 0x100 * nic_index; }
    explicit nic_device(host_ops& host, std::uint32_t msi_data_base = msi_data_of(0))
        : host_(host), msi_data_base_(msi_data_base) {}
    // A function found by enumeration (its BARs assigned).
    status probe(const pci_function& function);

    status probe(const std::vector<pci_function>& functions, unsigned index = 0);
    std::uint16_t bdf() const { return bdf_; }
    std::uint64_t node() const { return node_; }

    status create_qp(unsigned q, std::uint32_t pd, unsigned entries = 256);
    status reg_mr(unsigned index, std::uint8_t tag, std::uint64_t bus_address, std::uint64_t bytes, std::uint32_t pd,
                  std::uint32_t access, std::uint32_t& key);
    status dereg_mr(unsigned index);
    status post_send(unsigned q, const trn3_nic_wqe& w);
    status post_recv(unsigned q, const trn3_nic_rqe& r);
    status poll_cq(unsigned q, trn3_nic_cqe& out, std::uint64_t timeout_ns);
    bool cq_ready(unsigned q) const;  // a completion waits (poll_cq would not wait)
    status destroy_qp(unsigned q);  // the NIC stops it; its rings stay allocated

    std::uint64_t rdma_errors();  // inbound requests the NIC refused
    std::uint32_t ports_up() { return rd(TRN3_NIC_PORTS); }  // bit per Ethernet port whose link is up
    std::uint32_t qp_status(unsigned q);
    dma_buffer alloc(std::size_t bytes) { return host_.alloc_dma(bdf_, bytes); }

private:
    struct queue_pair {
        dma_buffer sq, rq, cq;
        unsigned entries = 0;
        std::uint32_t sq_tail = 0, rq_tail = 0, cq_head = 0;
        std::uint64_t interrupts = 0;
    };
    std::uint32_t rd(std::uint64_t offset) { return host_.mmio_read32(bar0_ + offset); }
    void wr(std::uint64_t offset, std::uint32_t v) { host_.mmio_write32(bar0_ + offset, v); }
    void wr64(std::uint64_t offset, std::uint64_t v) { host_.mmio_write64(bar0_ + offset, v); }
    bool valid_qp(unsigned q) const { return q < qps_.size() && qps_[q].entries != 0; }

    host_ops& host_;
    std::uint32_t msi_data_base_;
    std::uint16_t bdf_ = 0;
    std::uint64_t bar0_ = 0, bar4_ = 0, node_ = 0;
    std::vector<queue_pair> qps_ = std::vector<queue_pair>(TRN3_NIC_QPS);
};

}  // namespace trn3::driver
