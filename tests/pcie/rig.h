// Test rigs for the PCIe models: endpoints with memory behind their BARs and
// a thread that drives their DMA, joined by links and switches.
#pragma once

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "../common/pattern.h"
#include "trn3/core/message_link.h"
#include "trn3/core/payload.h"
#include "trn3/core/sparse_memory.h"
#include "trn3/pcie/endpoint.h"
#include "trn3/pcie/link.h"
#include "trn3/pcie/pcie_switch.h"
#include "trn3/spec/pci.h"

namespace rig {

using namespace trn3;
using namespace trn3::pcie;

// A device register file with an uncorrectable error: every read fails
// (TLM_GENERIC_ERROR_RESPONSE), so the endpoint answers with poisoned data.
struct broken_target : sc_core::sc_module {
    tlm_utils::simple_target_socket_optional<broken_target> in{"in"};
    explicit broken_target(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {
        in.register_b_transport(this, &broken_target::transport);
    }
    void transport(tlm::tlm_generic_payload& tx, sc_core::sc_time&) {
        tx.set_response_status(tx.is_read() ? tlm::TLM_GENERIC_ERROR_RESPONSE : tlm::TLM_OK_RESPONSE);
    }
};

// Reads and writes a register block (a link's) from a test thread.
struct reg_port : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<reg_port> out{"out"};
    explicit reg_port(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {}
    std::uint32_t read(std::uint64_t a) {
        std::uint32_t v = 0;
        io(tlm::TLM_READ_COMMAND, a, v);
        return v;
    }
    void write(std::uint64_t a, std::uint32_t v) { io(tlm::TLM_WRITE_COMMAND, a, v); }
    void io(tlm::tlm_command cmd, std::uint64_t a, std::uint32_t& v) {
        tlm::tlm_generic_payload tx;
        sc_core::sc_time delay;
        tx.set_command(cmd);
        tx.set_address(a);
        tx.set_data_ptr(reinterpret_cast<unsigned char*>(&v));
        tx.set_data_length(4);
        tx.set_streaming_width(4);
        tx.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        out->b_transport(tx, delay);
    }
};

// An endpoint with 1 MiB of registers (BAR0) and 1 GiB of memory (BAR2)
// behind it, and a DMA engine run by a test thread.
struct device : sc_core::sc_module {
    pcie::endpoint ep;
    std::unique_ptr<sparse_memory> regs;
    sparse_memory mem{"mem", byte_count{1ull << 30}};
    tlm_utils::simple_initiator_socket<device> dma{"dma"};
    broken_target broken{"broken"};
    std::function<void(device&)> job;
    bool finished = false;

    // broken_regs: BAR0's reads fail (an uncorrectable error behind the BAR).
    explicit device(const sc_core::sc_module_name& n, bool broken_regs = false) : sc_core::sc_module(n), ep("ep") {
        if (broken_regs) {
            ep.bar0.bind(broken.in);
        } else {
            regs = std::make_unique<sparse_memory>("regs", byte_count{1 << 20});
            ep.bar0.bind(regs->in);
        }
        ep.bar2.bind(mem.in);
        dma.bind(ep.dma);
        SC_HAS_PROCESS(device);
        SC_THREAD(run);
    }
    void run() {
        if (job) job(*this);
        finished = true;
    }
    // timing: the access carries trn3::timing_only (its TLPs go without data).
    tlm::tlm_response_status access(tlm::tlm_command cmd, std::uint64_t address, std::uint8_t* data, std::uint64_t n,
                                    bool timing = false) {
        tlm::tlm_generic_payload tx;
        sc_core::sc_time delay;
        set_access(tx, cmd, address, data, static_cast<unsigned>(n));
        trn3::timing_only marker;
        if (timing) tx.set_extension(&marker);
        dma->b_transport(tx, delay);
        if (timing) tx.clear_extension(&marker);
        wait(delay);
        return tx.get_response_status();
    }
    // Places the BARs (as enumeration would) and enables memory and mastering.
    void assign(std::uint64_t bar0, std::uint64_t bar2, std::uint64_t bar4, std::uint16_t bdf) {
        ep.set_bdf(bdf);
        config_space& c = ep.config();
        c.write(TRN3_PCI_BAR(0), 4, static_cast<std::uint32_t>(bar0));
        c.write(TRN3_PCI_BAR(1), 4, static_cast<std::uint32_t>(bar0 >> 32));
        c.write(TRN3_PCI_BAR(2), 4, static_cast<std::uint32_t>(bar2));
        c.write(TRN3_PCI_BAR(3), 4, static_cast<std::uint32_t>(bar2 >> 32));
        c.write(TRN3_PCI_BAR(4), 4, static_cast<std::uint32_t>(bar4));
        c.write(TRN3_PCI_BAR(5), 4, static_cast<std::uint32_t>(bar4 >> 32));
        c.write(TRN3_PCI_COMMAND, 2, TRN3_PCI_COMMAND_MEMORY | TRN3_PCI_COMMAND_BUS_MASTER);
    }
};

// Programs a fabric switch port's prefetchable window and bus range (what
// the platform does for switches without an upstream port).
inline void route(pcie_switch& sw, unsigned port, std::uint64_t base, std::uint64_t size, unsigned bus) {
    config_space& c = sw.port_config(port);
    const std::uint64_t limit = base + size - 1;
    c.write(TRN3_PCI_PREF_MEMORY_BASE, 2, TRN3_PCI_WINDOW_FIELD(base));
    c.write(TRN3_PCI_PREF_MEMORY_LIMIT, 2, TRN3_PCI_WINDOW_FIELD(limit));
    c.write(TRN3_PCI_PREF_BASE_UPPER, 4, static_cast<std::uint32_t>(base >> 32));
    c.write(TRN3_PCI_PREF_LIMIT_UPPER, 4, static_cast<std::uint32_t>(limit >> 32));
    c.write(TRN3_PCI_PRIMARY_BUS, 4, (bus << 8) | (bus << 16));
}

using test::pattern;

}  // namespace rig
