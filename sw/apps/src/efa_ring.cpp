#include "efa_ring.h"

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "trn3/apps/rdm_endpoint.h"
#include "trn3/collectives/plan.h"
#include "trn3/fabric/fi_trn3.h"
#include "trn3/spec/device.h"

namespace trn3::apps {
namespace {

// Remote completion data: the call (mod 256), the step, the chip.
std::uint32_t tag_of(unsigned call, unsigned step, unsigned chip) {
    return (call & 0xFFu) << 24 | (step & 0xFFu) << 16 | (chip & 0xFFFFu);
}

void put_u64(std::vector<std::uint8_t>& v, std::uint64_t x) {
    for (unsigned b = 0; b < 8; ++b) v.push_back(static_cast<std::uint8_t>(x >> (8 * b)));
}
std::uint64_t get_u64(const std::vector<std::uint8_t>& v, std::size_t at) {
    std::uint64_t x = 0;
    for (unsigned b = 0; b < 8; ++b) x |= std::uint64_t(v.at(at + b)) << (8 * b);
    return x;
}

// A device-memory descriptor moves at most this much (its length is 32 bits).
constexpr std::uint64_t descriptor_max_bytes = 1ull << 30;

}  // namespace

struct efa_ring::state {
    // One NIC: its endpoint and the successor's endpoint on the same NIC.
    struct port {
        std::unique_ptr<rdm_endpoint> rdm;
        fi_addr_t successor = FI_ADDR_UNSPEC;
        std::uint64_t writes_pending = 0;
    };
    // One chip: its NIC, its regions' descriptors ([buffer b], then
    // scratch) and the successor's keys for the same regions.
    struct chip_regions {
        unsigned port = 0;
        std::vector<void*> local;
        std::vector<std::uint64_t> remote_keys;
    };
    driver::host_ops& host;
    std::vector<driver::trn3_device*> chips;
    settings set;
    std::vector<port> ports;
    std::vector<chip_regions> regions;
    unsigned calls = 0;
    std::multiset<std::uint32_t> arrived;  // remote completion data not yet consumed

    state(driver::host_ops& h, std::vector<driver::trn3_device*> c, const settings& s)
        : host(h), chips(std::move(c)), set(s) {}

    // An endpoint on each NIC a chip uses, in NIC order: port k is the k-th
    // of them (its peers' k-th too: their chips are alike, or one each).
    void open(const exchange& x) {
        regions.assign(chips.size(), {});
        const auto nic_of = [&](std::size_t c) { return set.nic_of_chip.empty() ? 0u : set.nic_of_chip.at(c); };
        std::set<unsigned> used;
        for (std::size_t c = 0; c < chips.size(); ++c) used.insert(nic_of(c));
        const std::vector<unsigned> nic_of_port(used.begin(), used.end());
        for (std::size_t c = 0; c < chips.size(); ++c)
            regions[c].port = static_cast<unsigned>(std::find(nic_of_port.begin(), nic_of_port.end(), nic_of(c)) -
                                                    nic_of_port.begin());
        const unsigned nics = static_cast<unsigned>(nic_of_port.size());
        ports.resize(nics);
        std::vector<std::uint64_t> areas = set.buffers;
        areas.push_back(set.scratch);
        for (unsigned k = 0; k < nics; ++k) {
            rdm_endpoint::wanted w;
            w.caps = FI_RMA | FI_HMEM;
            w.mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_HMEM;
            w.cq_format = FI_CQ_FORMAT_DATA;
            w.domain = nic_of_port[k];
            ports[k].rdm = std::make_unique<rdm_endpoint>(w);
            // Its address, then every key of the chips it carries, in chip order.
            std::vector<std::uint8_t> mine = ports[k].rdm->name();
            const std::size_t address_bytes = mine.size();
            for (std::size_t c = 0; c < chips.size(); ++c) {
                if (regions[c].port != k) continue;
                for (std::uint64_t at : areas) {
                    fid_mr* mr = ports[k].rdm->reg(
                        reinterpret_cast<void*>(static_cast<std::uintptr_t>(at)), set.buffer_bytes,
                        FI_WRITE | FI_READ | FI_REMOTE_WRITE | FI_REMOTE_READ, FI_HMEM_NEURON,
                        set.neuron_device_of_chip.empty() ? static_cast<int>(c) : set.neuron_device_of_chip.at(c));
                    regions[c].local.push_back(fi_mr_desc(mr));
                    put_u64(mine, fi_mr_key(mr));
                }
            }
            x.publish(key(set.rank, k), mine);
            const unsigned next = (set.rank + 1) % set.size;
            const std::vector<std::uint8_t> theirs = x.fetch(key(next, k));
            if (theirs.size() != mine.size())
                throw std::runtime_error(fmt::format(
                    "EFA ring {}: no address from member {}'s port {} (or a different layout)", set.name, next, k));
            ports[k].successor = ports[k].rdm->insert(
                std::vector<std::uint8_t>(theirs.begin(), theirs.begin() + static_cast<std::ptrdiff_t>(address_bytes)));
            std::size_t at = address_bytes;
            for (std::size_t c = 0; c < chips.size(); ++c) {
                if (regions[c].port != k) continue;
                for (std::size_t a = 0; a < areas.size(); ++a, at += 8)
                    regions[c].remote_keys.push_back(get_u64(theirs, at));
            }
        }
    }

