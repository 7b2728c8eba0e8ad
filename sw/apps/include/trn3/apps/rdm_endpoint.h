// A reliable-datagram endpoint as a libfabric application opens one, with
// libfabric's API only: fi_getinfo's answer for the wanted provider and
// capabilities, then fabric, domain, a completion queue, an address vector
// table and the endpoint, bound and enabled. Shared by the host programs
// that talk over EFA (fabric_perf, the collectives' EFA ring).
//
// A provider that offers several domains (one per NIC: the trn3vp provider
// bound to a host with several NICs) answers fi_getinfo with one fi_info
// each; `domain` picks the n-th.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace trn3::apps {

// A failed call, named with libfabric's own text.
struct fabric_error : std::runtime_error {
    fabric_error(const char* call, long rc);
};
// Throws fabric_error when rc < 0.
void fabric_check(const char* call, long rc);

class rdm_endpoint {
public:
    struct wanted {
        std::string provider = "trn3vp";
        std::uint64_t caps = FI_MSG | FI_TAGGED;
        int mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
        fi_cq_format cq_format = FI_CQ_FORMAT_TAGGED;
        std::size_t cq_size = 1024;
        std::size_t domain = 0;  // the n-th fi_info of the answer
    };
    explicit rdm_endpoint(const wanted& w);  // throws fabric_error
    ~rdm_endpoint();
    rdm_endpoint(const rdm_endpoint&) = delete;
    rdm_endpoint& operator=(const rdm_endpoint&) = delete;

    std::vector<std::uint8_t> name();  // the endpoint's address
    fi_addr_t insert(const std::vector<std::uint8_t>& address);  // a peer's, into the table
    // Registers [buf, buf + bytes) (fi_mr_regattr: host memory, or a
    // device's with `iface` and `device`); closed with the endpoint.
    fid_mr* reg(void* buf, std::size_t bytes, std::uint64_t access, fi_hmem_iface iface = FI_HMEM_SYSTEM,
                int device = 0);

    fid_domain* domain() const { return domain_; }
    fid_cq* cq() const { return cq_; }
    fid_ep* ep() const { return ep_; }
    const fi_info* info() const { return info_; }

private:
    void open(const wanted& w);
    void close_all();
    fi_info* answer_ = nullptr;  // fi_getinfo's list
    const fi_info* info_ = nullptr;  // the chosen one in it
    fid_fabric* fabric_ = nullptr;
    fid_domain* domain_ = nullptr;
    fid_cq* cq_ = nullptr;
    fid_av* av_ = nullptr;
    fid_ep* ep_ = nullptr;
    std::vector<fid_mr*> mrs_;
};

}  // namespace trn3::apps
