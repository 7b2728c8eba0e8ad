#include "control_regs.h"

#include <string>

#include <fmt/format.h>

#include "semaphores.h"
#include "sequencer.h"
#include "trn3/spec/neuroncore.h"

namespace trn3::neuroncore {

using namespace isa;

static_assert(TRN3_NC_ENGINES == engine_count && TRN3_NC_SEMAPHORE_COUNT == semaphores,
              "the register map (spec/neuroncore.h) and the ISA agree on engines and semaphores");

control_regs::control_regs(neuroncore& core, sequencer& sequencers, semaphore_bank& semaphores)
    : core_(core), regs_(std::string(core.name()) + ".regs"),
      irq_status_(regs_, "irq_status", TRN3_NC_IRQ_STATUS, 4, 0, access::w1c, "engines stopped on an error"),
      irq_enable_(regs_, "irq_enable", TRN3_NC_IRQ_ENABLE, 4, TRN3_NC_IRQ_ALL, access::rw, "error interrupts enabled") {
    for (unsigned e = 0; e < engine_count; ++e) {
        const engine id = static_cast<engine>(e);
        const std::string n = isa::name(id);
        auto add = [&](const std::string& leaf, std::uint64_t off, unsigned width, access a, const std::string& d) {
            owned_regs_.push_back(std::make_unique<reg>(regs_, n + "_" + leaf, off, width, 0, a, d));
            return owned_regs_.back().get();
        };
        reg* pc = add("pc", TRN3_NC_PC(e), 8, access::rw, "start address of the " + n + " stream");
        reg* start_reg = add("start", TRN3_NC_START(e), 4, access::wo, "write 1 to start the " + n + " engine");
        add("status", TRN3_NC_STATUS(e), 4, access::ro, "0 idle, 1 running, 2 halted, 3 error")
            ->on_read([&sequencers, id](reg& r) { r.set(static_cast<std::uint32_t>(sequencers.state(id).status)); });
        add("error", TRN3_NC_ERROR(e), 4, access::ro, "error code")->on_read([&sequencers, id](reg& r) {
            r.set(sequencers.state(id).error);
        });
        add("error_pc", TRN3_NC_ERROR_PC(e), 4, access::ro, "failing instruction index")
            ->on_read([&sequencers, id](reg& r) { r.set(sequencers.state(id).error_pc); });
        start_reg->on_write([&sequencers, id, pc](reg& r, std::uint64_t) {
            if (r.value() & TRN3_NC_START_GO) sequencers.start(id, pc->value());
        });
    }
    for (unsigned s = 0; s < isa::semaphores; ++s) {
        owned_regs_.push_back(std::make_unique<reg>(regs_, fmt::format("semaphore{}", s), TRN3_NC_SEMAPHORE(s), 4, 0,
                                                    access::rw, "semaphore"));
        reg* r = owned_regs_.back().get();
        r->on_read([&semaphores, s](reg& x) { x.set(semaphores.value(s)); });
        r->on_write(
            [&semaphores, s](reg& x, std::uint64_t) { semaphores.set(s, static_cast<std::uint32_t>(x.value())); });
    }
    irq_status_.on_write([this](reg&, std::uint64_t) { update_irq(); });
    irq_enable_.on_write([this](reg&, std::uint64_t) { update_irq(); });
}

void control_regs::transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay) {
    regs_.transport(tx);
    delay += core_.cycles(1);
}

unsigned control_regs::debug_transport(tlm::tlm_generic_payload& tx) {
    regs_.transport(tx, true);
    return tx.is_response_ok() ? tx.get_data_length() : 0;
}

void control_regs::raise_error(engine e) {
    irq_status_.set(irq_status_.value() | TRN3_NC_IRQ_ENGINE(static_cast<unsigned>(e)));
    update_irq();
}

void control_regs::reset() {
    irq_status_.set(0);
    update_irq();
}

void control_regs::update_irq() { core_.error_irq.set((irq_status_.value() & irq_enable_.value()) != 0); }

}  // namespace trn3::neuroncore
