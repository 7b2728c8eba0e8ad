#include "trn3/neuroncore/neuroncore.h"

#include <algorithm>
#include <cstring>

#include "trn3/core/payload.h"

#include "control_regs.h"
#include "device_port.h"
#include "dma_queues.h"
#include "sbuf_psum.h"
#include "semaphores.h"
#include "sequencer.h"
#include "tensor_array.h"
#include "tensor_engine.h"
#include "vector_engine.h"

namespace trn3::neuroncore {

using sc_core::sc_time;

// The parts in the order they are built, each given the parts it uses.
struct neuroncore::parts {
    sbuf_psum memory;
    semaphore_bank semaphores;
    device_port port;
    tensor_array array;
    tensor_engine tensor;
    vector_engine vector;
    elementwise_engine scalar, gpsimd;
    trn3::neuroncore::dma_queues dma;  // qualified: the param of that name hides the class here
    sequencer sequencers;
    control_regs control;

    explicit parts(neuroncore& core)
        : memory(core), port(core.mem), array(core), tensor(core, memory, array), vector(core, memory),
          scalar(core, memory, isa::engine::scalar, core.scalar_elements_per_cycle_narrow,
                 core.scalar_elements_per_cycle_wide),
          gpsimd(core, memory, isa::engine::gpsimd, core.gpsimd_elements_per_cycle, core.gpsimd_elements_per_cycle),
          dma(core, memory, port, semaphores),
          // An engine's error sets its irq_status bit; control is built next,
          // and the call comes only once engines run.
          sequencers(core, semaphores, port, {tensor, vector, scalar, gpsimd, dma},
                     [this](isa::engine e) { control.raise_error(e); }),
          control(core, sequencers, semaphores) {}
};

neuroncore::neuroncore(const sc_core::sc_module_name& name)
    : component(name, frequency{1.2e9}), mem("mem"), ctrl("ctrl"), sbuf_port("sbuf_port"),
      partitions(this, "partitions", 128, "SBUF and PSUM partitions", range<std::uint64_t>{1, 128}),
      sbuf_partition_size(this, "sbuf_partition_size", byte_count{256 << 10}, "SBUF bytes per partition",
                          range<byte_count>{byte_count{64}, byte_count{16ull << 20}}),
      psum_partition_size(this, "psum_partition_size", byte_count{16 << 10},
                          "PSUM bytes per partition (8 banks of 2 KiB)",
                          range<byte_count>{byte_count{64}, byte_count{16ull << 20}}),
      tensor_clock(this, "tensor_clock", frequency{2.4e9}, "Tensor engine clock"),
      engine_clock(this, "engine_clock", frequency{1.2e9}, "Vector, Scalar and GpSimd clock"),
      tensor_fill_cycles(this, "tensor_fill_cycles", 0,
                         "cycles before the first result when the array was idle; 0: 2 R + C - 2 of the R x C array "
                         "(382 at 128 x 128: weights shift in over R cycles, the first column crosses R + C - 2 PEs)",
                         range<std::uint64_t>{0, 1u << 20}),
      tensor_fp32_cycles_per_column(this, "tensor_fp32_cycles_per_column", 4,
                                    "cycles per moving column with fp32 operands (bf16/fp16/fp8: 1)",
                                    range<std::uint64_t>{1, 64}),
      max_moving_free(this, "max_moving_free", 512, "largest moving free size of one matmul",
                      range<std::uint64_t>{1, 65536}),
      vector_transpose_size(this, "vector_transpose_size", 32, "largest square tile the Vector engine transposes",
                            range<std::uint64_t>{1, 128}),
      vector_elements_per_cycle_narrow(this, "vector_elements_per_cycle_narrow", 512,
                                       "Vector elements per cycle with 1- or 2-byte types",
                                       range<std::uint64_t>{1, 65536}),
      vector_elements_per_cycle_wide(this, "vector_elements_per_cycle_wide", 256, "Vector elements per cycle otherwise",
                                     range<std::uint64_t>{1, 65536}),
      scalar_elements_per_cycle_narrow(this, "scalar_elements_per_cycle_narrow", 256,
                                       "Scalar elements per cycle with 1- or 2-byte types",
                                       range<std::uint64_t>{1, 65536}),
      scalar_elements_per_cycle_wide(this, "scalar_elements_per_cycle_wide", 128, "Scalar elements per cycle otherwise",
                                     range<std::uint64_t>{1, 65536}),
      gpsimd_elements_per_cycle(this, "gpsimd_elements_per_cycle", 128, "GpSimd elements per cycle",
                                range<std::uint64_t>{1, 65536}),
      instruction_overhead_cycles(this, "instruction_overhead_cycles", 64,
                                  "fixed cycles per Vector/Scalar/GpSimd instruction (dispatch and pipeline)",
                                  range<std::uint64_t>{0, 1u << 20}),
      dma_bandwidth(this, "dma_bandwidth", bandwidth{528e9}, "DMA bandwidth of the core, shared by its queues"),
      dma_descriptor_cost(this, "dma_descriptor_cost", sc_time(64, sc_core::SC_NS), "fixed cost per DMA instruction"),
      dma_queues(this, "dma_queues", 16, "DMA queues", range<std::uint64_t>{1, 16}),
      sbuf_port_latency(this, "sbuf_port_latency", sc_time(20, sc_core::SC_NS),
                        "SBUF as device memory: the fixed cost of an access from the chip's network (no public "
                        "figure: a few cycles of the SRAM and the network's hop)"),
      sbuf_port_bandwidth(this, "sbuf_port_bandwidth", bandwidth{528e9},
                          "SBUF as device memory: bytes per second of an access (as the core's DMA)"),
      rounding_seed(this, "rounding_seed", 1, "seed of the stochastic-rounding generator", seed_range()),
      timing_only(this, "timing_only", false,
                  "instructions are checked, scheduled and timed as with data, but no element is computed and no "
                  "data moves (SBUF, PSUM and device memory keep their contents)"),
      tensor_backend(this, "tensor_engine.backend", "model",
                     "Tensor engine array: model (C++), rtl (the verilated systolic array) or check (model, "
                     "replaying every check_every-th array job on the RTL and comparing bits)",
                     one_of<std::string>{{"model", "rtl", "check"}}),
      tensor_check_every(this, "tensor_engine.check_every", 1, "check: replay every Nth array job on the RTL",
                         range<std::uint64_t>{1, {}}),
      tensor_waveform(this, "tensor_engine.waveform", "", "VCD file for a waveform of one RTL array job (empty: none)"),
      tensor_waveform_job(this, "tensor_engine.waveform_job", 1,
                          "which RTL array job the waveform records (1: the first)", range<std::uint64_t>{1, {}}),
      tensor_inject_flip(this, "tensor_engine.inject_flip", 0,
                         "fault injection to test the checker: flip bit 0 of output (0, 0) of RTL array job N (1: the "
                         "first; 0: never)"),
      parts_(std::make_unique<parts>(*this)) {
    mem.register_invalidate_direct_mem_ptr(this, &neuroncore::invalidate_direct_mem_ptr);
    ctrl.register_b_transport(this, &neuroncore::ctrl_transport);
    ctrl.register_transport_dbg(this, &neuroncore::ctrl_dbg);
    sbuf_port.register_b_transport(this, &neuroncore::sbuf_transport);
    sbuf_port.register_transport_dbg(this, &neuroncore::sbuf_dbg);
    // The engines' threads, then the method that lands scheduled signals.
    parts_->sequencers.spawn();
    parts_->semaphores.spawn();
}

neuroncore::~neuroncore() = default;

void neuroncore::start(isa::engine e, std::uint64_t pc) { parts_->sequencers.start(e, pc); }
engine_status neuroncore::status(isa::engine e) const { return parts_->sequencers.state(e).status; }
std::uint32_t neuroncore::error(isa::engine e) const { return parts_->sequencers.state(e).error; }
std::uint32_t neuroncore::error_pc(isa::engine e) const { return parts_->sequencers.state(e).error_pc; }
std::uint32_t neuroncore::semaphore(unsigned s) const { return parts_->semaphores.value(s); }
const sc_core::sc_event& neuroncore::engine_stopped() const { return parts_->sequencers.stopped(); }
bool neuroncore::all_stopped() const { return parts_->sequencers.all_stopped(); }
std::string neuroncore::blocked_report() const { return parts_->sequencers.blocked_report(); }
std::uint64_t neuroncore::rtl_mismatches() const { return parts_->array.mismatches(); }

void neuroncore::reset() {
    parts_->sequencers.reset();
    parts_->control.reset();
}

unsigned char* neuroncore::sbuf(unsigned partition) { return parts_->memory.sbuf(partition); }
unsigned char* neuroncore::psum(unsigned partition) { return parts_->memory.psum(partition); }

void neuroncore::invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end) {
    parts_->port.invalidate(start, end);
}

