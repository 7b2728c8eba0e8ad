// The core's five sequencers (Tensor, Vector, Scalar, GpSimd, Sync): each
// fetches its own instruction stream from device memory, waits for the
// semaphore an instruction names, runs the sequencer instructions (halt,
// registers, branches) itself, hands the rest to its engine or to the DMA
// queues, and signals the instruction's semaphore when it is done. An error
// stops that engine only (docs/isa.md).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>

#include "engine_common.h"
#include "trn3/core/stats.h"

namespace trn3::neuroncore {

class device_port;
class dma_queues;
class elementwise_engine;
class semaphore_bank;
class tensor_engine;
class vector_engine;

// Where the sequencers send the instructions they do not run themselves.
struct engine_units {
    tensor_engine& tensor;
    vector_engine& vector;
    elementwise_engine& scalar;
    elementwise_engine& gpsimd;
    dma_queues& dma;
};

class sequencer {
public:
    // `error_raised` is called with the engine whenever one stops on an error
    // (the control registers' interrupt status).
    sequencer(const component& core, semaphore_bank& semaphores, device_port& port, engine_units units,
              std::function<void(isa::engine)> error_raised);

    // One thread per engine, in engine order; called once by the core's constructor.
    void spawn();
    void start(isa::engine e, std::uint64_t pc);
    // Engines back to idle, semaphores to zero; a stream that is still
    // running (blocked, or inside an instruction) is abandoned.
    void reset();

    const engine_state& state(isa::engine e) const { return states_[static_cast<unsigned>(e)]; }
    bool all_stopped() const;
    std::string blocked_report() const;
    // Notified whenever an engine halts or stops on an error.
    const sc_core::sc_event& stopped() const { return stopped_; }

private:
    void run(unsigned e);
    bool fetch(std::uint64_t address, isa::instruction& out);
    // Executes one instruction's work on its engine; returns its engine time, or throws fault.
    sc_core::sc_time execute(engine_state& es, const isa::instruction& ins);
    elementwise_engine& elementwise_unit(isa::engine e);
    void stop_on_error(engine_state& es, std::uint32_t pc_index, const fault& f);

    const component& core_;
    semaphore_bank& semaphores_;
    device_port& port_;
    engine_units units_;
    std::function<void(isa::engine)> error_raised_;
    std::array<engine_state, isa::engine_count> states_;
    std::uint64_t epoch_ = 0;  // counts resets: a stream started before one stops
    sc_core::sc_event stopped_;
    counter instructions_, errors_;
    // Per engine: time its instructions kept it busy (ps), e.g. stat nc0.tensor_busy_ps.
    std::array<counter, isa::engine_count> busy_ps_;
};

}  // namespace trn3::neuroncore
