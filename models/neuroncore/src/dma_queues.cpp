#include "dma_queues.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "device_port.h"
#include "sbuf_psum.h"
#include "semaphores.h"

namespace trn3::neuroncore {

using sc_core::sc_time;
using namespace isa;

dma_queues::dma_queues(const neuroncore& core, sbuf_psum& memory, device_port& port, semaphore_bank& semaphores)
    : core_(core), memory_(memory), port_(port), semaphores_(semaphores), queue_free_(core.dma_queues, 0),
      dma_bytes_(&core, "dma_bytes", "bytes moved by DMA") {}

void dma_queues::issue(const engine_state& es, const instruction& ins) {
    const unsigned q = ins.flags >> flag_dma_queue_shift;
    if (q >= queue_free_.size()) throw fault{err_illegal, fmt::format("DMA queue {} of {}", q, queue_free_.size())};
    const tile dst = memory_.check_tile(es.regs, ins.dst, false);
    const tile src = memory_.check_tile(es.regs, ins.src0, false);
    const unsigned parts = ins.dst.partitions;
    const std::uint64_t n = free_elements(ins.dst);
    if (ins.src0.partitions != parts || free_elements(ins.src0) != n)
        throw fault{err_shape, "DMA source and destination shapes differ"};
    const std::vector<std::int64_t> so = sbuf_psum::offsets(ins.src0), dof = sbuf_psum::offsets(ins.dst);
    auto read_hbm = [&](const tile& t, unsigned p, std::uint64_t i, float& v) {
        const std::uint64_t addr = t.address + static_cast<std::uint64_t>(p) * t.ap->partition_stride +
                                   static_cast<std::uint64_t>(so[i]) * t.bytes;
        std::uint32_t code = 0;
        if (!port_.access(tlm::TLM_READ_COMMAND, addr, reinterpret_cast<unsigned char*>(&code), t.bytes))
            throw fault{err_memory, fmt::format("DMA read at 0x{:x} failed", addr)};
        v = t.type == dtype::int32 ? static_cast<float>(static_cast<std::int32_t>(code))
                                   : numerics::decode(code, format_of(t.type));
        return code;
    };
    const bool same_type = src.type == dst.type;
    auto unit_stride = [](const access_pattern& ap) { return ap.dims == 1 && ap.step[0] == 1; };
    if (core_.timing_only.get()) {
        // No data moves (so device memory is not reached, and an address
        // nothing answers goes unnoticed); the transfer is timed below.
    } else if (same_type && unit_stride(ins.src0) && unit_stride(ins.dst) &&
               (src.space == space::hbm) != (dst.space == space::hbm)) {
        // Fast path: one memory access per partition row between device
        // memory and SBUF/PSUM (the common DMA); same bytes as the loop below.
        const unsigned row = static_cast<unsigned>(n) * src.bytes;
        for (unsigned p = 0; p < parts; ++p) {
            if (src.space == space::hbm) {
                const std::uint64_t addr = src.address + static_cast<std::uint64_t>(p) * ins.src0.partition_stride;
                if (!port_.access(tlm::TLM_READ_COMMAND, addr, memory_.element(dst, p, 0), row))
                    throw fault{err_memory, fmt::format("DMA read at 0x{:x} failed", addr)};
            } else {
                const std::uint64_t addr = dst.address + static_cast<std::uint64_t>(p) * ins.dst.partition_stride;
                if (!port_.access(tlm::TLM_WRITE_COMMAND, addr, memory_.element(src, p, 0), row))
                    throw fault{err_memory, fmt::format("DMA write at 0x{:x} failed", addr)};
            }
        }
    } else
        for (unsigned p = 0; p < parts; ++p) {
            for (std::uint64_t i = 0; i < n; ++i) {
                std::uint32_t code = 0;
                float v = 0;
                if (src.space == space::hbm) code = read_hbm(src, p, i, v);
                else {
                    std::memcpy(&code, memory_.element(src, p, so[i]), src.bytes);
                    v = src.type == dtype::int32 ? static_cast<float>(static_cast<std::int32_t>(code))
                                                 : numerics::decode(code, format_of(src.type));
                }
                if (dst.space == space::hbm) {
                    const std::uint64_t addr = dst.address + static_cast<std::uint64_t>(p) * ins.dst.partition_stride +
                                               static_cast<std::uint64_t>(dof[i]) * dst.bytes;
                    std::uint32_t out = code;
                    if (!same_type) out = numerics::encode(v, format_of(dst.type));
                    if (!port_.access(tlm::TLM_WRITE_COMMAND, addr, reinterpret_cast<unsigned char*>(&out), dst.bytes))
                        throw fault{err_memory, fmt::format("DMA write at 0x{:x} failed", addr)};
                } else if (same_type) {
                    std::memcpy(memory_.element(dst, p, dof[i]), &code, dst.bytes);
                } else {
                    memory_.store(dst, p, dof[i], v, false);
                }
            }
        }
    const std::uint64_t bytes = static_cast<std::uint64_t>(parts) * n * std::max(src.bytes, dst.bytes);
    dma_bytes_ += bytes;
    // Timing: the queue takes its descriptors in order; the transfer books the
    // shared DMA bandwidth.
    const calendar::tick now = sc_core::sc_time_stamp().value();
    const calendar::tick ready = std::max(now, queue_free_[q]) + core_.dma_descriptor_cost.get().value();
    const calendar::tick start = bus_.book(ready, core_.dma_bandwidth.get().transfer_time(bytes).value());
    const calendar::tick end = start + core_.dma_bandwidth.get().transfer_time(bytes).value();
    queue_free_[q] = end;
    timeline::instance().slice(es.track, fmt::format("dma q{} {}", q, format_byte_count(byte_count{bytes})),
                               sc_time::from_value(ready), sc_time::from_value(end));
    if (ins.signal_sem != no_semaphore) semaphores_.signal(ins.signal_sem, ins.signal_add, sc_time::from_value(end));
}

}  // namespace trn3::neuroncore
