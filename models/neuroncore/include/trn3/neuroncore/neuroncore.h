// neuroncore: one NeuronCore-v4, functionally exact and loosely timed.
//
// Five sequencers (Tensor, Vector, Scalar, GpSimd, Sync) each fetch their own
// instruction stream from device memory (isa.h) and run it on their engine;
// they synchronise only through the core's 256 semaphores (wait until >=,
// increment when done), as the hardware does. SBUF and PSUM are sparse
// stores (partitions x bytes). DMA instructions go to 16 queues that share
// the core's DMA bandwidth and increment a semaphore when their copy is done.
//
// sockets: mem       (initiator) device memory: instruction fetch and DMA to/from hbm
//          ctrl      (target, optional) registers below
//          sbuf_port (target, optional) SBUF as device memory: byte a is byte
//                    a mod sbuf_partition_size of partition a / sbuf_partition_size;
//                    the chip maps it for its DMA engine, its host and other
//                    chips' fabric writes (collectives SBUF to SBUF). Each
//                    access takes sbuf_port_latency plus its bytes at
//                    sbuf_port_bandwidth; accesses do not queue behind each other.
// irq:     error_irq — level: (irq_status & irq_enable) != 0
//
// registers (ctrl): spec/include/trn3/spec/neuroncore.h, engine e = 0 tensor,
// 1 vector, 2 scalar, 3 gpsimd, 4 sync:
//   TRN3_NC_PC(e)           RW 8  start address of engine e's stream
//   TRN3_NC_START(e)        WO 4  TRN3_NC_START_GO starts engine e at pc
//   TRN3_NC_STATUS(e)       RO 4  TRN3_NC_STATUS_*: idle, running, halted, error
//   TRN3_NC_ERROR(e)        RO 4  error code (TRN3_NC_ERR_*, below), 0 when none
//   TRN3_NC_ERROR_PC(e)     RO 4  index of the failing instruction
//   TRN3_NC_IRQ_STATUS      W1C 4 TRN3_NC_IRQ_ENGINE(e): engine e stopped on an error
//   TRN3_NC_IRQ_ENABLE      RW 4  reset TRN3_NC_IRQ_ALL
//   TRN3_NC_SEMAPHORE(s)    RW 4  semaphore s
//
// error codes: 1 illegal opcode or wrong engine, 2 tile outside SBUF/PSUM,
// 3 partition start or count violation, 4 DMA or fetch outside device memory,
// 5 operand type not allowed, 6 shape not allowed (matmul limits), 7 engine
// cannot reach that memory (GpSimd and PSUM), 8 invalid sparsity metadata.
// An error stops that engine only; the simulation continues.
//
// The module is its parts, each a class with its own file in src/, built and
// wired by the constructor (neuroncore.cpp):
//
//   ctrl ── control_regs ── sequencer ──┬── tensor_engine ── tensor_array (model / RTL)
//           (error_irq)      │  │       ├── vector_engine, scalar, gpsimd (elementwise_engine)
//                            │  │       └── dma_queues ──┐
//             semaphores ────┘  └── fetch ── device_port ┴── mem
//   every engine and the DMA reach SBUF and PSUM through sbuf_psum
//
//   sequencer           the five streams: fetch, run loop, sequencer registers,
//                       semaphore waits, dispatch to the engines, errors
//   semaphores          the 256 semaphores and the signals that land later (DMA)
//   tensor_engine       matmul (dense, MX, sparse), transpose through the array, its timing
//   tensor_array        the array's arithmetic on the chosen back end
//   elementwise_engine  Vector, Scalar and GpSimd elementwise instructions at their rates
//   vector_engine       Vector's own: quantize_mx, its small transpose
//   dma_queues          the DMA queues on the core's shared DMA bandwidth
//   sbuf_psum           SBUF and PSUM: tiles, element load and store, stochastic rounding
//   control_regs        the ctrl register bank and error_irq
//   device_port         the mem socket: DMI, else b_transport
//   engine_common.h     what they share: faults, a sequencer's state, formats, cycles
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "trn3/core/component.h"
#include "trn3/core/irq.h"
#include "trn3/spec/isa.h"
#include "trn3/spec/neuroncore.h"

