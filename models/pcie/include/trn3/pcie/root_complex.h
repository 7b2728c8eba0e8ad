// The host's root complex (Graviton4: PCIe Gen5): root ports on bus 0,
// configuration through an ECAM window, the host's MMIO window onto PCIe
// memory, device DMA into host memory, MSI-X delivery.
//
//   host CPUs ── ecam (target): 4 KiB per function, bus << 20 | dev << 15 | fn << 12
//             ── mmio (target): PCIe addresses mmio_base .. mmio_base + size
//   host_mem (initiator) ── host memory (device DMA lands here)
//   root port r ══ link ══ ...           msi: handler(data, requester) for writes to the MSI window
//
// The host side blocks like a CPU does: a configuration access or an MMIO
// read waits (wait()) for its completion, so ecam and mmio must be used
// from a thread. A configuration request answered with Configuration Retry
// Status is retried every `crs_retry` until `completion_timeout` (the link
// below is still training); an unsupported request reads all ones; a write
// that nobody claims is dropped; a timeout or poisoned data is a
// TLM_GENERIC_ERROR_RESPONSE; every error is logged in the root port's
// status and AER registers.
//
// Device requests arriving at a root port: writes to the MSI window are
// interrupts; addresses inside a root port's window are peer to peer
// through the root (reflected down when `p2p` is on, else unsupported);
// everything else goes to host memory, whose address errors become
// Unsupported Requests. Reads are answered in completions of `max_payload`.
// Host memory is called from the link's delivery: it annotates its time and
// must not wait(). CPU MMIO accesses go as one TLP each (a CPU issues at
// most a cache line).
//
// params: root_ports, generation, lanes, mmio_base, latency, completion_timeout,
//         crs_retry, max_payload, p2p, tags
// stats:  config_requests, mmio_reads, mmio_writes, dma_reads, dma_writes, msi,
//         unsupported, crs_retries, timeouts, p2p_reflected
#pragma once

#include <functional>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "trn3/core/component.h"
#include "trn3/core/payload.h"
#include "trn3/core/same_time_order.h"
#include "trn3/core/stats.h"
#include "trn3/pcie/config_space.h"
#include "trn3/pcie/link.h"
#include "trn3/pcie/requester.h"

namespace trn3::pcie {

class root_complex : public component {
public:
    tlm_utils::simple_target_socket<root_complex> ecam{"ecam"};
    tlm_utils::simple_target_socket<root_complex> mmio{"mmio"};
    tlm_utils::simple_initiator_socket<root_complex> host_mem{"host_mem"};

    param<std::uint64_t> root_ports;
    param<std::string> generation_name;
    param<std::uint64_t> lanes;
    param<std::uint64_t> mmio_base;
    param<sc_core::sc_time> latency;
    param<sc_core::sc_time> completion_timeout;
    param<sc_core::sc_time> crs_retry;
    param<std::uint64_t> max_payload;
    param<bool> p2p;
    param<std::uint64_t> tags;

    std::function<void(std::uint32_t data, std::uint16_t requester)> msi;

    explicit root_complex(const sc_core::sc_module_name& name, unsigned default_root_ports = 1,
                          generation default_generation = generation::gen5);

    void attach(unsigned root_port, link_end& end);
    config_space& root_port(unsigned r) { return ports_[r].config; }

    std::uint64_t unsupported() const { return unsupported_.value(); }
    std::uint64_t msi_count() const { return msi_.value(); }
    std::uint64_t reflected() const { return reflected_.value(); }
    std::uint64_t config_requests() const { return config_requests_.value(); }
    std::uint64_t crs_retries() const { return crs_retries_.value(); }

private:
    struct port_state {
        config_space config;
        link_end* end = nullptr;
    };
    void ecam_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay);
    void mmio_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay);
    void receive(unsigned port, tlp& t);
    // Sends a non-posted request from the CPU's thread and waits for its
    // answer; a timeout is counted and logged in the root port's AER.
    requester::result round_trip(port_state& p, tlp&& t, std::uint64_t bytes);
    void complete_to_device(unsigned port, const tlp& request, const std::vector<std::uint8_t>& data, cpl_status status,
                            const sc_core::sc_time& delay);
    int port_for_bus(unsigned bus) const;
    int port_for_address(std::uint64_t address) const;

    std::vector<port_state> ports_;
    untouched_buffer untouched_;  // what timing-only accesses to host memory point at
    requester requests_;
    // CPU reads that leave at one simulated time go in the order of their
    // software contexts' names (core/same_time_order.h).
    same_time_order reads_order_{"mmio_read_order"};
    counter config_requests_, mmio_reads_, mmio_writes_, dma_reads_, dma_writes_, msi_, unsupported_, crs_retries_,
        timeouts_, reflected_;
};

}  // namespace trn3::pcie
