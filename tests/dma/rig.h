// The DMA engine's test rig (tests/dma): the engine's host socket reaches 16
// MiB of host memory at bus address 0x80000000, its device socket two 64 MiB
// memories at the device addresses of HBM stacks 0 and 1 and fabric chip 0's
// window (which takes every write and records its channel); anything else
// is an address error. A tap on each socket logs every access in order.
#pragma once

#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "../common/pattern.h"
#include "../common/test_initiator.h"
#include "trn3/core/payload.h"
#include "trn3/core/router.h"
#include "trn3/core/sparse_memory.h"
#include "trn3/dma/dma_engine.h"
#include "trn3/dma/fabric_write.h"
#include "trn3/spec/device.h"

namespace trn3::test::dma_rig {

using sc_core::SC_NS;
using sc_core::sc_time;

constexpr std::uint64_t host_base = 0x80000000ull, host_size = 16ull << 20;
constexpr std::uint64_t dev0 = TRN3_DEV_HBM_BASE(0), dev1 = TRN3_DEV_HBM_BASE(1), dev_size = 64ull << 20;
constexpr std::uint64_t host_hole = 0x40000000ull;  // no host memory there
constexpr std::uint64_t dev_hole = TRN3_DEV_HBM_BASE(3);  // no device memory there

struct access_record {
    char side;  // 'h' host socket, 'd' device socket
    char cmd;  // 'R' or 'W'
    std::uint64_t address;
    unsigned length;
    bool operator==(const access_record& o) const {
        return side == o.side && cmd == o.cmd && address == o.address && length == o.length;
    }
};

std::ostream& operator<<(std::ostream& os, const access_record& r) {
    return os << r.side << ' ' << r.cmd << " 0x" << std::hex << r.address << std::dec << ' ' << r.length;
}

// Logs each access that passes through it.
struct tap : sc_core::sc_module {
    tlm_utils::simple_target_socket<tap> in{"in"};
    tlm_utils::simple_initiator_socket<tap> out{"out"};
    std::vector<access_record>& log;
    char side;
    tap(const sc_core::sc_module_name& n, char s, std::vector<access_record>& l)
        : sc_core::sc_module(n), log(l), side(s) {
        in.register_b_transport(this, &tap::transport);
    }
    void transport(tlm::tlm_generic_payload& tx, sc_time& delay) {
        log.push_back({side, tx.is_write() ? 'W' : 'R', tx.get_address(), tx.get_data_length()});
        out->b_transport(tx, delay);
    }
};

// Fabric chip 0's window: takes every write, records its channel, traffic
// class, whether it reduces and whether with an operand (the chip carries
// them in its TLPs).
struct fabric_sink : sc_core::sc_module {
    struct write {
        std::uint64_t offset;
        unsigned length, channel;
        bool reduce, timing_only;
        unsigned traffic_class;
        bool operand;
    };
    tlm_utils::simple_target_socket<fabric_sink> in{"in"};
    std::vector<write> writes;
    explicit fabric_sink(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {
        in.register_b_transport(this, &fabric_sink::transport);
    }
    void transport(tlm::tlm_generic_payload& tx, sc_time&) {
        const auto* tag = tx.get_extension<dma::fabric_write>();
        if (tx.is_write() && tag)
            writes.push_back({tx.get_address(), tx.get_data_length(), tag->channel, tag->reduce,
                              tx.get_extension<timing_only>() != nullptr, tag->traffic_class, tag->operand});
        tx.set_response_status(tx.is_write() ? tlm::TLM_OK_RESPONSE : tlm::TLM_ADDRESS_ERROR_RESPONSE);
    }
};

inline trn3_dma_descriptor desc(std::uint64_t src, std::uint64_t dst, std::uint32_t length, std::uint32_t flags,
                                std::uint64_t user) {
    return {src, dst, length, flags, user};
}

// A queue as software sees it: where its ring and records are, and its tail.
struct ring {
    unsigned q;
    std::uint32_t size;
    bool on_device;
    std::uint64_t base, records;
    std::uint32_t tail = 0;
};

struct rig {
    std::vector<access_record> log;
    dma::dma_engine dma{"dma"};
    tap host_tap{"host_tap", 'h', log}, device_tap{"device_tap", 'd', log};
    router host_bus{"host_bus"}, device_bus{"device_bus"};
    sparse_memory host_mem{"host_mem", byte_count{host_size}};
    sparse_memory hbm0{"hbm0", byte_count{dev_size}}, hbm1{"hbm1", byte_count{dev_size}};
    fabric_sink fabric{"fabric"};
    test::initiator cpu{"cpu"};
    std::vector<unsigned> vectors;  // MSI-X vectors raised, in order
    std::vector<sc_time> vector_times;
    std::vector<unsigned> stopped;  // queues reported stopped