void neuroncore::ctrl_transport(tlm::tlm_generic_payload& tx, sc_time& delay) { parts_->control.transport(tx, delay); }

unsigned neuroncore::ctrl_dbg(tlm::tlm_generic_payload& tx) { return parts_->control.debug_transport(tx); }

// SBUF from the chip's network: bytes within SBUF with a streaming width of
// the whole length (byte enables honoured), else the access is refused with
// nothing moved. Timing only (trn3::timing_only): the time, no data.
void neuroncore::sbuf_transport(tlm::tlm_generic_payload& tx, sc_time& delay) {
    ++transaction_count();
    const std::uint64_t a = tx.get_address(), len = tx.get_data_length();
    delay += sbuf_port_latency.get();
    const bool timing_only_access = tx.get_extension<::trn3::timing_only>() != nullptr;
    if (len == 0 || a >= sbuf_bytes() || len > sbuf_bytes() - a) {
        tx.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }

    if (!timing_only_access && tx.get_streaming_width() < len) {
        tx.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
        return;
    }
    delay += sbuf_port_bandwidth.get().transfer_time(len);
    if (!timing_only_access && (tx.is_read() || tx.is_write())) copy_payload(tx, sbuf(0) + a);
    tx.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned neuroncore::sbuf_dbg(tlm::tlm_generic_payload& tx) {
    const std::uint64_t a = tx.get_address();
    if (a >= sbuf_bytes()) return 0;
    const auto len = static_cast<unsigned>(std::min<std::uint64_t>(tx.get_data_length(), sbuf_bytes() - a));
    if (tx.is_read()) std::memcpy(tx.get_data_ptr(), sbuf(0) + a, len);
    else if (tx.is_write()) std::memcpy(sbuf(0) + a, tx.get_data_ptr(), len);
    tx.set_response_status(tlm::TLM_OK_RESPONSE);
    return len;
}

}  // namespace trn3::neuroncore
