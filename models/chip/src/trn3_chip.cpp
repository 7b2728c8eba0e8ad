#include "trn3/chip/trn3_chip.h"

#include <fmt/format.h>

#include "trn3/core/protocol_checker.h"
#include "trn3/core/error.h"
#include "trn3/spec/link.h"
#include "trn3/spec/mailbox.h"
#include "trn3/spec/mcu.h"
#include "trn3/spec/pci.h"

namespace trn3::chip {

namespace {
std::array<neuroncore::neuroncore*, TRN3_DEV_CORES> raw(std::array<std::unique_ptr<neuroncore::neuroncore>, TRN3_DEV_CORES>& v) {
    std::array<neuroncore::neuroncore*, TRN3_DEV_CORES> r{};
    for (unsigned i = 0; i < v.size(); ++i) r[i] = v[i].get();
    return r;
}
} // namespace

trn3_chip::trn3_chip(const sc_core::sc_module_name& name, const mcu::mcu::images& firmware)
    : component(name, frequency{1.4e9}), ep("ep", TRN3_PCI_DEVICE_TRN3, TRN3_BAR0_SIZE, TRN3_BAR2_SIZE), mcu0("mcu0", firmware), dma0("dma0"),
      noc("noc"), regs("regs"), to_host("to_host"),
      hbm_errors_(this, "hbm_uncorrectable", "uncorrectable HBM errors reported") {
    for (unsigned c = 0; c < TRN3_DEV_CORES; ++c) nc[c] = std::make_unique<neuroncore::neuroncore>(fmt::format("nc{}", c).c_str());
    for (unsigned s = 0; s < TRN3_DEV_HBM_STACKS; ++s) hbm[s] = std::make_unique<hbm::hbm_stack>(fmt::format("hbm{}", s).c_str(), true);
    control = std::make_unique<chip_control>("control", raw(nc));

    // Device memory.
    for (unsigned s = 0; s < TRN3_DEV_HBM_STACKS; ++s)
        noc.map(hbm[s]->in, TRN3_DEV_HBM_BASE(s), hbm[s]->size.get().bytes, fmt::format("hbm{}", s));
    for (auto& core : nc) connect(core->mem, noc.in);
    connect(dma0.device, noc.in);
    connect(ep.bar2, noc.in);

    // The register space: behind BAR0 for the host, the MCU's chip window for the firmware.
    connect(ep.bar0, regs.in);
    connect(mcu0.chip, regs.in);
    regs.map(control->in, TRN3_BAR0_CHIP, 0x1000, "control");
    regs.map(mcu0.mailbox0.host, TRN3_BAR0_MAILBOX, 0x1000, "mailbox");
    for (unsigned s = 0; s < TRN3_DEV_HBM_STACKS; ++s) regs.map(hbm[s]->ctrl, TRN3_BAR0_HBM(s), 0x1000, fmt::format("hbm{}", s));
    for (unsigned c = 0; c < TRN3_DEV_CORES; ++c) regs.map(nc[c]->ctrl, TRN3_BAR0_CORE(c), 0x10000, fmt::format("nc{}", c));
    regs.map(dma0.in, TRN3_BAR0_DMA(0), 0x100 * TRN3_DMA_QUEUES, "dma");

    // Device requests into host memory.
    connect(dma0.host, to_host.in);
    connect(control->host, to_host.in);
    to_host.map(ep.dma, 0, ~0ull, "pcie");

    // Interrupts.
    control->boot_status = [this] { return mcu0.boot_status(); };
    control->raise_msix = [this](unsigned v) { ep.raise_msix(v); };
    dma0.raise_msix = [this](unsigned v) { ep.raise_msix(v); };
    dma0.queue_error = [this](unsigned q) { control->report_error(TRN3_ERR_DMA(q)); };
    mailbox_track_ = timeline::instance().track_of(*this, ".mailbox");
    mcu0.mailbox0.mcu_irq.on_change([this](bool level) {
        if (level) timeline::instance().instant(mailbox_track_, "request (host rang)", sc_core::sc_time_stamp());
    });
    mcu0.mailbox0.host_irq.on_change([this](bool level) {
        if (!level) return;
        timeline::instance().instant(mailbox_track_, "response (MCU rang)", sc_core::sc_time_stamp());
        ep.raise_msix(TRN3_MSIX_MAILBOX);
    });
    for (unsigned s = 0; s < TRN3_DEV_HBM_STACKS; ++s)
        hbm[s]->mem_error.on_change([this, s](bool level) {
            if (level) {
                ++hbm_errors_;
                control->report_error(TRN3_ERR_HBM(s));
            }
            hbm_irqs_high_ += level ? 1 : -1u;
            mcu0.intc0.line(TRN3_MCU_IRQ_HBM).set(hbm_irqs_high_ != 0);
        });
}

void trn3_chip::attach_neuronlink(unsigned port, pcie::link& l) {
    if (port >= TRN3_NEURONLINK_PORTS)
        throw config_error(fmt::format("{}: NeuronLink port {} does not exist ({} ports)", name(), port, TRN3_NEURONLINK_PORTS));
    regs.map(l.in, TRN3_BAR0_LINK(port), TRN3_LINK_BLOCK_SIZE, fmt::format("nl{}", port));
    control->add_neuronlink_port(port);
    l.irq.on_change([this](bool level) {
        link_irqs_high_ += level ? 1 : -1u;
        mcu0.intc0.line(TRN3_MCU_IRQ_LINK).set(link_irqs_high_ != 0);
    });
}

unsigned char* trn3_chip::device_memory(std::uint64_t address, std::uint64_t bytes) {
    const unsigned s = static_cast<unsigned>(address / TRN3_DEV_HBM_STRIDE);
    const std::uint64_t off = address % TRN3_DEV_HBM_STRIDE;
    if (s >= TRN3_DEV_HBM_STACKS || off + bytes > hbm[s]->size.get().bytes) return nullptr;
    return hbm[s]->data() + off;
}

} // namespace trn3::chip
