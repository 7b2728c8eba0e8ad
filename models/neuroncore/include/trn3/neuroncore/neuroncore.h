// neuroncore: one NeuronCore-v4, functionally exact and loosely timed.
//
// Five sequencers (Tensor, Vector, Scalar, GpSimd, Sync) each fetch their own
// instruction stream from device memory (isa.h) and run it on their engine;
// they synchronise only through the core's 256 semaphores (wait until >=,
// increment when done), as the hardware does. SBUF and PSUM are sparse
// stores (partitions x bytes). DMA instructions go to 16 queues that share
// the core's DMA bandwidth and increment a semaphore when their copy is done.
//
// sockets: mem   (initiator) device memory: instruction fetch and DMA to/from hbm
//          ctrl  (target, optional) registers below
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
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "trn3/core/calendar.h"
#include "trn3/core/component.h"
#include "trn3/core/dmi_cache.h"
#include "trn3/core/irq.h"
#include "trn3/core/reg.h"
#include "trn3/core/sparse_store.h"
#include "trn3/core/stats.h"
#include "trn3/core/timeline.h"
#include "trn3/neuroncore/isa.h"
#include "trn3/rtl/systolic_array.h"
#include "trn3/numerics/xorwow.h"
#include "trn3/spec/neuroncore.h"

namespace trn3::neuroncore {

enum error_code : std::uint32_t {
    err_none = TRN3_NC_ERR_NONE, err_illegal = TRN3_NC_ERR_ILLEGAL, err_out_of_bounds = TRN3_NC_ERR_OUT_OF_BOUNDS,
    err_partition = TRN3_NC_ERR_PARTITION, err_memory = TRN3_NC_ERR_MEMORY, err_dtype = TRN3_NC_ERR_DTYPE,
    err_shape = TRN3_NC_ERR_SHAPE, err_unreachable = TRN3_NC_ERR_UNREACHABLE, err_sparsity = TRN3_NC_ERR_SPARSITY
};

enum class engine_status : std::uint32_t {
    idle = TRN3_NC_STATUS_IDLE, running = TRN3_NC_STATUS_RUNNING, halted = TRN3_NC_STATUS_HALTED,
    error = TRN3_NC_STATUS_ERROR
};

class neuroncore : public component {
public:
    tlm_utils::simple_initiator_socket<neuroncore> mem;
    tlm_utils::simple_target_socket_optional<neuroncore> ctrl;
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
    // stochastic rounding
    param<std::uint64_t> rounding_seed;
    // Tensor engine back end (docs/rtl.md): the C++ model, the verilated RTL
    // array, or the model checked against the RTL on every Nth array job.
    param<std::string> tensor_backend;
    param<std::uint64_t> tensor_check_every;
    param<std::string> tensor_waveform;
    param<std::uint64_t> tensor_waveform_job;
    param<std::uint64_t> tensor_inject_flip;  // tests the checker: flips a bit of one RTL result

    explicit neuroncore(const sc_core::sc_module_name& name);

    // Starts an engine at a device address (what writing pc and start does).
    void start(isa::engine e, std::uint64_t pc);
    engine_status status(isa::engine e) const { return engines_[static_cast<unsigned>(e)].status; }
    std::uint32_t error(isa::engine e) const { return engines_[static_cast<unsigned>(e)].error; }
    std::uint32_t semaphore(unsigned s) const { return semaphores_[s]; }
    // An event notified whenever an engine halts or stops on an error.
    const sc_core::sc_event& engine_stopped() const { return stopped_; }
    bool all_stopped() const;
    // Engines still running, each with the semaphore it waits for, e.g.
    // "tensor waits for s3 >= 2 (now 1) at instruction 7": a deadlocked
    // kernel ends the simulation with this instead of silence.
    std::string blocked_report() const;
    // Check mode: array jobs whose RTL result differed from the model's.
    std::uint64_t rtl_mismatches() const { return rtl_mismatches_.value(); }
    // Semaphores, registers and engine states back to reset; engines still
    // running (blocked on a semaphore, or a hung kernel) abandon their streams.
    // SBUF and PSUM keep their contents, as on the device.
    void reset() override;

    unsigned char* sbuf(unsigned partition) { return sbuf_.data() + partition * sbuf_partition_size.get().bytes; }
    unsigned char* psum(unsigned partition) { return psum_.data() + partition * psum_partition_size.get().bytes; }

private:
    struct engine_state {
        isa::engine id;
        std::uint64_t start_pc = 0;
        std::uint64_t starts = 0;  // start() calls so far
        engine_status status = engine_status::idle;
        std::uint32_t error = err_none;
        std::uint32_t error_pc = 0;
        std::array<std::uint32_t, isa::registers> regs{};
        sc_core::sc_event start_event;
        sc_core::sc_time busy_until;
        bool warm = false;  // ran an instruction that ended exactly when this one starts
        std::uint64_t last_pass_cycles = 0;  // streaming cycles of the Tensor engine's last array pass
        int waiting_sem = -1;           // semaphore waited on now (-1: none)
        std::uint32_t waiting_value = 0, waiting_pc = 0;
        timeline::track track;
    };
    struct fault {
        error_code code;
        std::string what;
    };

