#include "trn3/apps/rdm_endpoint.h"

#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <cstring>

namespace trn3::apps {
namespace {

fi_info* ask(const rdm_endpoint::wanted& w) {
    fi_info* hints = fi_allocinfo();
    if (!hints) throw fabric_error("fi_allocinfo", -FI_ENOMEM);
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = w.caps;
    hints->domain_attr->mr_mode = w.mr_mode;
    hints->fabric_attr->prov_name = ::strdup(w.provider.c_str());
    fi_info* answer = nullptr;
    const int rc = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &answer);
    fi_freeinfo(hints);
    fabric_check("fi_getinfo", rc);
    return answer;
}

}  // namespace

fabric_error::fabric_error(const char* call, long rc)
    : std::runtime_error(std::string(call) + ": " + fi_strerror(int(-rc))) {}

void fabric_check(const char* call, long rc) {
    if (rc < 0) throw fabric_error(call, rc);
}

rdm_endpoint::rdm_endpoint(const wanted& w) {
    try {
        open(w);
    } catch (...) {
        close_all();  // what was opened before the failure
        throw;
    }
}

rdm_endpoint::~rdm_endpoint() { close_all(); }

void rdm_endpoint::open(const wanted& w) {
    answer_ = ask(w);
    info_ = answer_;
    for (std::size_t k = 0; k < w.domain && info_; ++k) info_ = info_->next;
    if (!info_) throw fabric_error("fi_getinfo (no such domain)", -FI_ENODATA);
    fi_info* info = const_cast<fi_info*>(info_);
    fabric_check("fi_fabric", fi_fabric(info->fabric_attr, &fabric_, nullptr));
    fabric_check("fi_domain", fi_domain(fabric_, info, &domain_, nullptr));
    fi_cq_attr cq_attr{};
    cq_attr.format = w.cq_format;
    cq_attr.size = w.cq_size;
    fabric_check("fi_cq_open", fi_cq_open(domain_, &cq_attr, &cq_, nullptr));
    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    fabric_check("fi_av_open", fi_av_open(domain_, &av_attr, &av_, nullptr));
    fabric_check("fi_endpoint", fi_endpoint(domain_, info, &ep_, nullptr));
    fabric_check("fi_ep_bind av", fi_ep_bind(ep_, &av_->fid, 0));
    fabric_check("fi_ep_bind cq", fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV));
    fabric_check("fi_enable", fi_enable(ep_));
}

void rdm_endpoint::close_all() {
    for (fid_mr* mr : mrs_) fi_close(&mr->fid);
    mrs_.clear();
    if (ep_) fi_close(&ep_->fid);
    if (av_) fi_close(&av_->fid);
    if (cq_) fi_close(&cq_->fid);
    if (domain_) fi_close(&domain_->fid);
    if (fabric_) fi_close(&fabric_->fid);
    if (answer_) fi_freeinfo(answer_);
    ep_ = nullptr, av_ = nullptr, cq_ = nullptr, domain_ = nullptr, fabric_ = nullptr, answer_ = nullptr;
    info_ = nullptr;
}

std::vector<std::uint8_t> rdm_endpoint::name() {
    std::vector<std::uint8_t> a(64);
    std::size_t n = a.size();
    fabric_check("fi_getname", fi_getname(&ep_->fid, a.data(), &n));
    a.resize(n);
    return a;
}

fi_addr_t rdm_endpoint::insert(const std::vector<std::uint8_t>& address) {
    fi_addr_t peer = FI_ADDR_UNSPEC;
    if (fi_av_insert(av_, address.data(), 1, &peer, 0, nullptr) != 1) throw fabric_error("fi_av_insert", -FI_EINVAL);
    return peer;
}

fid_mr* rdm_endpoint::reg(void* buf, std::size_t bytes, std::uint64_t access, fi_hmem_iface iface, int device) {
    iovec iov{buf, bytes};
    fi_mr_attr attr{};
    attr.mr_iov = &iov;
    attr.iov_count = 1;
    attr.access = access;
    attr.iface = iface;
    attr.device.neuron = device;  // the union's member for every device kind
    fid_mr* mr = nullptr;
    fabric_check(iface == FI_HMEM_SYSTEM ? "fi_mr_regattr" : "fi_mr_regattr (device memory)",
                 fi_mr_regattr(domain_, &attr, 0, &mr));
    mrs_.push_back(mr);
    return mr;
}

}  // namespace trn3::apps
