// The provider's entry (fi_prov_ini), fi_getinfo and the fabric object.
#include <rdma/providers/fi_prov.h>

#include <dlfcn.h>

#include <cstring>
#include <map>
#include <string>

#include "provider.h"

namespace trn3::fabric {
namespace {

constexpr std::uint64_t provider_caps = FI_MSG | FI_TAGGED | FI_RMA | FI_SEND | FI_RECV | FI_READ | FI_WRITE |
                                        FI_REMOTE_READ | FI_REMOTE_WRITE | FI_DIRECTED_RECV | FI_SOURCE | FI_HMEM;
constexpr std::uint64_t required_mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY;

// The simulator's answer for the calling context: nullptr outside a simulation.
const binding* current_binding() {
    using lookup = const binding* (*)();
    static const auto fn = reinterpret_cast<lookup>(::dlsym(RTLD_DEFAULT, "trn3vp_fabric_binding"));
    return fn ? fn() : nullptr;
}

bool hints_fit(const fi_info* hints) {
    if (!hints) return true;
    if (hints->caps & ~provider_caps) return false;
    if (hints->ep_attr && hints->ep_attr->type != FI_EP_UNSPEC && hints->ep_attr->type != FI_EP_RDM) return false;
    if (hints->addr_format != FI_FORMAT_UNSPEC) return false;
    if (hints->fabric_attr && hints->fabric_attr->prov_name &&
        std::strcmp(hints->fabric_attr->prov_name, provider_name) != 0)
        return false;  // the utility providers' probes (ofi_rxm, ofi_rxd) among them
    if (hints->domain_attr) {
        const int mode = hints->domain_attr->mr_mode;
        if ((mode & required_mr_mode) != required_mr_mode) return false;
        // Device memory is registered as such (fi_mr_regattr with its iface).
        if ((hints->caps & FI_HMEM) && !(mode & FI_MR_HMEM)) return false;
        if (hints->domain_attr->av_type == FI_AV_MAP) return false;
    }
    return true;
}

fi_info* describe(const binding& b, std::size_t k, const nic_state* nic, const fi_info* hints);

int getinfo(std::uint32_t, const char*, const char*, std::uint64_t, const fi_info* hints, fi_info** info) {
    *info = nullptr;
    const binding* b = current_binding();
    if (!b || !b->host || !hints_fit(hints)) return -FI_ENODATA;
    // One fi_info per NIC, in the binding's order (so positions name NICs);
    // one that does not answer fails at fi_domain (-FI_ENODEV).
    fi_info** tail = info;
    for (std::size_t k = 0; k < b->nics.size(); ++k) {
        fi_info* i = describe(*b, k, nic_of(*b, k), hints);
        if (!i) {
            fi_freeinfo(*info);
            *info = nullptr;
            return -FI_ENOMEM;
        }
        *tail = i;
        tail = &i->next;
    }
    return *info ? 0 : -FI_ENODATA;
}

// The fi_info of the binding's k-th NIC.
fi_info* describe(const binding& b, std::size_t k, const nic_state* nic, const fi_info* hints) {
    fi_info* i = fi_allocinfo();
    if (!i) return nullptr;
    // FI_HMEM (FI_HMEM_NEURON: the host's chips' memory, RMA only) when asked for.
    const bool hmem = hints && (hints->caps & FI_HMEM);
    i->caps = hmem ? provider_caps : provider_caps & ~FI_HMEM;
    i->mode = 0;
    i->addr_format = FI_FORMAT_UNSPEC;
    auto* self = static_cast<wire_address*>(std::calloc(1, sizeof(wire_address)));
    if (self && nic) self->node = nic->dev.node();
    i->src_addr = self;
    i->src_addrlen = self ? sizeof(wire_address) : 0;
    i->tx_attr->caps = i->caps & (FI_HMEM | FI_MSG | FI_TAGGED | FI_RMA | FI_SEND | FI_READ | FI_WRITE);
    i->tx_attr->msg_order = FI_ORDER_SAS;
    i->tx_attr->comp_order = FI_ORDER_NONE;
    i->tx_attr->inject_size = eager_bytes;
    i->tx_attr->size = queue_entries;
    i->tx_attr->iov_limit = 1;
    i->tx_attr->rma_iov_limit = 1;
    i->rx_attr->caps = i->caps & (FI_HMEM | FI_MSG | FI_TAGGED | FI_RECV | FI_REMOTE_READ | FI_REMOTE_WRITE |
                                  FI_DIRECTED_RECV | FI_SOURCE);
    i->rx_attr->msg_order = FI_ORDER_SAS;
    i->rx_attr->comp_order = FI_ORDER_NONE;
    i->rx_attr->size = queue_entries;
    i->rx_attr->iov_limit = 1;
    i->ep_attr->type = FI_EP_RDM;
    i->ep_attr->protocol = FI_PROTO_UNSPEC;
    i->ep_attr->max_msg_size = TRN3_NIC_MAX_MESSAGE;
    i->ep_attr->tx_ctx_cnt = 1;
    i->ep_attr->rx_ctx_cnt = 1;
    i->ep_attr->mem_tag_format = 0;  // all 64 bits are the application's
    i->domain_attr->name = ::strdup(domain_name(b.nics[k]).c_str());
    i->domain_attr->threading = FI_THREAD_DOMAIN;
    i->domain_attr->control_progress = FI_PROGRESS_MANUAL;
    i->domain_attr->data_progress = FI_PROGRESS_MANUAL;
    i->domain_attr->resource_mgmt = FI_RM_ENABLED;
    i->domain_attr->av_type = FI_AV_TABLE;
    i->domain_attr->mr_mode = required_mr_mode | (hmem ? FI_MR_HMEM : 0);
    i->domain_attr->mr_key_size = sizeof(std::uint32_t);
    i->domain_attr->cq_data_size = sizeof(std::uint32_t);
    i->domain_attr->cq_cnt = TRN3_NIC_QPS * 2;
    i->domain_attr->ep_cnt = TRN3_NIC_QPS;
    i->domain_attr->tx_ctx_cnt = TRN3_NIC_QPS;
    i->domain_attr->rx_ctx_cnt = TRN3_NIC_QPS;
    i->domain_attr->max_ep_tx_ctx = 1;
    i->domain_attr->max_ep_rx_ctx = 1;
    i->domain_attr->mr_cnt = TRN3_NIC_MRS;
    i->domain_attr->mr_iov_limit = 1;
    i->fabric_attr->name = ::strdup(provider_name);
    i->fabric_attr->prov_version = provider_version;  // prov_name: libfabric fills it in
    return i;
}

int fabric_close(fid* f) {
    delete reinterpret_cast<fabric_object*>(f);
    return 0;
}

int open_fabric(fi_fabric_attr*, fid_fabric** out, void* context) {
    const binding* b = current_binding();
    if (!b || !b->host) return -FI_ENODATA;
    static fi_ops ops = close_only(fabric_close);
    static fi_ops_fabric fabric_ops = [] {
        fi_ops_fabric o{};
        o.size = sizeof o;
        o.domain = open_domain;
        o.passive_ep = unsupported;
        o.eq_open = unsupported;
        o.wait_open = unsupported;
        o.trywait = unsupported;
        o.domain2 = unsupported;
        return o;
    }();
    auto* f = new fabric_object;
    f->bound = *b;
    f->fid.fid.fclass = FI_CLASS_FABRIC;
    f->fid.fid.context = context;
    f->fid.fid.ops = &ops;
    f->fid.ops = &fabric_ops;
    f->fid.api_version = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);
    *out = &f->fid;
    return 0;
}

void cleanup() {}

}  // namespace