    void run_engine(unsigned e);
    std::uint64_t epoch_ = 0;  // counts resets: a stream started before one stops
    bool fetch(std::uint64_t address, isa::instruction& out);
    // Executes one instruction's work; returns its engine time, or throws fault.
    sc_core::sc_time execute(engine_state& es, const isa::instruction& ins);
    sc_core::sc_time elementwise(engine_state& es, const isa::instruction& ins);
    sc_core::sc_time matmul(engine_state& es, const isa::instruction& ins);
    sc_core::sc_time transpose(engine_state& es, const isa::instruction& ins);
    sc_core::sc_time quantize_mx(engine_state& es, const isa::instruction& ins);
    struct tile;
    // A matmul's geometry: P partitions, V stationary values and D dense K
    // values per partition per column, Kc = V P kept and K = D P dense K
    // values, M x N outputs; k_of[m Kc + c]: the dense K of kept value c (sparse).
    struct matmul_shape {
        unsigned V = 1, D = 1, P = 0, Kc = 0, K = 0, M = 0, N = 0;
        std::vector<std::uint16_t> k_of;
    };
    std::vector<std::uint16_t> sparse_indices(const isa::instruction& ins, const matmul_shape& s, unsigned group);
    sc_core::sc_time matmul_mx(engine_state& es, const isa::instruction& ins, const matmul_shape& s, const tile& dst,
                               const tile& a, const tile& b);
    void write_psum(const isa::instruction& ins, const tile& dst, const std::vector<float>& acc, unsigned M, unsigned N,
                    const std::vector<std::int64_t>& dof);
    void dma(engine_state& es, const isa::instruction& ins);
    // True when the engine finished an instruction exactly now (the Tensor
    // engine then streams on without refilling the array).
    static bool back_to_back(const engine_state& es);
    // Tensor engine time of an array pass streaming for `cycles`: plus the
    // fill unless back to back, plus the wait for the weights when the
    // previous pass was too short to hide their load.
    sc_core::sc_time tensor_time(engine_state& es, std::uint64_t cycles) const;
    std::uint64_t tensor_fill() const;

    // The array's arithmetic (rule 18, or a transpose's select) on one of the
    // back ends: acc[m][n] over K x M stationary A and K x N moving B (sparse:
    // k_of maps kept values to dense K, and the RTL is not used).
    struct array_operands {
        unsigned K, M, N;
        const float* a;
        const float* b;
        bool select = false;
        unsigned cadence = 1;
        const std::uint16_t* k_of = nullptr;
        unsigned b_rows = 0;  // rows of b (sparse: the dense K; 0: K)
        bool fused = true;  // false: every product is exact, multiply-then-add rounds once
    };
    void array_compute(const array_operands& op, std::vector<float>& acc);
    void array_model(const array_operands& op, std::vector<float>& acc) const;
    static rtl::array_job array_job_of(const array_operands& op);
    // One array job on the chosen back end: `model` computes it in C++, `job`
    // describes it to the RTL.
    void array_run(const std::function<void(std::vector<float>&)>& model, const std::function<rtl::array_job()>& job,
                   std::vector<float>& acc);
    std::vector<float> array_rtl(const rtl::array_job& job);
    void report_mismatch(const rtl::array_job& job, const std::vector<float>& model, const std::vector<float>& rtl);
    void stop_on_error(engine_state& es, std::uint32_t pc_index, const fault& f);

    // Tiles: checks an access pattern and resolves its memory.
    struct tile {
        const isa::access_pattern* ap;
        isa::space space;
        isa::dtype type;
        std::uint64_t address;  // with the base register applied
        unsigned bytes;         // per element
    };
    tile check_tile(const engine_state& es, const isa::access_pattern& ap, bool engine_rules) const;
    unsigned char* element(const tile& t, unsigned partition, std::uint64_t offset_elements);
    float load(const tile& t, unsigned partition, std::uint64_t offset_elements);
    void store(const tile& t, unsigned partition, std::uint64_t offset_elements, float v, bool stochastic);
    // Offsets (in elements) of the free-dimension walk, in order.
    template <typename F>
    static void walk(const isa::access_pattern& ap, F&& f);

    void signal(unsigned sem, std::uint32_t add, const sc_core::sc_time& at);
    void apply_due_signals();
    void ctrl_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay);
    unsigned ctrl_dbg(tlm::tlm_generic_payload& tx);
    void update_irq();
    bool mem_access(tlm::tlm_command cmd, std::uint64_t address, unsigned char* data, unsigned len);
    void invalidate_direct_mem_ptr(sc_dt::uint64 s, sc_dt::uint64 e) { dmi_.invalidate(s, e); }

    sparse_store sbuf_, psum_;
    std::array<engine_state, isa::engine_count> engines_;
    std::array<std::uint32_t, isa::semaphores> semaphores_{};
    sc_core::sc_event semaphore_changed_, signals_due_, stopped_;
    std::multimap<sc_core::sc_time, std::pair<unsigned, std::uint32_t>> pending_signals_;
    calendar dma_bus_;
    std::vector<calendar::tick> dma_queue_free_;
    dmi_cache dmi_;
    numerics::xorwow rng_;

    reg_bank regs_{std::string(name()) + ".regs"};
    std::vector<std::unique_ptr<reg>> owned_regs_;  // per-engine and semaphore registers, made in the constructor
    reg irq_status_{regs_, "irq_status", TRN3_NC_IRQ_STATUS, 4, 0, access::w1c, "engines stopped on an error"};
    reg irq_enable_{regs_, "irq_enable", TRN3_NC_IRQ_ENABLE, 4, TRN3_NC_IRQ_ALL, access::rw, "error interrupts enabled"};

    counter instructions_, errors_, matmul_flops_, dma_bytes_;
    std::unique_ptr<rtl::systolic_array> rtl_;
    std::uint64_t array_jobs_ = 0, rtl_jobs_ = 0;
    counter rtl_jobs_count_, rtl_cycles_, rtl_formula_cycles_, rtl_mismatches_;
};

} // namespace trn3::neuroncore
