#include "trn3/apps/fabric_perf.h"

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <cstring>
#include <stdexcept>

namespace trn3::apps::fabric_perf {
namespace {

// What fails is named with libfabric's own text.
struct fabric_error : std::runtime_error {
    fabric_error(const char* call, long rc) : std::runtime_error(std::string(call) + ": " + fi_strerror(int(-rc))) {}
};
void check(const char* call, long rc) {
    if (rc < 0) throw fabric_error(call, rc);
}

class rdm_endpoint {
public:
    rdm_endpoint(const std::string& provider, std::function<double()> now_us) : now_us_(std::move(now_us)) {
        try {
            open(provider);
        } catch (...) {
            close_all();  // what was opened before the failure
            throw;
        }
    }
    void open(const std::string& provider) {
        fi_info* hints = fi_allocinfo();
        hints->ep_attr->type = FI_EP_RDM;
        hints->caps = FI_MSG | FI_TAGGED;
        hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
        hints->fabric_attr->prov_name = ::strdup(provider.c_str());
        const int rc = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &info_);
        fi_freeinfo(hints);
        check("fi_getinfo", rc);
        check("fi_fabric", fi_fabric(info_->fabric_attr, &fabric_, nullptr));
        check("fi_domain", fi_domain(fabric_, info_, &domain_, nullptr));
        fi_cq_attr cq_attr{};
        cq_attr.format = FI_CQ_FORMAT_TAGGED;
        cq_attr.size = 1024;
        check("fi_cq_open", fi_cq_open(domain_, &cq_attr, &cq_, nullptr));
        fi_av_attr av_attr{};
        av_attr.type = FI_AV_TABLE;
        check("fi_av_open", fi_av_open(domain_, &av_attr, &av_, nullptr));
        check("fi_endpoint", fi_endpoint(domain_, info_, &ep_, nullptr));
        check("fi_ep_bind av", fi_ep_bind(ep_, &av_->fid, 0));
        check("fi_ep_bind cq", fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV));
        check("fi_enable", fi_enable(ep_));
    }
    ~rdm_endpoint() { close_all(); }
    void close_all() {
        for (fid_mr* mr : mrs_) fi_close(&mr->fid);
        mrs_.clear();
        if (ep_) fi_close(&ep_->fid);
        if (av_) fi_close(&av_->fid);
        if (cq_) fi_close(&cq_->fid);
        if (domain_) fi_close(&domain_->fid);
        if (fabric_) fi_close(&fabric_->fid);
        if (info_) fi_freeinfo(info_);
        ep_ = nullptr, av_ = nullptr, cq_ = nullptr, domain_ = nullptr, fabric_ = nullptr, info_ = nullptr;
    }
    rdm_endpoint(const rdm_endpoint&) = delete;
    rdm_endpoint& operator=(const rdm_endpoint&) = delete;

    std::vector<std::uint8_t> name() {
        std::vector<std::uint8_t> a(64);
        std::size_t n = a.size();
        check("fi_getname", fi_getname(&ep_->fid, a.data(), &n));
        a.resize(n);
        return a;
    }
    fi_addr_t insert(const std::vector<std::uint8_t>& address) {
        fi_addr_t peer = FI_ADDR_UNSPEC;
        if (fi_av_insert(av_, address.data(), 1, &peer, 0, nullptr) != 1)
            throw fabric_error("fi_av_insert", -FI_EINVAL);
        return peer;
    }
    void* reg(void* buf, std::size_t bytes) {
        fid_mr* mr = nullptr;
        check("fi_mr_reg", fi_mr_reg(domain_, buf, bytes, FI_SEND | FI_RECV, 0, 0, 0, &mr, nullptr));
        mrs_.push_back(mr);
        return fi_mr_desc(mr);
    }
    void send(const void* buf, std::size_t n, void* desc, fi_addr_t to, std::uint64_t tag) {
        for (;;) {
            const ssize_t rc = fi_tsend(ep_, buf, n, desc, to, tag, nullptr);
            if (rc != -FI_EAGAIN) return check("fi_tsend", rc);
            poll();  // what completes meanwhile counts towards the next reap
        }
    }
    void recv(void* buf, std::size_t n, void* desc, fi_addr_t from, std::uint64_t tag) {
        check("fi_trecv", fi_trecv(ep_, buf, n, desc, from, tag, 0, nullptr));
    }
    // Waits until `count` completions have come (counting those polled
    // since the last reap), at most `timeout_us` of the host's clock; returns
    // the bytes of the received ones.
    std::size_t reap(unsigned count) {
        const double deadline = now_us_() + timeout_us;
        while (completed_ < count) {
            if (now_us_() > deadline) throw std::runtime_error("no completion within the timeout");
            poll();
        }
        completed_ -= count;
        const std::size_t bytes = received_bytes_;
        received_bytes_ = 0;
        return bytes;
    }
    static constexpr double timeout_us = 1e6;
    std::function<double()> now_us_;

private:
    void poll() {
        fi_cq_tagged_entry e[16];
        const ssize_t n = fi_cq_read(cq_, e, 16);
        if (n == -FI_EAGAIN) return;
        if (n == -FI_EAVAIL) {
            fi_cq_err_entry err{};
            fi_cq_readerr(cq_, &err, 0);
            throw std::runtime_error(std::string("completion error: ") + fi_strerror(err.err) + " (" +
                                     fi_cq_strerror(cq_, err.prov_errno, err.err_data, nullptr, 0) + ")");
        }
        check("fi_cq_read", n);
        for (ssize_t i = 0; i < n; ++i)
            if (e[i].flags & FI_RECV) received_bytes_ += e[i].len;
        completed_ += static_cast<unsigned>(n);
    }
    unsigned completed_ = 0;
    std::size_t received_bytes_ = 0;

