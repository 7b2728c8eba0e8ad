// The host: a Graviton4 as the driver sees it. Its root complex, IOMMU and
// DDR5 memory, and software contexts that run host-compiled C++ (driver,
// runtime, user programs) as SystemC threads.
//
//   software ── cpu_ecam, cpu_mmio ── rc (root complex, Gen5) ══ root port 0 link
//   rc.host_mem ── iommu ── ddr (DDR5, 12 x 5600 MT/s)
//   rc.msi ── interrupt dispatch: handlers by message data
//
// Simulated time advances by what the software's device accesses cost (an
// MMIO read waits for its completion) and by `software_step` per call into
// this API, never by host wall-clock time. A context that has waited goes
// on at the end of the instant (core/end_of_instant.h), in the order of its
// name: what the hardware and the other contexts do at that instant is in,
// whichever the kernel ran first (the programs of a system's hosts share
// state, as a launcher's store or a barrier).
//
// params: software_step, dma_base
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>

#include "trn3/core/component.h"
#include "trn3/core/same_time_order.h"
#include "trn3/core/stats.h"
#include "trn3/core/timeline.h"
#include "trn3/host/ddr5_memory.h"
#include "trn3/host/iommu.h"
#include "trn3/pcie/root_complex.h"

namespace trn3::host {

class graviton4 : public component {
public:
    param<sc_core::sc_time> software_step{this, "software_step", sc_core::sc_time(20, sc_core::SC_NS),
                                          "host CPU time per call into the host API (driver bookkeeping)"};
    param<std::uint64_t> dma_base{this, "dma_base", 1ull << 30, "physical address where DMA buffers are allocated from",
                                  address_range()};

    pcie::root_complex rc;
    iommu iommu0{"iommu"};
    ddr5_memory ddr{"ddr"};

    // root_generation: the root ports' (Graviton4's own are Gen5; a CPU tray
    // that terminates Gen6 cables without converters has Gen6 ones).
    explicit graviton4(const sc_core::sc_module_name& name, unsigned root_ports = 1,
                       pcie::generation root_generation = pcie::generation::gen5);

    // A software context: `body` runs in its own thread from time 0.
    void run(const std::string& name, std::function<void()> body);

    // ---- for software contexts ----
    std::uint32_t config_read(std::uint16_t bdf, std::uint16_t offset, unsigned bytes);
    void config_write(std::uint16_t bdf, std::uint16_t offset, unsigned bytes, std::uint32_t value);
    void mmio(tlm::tlm_command cmd, std::uint64_t address, void* data, std::size_t bytes);
    // Host physical memory (page aligned), and the CPU's pointer to it;
    // no_memory when the DDR is used up.
    static constexpr std::uint64_t no_memory = ~0ull;
    std::uint64_t alloc(std::size_t bytes);
    unsigned char* memory(std::uint64_t physical) { return ddr.data() + physical; }
    void on_interrupt(std::uint32_t data, std::function<void()> handler) { handlers_[data] = std::move(handler); }
    bool wait_until(const std::function<bool()>& ready, sc_core::sc_time timeout, sc_core::sc_time poll);
    void step() { sleep(software_step.get()); }
    void sleep(const sc_core::sc_time& t);

    std::uint64_t interrupts() const { return interrupts_.value(); }

private:
    tlm_utils::simple_initiator_socket<graviton4> cpu_ecam{"cpu_ecam"}, cpu_mmio{"cpu_mmio"};
    void access(tlm_utils::simple_initiator_socket<graviton4>& s, tlm::tlm_command cmd, std::uint64_t address,
                void* data, std::size_t bytes);
    // Software contexts that access a device at one simulated time go in
    // the order of their names (a distributed run gives one process's result).
    same_time_order software_order_{"software_order"};
    std::map<std::uint32_t, std::function<void()>> handlers_;
    sc_core::sc_event interrupt_;
    std::uint64_t interrupts_seen_ = 0;
    std::uint64_t next_dma_ = 0;
    counter interrupts_, unclaimed_;
    timeline::track irq_track_;
};

}  // namespace trn3::host