int nic_state::take(std::vector<bool>& used) {
    for (std::size_t i = 0; i < used.size(); ++i)
        if (!used[i]) {
            used[i] = true;
            return static_cast<int>(i);
        }
    return -1;
}

std::string domain_name(const nic_binding& n) { return "trn3vp_nic_" + std::to_string(n.function.bdf); }

nic_state* nic_of(const binding& b, std::size_t k) {
    // One per NIC of a host, for the life of the process (the simulation).
    static std::map<std::pair<driver::host_ops*, std::uint16_t>, std::unique_ptr<nic_state>> nics;
    if (k >= b.nics.size()) return nullptr;
    const nic_binding& which = b.nics[k];
    auto& slot = nics[{b.host, which.function.bdf}];
    if (!slot) {
        auto n = std::make_unique<nic_state>(*b.host, which.msi_data_base);
        if (n->dev.probe(which.function) != driver::status::ok) return nullptr;
        slot = std::move(n);
    }
    return slot.get();
}

int errno_of_nic_status(std::uint32_t s) {
    switch (s) {
    case TRN3_NIC_ST_OK: return 0;
    case TRN3_NIC_ST_LOCAL_PROTECTION: return FI_EACCES;
    case TRN3_NIC_ST_REMOTE_ACCESS: return FI_EACCES;
    case TRN3_NIC_ST_RNR: return FI_ENORX;
    case TRN3_NIC_ST_TRANSPORT: return FI_EHOSTUNREACH;
    case TRN3_NIC_ST_BAD_REQUEST: return FI_EINVAL;
    case TRN3_NIC_ST_LOCAL_DMA: return FI_EFAULT;
    default: return FI_EIO;
    }
}

const char* nic_status_name(std::uint32_t s) {
    switch (s) {
    case TRN3_NIC_ST_OK: return "ok";
    case TRN3_NIC_ST_LOCAL_PROTECTION: return "local protection error (key, bounds or domain of a local buffer)";
    case TRN3_NIC_ST_REMOTE_ACCESS: return "remote access refused (key, bounds, domain or access)";
    case TRN3_NIC_ST_RNR: return "receiver not ready";
    case TRN3_NIC_ST_TRANSPORT: return "SRD connection failed";
    case TRN3_NIC_ST_BAD_REQUEST: return "bad request";
    case TRN3_NIC_ST_LOCAL_DMA: return "host memory access failed (IOMMU)";
    default: return "unknown NIC status";
    }
}

}  // namespace trn3::fabric

extern "C" FI_EXT_INI {
    static fi_provider p = [] {
        fi_provider q{};
        q.version = trn3::fabric::provider_version;
        q.fi_version = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);
        q.name = trn3::fabric::provider_name;
        q.getinfo = trn3::fabric::getinfo;
        q.fabric = trn3::fabric::open_fabric;
        q.cleanup = trn3::fabric::cleanup;
        return q;
    }();
    return &p;
}