    fi_info* info_ = nullptr;
    fid_fabric* fabric_ = nullptr;
    fid_domain* domain_ = nullptr;
    fid_cq* cq_ = nullptr;
    fid_av* av_ = nullptr;
    fid_ep* ep_ = nullptr;
    std::vector<fid_mr*> mrs_;
};

std::uint8_t pattern(std::size_t size, unsigned iteration, std::size_t i) {
    return static_cast<std::uint8_t>(size * 31 + iteration * 7 + i * 13 + (i >> 8));
}
void fill(std::vector<std::uint8_t>& b, std::size_t size, unsigned iteration) {
    for (std::size_t i = 0; i < size; ++i) b[i] = pattern(size, iteration, i);
}
bool holds(const std::vector<std::uint8_t>& b, std::size_t size, unsigned iteration) {
    for (std::size_t i = 0; i < size; ++i)
        if (b[i] != pattern(size, iteration, i)) return false;
    return true;
}

}  // namespace

result run(const options& o, const exchange& x) {
    result r;
    try {
        rdm_endpoint ep(o.provider, o.now_us);
        x.publish(ep.name());
        const fi_addr_t peer = ep.insert(x.fetch());
        std::size_t max = 1;
        for (std::size_t s : o.sizes) max = std::max(max, s);
        std::vector<std::uint8_t> tx(max), rx(max * o.window);
        void* const tx_desc = ep.reg(tx.data(), tx.size());
        void* const rx_desc = ep.reg(rx.data(), rx.size());
        for (std::size_t size : o.sizes) {
            point p;
            p.bytes = size;
            // Ping-pong: the initiator sends, the responder answers with the same pattern.
            double start = o.now_us();
            for (unsigned it = 0; it < o.iterations; ++it) {
                if (o.initiator) {
                    ep.recv(rx.data(), size, rx_desc, peer, 2);
                    fill(tx, size, it);
                    ep.send(tx.data(), size, tx_desc, peer, 1);
                    const std::size_t got = ep.reap(2);
                    ++p.messages;
                    p.exact += got == size && holds(rx, size, it);
                } else {
                    ep.recv(rx.data(), size, rx_desc, peer, 1);
                    const std::size_t got = ep.reap(1);
                    ++p.messages;
                    p.exact += got == size && holds(rx, size, it);
                    fill(tx, size, it);
                    ep.send(tx.data(), size, tx_desc, peer, 2);
                    ep.reap(1);
                }
            }
            p.latency_us = (o.now_us() - start) / o.iterations / 2;
            // Bandwidth: windows of messages one way, each answered by a 1-byte acknowledgement.
            start = o.now_us();
            for (unsigned w = 0; w < o.windows; ++w) {
                if (o.initiator) {
                    ep.recv(rx.data(), 1, rx_desc, peer, 4);
                    fill(tx, size, w);
                    for (unsigned m = 0; m < o.window; ++m) ep.send(tx.data(), size, tx_desc, peer, 3);
                    ep.reap(o.window + 1);
                } else {
                    for (unsigned m = 0; m < o.window; ++m) ep.recv(rx.data() + m * size, size, rx_desc, peer, 3);
                    const std::size_t got = ep.reap(o.window);
                    for (unsigned m = 0; m < o.window; ++m) {
                        ++p.messages;
                        std::vector<std::uint8_t> one(rx.begin() + m * size, rx.begin() + (m + 1) * size);
                        p.exact += holds(one, size, w);
                    }
                    if (got != std::size_t{o.window} * size) p.exact = 0;
                    ep.send(tx.data(), 1, tx_desc, peer, 4);
                    ep.reap(1);
                }
            }
            const double us = o.now_us() - start;
            p.gbit_per_s = us > 0 ? double(size) * o.window * o.windows * 8 / (us * 1e3) : 0;
            r.points.push_back(p);
        }
        if (x.barrier) x.barrier();
    } catch (const std::exception& e) {
        r.error = e.what();
    }
    return r;
}

}  // namespace trn3::apps::fabric_perf
