// The trn3vp libfabric provider's objects (docs/fabric.md). Each libfabric
// object is a struct whose first member is the fid libfabric hands to the
// application; the provider's state follows it.
//
//   fabric ── domain (a protection domain on the context's NIC)
//                ├── mr  (pinned program memory, a NIC memory region)
//                ├── av  (table of endpoint addresses: node, queue pair)
//                ├── cq  (completions in the application's format)
//                └── ep  (a NIC queue pair; the message protocol: endpoint.cpp)
//
// All of it runs on the simulation's one thread, in the calling software
// context; calls that wait do so in simulated time.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <vector>

#include "protocol.h"
#include "trn3/driver/nic_device.h"
#include "trn3/fabric/binding.h"

namespace trn3::fabric {

inline constexpr const char* provider_name = "trn3vp";
inline constexpr std::uint32_t provider_version = FI_VERSION(1, 0);

// Every call that fails for want of support answers -FI_ENOSYS.
template <typename R, typename... A>
R unsupported(A...) {
    return static_cast<R>(-FI_ENOSYS);
}

// The fi_ops of an object that only closes.
inline fi_ops close_only(int (*close)(fid*)) {
    fi_ops o{};
    o.size = sizeof o;
    o.close = close;
    o.bind = unsupported;
    o.control = unsupported;
    o.ops_open = unsupported;
    return o;
}

// The NIC as the provider shares it among the domains and endpoints on it.
struct nic_state {
    driver::host_ops& host;
    driver::nic_device dev;
    std::vector<bool> qp_used = std::vector<bool>(TRN3_NIC_QPS);
    std::vector<bool> mr_used = std::vector<bool>(TRN3_NIC_MRS);
    std::vector<std::uint8_t> mr_tag = std::vector<std::uint8_t>(TRN3_NIC_MRS);
    std::uint32_t next_pd = 1;
    std::uint16_t next_incarnation = 1;  // of the endpoints on this NIC (wire_address)
    nic_state(driver::host_ops& h, std::uint32_t msi) : host(h), dev(h, msi) {}
    int take(std::vector<bool>& used);  // a free index, or -1
};
// The context's k-th NIC, probed on first use; nullptr if it does not answer.
nic_state* nic_of(const binding& b, std::size_t k);
// The domain name of a NIC ("trn3vp_nic_<bdf>").
std::string domain_name(const nic_binding& n);

struct fabric_object {
    fid_fabric fid{};
    binding bound;
};

struct domain_object {
    fid_domain fid{};
    fabric_object* fabric = nullptr;
    nic_state* nic = nullptr;
    std::uint32_t pd = 0;
    std::list<struct mr_object*> mrs;
    unsigned children = 0;  // open address vectors, completion queues, endpoints
    // The memory region of `bytes` at `p`: the descriptor's if given, else
    // any registered host-memory one that covers it (device memory only by
    // its descriptor: its addresses are not the program's).
    mr_object* region_of(const void* p, std::size_t bytes, void* desc) const;
    // Whether `desc` is a region of device memory (sends and receives refuse it).
    bool device_memory(void* desc) const;
};

struct mr_object {
    fid_mr fid{};
    domain_object* domain = nullptr;
    driver::dma_buffer pinned;  // device memory: cpu is the device address, never dereferenced
    unsigned index = 0;
    bool device_memory = false;  // FI_HMEM_NEURON: RMA only (the provider copies host memory alone)
    std::uint64_t bus_of(const void* p) const {
        return pinned.bus_address + std::uint64_t(static_cast<const std::uint8_t*>(p) - pinned.cpu);
    }
};

struct av_object {
    fid_av fid{};
    domain_object* domain = nullptr;
    std::vector<wire_address> table;
    std::vector<bool> valid;
    unsigned users = 0;  // endpoints bound to it
    bool lookup(fi_addr_t a, wire_address& out) const;
    fi_addr_t find(const wire_address& a) const;  // FI_ADDR_NOTAVAIL if absent
};

struct endpoint_object;

struct cq_object {
    struct entry {
        fi_cq_tagged_entry e{};
        fi_addr_t src = FI_ADDR_NOTAVAIL;
        int err = 0;  // a positive FI_E* code: an error entry
        int prov_errno = 0;
        std::size_t olen = 0;
    };
    fid_cq fid{};
    domain_object* domain = nullptr;
    std::size_t entry_bytes = sizeof(fi_cq_entry);
    std::deque<entry> entries;
    std::vector<endpoint_object*> endpoints;
};

// fabric.cpp, domain.cpp, endpoint.cpp
int open_domain(fid_fabric* fabric, fi_info* info, fid_domain** domain, void* context);
int open_endpoint(fid_domain* domain, fi_info* info, fid_ep** ep, void* context);
// Drives an endpoint's NIC queue pair: reaps its completions and reposts
// what waits (RNR retries, queued work).
void progress(endpoint_object* ep);
// When the endpoint next needs attention without a NIC completion (a retry is due); ~0 if never.
std::uint64_t next_deadline_ns(const endpoint_object* ep);
bool nic_has_completion(const endpoint_object* ep);
int errno_of_nic_status(std::uint32_t status);
const char* nic_status_name(std::uint32_t status);

}  // namespace trn3::fabric
