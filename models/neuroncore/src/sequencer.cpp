#include "sequencer.h"

#include <utility>

#include <fmt/format.h>

#include "device_port.h"
#include "dma_queues.h"
#include "semaphores.h"
#include "tensor_engine.h"
#include "vector_engine.h"

namespace trn3::neuroncore {

using sc_core::sc_time;
using namespace isa;

sequencer::sequencer(const component& core, semaphore_bank& semaphores, device_port& port, engine_units units,
                     std::function<void(isa::engine)> error_raised)
    : core_(core), semaphores_(semaphores), port_(port), units_(units), error_raised_(std::move(error_raised)),
      instructions_(&core, "instructions", "instructions executed"),
      errors_(&core, "errors", "engines stopped on an error"),
      busy_ps_{
          {{&core, "tensor_busy_ps", "time the Tensor engine's instructions took (ps)"},
           {&core, "vector_busy_ps", "time the Vector engine's instructions took (ps)"},
           {&core, "scalar_busy_ps", "time the Scalar engine's instructions took (ps)"},
           {&core, "gpsimd_busy_ps", "time the GpSimd engine's instructions took (ps)"},
           {&core, "sync_busy_ps", "time the Sync engine's own instructions took (ps; its DMAs run on the queues)"}}} {
    for (unsigned e = 0; e < engine_count; ++e) {
        engine_state& es = states_[e];
        es.id = static_cast<engine>(e);
        es.track = timeline::instance().make_track(core.name(), isa::name(es.id));
    }
}

void sequencer::spawn() {
    for (unsigned e = 0; e < engine_count; ++e)
        sc_core::sc_spawn(sc_bind(&sequencer::run, this, e), sc_core::sc_gen_unique_name("engine"));
}

bool sequencer::all_stopped() const {
    for (const auto& es : states_)
        if (es.status == engine_status::running) return false;
    return true;
}

std::string sequencer::blocked_report() const {
    std::string out;
    for (const engine_state& es : states_) {
        if (es.status != engine_status::running) continue;
        if (!out.empty()) out += "; ";
        out +=
            es.waiting_sem >= 0
                ? fmt::format("{} waits for s{} >= {} (now {}) at instruction {}", isa::name(es.id), es.waiting_sem,
                              es.waiting_value, semaphores_.value(static_cast<unsigned>(es.waiting_sem)), es.waiting_pc)
                : fmt::format("{} is running", isa::name(es.id));
    }
    return out;
}

void sequencer::reset() {
    // Engines blocked on a semaphore or inside an instruction abandon their
    // streams (a reset may stop a hung kernel).
    ++epoch_;
    semaphores_.reset();
    for (engine_state& es : states_) {
        es.status = engine_status::idle;
        es.error = err_none;
        es.error_pc = 0;
        es.warm = false;
    }
}

void sequencer::start(engine e, std::uint64_t pc) {
    engine_state& es = states_[static_cast<unsigned>(e)];
    es.start_pc = pc;
    ++es.starts;
    es.status = engine_status::running;
    semaphores_.wake_waiters();  // an engine blocked in its old stream lets go
    es.error = err_none;
    es.start_event.notify(sc_core::SC_ZERO_TIME);
}

void sequencer::run(unsigned e) {
    engine_state& es = states_[e];
    auto reg_of = [&es](const instruction& ins) -> std::uint32_t& {
        if (ins.reg_a >= registers) throw fault{err_illegal, fmt::format("register r{} of {}", ins.reg_a, registers)};
        return es.regs[ins.reg_a];
    };
    std::uint64_t served = 0;
    for (;;) {
        // A start while the thread was still leaving an aborted stream is not lost.
        while (es.starts == served) sc_core::wait(es.start_event);
        served = es.starts;
        const std::uint64_t epoch = epoch_;
        std::uint32_t index = 0;
        es.regs.fill(0);
        while (es.status == engine_status::running && epoch_ == epoch && es.starts == served) {
            instruction ins;
            if (!fetch(es.start_pc + static_cast<std::uint64_t>(index) * instruction_bytes, ins)) {
                stop_on_error(es, index, {err_memory, "instruction fetch failed"});
                break;
            }
            if (ins.engine != e) {
                stop_on_error(es, index,
                              {err_illegal, fmt::format("instruction for the {} engine in the {} stream",
                                                        isa::name(static_cast<engine>(ins.engine)), isa::name(es.id))});
                break;
            }
            if (ins.wait_sem != no_semaphore && semaphores_.value(ins.wait_sem) < ins.wait_value) {
                es.waiting_sem = ins.wait_sem;
                es.waiting_value = ins.wait_value;
                es.waiting_pc = index;
                while (semaphores_.value(ins.wait_sem) < ins.wait_value && epoch_ == epoch && es.starts == served)
                    sc_core::wait(semaphores_.changed());
                es.waiting_sem = -1;
                if (epoch_ != epoch || es.starts != served) break;  // reset or restarted: abandon the stream
            }
            ++instructions_;
            std::uint32_t next = index + 1;
            const sc_time started = sc_core::sc_time_stamp();
            try {
                switch (static_cast<opcode>(ins.op)) {
                case opcode::halt: es.status = engine_status::halted; break;
                case opcode::set_reg: reg_of(ins) = ins.imm; break;
                case opcode::add_reg: reg_of(ins) += ins.imm; break;
                case opcode::branch_lt:
                    if (reg_of(ins) < ins.imm) next = ins.target;
                    break;
                case opcode::sem_increment: break;  // only its signal
                case opcode::dma: units_.dma.issue(es, ins); break;
                default: {
                    const sc_time busy = execute(es, ins);
                    if (busy > sc_core::SC_ZERO_TIME) {
                        sc_core::wait(busy);
                        es.busy_until = sc_core::sc_time_stamp();
                        es.warm = true;
                        busy_ps_[e] += static_cast<std::uint64_t>(busy / sc_time(1, sc_core::SC_PS) + 0.5);
                        timeline::instance().slice(es.track, isa::name(static_cast<opcode>(ins.op)), started,
                                                   es.busy_until);
                    }
                }
                }
            } catch (const fault& f) {
                stop_on_error(es, index, f);
                break;
            }
            // Reset (or restarted) while this instruction ran: its signal belongs to no kernel.
            if (epoch_ != epoch || es.starts != served) break;
            if (ins.signal_sem != no_semaphore && static_cast<opcode>(ins.op) != opcode::dma)
                semaphores_.signal(ins.signal_sem, ins.signal_add, sc_core::sc_time_stamp());
            index = next;
        }
        if (es.status == engine_status::halted) stopped_.notify(sc_core::SC_ZERO_TIME);
    }
}

bool sequencer::fetch(std::uint64_t address, instruction& out) {
    return port_.access(tlm::TLM_READ_COMMAND, address, reinterpret_cast<unsigned char*>(&out), instruction_bytes);
}

sc_time sequencer::execute(engine_state& es, const instruction& ins) {
    switch (static_cast<opcode>(ins.op)) {
    case opcode::nop: return sc_core::SC_ZERO_TIME;
    case opcode::memset:
    case opcode::tensor_copy:
    case opcode::iota:
    case opcode::tensor_tensor:
    case opcode::tensor_scalar:
    case opcode::tensor_reduce:
    case opcode::activation:
        if (es.id == engine::tensor || es.id == engine::sync)
            throw fault{err_illegal, "not a Tensor or Sync instruction"};
        if (static_cast<opcode>(ins.op) == opcode::activation && es.id != engine::scalar)
            throw fault{err_illegal, "activation runs on the Scalar engine"};
        if (static_cast<opcode>(ins.op) == opcode::iota && es.id != engine::gpsimd)
            throw fault{err_illegal, "iota runs on GpSimd"};
        return elementwise_unit(es.id).elementwise(es, ins);
    case opcode::affine_select:
        if (es.id != engine::gpsimd) throw fault{err_illegal, "affine_select runs on GpSimd"};
        return units_.gpsimd.elementwise(es, ins);
    case opcode::quantize_mx:
        if (es.id != engine::vector) throw fault{err_illegal, "quantize_mx runs on the Vector engine"};
        return units_.vector.quantize_mx(es, ins);
    case opcode::matmul:
        if (es.id != engine::tensor) throw fault{err_illegal, "matmul runs on the Tensor engine"};
        return units_.tensor.matmul(es, ins);
    case opcode::transpose:
        if (es.id != engine::tensor && es.id != engine::vector)
            throw fault{err_illegal, "transpose runs on the Tensor engine (or Vector, up to 32 x 32)"};
        return es.id == engine::tensor ? units_.tensor.transpose(es, ins) : units_.vector.transpose(es, ins);
    default: throw fault{err_illegal, fmt::format("illegal opcode 0x{:02x}", ins.op)};
    }
}

elementwise_engine& sequencer::elementwise_unit(engine e) {
    if (e == engine::vector) return units_.vector;
    return e == engine::scalar ? units_.scalar : units_.gpsimd;
}

void sequencer::stop_on_error(engine_state& es, std::uint32_t pc_index, const fault& f) {
    es.status = engine_status::error;
    es.error = f.code;
    es.error_pc = pc_index;
    ++errors_;
    core_.log().error("{} engine stopped at instruction {}: error {} ({})", isa::name(es.id), pc_index, f.code, f.what);
    timeline::instance().instant(es.track, fmt::format("error {}", f.code), sc_core::sc_time_stamp());
    error_raised_(es.id);
    stopped_.notify(sc_core::SC_ZERO_TIME);
}

}  // namespace trn3::neuroncore