    std::string key(unsigned rank, unsigned nic) const { return fmt::format("{}/{}/{}", set.name, rank, nic); }

    // Reads what completed on every NIC: writes done, data arrived.
    void poll() {
        for (port& p : ports) {
            fi_cq_data_entry e[16];
            fid_cq* cq = p.rdm->cq();
            const ssize_t got = fi_cq_read(cq, e, 16);
            if (got == -FI_EAGAIN) continue;
            if (got == -FI_EAVAIL) {
                fi_cq_err_entry err{};
                const ssize_t read = fi_cq_readerr(cq, &err, 0);
                fabric_check("fi_cq_readerr", read);
                throw std::runtime_error(fmt::format("EFA ring: an operation failed: {} ({})", fi_strerror(err.err),
                                                     fi_cq_strerror(cq, err.prov_errno, err.err_data, nullptr, 0)));
            }
            fabric_check("fi_cq_read", got);
            for (ssize_t i = 0; i < got; ++i) {
                if (e[i].flags & FI_REMOTE_CQ_DATA) arrived.insert(static_cast<std::uint32_t>(e[i].data));
                else if (e[i].flags & FI_WRITE) --p.writes_pending;
            }
        }
    }
    bool writes_done() const {
        for (const port& p : ports)
            if (p.writes_pending) return false;
        return true;
    }
    void wait(const std::function<bool()>& done, const char* what) {
        const std::uint64_t deadline = host.now_ns() + set.timeout_ns;
        while (!done()) {
            if (host.now_ns() > deadline) throw std::runtime_error(fmt::format("EFA ring: {} timed out", what));
            if (set.abandon && set.abandon()) throw std::runtime_error(fmt::format("EFA ring: {} abandoned", what));
            poll();
        }
    }

    // Which registered buffer holds [at, at + bytes).
    std::size_t buffer_of(std::uint64_t at, std::uint64_t bytes) const {
        for (std::size_t b = 0; b < set.buffers.size(); ++b)
            if (at >= set.buffers[b] && bytes <= set.buffer_bytes && at - set.buffers[b] <= set.buffer_bytes - bytes)
                return b;
        throw std::runtime_error(fmt::format("EFA ring: {:#x} + {} B is outside the registered buffers", at, bytes));
    }

