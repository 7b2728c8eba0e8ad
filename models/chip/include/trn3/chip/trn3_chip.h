// A Trainium3 chip: 8 NeuronCores, 4 HBM3E stacks, the DMA engine, the
// management controller and the PCIe endpoint, on the device address map
// of spec/device.h (docs/device.md).
//
//   PCIe link ══ ep (endpoint 1d0f:7364)
//                 bar0 ── regs: control (+0), mailbox (+0x10000), hbm s controller (+0x20000 + s x 0x1000),
//                               NeuronLink port p (+0x30000 + p x 0x100), nc c (+0x100000 + c x 0x10000), dma (+0x200000)
//   mcu0.chip ── regs (the same space, at the MCU's TRN3_MCU_CHIP_BASE): the firmware trains HBM and links
//                 bar2 ── noc: hbm s at s x 64 GiB; hbm_stripe at 256 GiB (the stacks striped);
//                              nc c's sbuf_port at 448 GiB + c x 32 MiB ── noc
//                 dma  <── to_host <── dma.host, control.host   (device requests into host memory)
//   nc0..nc7.mem ── noc          dma.device ── noc
//   mcu0: boot ROM, firmware; its mailbox's host side on regs; host_irq -> MSI-X 0
//   errors: NeuronCore stops, DMA queue stops, HBM uncorrectable errors -> control ERR_STATUS -> MSI-X 1;
//           HBM errors also -> MCU line 2, link events -> MCU line 3 (the firmware's error handler)
//   the HBM stacks need training (their firmware does it at boot); NeuronLink
//   links are the platform's (attach_neuronlink), trained by the firmware
//   kernels done -> notification ring -> MSI-X 2; DMA descriptors -> MSI-X 8 + (q mod 24)
//
// LNC=2 (control LNC) pairs cores 2i and 2i+1 as one logical core: the
// runtime launches both halves of a program together and waits for both.
#pragma once

#include <array>
#include <memory>

#include "trn3/chip/chip_control.h"
#include "trn3/core/router.h"
#include "trn3/core/timeline.h"
#include "trn3/dma/dma_engine.h"
#include "trn3/hbm/hbm_stack.h"
#include "trn3/hbm/stack_interleave.h"
#include "trn3/mcu/mcu.h"
#include "trn3/neuroncore/neuroncore.h"
#include "trn3/pcie/endpoint.h"
#include "trn3/pcie/link.h"
#include "trn3/pcie/requester.h"

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

namespace trn3::chip {

class trn3_chip : public component {
public:
    explicit trn3_chip(const sc_core::sc_module_name& name, const mcu::mcu::images& firmware);

    pcie::endpoint ep;
    mcu::mcu mcu0;
    dma::dma_engine dma0;
    std::array<std::unique_ptr<neuroncore::neuroncore>, TRN3_DEV_CORES> nc;
    std::array<std::unique_ptr<hbm::hbm_stack>, TRN3_DEV_HBM_STACKS> hbm;
    hbm::stack_interleave hbm_stripe;
    router noc;
    router regs;
    router to_host;
    std::unique_ptr<chip_control> control;

    // Host pointer to device memory at a device address (loaders, tests), or
    // nullptr outside the stacks.
    unsigned char* device_memory(std::uint64_t address, std::uint64_t bytes);
    // Wiring: NeuronLink port p is the link's `a` end; the link's registers
    // become port p's (for the firmware, and the host through BAR0) and its
    // interrupt reaches the MCU.
    void attach_neuronlink(unsigned port, pcie::link& l);
    // Port p is the `b` end of a chip-to-chip link whose registers belong to
    // the chip at the `a` end (its firmware trains the link).
    void attach_neuronlink_far_end(unsigned port, pcie::link& l);

    // Holds the fabric accesses this chip's initiators start (their threads
    // wait) while `on`: a fabric manager quiesces the sources before it moves
    // routes, so that no flow's new path overtakes its old one. Forwarding
    // for other chips goes on.
    void hold_fabric(bool on);

    // NeuronLink TLPs this chip forwarded for other chips (a typed handle for reports).
    const counter& fabric_forwarded() const { return fabric_forwarded_; }

