#include "trn3/host/graviton4.h"

#include <fmt/format.h>

#include "trn3/core/end_of_instant.h"
#include "trn3/core/log.h"
#include "trn3/core/payload.h"

namespace trn3::host {

graviton4::graviton4(const sc_core::sc_module_name& name, unsigned root_ports, pcie::generation root_generation)
    : component(name, frequency{2.8e9}), rc("rc", root_ports, root_generation),
      interrupts_(this, "interrupts", "MSI-X messages dispatched to a handler"),
      unclaimed_(this, "unclaimed_interrupts", "MSI-X messages no handler claimed"),
      irq_track_(timeline::instance().track_of(*this, ".interrupts")) {
    cpu_ecam.bind(rc.ecam);
    cpu_mmio.bind(rc.mmio);
    rc.host_mem.bind(iommu0.in);
    iommu0.out.bind(ddr.in);
    rc.msi = [this](std::uint32_t data, std::uint16_t requester) {
        timeline::instance().instant(
            irq_track_,
            fmt::format("msi {:#x} from {:02x}:{:02x}.{}", data, requester >> 8, (requester >> 3) & 31, requester & 7),
            sc_core::sc_time_stamp());
        auto it = handlers_.find(data);
        if (it == handlers_.end()) {
            ++unclaimed_;
            log().debug("MSI {:#x} from {:04x}: no handler", data, requester);
        } else {
            ++interrupts_;
            it->second();
        }
        ++interrupts_seen_;
        interrupt_.notify(sc_core::SC_ZERO_TIME);
    };
    next_dma_ = dma_base.get();
}

void graviton4::run(const std::string& name, std::function<void()> body) {
    sc_core::sc_spawn_options o;
    sc_core::sc_spawn(std::move(body), name.c_str(), &o);
}

void graviton4::access(tlm_utils::simple_initiator_socket<graviton4>& s, tlm::tlm_command cmd, std::uint64_t address,
                       void* data, std::size_t bytes) {
    software_order_.take();
    access_and_wait(s.operator->(), cmd, address, data, bytes, software_step.get());
    end_of_instant::wait();
}

void graviton4::sleep(const sc_core::sc_time& t) {
    sc_core::wait(t);
    end_of_instant::wait();
}

std::uint32_t graviton4::config_read(std::uint16_t bdf, std::uint16_t offset, unsigned bytes) {
    std::uint32_t v = 0;
    access(cpu_ecam, tlm::TLM_READ_COMMAND, (std::uint64_t(bdf) << 12) | offset, &v, bytes);
    return v;
}

void graviton4::config_write(std::uint16_t bdf, std::uint16_t offset, unsigned bytes, std::uint32_t value) {
    access(cpu_ecam, tlm::TLM_WRITE_COMMAND, (std::uint64_t(bdf) << 12) | offset, &value, bytes);
}

void graviton4::mmio(tlm::tlm_command cmd, std::uint64_t address, void* data, std::size_t bytes) {
    access(cpu_mmio, cmd, address, data, bytes);
}

std::uint64_t graviton4::alloc(std::size_t bytes) {
    const std::uint64_t size = (bytes + 4095) / 4096 * 4096;
    if (size > ddr.size.get().bytes - next_dma_) {
        log().warn("host memory exhausted: {} bytes asked, {} left", size, ddr.size.get().bytes - next_dma_);
        return no_memory;  // the software's failure, not the simulator's
    }
    const std::uint64_t a = next_dma_;
    next_dma_ += size;
    return a;
}

bool graviton4::wait_until(const std::function<bool()>& ready, sc_core::sc_time timeout, sc_core::sc_time poll) {
    const sc_core::sc_time deadline = sc_core::sc_time_stamp() + timeout;
    for (;;) {
        step();
        // An interrupt that arrives while ready() runs (it may access the
        // device) must not be slept through.
        const std::uint64_t seen = interrupts_seen_;
        if (ready()) return true;
        const sc_core::sc_time now = sc_core::sc_time_stamp();
        if (now >= deadline) return false;
        if (interrupts_seen_ != seen) continue;
        sc_core::wait(std::min(poll, deadline - now), interrupt_);
        // Looks once the instant is over: what others change at it (another
        // program's flag, a completion landing) is seen whichever the kernel ran first.
        end_of_instant::wait();
    }
}

}  // namespace trn3::host