    // `bytes` from device address `from` of chip `chip` (in its local region
    // `from_area`) to the successor's region `to_area` of the same chip, at
    // `to_offset` (remote addresses are offsets into the region).
    // Timing only (a timed-only row): the write takes its time and moves nothing (FI_TRN3_TIMING_ONLY).
    void write(std::size_t chip, std::size_t from_area, std::uint64_t from, std::uint64_t to_offset,
               std::size_t to_area, std::uint64_t bytes, std::uint32_t data, bool timing) {
        void* buf = reinterpret_cast<void*>(static_cast<std::uintptr_t>(from));
        const chip_regions& r = regions[chip];
        port& p = ports[r.port];
        iovec iov{buf, bytes};
        void* desc = r.local[from_area];
        fi_rma_iov remote{to_offset, bytes, r.remote_keys[to_area]};
        fi_msg_rma msg{};
        msg.msg_iov = &iov;
        msg.desc = &desc;
        msg.iov_count = 1;
        msg.addr = p.successor;
        msg.rma_iov = &remote;
        msg.rma_iov_count = 1;
        msg.data = data;
        const std::uint64_t flags = FI_REMOTE_CQ_DATA | FI_COMPLETION | (timing ? FI_TRN3_TIMING_ONLY : 0);
        for (;;) {
            const ssize_t rc = fi_writemsg(p.rdm->ep(), &msg, flags);
            if (rc != -FI_EAGAIN) {
                fabric_check("fi_writemsg", rc);
                break;
            }
            poll();
        }
        ++p.writes_pending;
    }
};

efa_ring::efa_ring(driver::host_ops& host, std::vector<driver::trn3_device*> chips, const settings& s,
                   const exchange& x)
    : s_(std::make_unique<state>(host, std::move(chips), s)) {
    if (s.size < 2 || s.rank >= s.size || s.size > 64) throw std::runtime_error("EFA ring: 2 to 64 UltraServers");
    if (s_->chips.size() > 0xFFFF) throw std::runtime_error("EFA ring: too many chips on a host");
    if (s.slice_bytes == 0 || s.slice_bytes > descriptor_max_bytes)
        throw std::runtime_error("EFA ring: a slice of 1 B to 1 GiB");
    s_->open(x);
}

efa_ring::~efa_ring() = default;

efa_ring::exchange efa_ring::through(out_of_band& store, driver::host_ops& host, std::uint64_t timeout_ns,
                                     std::uint64_t poll_ns) {
    exchange x;
    x.publish = [&store](const std::string& key, const std::vector<std::uint8_t>& v) { store.put(key, v); };
    x.fetch = [&store, &host, timeout_ns, poll_ns](const std::string& key) {
        host.wait_until([&] { return store.has(key); }, timeout_ns, poll_ns);
        const std::vector<std::uint8_t>* v = store.find(key);
        return v ? *v : std::vector<std::uint8_t>{};
    };
    return x;
}

void efa_ring::all_reduce(const std::vector<part>& parts, unsigned element_bytes, std::uint32_t reduce_flags) {
    state& s = *s_;
    if (parts.size() != s.chips.size()) throw std::runtime_error("EFA ring: a part per chip");
    const unsigned m = s.set.rank, size = s.set.size, call = s.calls++;
    const std::size_t scratch_area = s.set.buffers.size();
    std::vector<std::size_t> area(parts.size());
    for (std::size_t c = 0; c < parts.size(); ++c) {
        if (parts[c].bytes % element_bytes) throw std::runtime_error("EFA ring: a part of whole elements");
        area[c] = s.buffer_of(parts[c].at, parts[c].bytes);
    }
    // Piece j of chip c's part: its byte offset in the part and its length.
    const auto piece = [&](std::size_t c, unsigned j) {
        const collectives::chunk k = collectives::chunk_of(parts[c].bytes / element_bytes, size, j % size);
        return collectives::chunk{k.first * element_bytes, k.count * element_bytes};
    };
    const auto offset_in_area = [&](std::size_t c) { return parts[c].at - s.set.buffers[area[c]]; };

    for (unsigned step = 0; step < 2 * (size - 1); ++step) {
        const bool reducing = step < size - 1;
        const unsigned s_in_phase = reducing ? step : step - (size - 1);
        // What this UltraServer sends, and what its predecessor sends it.
        const unsigned out = reducing ? (m + size - s_in_phase) % size : (m + 1 + size - s_in_phase) % size;
        const unsigned in = (out + size - 1) % size;
        for (std::size_t c = 0; c < parts.size(); ++c) {
            const collectives::chunk p = piece(c, out);
            // Reducing: into the successor's scratch; gathering: into its buffer; a slice at a time.
            for (std::uint64_t done = 0; done < p.count; done += s.set.slice_bytes) {
                const std::uint64_t n = std::min(s.set.slice_bytes, p.count - done);
                s.write(c, area[c], parts[c].at + p.first + done, offset_in_area(c) + p.first + done,
                        reducing ? scratch_area : area[c], n, tag_of(call, step, unsigned(c)),
                        (reduce_flags & TRN3_DESC_TIMING_ONLY) != 0);
            }
        }
        // Every slice of the predecessor's piece landed (SRD delivers in any order).
        const auto slices = [&](std::uint64_t bytes) { return (bytes + s.set.slice_bytes - 1) / s.set.slice_bytes; };
        s.wait(
            [&] {
                if (!s.writes_done()) return false;
                for (std::size_t c = 0; c < parts.size(); ++c)
                    if (s.arrived.count(tag_of(call, step, unsigned(c))) < slices(piece(c, in).count)) return false;
                return true;
            },
            reducing ? "a reduce-scatter step" : "an all-gather step");
        for (std::size_t c = 0; c < parts.size(); ++c) s.arrived.erase(tag_of(call, step, unsigned(c)));
        if (!reducing) continue;
        // The predecessor's piece, reduced into this chip's own by its DMA engine.
        for (std::size_t c = 0; c < parts.size(); ++c) {
            const collectives::chunk p = piece(c, in);
            std::vector<trn3_dma_descriptor> reduce;
            for (std::uint64_t done = 0; done < p.count; done += descriptor_max_bytes) {
                const std::uint64_t n = std::min(descriptor_max_bytes, p.count - done);
                reduce.push_back({s.set.scratch + offset_in_area(c) + p.first + done, parts[c].at + p.first + done,
                                  static_cast<std::uint32_t>(n), reduce_flags, 0});
            }
            if (reduce.empty()) continue;
            if (s.chips[c]->load_device_queue(s.set.queue, s.set.ring, reduce) != driver::status::ok ||
                s.chips[c]->start_device_queue(s.set.queue) != driver::status::ok)
                throw std::runtime_error("EFA ring: a chip refused its local reduction");
        }
        for (std::size_t c = 0; c < parts.size(); ++c) {
            if (piece(c, in).count == 0) continue;
            const driver::status st = s.chips[c]->queue_finished(s.set.queue, s.set.timeout_ns, s.set.poll_ns);
            if (st != driver::status::ok)
                throw std::runtime_error(fmt::format("EFA ring: a local reduction: {}", driver::status_name(st)));
        }
    }
}

}  // namespace trn3::apps
