#include "trn3/apps/fabric_perf.h"

#include "trn3/apps/rdm_endpoint.h"

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

// The endpoint with what the program counts: completions and received bytes.
class perf_endpoint {
public:
    perf_endpoint(const std::string& provider, std::function<double()> now_us)
        : now_us_(std::move(now_us)), rdm_([&] {
              rdm_endpoint::wanted w;
              w.provider = provider;
              return w;
          }()) {}

    std::vector<std::uint8_t> name() { return rdm_.name(); }
    fi_addr_t insert(const std::vector<std::uint8_t>& address) { return rdm_.insert(address); }
    void* reg(void* buf, std::size_t bytes) { return fi_mr_desc(rdm_.reg(buf, bytes, FI_SEND | FI_RECV)); }
    void send(const void* buf, std::size_t n, void* desc, fi_addr_t to, std::uint64_t tag) {
        for (;;) {
            const ssize_t rc = fi_tsend(rdm_.ep(), buf, n, desc, to, tag, nullptr);
            if (rc != -FI_EAGAIN) return fabric_check("fi_tsend", rc);
            poll();  // what completes meanwhile counts towards the next reap
        }
    }
    void recv(void* buf, std::size_t n, void* desc, fi_addr_t from, std::uint64_t tag) {
        fabric_check("fi_trecv", fi_trecv(rdm_.ep(), buf, n, desc, from, tag, 0, nullptr));
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

private:
    void poll() {
        fi_cq_tagged_entry e[16];
        fid_cq* cq = rdm_.cq();
        const ssize_t n = fi_cq_read(cq, e, 16);
        if (n == -FI_EAGAIN) return;
        if (n == -FI_EAVAIL) {
            fi_cq_err_entry err{};
            fi_cq_readerr(cq, &err, 0);
            throw std::runtime_error(std::string("completion error: ") + fi_strerror(err.err) + " (" +
                                     fi_cq_strerror(cq, err.prov_errno, err.err_data, nullptr, 0) + ")");
        }
        fabric_check("fi_cq_read", n);
        for (ssize_t i = 0; i < n; ++i)
            if (e[i].flags & FI_RECV) received_bytes_ += e[i].len;
        completed_ += static_cast<unsigned>(n);
    }
    std::function<double()> now_us_;
    rdm_endpoint rdm_;
    unsigned completed_ = 0;
    std::size_t received_bytes_ = 0;
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
        perf_endpoint ep(o.provider, o.now_us);
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