    // NeuronLink data path (auto-forwarding): accesses to fabric addresses
    // (spec/device.h TRN3_FABRIC_ADDR) from the chip's initiators leave on the
    // port its route table picks for the destination (of its equal ports, by
    // source, destination and channel: TRN3_ROUTE_PICK), writes as posted TLPs of fabric_mps bytes,
    // reads as requests of fabric_read_request bytes whose completions come
    // back to the requester (its fabric id) by the same route tables; a TLP
    // for another chip is forwarded the same way; one for this chip lands in
    // (or reads from) its HBM. Reads wait (initiators' threads only). A
    // timing-only write (trn3::timing_only, the DMA's TRN3_DESC_TIMING_ONLY)
    // leaves as TLPs without data that land as timing-only accesses.
    param<sc_core::sc_time> forward_latency{this, "forward_latency", sc_core::sc_time(40, sc_core::SC_NS),
                                            "NeuronLink port to port inside the chip (auto-forwarding)"};
    param<std::uint64_t> fabric_mps{this, "fabric_mps", 256, "bytes per NeuronLink write TLP and completion",
                                    range<std::uint64_t>{64, 4096}};
    param<std::uint64_t> fabric_read_request{this, "fabric_read_request", 512,
                                             "bytes per NeuronLink read request (a power of two)",
                                             range<std::uint64_t>{64, 4096}};
    param<std::uint64_t> fabric_read_tags{this, "fabric_read_tags", 256, "NeuronLink reads a chip may have outstanding",
                                          range<std::uint64_t>{1, 4096}};
    param<sc_core::sc_time> fabric_read_timeout{this, "fabric_read_timeout", sc_core::sc_time(50, sc_core::SC_US),
                                                "completion timeout of a NeuronLink read"};

private:
    void attach_port(unsigned port, pcie::link_end& end);
    void fabric_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay);
    void fabric_receive(unsigned port, pcie::tlp& t);
    void fabric_read(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay, unsigned port);
    void deliver_local(pcie::tlp& t);
    void answer_read(pcie::tlp& t);
    // The port a TLP from chip `source` to chip `dest` on `channel` leaves on
    // (its route's equal ports, TRN3_ROUTE_PICK), or -1: no route, or no link there.
    int port_towards(unsigned source, unsigned dest, unsigned channel) const;
    // Towards chip `dest` (arrived on port `from`: flow control), or dropped without a route.
    void pass_on(unsigned dest, pcie::tlp& t, unsigned from);
    void drop();
    tlm_utils::simple_target_socket<trn3_chip> fabric_out{"fabric_out"};
    tlm_utils::simple_initiator_socket<trn3_chip> fabric_in{"fabric_in"};
    std::array<pcie::link_end*, TRN3_NEURONLINK_PORTS> nl_{};
    counter hbm_errors_;
    std::unique_ptr<pcie::requester> fabric_reads_;  // tags and timeout from the params
    counter fabric_sent_{this, "fabric_sent", "NeuronLink write TLPs this chip originated"};
    counter fabric_read_requests_{this, "fabric_read_requests", "NeuronLink read requests this chip originated"};
    counter fabric_reads_answered_{this, "fabric_reads_answered", "NeuronLink read requests this chip answered"};
    counter fabric_read_errors_{this, "fabric_read_errors",
                                "NeuronLink reads that failed (unsupported request, timeout, poisoned)"};
    counter fabric_received_{this, "fabric_received", "NeuronLink write TLPs that landed in this chip"};
    counter fabric_reduced_{this, "fabric_reduced",
                            "of those, reducing writes (reduced into the memory as they landed)"};
    counter fabric_forwarded_{this, "fabric_forwarded", "NeuronLink TLPs forwarded for other chips"};
    counter fabric_unroutable_{this, "fabric_unroutable",
                               "NeuronLink writes refused or dropped (off the fabric, no route)"};
    untouched_buffer timing_buffer_;  // what timing-only deliveries point at (never read)
    bool fabric_held_ = false;
    sc_core::sc_event fabric_released_;
    unsigned link_irqs_high_ = 0;
    unsigned hbm_irqs_high_ = 0;
    timeline::track mailbox_track_;
};

}  // namespace trn3::chip