    rig() {
        dma.host.bind(host_tap.in);
        host_tap.out.bind(host_bus.in);
        dma.device.bind(device_tap.in);
        device_tap.out.bind(device_bus.in);
        host_bus.map(host_mem.in, host_base, host_size, "host_mem");
        device_bus.map(hbm0.in, dev0, dev_size, "hbm0");
        device_bus.map(hbm1.in, dev1, dev_size, "hbm1");
        device_bus.map(fabric.in, TRN3_FABRIC_ADDR(0, 0), 1ull << TRN3_FABRIC_SHIFT, "fabric0");
        cpu.out.bind(dma.in);
        dma.raise_msix = [this](unsigned v) {
            vectors.push_back(v);
            vector_times.push_back(sc_core::sc_time_stamp());
        };
        dma.queue_error = [this](unsigned q) { stopped.push_back(q); };
        sc_core::sc_start(sc_core::SC_ZERO_TIME);  // elaborate; the engine waits for a doorbell
    }

    // Host pointers to memory at a host bus address or a device address.
    unsigned char* host(std::uint64_t a) {
        REQUIRE((a >= host_base && a < host_base + host_size));
        return host_mem.data() + (a - host_base);
    }
    unsigned char* dev(std::uint64_t a) {
        REQUIRE(((a >= dev0 && a < dev0 + dev_size) || (a >= dev1 && a < dev1 + dev_size)));
        return a >= dev1 ? hbm1.data() + (a - dev1) : hbm0.data() + (a - dev0);
    }

    std::uint64_t reg(unsigned q, unsigned off, unsigned bytes = 4) {
        std::uint64_t v = 0;
        REQUIRE(cpu.access(tlm::TLM_READ_COMMAND, TRN3_BAR0_DMA(q) - TRN3_BAR0_DMA(0) + off, &v, bytes) ==
                tlm::TLM_OK_RESPONSE);
        return v;
    }
    void set(unsigned q, unsigned off, std::uint64_t v, unsigned bytes = 4) {
        REQUIRE(cpu.access(tlm::TLM_WRITE_COMMAND, TRN3_BAR0_DMA(q) - TRN3_BAR0_DMA(0) + off, &v, bytes) ==
                tlm::TLM_OK_RESPONSE);
    }
    // A debug write: deposits the value whatever the register's policy.
    void deposit(unsigned q, unsigned off, std::uint32_t v) {
        tlm::tlm_generic_payload tx;
        set_access(tx, tlm::TLM_WRITE_COMMAND, TRN3_BAR0_DMA(q) - TRN3_BAR0_DMA(0) + off, &v, 4);
        REQUIRE(cpu.out->transport_dbg(tx) == 4);
    }
    std::uint32_t status(unsigned q) { return static_cast<std::uint32_t>(reg(q, TRN3_DMA_STATUS)); }
    std::uint32_t head(unsigned q) { return static_cast<std::uint32_t>(reg(q, TRN3_DMA_HEAD)); }

    // Programs queue q: a ring of `size` entries and its records, in host
    // memory (or device memory), enabled.
    ring open(unsigned q, std::uint32_t size, bool on_device = false) {
        ring r{q, size, on_device, 0, 0};
        r.base = (on_device ? dev1 : host_base) + 0x10000ull * q;
        r.records = r.base + 0x8000;
        set(q, TRN3_DMA_RING_BASE, r.base, 8);
        set(q, TRN3_DMA_RING_SIZE, size);
        set(q, TRN3_DMA_CPL_BASE, r.records, 8);
        set(q, TRN3_DMA_CONTROL,
            on_device ? TRN3_DMA_CONTROL_ENABLE | TRN3_DMA_CONTROL_DEVICE_RING : TRN3_DMA_CONTROL_ENABLE);
        return r;
    }
    unsigned char* in_ring_memory(const ring& r, std::uint64_t a) { return r.on_device ? dev(a) : host(a); }
    // Writes a descriptor at the tail's entry and advances the tail (no doorbell).
    void post(ring& r, const trn3_dma_descriptor& d) {
        std::memcpy(in_ring_memory(r, r.base + sizeof d * (r.tail % r.size)), &d, sizeof d);
        ++r.tail;
    }
    void doorbell(const ring& r) { set(r.q, TRN3_DMA_TAIL, r.tail); }
    void submit(ring& r, const trn3_dma_descriptor& d) {
        post(r, d);
        doorbell(r);
    }
    trn3_dma_completion record(const ring& r, std::uint32_t entry) {
        trn3_dma_completion c{};
        std::memcpy(&c, in_ring_memory(r, r.records + sizeof c * entry), sizeof c);
        return c;
    }
};

// STATUS of a queue stopped on `cause`.
constexpr std::uint32_t stopped_with(std::uint32_t cause) { return TRN3_DMA_STATUS_VALUE(TRN3_DMA_STATE_ERROR, cause); }

inline bool all_zero(const unsigned char* p, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
        if (p[i] != 0) return false;
    return true;
}

inline void check_record(const trn3_dma_completion& c, std::uint32_t status, std::uint32_t length, std::uint64_t user) {
    CHECK(c.status == status);
    CHECK(c.length == length);
    CHECK(c.user == user);
}

}  // namespace trn3::test::dma_rig