namespace trn3::neuroncore {

enum error_code : std::uint32_t {
    err_none = TRN3_NC_ERR_NONE,
    err_illegal = TRN3_NC_ERR_ILLEGAL,
    err_out_of_bounds = TRN3_NC_ERR_OUT_OF_BOUNDS,
    err_partition = TRN3_NC_ERR_PARTITION,
    err_memory = TRN3_NC_ERR_MEMORY,
    err_dtype = TRN3_NC_ERR_DTYPE,
    err_shape = TRN3_NC_ERR_SHAPE,
    err_unreachable = TRN3_NC_ERR_UNREACHABLE,
    err_sparsity = TRN3_NC_ERR_SPARSITY
};

enum class engine_status : std::uint32_t {
    idle = TRN3_NC_STATUS_IDLE,
    running = TRN3_NC_STATUS_RUNNING,
    halted = TRN3_NC_STATUS_HALTED,
    error = TRN3_NC_STATUS_ERROR
};

class neuroncore : public component {
public:
    tlm_utils::simple_initiator_socket<neuroncore> mem;
    tlm_utils::simple_target_socket_optional<neuroncore> ctrl;
    tlm_utils::simple_target_socket_optional<neuroncore> sbuf_port;
    irq_line error_irq;

    // memories
    param<std::uint64_t> partitions;
    param<byte_count> sbuf_partition_size;
    param<byte_count> psum_partition_size;
    // engines
    param<frequency> tensor_clock;
    param<frequency> engine_clock;
    param<std::uint64_t> tensor_fill_cycles;
    param<std::uint64_t> tensor_fp32_cycles_per_column;
    param<std::uint64_t> max_moving_free;
    param<std::uint64_t> vector_transpose_size;
    param<std::uint64_t> vector_elements_per_cycle_narrow, vector_elements_per_cycle_wide;
    param<std::uint64_t> scalar_elements_per_cycle_narrow, scalar_elements_per_cycle_wide;
    param<std::uint64_t> gpsimd_elements_per_cycle;
    param<std::uint64_t> instruction_overhead_cycles;
    // DMA
    param<bandwidth> dma_bandwidth;
    param<sc_core::sc_time> dma_descriptor_cost;
    param<std::uint64_t> dma_queues;
    // SBUF as device memory (sbuf_port)
    param<sc_core::sc_time> sbuf_port_latency;
    param<bandwidth> sbuf_port_bandwidth;
    // stochastic rounding
    param<std::uint64_t> rounding_seed;
    // Timing only (workloads at scale): every instruction is checked,
    // scheduled and timed as in the data mode, but no element is computed
    // and no data moves (docs/isa.md, "Timing only").
    param<bool> timing_only;
    // Tensor engine back end (docs/rtl.md): the C++ model, the verilated RTL
    // array, or the model checked against the RTL on every Nth array job.
    param<std::string> tensor_backend;
    param<std::uint64_t> tensor_check_every;
    param<std::string> tensor_waveform;
    param<std::uint64_t> tensor_waveform_job;
    param<std::uint64_t> tensor_inject_flip;  // tests the checker: flips a bit of one RTL result

    explicit neuroncore(const sc_core::sc_module_name& name);
    ~neuroncore() override;

    // Starts an engine at a device address (what writing pc and start does).
    void start(isa::engine e, std::uint64_t pc);
    engine_status status(isa::engine e) const;
    std::uint32_t error(isa::engine e) const;
    // Index in its stream of the instruction engine e stopped on (with error()).
    std::uint32_t error_pc(isa::engine e) const;
    std::uint32_t semaphore(unsigned s) const;
    // An event notified whenever an engine halts or stops on an error.
    const sc_core::sc_event& engine_stopped() const;
    bool all_stopped() const;
    // Engines still running, each with the semaphore it waits for, e.g.
    // "tensor waits for s3 >= 2 (now 1) at instruction 7": a deadlocked
    // kernel ends the simulation with this instead of silence.
    std::string blocked_report() const;
    // Check mode: array jobs whose RTL result differed from the model's.
    std::uint64_t rtl_mismatches() const;
    // Semaphores, registers and engine states back to reset; engines still
    // running (blocked on a semaphore, or a hung kernel) abandon their streams.
    // SBUF and PSUM keep their contents, as on the device.
    void reset() override;

    unsigned char* sbuf(unsigned partition);
    unsigned char* psum(unsigned partition);
    // SBUF's bytes, all partitions: what sbuf_port maps.
    std::uint64_t sbuf_bytes() const { return partitions.get() * sbuf_partition_size.get().bytes; }

private:
    struct parts;  // the components, wired in neuroncore.cpp

    void invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end);
    void ctrl_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay);
    unsigned ctrl_dbg(tlm::tlm_generic_payload& tx);
    void sbuf_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay);
    unsigned sbuf_dbg(tlm::tlm_generic_payload& tx);

    std::unique_ptr<parts> parts_;
};

}  // namespace trn3::neuroncore
