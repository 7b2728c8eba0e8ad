#include "trn3/neuroncore/neuroncore.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "trn3/core/payload.h"
#include "trn3/numerics/float_format.h"
#include "trn3/numerics/mx.h"

namespace trn3::neuroncore {
namespace {
using sc_core::sc_time;
using namespace isa;

numerics::format format_of(dtype t) {
    switch (t) {
    case dtype::bf16: return numerics::format::bf16;
    case dtype::fp16: return numerics::format::fp16;
    case dtype::e4m3fn: return numerics::format::e4m3fn;
    case dtype::e5m2: return numerics::format::e5m2;
    case dtype::e2m1: return numerics::format::e2m1;
    default: return numerics::format::fp32;
    }
}

bool narrow(dtype t) { return dtype_bytes(t) <= 2; }

float apply_alu(alu a, float x, float y) {
    switch (a) {
    case alu::add: return x + y;
    case alu::subtract: return x - y;
    case alu::multiply: return x * y;
    case alu::max: return std::max(x, y);
    case alu::min: return std::min(x, y);
    case alu::bypass: return x;
    }
    return x;
}

// The activation functions, in fp32 (the Neuron docs: engines compute in
// fp32). Each is the plain mathematical function evaluated with the host's
// float libm; gelu is the tanh approximation. Documented in docs/isa.md.
float apply_function(function f, float x) {
    switch (f) {
    case function::copy: return x;
    case function::exp: return std::exp(x);
    case function::relu: return x > 0 ? x : 0.0f;
    case function::gelu: return 0.5f * x * (1.0f + std::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
    case function::silu: return x / (1.0f + std::exp(-x));
    case function::tanh: return std::tanh(x);
    case function::sigmoid: return 1.0f / (1.0f + std::exp(-x));
    case function::square: return x * x;
    case function::rsqrt: return 1.0f / std::sqrt(x);
    case function::reciprocal: return 1.0f / x;
    }
    return x;
}

// Whether every product a x b of the two operand sets is exact in fp32: true
// for fp16 and fp8 operands (at most 11 x 11 significant bits, exponents well
// inside the normal range), and for bf16 operands whose non-zero finite
// values keep every product between 2^-126 and 2^127.
bool products_exact(dtype t, const std::vector<float>& a, const std::vector<float>& b) {
    if (t == dtype::fp16 || t == dtype::e4m3fn || t == dtype::e5m2) return true;
    if (t != dtype::bf16) return false;
    auto range = [](const std::vector<float>& v) {
        // Biased exponent fields; a subnormal counts as below every normal.
        int lo = 255, hi = 0;
        for (float x : v) {
            std::uint32_t bits;
            std::memcpy(&bits, &x, 4);
            const int field = static_cast<int>((bits >> 23) & 0xff);
            if (field == 0xff || (bits << 1) == 0) continue;  // inf, NaN, zero
            lo = std::min(lo, field == 0 ? -30 : field);
            hi = std::max(hi, field);
        }
        return std::pair<int, int>{lo - 127, hi - 127};
    };
    const auto [alo, ahi] = range(a);
    const auto [blo, bhi] = range(b);
    return alo + blo >= -126 && ahi + bhi <= 126;
}

// Every code of an MX element format as its exact integer (value x 2^shift)
// and whether it is finite: built once per format.
struct mx_codes {
    std::array<std::int64_t, 256> integer{};
    std::array<bool, 256> finite{};
};
const mx_codes& mx_code_table(numerics::format f) {
    static std::map<numerics::format, mx_codes> tables;
    static std::mutex lock;
    std::lock_guard<std::mutex> guard(lock);
    auto [it, added] = tables.try_emplace(f);
    if (added)
        for (unsigned c = 0; c < 256; ++c) {
            it->second.integer[c] = numerics::mx_element_integer(c, f);
            it->second.finite[c] = std::isfinite(numerics::decode(c, f));
        }
    return it->second;
}

sc_time cycles_at(std::uint64_t n, frequency f) { return sc_time(static_cast<double>(n) / f.hz, sc_core::SC_SEC); }
} // namespace

static_assert(TRN3_NC_ENGINES == engine_count && TRN3_NC_SEMAPHORE_COUNT == semaphores,
              "the register map (spec/neuroncore.h) and the ISA agree on engines and semaphores");

neuroncore::neuroncore(const sc_core::sc_module_name& name)
    : component(name, frequency{1.2e9}),
      mem("mem"), ctrl("ctrl"),
      partitions(this, "partitions", 128, "SBUF and PSUM partitions", range<std::uint64_t>{1, 128}),
      sbuf_partition_size(this, "sbuf_partition_size", byte_count{256 << 10}, "SBUF bytes per partition"),
      psum_partition_size(this, "psum_partition_size", byte_count{16 << 10},
                          "PSUM bytes per partition (8 banks of 2 KiB)"),
      tensor_clock(this, "tensor_clock", frequency{2.4e9}, "Tensor engine clock"),
      engine_clock(this, "engine_clock", frequency{1.2e9}, "Vector, Scalar and GpSimd clock"),
      tensor_fill_cycles(this, "tensor_fill_cycles", 0,
                         "cycles before the first result when the array was idle; 0: 2 R + C - 2 of the R x C array "
                         "(382 at 128 x 128: weights shift in over R cycles, the first column crosses R + C - 2 PEs)"),
      tensor_fp32_cycles_per_column(this, "tensor_fp32_cycles_per_column", 4,
                                    "cycles per moving column with fp32 operands (bf16/fp16/fp8: 1)"),
      max_moving_free(this, "max_moving_free", 512, "largest moving free size of one matmul"),
      vector_transpose_size(this, "vector_transpose_size", 32, "largest square tile the Vector engine transposes",
                            range<std::uint64_t>{1, 128}),
      vector_elements_per_cycle_narrow(this, "vector_elements_per_cycle_narrow", 512,
                                       "Vector elements per cycle with 1- or 2-byte types"),
      vector_elements_per_cycle_wide(this, "vector_elements_per_cycle_wide", 256, "Vector elements per cycle otherwise"),
      scalar_elements_per_cycle_narrow(this, "scalar_elements_per_cycle_narrow", 256,
                                       "Scalar elements per cycle with 1- or 2-byte types"),
      scalar_elements_per_cycle_wide(this, "scalar_elements_per_cycle_wide", 128, "Scalar elements per cycle otherwise"),
      gpsimd_elements_per_cycle(this, "gpsimd_elements_per_cycle", 128, "GpSimd elements per cycle"),
      instruction_overhead_cycles(this, "instruction_overhead_cycles", 64,
                                  "fixed cycles per Vector/Scalar/GpSimd instruction (dispatch and pipeline)"),
      dma_bandwidth(this, "dma_bandwidth", bandwidth{528e9}, "DMA bandwidth of the core, shared by its queues"),
      dma_descriptor_cost(this, "dma_descriptor_cost", sc_time(64, sc_core::SC_NS), "fixed cost per DMA instruction"),
      dma_queues(this, "dma_queues", 16, "DMA queues", range<std::uint64_t>{1, 16}),
      rounding_seed(this, "rounding_seed", 1, "seed of the stochastic-rounding generator"),
      tensor_backend(this, "tensor_engine.backend", "model",
                     "Tensor engine array: model (C++), rtl (the verilated systolic array) or check (model, "
                     "replaying every check_every-th array job on the RTL and comparing bits)"),
      tensor_check_every(this, "tensor_engine.check_every", 1, "check: replay every Nth array job on the RTL",
                         range<std::uint64_t>{1, {}}),
      tensor_waveform(this, "tensor_engine.waveform", "", "VCD file for a waveform of one RTL array job (empty: none)"),
      tensor_waveform_job(this, "tensor_engine.waveform_job", 1, "which RTL array job the waveform records (1: the first)",
                          range<std::uint64_t>{1, {}}),
      tensor_inject_flip(this, "tensor_engine.inject_flip", 0,
                         "fault injection to test the checker: flip bit 0 of output (0, 0) of RTL array job N (1: the "
                         "first; 0: never)"),
      sbuf_(std::string(this->name()) + ".sbuf", partitions * sbuf_partition_size.get().bytes),
      psum_(std::string(this->name()) + ".psum", partitions * psum_partition_size.get().bytes),
      dma_queue_free_(dma_queues, 0),
      rng_(rounding_seed),
      instructions_(this, "instructions", "instructions executed"),
      errors_(this, "errors", "engines stopped on an error"),
      matmul_flops_(this, "matmul_flops", "floating-point operations of matmuls (2 per multiply-add)"),
      dma_bytes_(this, "dma_bytes", "bytes moved by DMA"),
      rtl_jobs_count_(this, "rtl_array_jobs", "array jobs run on the RTL systolic array"),
      rtl_cycles_(this, "rtl_array_cycles", "clock cycles of the RTL systolic array"),
      rtl_formula_cycles_(this, "rtl_formula_cycles",
                          "the same array jobs' cycles by the documented formula (passes x (2R + C - 2 + N x cadence))"),
      rtl_mismatches_(this, "rtl_mismatches", "check mode: RTL results that differ from the model's") {
    const std::string& backend = tensor_backend.get();
    if (backend != "model" && backend != "rtl" && backend != "check")
        throw config_error("param " + tensor_backend.name() + " = '" + backend + "': must be model, rtl or check");
    if (backend != "model") rtl_ = std::make_unique<rtl::systolic_array>();
    mem.register_invalidate_direct_mem_ptr(this, &neuroncore::invalidate_direct_mem_ptr);
    ctrl.register_b_transport(this, &neuroncore::ctrl_transport);
    ctrl.register_transport_dbg(this, &neuroncore::ctrl_dbg);
    const std::string process = this->name();
    for (unsigned e = 0; e < engine_count; ++e) {
        engine_state& es = engines_[e];
        es.id = static_cast<engine>(e);
        es.track = timeline::instance().make_track(process, isa::name(es.id));
        const std::string n = isa::name(es.id);
        auto add = [&](const std::string& leaf, std::uint64_t off, unsigned width, access a, const std::string& d) {
            owned_regs_.push_back(std::make_unique<reg>(regs_, n + "_" + leaf, off, width, 0, a, d));
            return owned_regs_.back().get();
        };
        reg* pc = add("pc", TRN3_NC_PC(e), 8, access::rw, "start address of the " + n + " stream");
        reg* start_reg = add("start", TRN3_NC_START(e), 4, access::wo, "write 1 to start the " + n + " engine");
        add("status", TRN3_NC_STATUS(e), 4, access::ro, "0 idle, 1 running, 2 halted, 3 error")
            ->on_read([this, e](reg& r) { r.set(static_cast<std::uint32_t>(engines_[e].status)); });
        add("error", TRN3_NC_ERROR(e), 4, access::ro, "error code")->on_read([this, e](reg& r) { r.set(engines_[e].error); });
        add("error_pc", TRN3_NC_ERROR_PC(e), 4, access::ro, "failing instruction index")
            ->on_read([this, e](reg& r) { r.set(engines_[e].error_pc); });
        start_reg->on_write([this, e, pc](reg& r, std::uint64_t) {
            if (r.value() & TRN3_NC_START_GO) start(static_cast<engine>(e), pc->value());
        });
    }
    for (unsigned s = 0; s < semaphores; ++s) {
        owned_regs_.push_back(std::make_unique<reg>(regs_, fmt::format("semaphore{}", s), TRN3_NC_SEMAPHORE(s), 4, 0,
                                                     access::rw, "semaphore"));
        reg* r = owned_regs_.back().get();
        r->on_read([this, s](reg& x) { x.set(semaphores_[s]); });
        r->on_write([this, s](reg& x, std::uint64_t) {
            semaphores_[s] = static_cast<std::uint32_t>(x.value());
            semaphore_changed_.notify(sc_core::SC_ZERO_TIME);
        });
    }
    irq_status_.on_write([this](reg&, std::uint64_t) { update_irq(); });
    irq_enable_.on_write([this](reg&, std::uint64_t) { update_irq(); });

    SC_HAS_PROCESS(neuroncore);
    for (unsigned e = 0; e < engine_count; ++e)
        sc_core::sc_spawn(sc_bind(&neuroncore::run_engine, this, e), sc_core::sc_gen_unique_name("engine"));
    SC_METHOD(apply_due_signals);
    sensitive << signals_due_;
    dont_initialize();
}

bool neuroncore::all_stopped() const {
    for (const auto& es : engines_)
        if (es.status == engine_status::running) return false;
    return true;
}

std::string neuroncore::blocked_report() const {
    std::string out;
    for (const engine_state& es : engines_) {
        if (es.status != engine_status::running) continue;
        if (!out.empty()) out += "; ";
        out += es.waiting_sem >= 0
                   ? fmt::format("{} waits for s{} >= {} (now {}) at instruction {}", isa::name(es.id), es.waiting_sem,
                                 es.waiting_value, semaphores_[static_cast<unsigned>(es.waiting_sem)], es.waiting_pc)
                   : fmt::format("{} is running", isa::name(es.id));
    }
    return out;
}

void neuroncore::reset() {
    // Engines blocked on a semaphore or inside an instruction abandon their
    // streams (a reset may stop a hung kernel).
    ++epoch_;
    semaphore_changed_.notify(sc_core::SC_ZERO_TIME);
    semaphores_.fill(0);
    pending_signals_.clear();
    for (engine_state& es : engines_) {
        es.status = engine_status::idle;
        es.error = err_none;
        es.error_pc = 0;
        es.warm = false;
    }
    irq_status_.set(0);
    update_irq();
}

void neuroncore::start(engine e, std::uint64_t pc) {
    engine_state& es = engines_[static_cast<unsigned>(e)];
    es.start_pc = pc;
    ++es.starts;
    es.status = engine_status::running;
    semaphore_changed_.notify(sc_core::SC_ZERO_TIME);  // an engine blocked in its old stream lets go
    es.error = err_none;
    es.start_event.notify(sc_core::SC_ZERO_TIME);
}

// ---- memory ---------------------------------------------------------------

bool neuroncore::mem_access(tlm::tlm_command cmd, std::uint64_t address, unsigned char* data, unsigned len) {
    const bool write = cmd == tlm::TLM_WRITE_COMMAND;
    if (unsigned char* p = dmi_.lookup(address, len, write)) {
        if (write) std::memcpy(p, data, len);
        else std::memcpy(data, p, len);
        return true;
    }
    tlm::tlm_generic_payload tx;
    set_access(tx, cmd, address, data, len);
    sc_time delay;
    mem->b_transport(tx, delay);
    if (!tx.is_response_ok()) return false;
    if (tx.is_dmi_allowed()) {
        tlm::tlm_dmi grant;
        tx.set_address(address);
        if (mem->get_direct_mem_ptr(tx, grant)) dmi_.insert(grant);
    }
    return true;
}

bool neuroncore::fetch(std::uint64_t address, instruction& out) {
    return mem_access(tlm::TLM_READ_COMMAND, address, reinterpret_cast<unsigned char*>(&out), instruction_bytes);
}

// ---- tiles ----------------------------------------------------------------

template <typename F>
void neuroncore::walk(const access_pattern& ap, F&& f) {
    // Dimensions outermost first; missing outer dimensions have size 1.
    constexpr unsigned D = max_free_dims;
    const unsigned dims = std::max<unsigned>(1, std::min<unsigned>(ap.dims, D));
    std::uint16_t num[D] = {1, 1, 1, 1};
    std::int64_t step[D] = {0, 0, 0, 0};
    for (unsigned d = 0; d < dims; ++d) {
        num[D - dims + d] = ap.num[d];
        step[D - dims + d] = ap.step[d];
    }
    std::uint64_t i = 0;
    for (unsigned a = 0; a < num[0]; ++a)
        for (unsigned b = 0; b < num[1]; ++b)
            for (unsigned c = 0; c < num[2]; ++c)
                for (unsigned e = 0; e < num[3]; ++e, ++i)
                    f(i, static_cast<std::int64_t>(a) * step[0] + static_cast<std::int64_t>(b) * step[1] +
                             static_cast<std::int64_t>(c) * step[2] + static_cast<std::int64_t>(e) * step[3]);
}

neuroncore::tile neuroncore::check_tile(const engine_state& es, const access_pattern& ap, bool engine_rules) const {
    tile t{&ap, static_cast<space>(ap.space), static_cast<dtype>(ap.dtype), ap.address, 0};
    if (ap.space > 2 || ap.dtype > 6) throw fault{err_illegal, "bad space or dtype field"};
    t.bytes = dtype_bytes(t.type);
    if (ap.base_reg != no_reg) {
        if (ap.base_reg >= registers) throw fault{err_illegal, "base register out of range"};
        t.address += es.regs[ap.base_reg];
    }
    if (ap.partitions == 0 || ap.start_partition + ap.partitions > partitions.get())
        throw fault{err_partition, fmt::format("partitions {}+{} beyond {}", ap.start_partition, ap.partitions,
                                               partitions.get())};
    if (engine_rules && t.space != space::hbm) {
        // NKI tile rule: > 64 partitions start at 0; 33-64 at 0 or 64; <= 32 at 0, 32, 64 or 96.
        const unsigned n = ap.partitions, s = ap.start_partition;
        const bool ok = n > 64 ? s == 0 : n > 32 ? (s == 0 || s == 64) : (s % 32 == 0);
        if (!ok) throw fault{err_partition, fmt::format("a {}-partition tile may not start at partition {}", n, s)};
    }
    // Extent of the free walk, in elements.
    std::int64_t lo = 0, hi = 0;
    for (unsigned d = 0; d < std::min<unsigned>(ap.dims, max_free_dims); ++d) {
        if (ap.num[d] == 0) throw fault{err_shape, "a free dimension of size 0"};
        const std::int64_t span = static_cast<std::int64_t>(ap.step[d]) * (ap.num[d] - 1);
        (span < 0 ? lo : hi) += span;
    }
    if (ap.dims == 0 || ap.dims > max_free_dims) throw fault{err_shape, "free dimensions must be 1 to 4"};
    if (t.space != space::hbm) {
        const std::uint64_t size = t.space == space::sbuf ? sbuf_partition_size.get().bytes
                                                          : psum_partition_size.get().bytes;
        const std::int64_t first = static_cast<std::int64_t>(t.address) + lo * t.bytes;
        const std::int64_t last = static_cast<std::int64_t>(t.address) + (hi + 1) * t.bytes;
        if (first < 0 || last > static_cast<std::int64_t>(size))
            throw fault{err_out_of_bounds, fmt::format("{} tile bytes [{}, {}) outside a {}-byte partition",
                                                       isa::name(t.space), first, last, size)};
    }
    return t;
}

unsigned char* neuroncore::element(const tile& t, unsigned p, std::uint64_t offset_elements) {
    const std::uint64_t byte = t.address + offset_elements * t.bytes;
    return (t.space == space::sbuf ? sbuf(t.ap->start_partition + p) : psum(t.ap->start_partition + p)) + byte;
}

float neuroncore::load(const tile& t, unsigned p, std::uint64_t off) {
    const unsigned char* e = element(t, p, off);
    std::uint32_t code = 0;
    std::memcpy(&code, e, t.bytes);
    if (t.type == dtype::int32) return static_cast<float>(static_cast<std::int32_t>(code));
    return numerics::decode(code, format_of(t.type));
}

void neuroncore::store(const tile& t, unsigned p, std::uint64_t off, float v, bool stochastic) {
    unsigned char* e = element(t, p, off);
    std::uint32_t code;
    if (t.type == dtype::int32) {
        code = static_cast<std::uint32_t>(static_cast<std::int32_t>(std::nearbyint(v)));
    } else {
        numerics::convert_options o;
        if (stochastic) {
            o.mode = numerics::rounding::stochastic;
            o.random = rng_.next();  // one draw per element written
        }
        code = numerics::encode(v, format_of(t.type), o);
    }
    std::memcpy(e, &code, t.bytes);
}

// ---- execution ------------------------------------------------------------

sc_time neuroncore::elementwise(engine_state& es, const instruction& ins) {
    const opcode op = static_cast<opcode>(ins.op);
    const bool stochastic = ins.flags & flag_stochastic;
    const tile dst = check_tile(es, ins.dst, true);
    if (dst.space == space::hbm) throw fault{err_unreachable, "engines write SBUF or PSUM, not hbm"};
    if (es.id == engine::gpsimd && dst.space == space::psum) throw fault{err_unreachable, "GpSimd cannot reach PSUM"};
    const unsigned parts = ins.dst.partitions;
    const std::uint64_t n = free_elements(ins.dst);
    auto source = [&](const access_pattern& ap) {
        tile s = check_tile(es, ap, true);
        if (s.space == space::hbm) throw fault{err_unreachable, "engines read SBUF or PSUM, not hbm"};
        if (es.id == engine::gpsimd && s.space == space::psum) throw fault{err_unreachable, "GpSimd cannot reach PSUM"};
        if (ap.partitions != parts) throw fault{err_shape, "source and destination partitions differ"};
        if (op != opcode::tensor_reduce && free_elements(ap) != n)
            throw fault{err_shape, "source and destination sizes differ"};
        return s;
    };
    std::vector<std::int64_t> dst_off(n);
    walk(ins.dst, [&](std::uint64_t i, std::int64_t off) { dst_off[i] = off; });
    switch (op) {
    case opcode::memset:
        for (unsigned p = 0; p < parts; ++p)
            for (std::uint64_t i = 0; i < n; ++i) store(dst, p, dst_off[i], ins.scalar, stochastic);
        break;
    case opcode::iota:
        for (unsigned p = 0; p < parts; ++p)
            for (std::uint64_t i = 0; i < n; ++i)
                store(dst, p, dst_off[i],
                      static_cast<float>(ins.imm) + static_cast<float>(p) * ins.scalar2 + static_cast<float>(i) * ins.scalar,
                      stochastic);
        break;
    case opcode::tensor_copy:
    case opcode::tensor_scalar:
    case opcode::activation: {
        const tile s = source(ins.src0);
        std::vector<std::int64_t> so(n);
        walk(ins.src0, [&](std::uint64_t i, std::int64_t off) { so[i] = off; });
        const alu a = static_cast<alu>(ins.alu);
        const function f = static_cast<function>(ins.function);
        for (unsigned p = 0; p < parts; ++p)
            for (std::uint64_t i = 0; i < n; ++i) {
                float x = load(s, p, so[i]);
                if (op == opcode::tensor_scalar) x = apply_alu(a, x, ins.scalar);
                if (op == opcode::activation) x = apply_function(f, x * ins.scalar + ins.scalar2);
                store(dst, p, dst_off[i], x, stochastic);
            }
        break;
    }
    case opcode::tensor_tensor: {
        const tile s0 = source(ins.src0), s1 = source(ins.src1);
        std::vector<std::int64_t> o0(n), o1(n);
        walk(ins.src0, [&](std::uint64_t i, std::int64_t off) { o0[i] = off; });
        walk(ins.src1, [&](std::uint64_t i, std::int64_t off) { o1[i] = off; });
        const alu a = static_cast<alu>(ins.alu);
        for (unsigned p = 0; p < parts; ++p)
            for (std::uint64_t i = 0; i < n; ++i)
                store(dst, p, dst_off[i], apply_alu(a, load(s0, p, o0[i]), load(s1, p, o1[i])), stochastic);
        break;
    }
    case opcode::affine_select: {
        // A mask from an affine function of (partition, element index):
        // keep src where scalar2*p + scalar*i + imm >= 0, else the value whose
        // bits are in target (for example -inf for a causal mask).
        const tile s = source(ins.src0);
        std::vector<std::int64_t> so(n);
        walk(ins.src0, [&](std::uint64_t i, std::int64_t off) { so[i] = off; });
        float otherwise;
        std::memcpy(&otherwise, &ins.target, 4);
        const double base = static_cast<double>(static_cast<std::int32_t>(ins.imm));
        for (unsigned p = 0; p < parts; ++p)
            for (std::uint64_t i = 0; i < n; ++i) {
                const double v = static_cast<double>(ins.scalar2) * (ins.dst.start_partition + p) +
                                 static_cast<double>(ins.scalar) * static_cast<double>(i) + base;
                store(dst, p, dst_off[i], v >= 0 ? load(s, p, so[i]) : otherwise, stochastic);
            }
        break;
    }
    case opcode::tensor_reduce: {
        // dst[p][0] = src[p][0] <alu> src[p][1] <alu> ... in walk order, in fp32.
        const tile s = source(ins.src0);
        const alu a = static_cast<alu>(ins.alu);
        for (unsigned p = 0; p < parts; ++p) {
            bool first = true;
            float acc = 0;
            walk(ins.src0, [&](std::uint64_t, std::int64_t off) {
                const float x = load(s, p, off);
                acc = first ? x : apply_alu(a, acc, x);
                first = false;
            });
            store(dst, p, dst_off[0], acc, stochastic);
        }
        break;
    }
    default: throw fault{err_illegal, "not an elementwise opcode"};
    }
    // Timing: elements over the engine's rate, plus a fixed overhead.
    const bool nar = narrow(dst.type);
    std::uint64_t rate = gpsimd_elements_per_cycle;
    if (es.id == engine::vector) rate = nar ? vector_elements_per_cycle_narrow : vector_elements_per_cycle_wide;
    if (es.id == engine::scalar) rate = nar ? scalar_elements_per_cycle_narrow : scalar_elements_per_cycle_wide;
    const std::uint64_t elements = n * parts;
    return cycles_at(instruction_overhead_cycles + (elements + rate - 1) / rate, engine_clock);
}

bool neuroncore::back_to_back(const engine_state& es) {
    return es.warm && sc_core::sc_time_stamp() == es.busy_until;
}

std::uint64_t neuroncore::tensor_fill() const {
    return tensor_fill_cycles.get() ? tensor_fill_cycles.get() : 3 * partitions.get() - 2;
}

sc_time neuroncore::tensor_time(engine_state& es, std::uint64_t cycles) const {
    // The next pass's R rows of weights load through the array's one weight
    // port, a row per cycle, into the other bank while the pass before
    // streams: hidden when that pass streamed for at least R cycles; a
    // shorter one leaves the difference to wait (docs/rtl.md).
    const std::uint64_t pass = cycles;
    if (!back_to_back(es)) cycles += tensor_fill();
    else if (es.last_pass_cycles < partitions.get()) cycles += partitions.get() - es.last_pass_cycles;
    es.last_pass_cycles = pass;
    return cycles_at(cycles, tensor_clock);
}

sc_time neuroncore::matmul(engine_state& es, const instruction& ins) {
    // psum dst[m][n] (+)= sum over k of stationary src0[k][m] x moving src1[k][n]
    const tile dst = check_tile(es, ins.dst, true);
    const tile a = check_tile(es, ins.src0, true);
    const tile b = check_tile(es, ins.src1, true);
    if (dst.space != space::psum) throw fault{err_unreachable, "matmul writes PSUM"};
    if (a.space != space::sbuf || b.space != space::sbuf) throw fault{err_unreachable, "matmul reads SBUF"};
    if (dst.type != dtype::fp32 && dst.type != dtype::bf16) throw fault{err_dtype, "matmul output is fp32 or bf16"};
    if (ins.sparsity > static_cast<std::uint8_t>(sparsity::s4_16)) throw fault{err_illegal, "unknown sparsity"};
    // Geometry (docs/isa.md): each stationary partition holds V values of
    // every column (MX: 4), each moving partition D dense K values of every
    // column (D = V dense; V x G/4 with 4 of every G kept).
    const bool mx = ins.flags & flag_mx;
    const unsigned G = sparsity_group(static_cast<sparsity>(ins.sparsity));
    matmul_shape s;
    s.V = mx ? 4 : 1;
    s.D = G ? s.V * G / 4 : s.V;
    s.P = ins.src0.partitions;
    s.Kc = s.V * s.P;
    s.K = s.D * s.P;
    s.M = static_cast<unsigned>(free_elements(ins.src0) / s.V);
    s.N = static_cast<unsigned>(free_elements(ins.src1) / s.D);
    if (ins.src1.partitions != s.P) throw fault{err_shape, "stationary and moving have different partition counts"};
    if (free_elements(ins.src0) != static_cast<std::uint64_t>(s.V) * s.M ||
        free_elements(ins.src1) != static_cast<std::uint64_t>(s.D) * s.N)
        throw fault{err_shape, fmt::format("operand free sizes must be multiples of {} (stationary) and {} (moving)", s.V, s.D)};
    // The array is partitions x partitions: K and M are bounded by it.
    if (s.M > partitions.get() || ins.dst.partitions != s.M)
        throw fault{err_shape, fmt::format("stationary columns (M) must equal dst partitions, <= {}", partitions.get())};
    if (s.N > max_moving_free.get() || free_elements(ins.dst) != s.N)
        throw fault{err_shape, fmt::format("moving columns (N) must equal dst free size, <= {}", max_moving_free.get())};
    if (G) s.k_of = sparse_indices(ins, s, G);
    if (mx) return matmul_mx(es, ins, s, dst, a, b);
    if (a.type != b.type || a.type == dtype::int32 || a.type == dtype::e2m1)
        throw fault{err_dtype, "matmul operands: one float type (e2m1 only in MX mode)"};
    const unsigned M = s.M, N = s.N, Kc = s.Kc;
    matmul_flops_ += 2ull * s.K * M * N;  // dense-equivalent
    // Operands decoded once (exact), then the defined order: for each output,
    // acc = +0; for each kept k in increasing order: acc = fl32(acc + a[k][m] x
    // b[k][n]) with one rounding, a fused multiply-add (docs/numerics.md rule
    // 18). A sparse matmul multiplies only the kept values.
    std::vector<float> A(static_cast<std::size_t>(Kc) * M), B(static_cast<std::size_t>(s.K) * N), acc(static_cast<std::size_t>(M) * N, 0.0f);
    std::vector<std::int64_t> ao(M), bo(static_cast<std::size_t>(s.D) * N), dof(N);
    walk(ins.src0, [&](std::uint64_t i, std::int64_t off) { ao[i] = off; });
    walk(ins.src1, [&](std::uint64_t i, std::int64_t off) { bo[i] = off; });
    walk(ins.dst, [&](std::uint64_t i, std::int64_t off) { dof[i] = off; });
    for (unsigned p = 0; p < s.P; ++p) {
        for (unsigned m = 0; m < M; ++m) A[static_cast<std::size_t>(p) * M + m] = load(a, p, ao[m]);
        for (unsigned j = 0; j < s.D * N; ++j) B[static_cast<std::size_t>(s.D * p + j % s.D) * N + j / s.D] = load(b, p, bo[j]);
    }
    const unsigned cadence = a.type == dtype::fp32 ? static_cast<unsigned>(tensor_fp32_cycles_per_column.get()) : 1;
    array_operands op{Kc, M, N, A.data(), B.data()};
    op.cadence = cadence;
    op.k_of = s.k_of.empty() ? nullptr : s.k_of.data();
    op.b_rows = s.K;
    // When every product is exact in fp32, multiply-then-add rounds once and
    // vectorises; otherwise (fp32 operands, bf16 products that leave the
    // normal range) each step is a std::fma.
    op.fused = !products_exact(a.type, A, B);
    array_compute(op, acc);
    write_psum(ins, dst, acc, M, N, dof);
    // Timing: one moving column per cycle (fp32: tensor_fp32_cycles_per_column),
    // plus the array fill when the engine was idle before this matmul.
    return tensor_time(es, static_cast<std::uint64_t>(N) * cadence);
}

std::vector<std::uint16_t> neuroncore::sparse_indices(const instruction& ins, const matmul_shape& s, unsigned G) {
    // Metadata byte j of stationary partition p (SBUF partition start + p, at
    // meta + j) is the position, within its group of G K values, of the
    // stationary's j-th element: column j / V, kept value c = V p + j % V of
    // group c / 4. Positions in a group strictly increase.
    if (s.Kc % 4) throw fault{err_shape, "a sparse stationary holds whole groups of 4 kept values"};
    const std::uint64_t row = static_cast<std::uint64_t>(s.V) * s.M;
    if (ins.meta + row > sbuf_partition_size.get().bytes) throw fault{err_out_of_bounds, "sparsity metadata outside SBUF"};
    std::vector<std::uint16_t> k_of(static_cast<std::size_t>(s.M) * s.Kc);
    for (unsigned p = 0; p < s.P; ++p) {
        const unsigned char* meta = sbuf(ins.src0.start_partition + p) + ins.meta;
        for (unsigned j = 0; j < row; ++j) {
            const unsigned m = j / s.V, c = s.V * p + j % s.V, pos = meta[j];
            std::uint16_t& k = k_of[static_cast<std::size_t>(m) * s.Kc + c];
            k = static_cast<std::uint16_t>(c / 4 * G + pos);
            if (pos >= G || (c % 4 && k <= (&k)[-1]))
                throw fault{err_sparsity, fmt::format("sparsity metadata of column {}, kept value {}: position {} ({})", m, c,
                                                      pos, pos >= G ? fmt::format("group of {}", G) : "not increasing")};
        }
    }
    return k_of;
}

void neuroncore::write_psum(const instruction& ins, const tile& dst, const std::vector<float>& acc, unsigned M, unsigned N,
                            const std::vector<std::int64_t>& dof) {
    const bool accumulate = ins.flags & flag_accumulate, stochastic = ins.flags & flag_stochastic;
    for (unsigned m = 0; m < M; ++m)
        for (unsigned n = 0; n < N; ++n) {
            float v = acc[static_cast<std::size_t>(m) * N + n];
            if (accumulate) v = load(dst, m, dof[n]) + v;
            if (std::isnan(v)) v = std::numeric_limits<float>::quiet_NaN();  // rule 24: one NaN, 0x7FC00000
            store(dst, m, dof[n], v, stochastic);
        }
}

sc_time neuroncore::matmul_mx(engine_state& es, const instruction& ins, const matmul_shape& s, const tile& dst,
                              const tile& a, const tile& b) {
    // MX (OCP MX v1.0 blocks of 32 along K): the E8M0 scale of K block g
    // (dense K values 32g..32g+31) and column m sits in SBUF partition g at
    // byte imm + m (src0), target + n (src1). dst[m][n] = fl32 sum over
    // blocks, in order, of the block's dot product over its kept values
    // (exact, rounded once to fp32: docs/numerics.md rules 16, 22 and 23).
    auto mx_type = [](dtype t) { return t == dtype::e4m3fn || t == dtype::e5m2 || t == dtype::e2m1; };
    if (!mx_type(a.type) || !mx_type(b.type)) throw fault{err_dtype, "MX operands are e4m3fn, e5m2 or e2m1"};
    const unsigned M = s.M, N = s.N, K = s.K, Kc = s.Kc, blocks = K / 32, per_block = 32 * Kc / K;
    if (K % 32 || ins.src0.start_partition || ins.src1.start_partition)
        throw fault{err_shape, "MX K must be a multiple of 32, from partition 0"};
    const std::uint64_t part_bytes = sbuf_partition_size.get().bytes;
    if (ins.imm + M > part_bytes || ins.target + N > part_bytes) throw fault{err_out_of_bounds, "MX scales outside SBUF"};
    matmul_flops_ += 2ull * K * M * N;  // dense-equivalent
    const auto fa = format_of(a.type), fb = format_of(b.type);
    std::vector<std::int64_t> ao(static_cast<std::size_t>(s.V) * M), bo(static_cast<std::size_t>(s.D) * N), dof(N);
    walk(ins.src0, [&](std::uint64_t i, std::int64_t off) { ao[i] = off; });
    walk(ins.src1, [&](std::uint64_t i, std::int64_t off) { bo[i] = off; });
    walk(ins.dst, [&](std::uint64_t i, std::int64_t off) { dof[i] = off; });
    std::vector<float> acc(static_cast<std::size_t>(M) * N);
    auto model = [&](std::vector<float>& out) {
        // Elements as exact integers (value x 2^shift), transposed so each
        // column's K run is contiguous; non-finite elements flagged per block (and
        // per element of the moving operand, which a sparse matmul reads only
        // where it keeps). Unless an operand is e5m2, every product is below 2^36
        // and a block's sum below 2^41: exact in a double, whose sum can then run
        // in any order (vectorised); e5m2 products reach 2^64 and take int128.
        const bool wide = a.type == dtype::e5m2 || b.type == dtype::e5m2;
        const mx_codes& ca = mx_code_table(fa);
        const mx_codes& cb = mx_code_table(fb);
        std::vector<double> ad(static_cast<std::size_t>(M) * Kc), bd(static_cast<std::size_t>(N) * K);
        std::vector<std::int64_t> ai(wide ? ad.size() : 0), bi(wide ? bd.size() : 0);
        std::vector<std::uint8_t> a_nan(static_cast<std::size_t>(M) * blocks, 0), b_nan(static_cast<std::size_t>(N) * blocks, 0);
        std::vector<std::uint8_t> b_bad(s.k_of.empty() ? 0 : static_cast<std::size_t>(N) * K, 0);
        for (unsigned p = 0; p < s.P; ++p) {
            for (unsigned j = 0; j < s.V * M; ++j) {
                const std::uint8_t code = *element(a, p, ao[j]);
                const std::size_t at = static_cast<std::size_t>(j / s.V) * Kc + s.V * p + j % s.V;
                ad[at] = static_cast<double>(ca.integer[code]);
                if (wide) ai[at] = ca.integer[code];
                if (!ca.finite[code]) a_nan[static_cast<std::size_t>(j / s.V) * blocks + (s.V * p + j % s.V) / per_block] = 1;
            }
            for (unsigned j = 0; j < s.D * N; ++j) {
                const std::uint8_t code = *element(b, p, bo[j]);
                const unsigned n = j / s.D, k = s.D * p + j % s.D;
                const std::size_t at = static_cast<std::size_t>(n) * K + k;
                bd[at] = static_cast<double>(cb.integer[code]);
                if (wide) bi[at] = cb.integer[code];
                if (!cb.finite[code]) {
                    b_nan[static_cast<std::size_t>(n) * blocks + k / 32] = 1;
                    if (!b_bad.empty()) b_bad[at] = 1;
                }
            }
        }
        const int shift = numerics::mx_element_shift(fa) + numerics::mx_element_shift(fb);
        for (unsigned m = 0; m < M; ++m) {
            const std::uint16_t* kk = s.k_of.empty() ? nullptr : &s.k_of[static_cast<std::size_t>(m) * Kc];
            for (unsigned n = 0; n < N; ++n) {
                float sum_blocks = 0;
                for (unsigned g = 0; g < blocks; ++g) {
                    const std::uint8_t sa = sbuf(g)[ins.imm + m], sb = sbuf(g)[ins.target + n];
                    const std::size_t xa = static_cast<std::size_t>(m) * Kc + g * per_block, yb = static_cast<std::size_t>(n) * K;
                    const std::uint16_t* ks = kk ? kk + g * per_block : nullptr;
                    bool nan = sa == numerics::e8m0_nan || sb == numerics::e8m0_nan || a_nan[static_cast<std::size_t>(m) * blocks + g];
                    if (!nan && b_nan[static_cast<std::size_t>(n) * blocks + g]) {
                        if (!ks) nan = true;
                        for (unsigned i = 0; ks && i < per_block; ++i) nan = nan || b_bad[yb + ks[i]];
                    }
                    float d;
                    if (nan) {
                        d = std::numeric_limits<float>::quiet_NaN();
                    } else {
                        numerics::mx_int128 sum = 0;
                        if (wide) {
                            for (unsigned i = 0; i < per_block; ++i)
                                sum += static_cast<numerics::mx_int128>(ai[xa + i]) * bi[yb + (ks ? ks[i] : 32 * g + i)];
                        } else {
                            const double* x = &ad[xa];
                            double exact = 0;
                            if (ks) {
                                for (unsigned i = 0; i < per_block; ++i) exact += x[i] * bd[yb + ks[i]];
                            } else {
                                const double* y = &bd[yb + 32 * g];
    #pragma omp simd reduction(+ : exact)
                                for (unsigned i = 0; i < 32; ++i) exact += x[i] * y[i];
                            }
                            sum = static_cast<std::int64_t>(exact);
                        }
                        d = numerics::round_scaled(sum, (sa - 127) + (sb - 127) - shift);
                    }
                    sum_blocks = g == 0 ? d : sum_blocks + d;
                }
                out[static_cast<std::size_t>(m) * N + n] = sum_blocks;
            }
        }
    };
    // The same job for the RTL: codes K x columns, scales per block.
    auto job = [&] {
        rtl::array_job j;
        j.K = K;
        j.M = M;
        j.N = N;
        j.mx = true;
        auto format = [](dtype t) {
            return t == dtype::e5m2 ? rtl::mx_format::e5m2 : t == dtype::e2m1 ? rtl::mx_format::e2m1 : rtl::mx_format::e4m3fn;
        };
        j.format_a = format(a.type);
        j.format_b = format(b.type);
        j.a.resize(static_cast<std::size_t>(K) * M);
        j.b.resize(static_cast<std::size_t>(K) * N);
        // Sparse: kept values at their dense K (holes elsewhere), as the
        // RTL's weights would be decompressed when they load.
        if (!s.k_of.empty()) j.holes.assign(j.a.size(), 1);
        for (unsigned p = 0; p < s.P; ++p) {
            for (unsigned e = 0; e < 4 * M; ++e) {
                const unsigned m = e / 4, c = 4 * p + e % 4;
                const unsigned k = s.k_of.empty() ? c : s.k_of[static_cast<std::size_t>(m) * Kc + c];
                j.a[static_cast<std::size_t>(k) * M + m] = *element(a, p, ao[e]);
                if (!j.holes.empty()) j.holes[static_cast<std::size_t>(k) * M + m] = 0;
            }
            for (unsigned e = 0; e < s.D * N; ++e)
                j.b[static_cast<std::size_t>(s.D * p + e % s.D) * N + e / s.D] = *element(b, p, bo[e]);
        }
        for (unsigned g = 0; g < blocks; ++g) {
            for (unsigned m = 0; m < M; ++m) j.scales_a.push_back(sbuf(g)[ins.imm + m]);
            for (unsigned n = 0; n < N; ++n) j.scales_b.push_back(sbuf(g)[ins.target + n]);
        }
        return j;
    };
    array_run(model, job, acc);
    write_psum(ins, dst, acc, M, N, dof);
    // Four multiplies per element of the array per cycle: N cycles per pass.
    return tensor_time(es, N);
}

sc_time neuroncore::quantize_mx(engine_state& es, const instruction& ins) {
    // src0 [Kp partitions][4C] (fp32/bf16/fp16) -> dst [Kp][4C] MX codes, in
    // the layout matmul_mx reads: 4 K values per partition per column, blocks
    // of 32 K values (8 partitions) per column; the block's E8M0 scale goes to
    // SBUF partition g at byte imm + c. OCP scale rule, or Trainium3's
    // (one power of two larger) with flag_mx_trn3_scale.
    const tile dst = check_tile(es, ins.dst, true);
    const tile s = check_tile(es, ins.src0, true);
    if (dst.space != space::sbuf || s.space == space::hbm) throw fault{err_unreachable, "quantize_mx writes SBUF"};
    if (dst.type != dtype::e4m3fn && dst.type != dtype::e5m2 && dst.type != dtype::e2m1)
        throw fault{err_dtype, "quantize_mx writes e4m3fn, e5m2 or e2m1"};
    const unsigned Kp = ins.src0.partitions;
    const std::uint64_t F = free_elements(ins.src0);
    if (Kp % 8 || ins.src0.start_partition || ins.dst.start_partition || ins.dst.partitions != Kp ||
        free_elements(ins.dst) != F || F % 4)
        throw fault{err_shape, "quantize_mx: 8k partitions from 0, free size 4 x columns, dst the same shape"};
    const unsigned C = static_cast<unsigned>(F / 4), G = Kp / 8;
    if (ins.imm + C > sbuf_partition_size.get().bytes) throw fault{err_out_of_bounds, "MX scales outside SBUF"};
    std::vector<std::int64_t> so(F), dof(F);
    walk(ins.src0, [&](std::uint64_t i, std::int64_t off) { so[i] = off; });
    walk(ins.dst, [&](std::uint64_t i, std::int64_t off) { dof[i] = off; });
    const auto rule = ins.flags & flag_mx_trn3_scale ? numerics::mx_scale_rule::trn3 : numerics::mx_scale_rule::ocp;
    for (unsigned c = 0; c < C; ++c)
        for (unsigned g = 0; g < G; ++g) {
            float block[numerics::mx_block_size];
            for (unsigned i = 0; i < 32; ++i) block[i] = load(s, 8 * g + i / 4, so[4 * c + i % 4]);
            const numerics::mx_block b = numerics::quantize_mx(block, format_of(dst.type), rule);
            for (unsigned i = 0; i < 32; ++i) *element(dst, 8 * g + i / 4, dof[4 * c + i % 4]) = b.elements[i];
            sbuf(g)[ins.imm + c] = b.scale;
        }
    const std::uint64_t elements = static_cast<std::uint64_t>(Kp) * F;
    return cycles_at(instruction_overhead_cycles + (elements + vector_elements_per_cycle_wide - 1) / vector_elements_per_cycle_wide,
                     engine_clock);
}

sc_time neuroncore::transpose(engine_state& es, const instruction& ins) {
    // dst[j][i] = src[i][j] for a partitions x free tile (<= 128 x 128).
    const tile dst = check_tile(es, ins.dst, true);
    const tile s = check_tile(es, ins.src0, true);
    const unsigned P = ins.src0.partitions, F = static_cast<unsigned>(free_elements(ins.src0));
    const auto limit = static_cast<unsigned>(es.id == engine::vector ? vector_transpose_size.get() : partitions.get());
    if (F > limit || P > limit || ins.dst.partitions != F || free_elements(ins.dst) != P)
        throw fault{err_shape, fmt::format("transpose shape (up to {} x {} on this engine)", limit, limit)};
    if (es.id == engine::gpsimd && (dst.space == space::psum || s.space == space::psum))
        throw fault{err_unreachable, "GpSimd cannot reach PSUM"};
    std::vector<std::int64_t> so(F), dof(P);
    walk(ins.src0, [&](std::uint64_t i, std::int64_t off) { so[i] = off; });
    walk(ins.dst, [&](std::uint64_t i, std::int64_t off) { dof[i] = off; });
    std::vector<float> tmp(static_cast<std::size_t>(P) * F);
    for (unsigned i = 0; i < P; ++i)
        for (unsigned j = 0; j < F; ++j) tmp[static_cast<std::size_t>(i) * F + j] = load(s, i, so[j]);
    if (es.id == engine::tensor) {
        // Through the array: the tile is the stationary (K = P, M = F), the
        // moving operand the P x P identity, the PEs select (docs/rtl.md).
        std::vector<float> identity(static_cast<std::size_t>(P) * P, 0.0f), out(static_cast<std::size_t>(F) * P);
        for (unsigned i = 0; i < P; ++i) identity[static_cast<std::size_t>(i) * P + i] = 1.0f;
        array_operands op{P, F, P, tmp.data(), identity.data()};
        op.select = true;
        array_compute(op, out);
        for (unsigned j = 0; j < F; ++j)
            for (unsigned i = 0; i < P; ++i) store(dst, j, dof[i], out[static_cast<std::size_t>(j) * P + i], false);
        return tensor_time(es, P);
    }
    for (unsigned i = 0; i < P; ++i)
        for (unsigned j = 0; j < F; ++j) store(dst, j, dof[i], tmp[static_cast<std::size_t>(i) * F + j], false);
    const std::uint64_t rate = narrow(dst.type) ? vector_elements_per_cycle_narrow : vector_elements_per_cycle_wide;
    return cycles_at(instruction_overhead_cycles + (static_cast<std::uint64_t>(P) * F + rate - 1) / rate, engine_clock);
}

void neuroncore::dma(engine_state& es, const instruction& ins) {
    // dst = src0 element by element over the pattern, with a cast; runs on
    // queue (flags >> 4), sharing the core's DMA bandwidth; the copy is
    // visible at once, the semaphore increments when the queue finishes it.
    const unsigned q = ins.flags >> flag_dma_queue_shift;
    if (q >= dma_queue_free_.size()) throw fault{err_illegal, fmt::format("DMA queue {} of {}", q, dma_queue_free_.size())};
    const tile dst = check_tile(es, ins.dst, false);
    const tile src = check_tile(es, ins.src0, false);
    const unsigned parts = ins.dst.partitions;
    const std::uint64_t n = free_elements(ins.dst);
    if (ins.src0.partitions != parts || free_elements(ins.src0) != n) throw fault{err_shape, "DMA source and destination shapes differ"};
    std::vector<std::int64_t> so(n), dof(n);
    walk(ins.src0, [&](std::uint64_t i, std::int64_t off) { so[i] = off; });
    walk(ins.dst, [&](std::uint64_t i, std::int64_t off) { dof[i] = off; });
    // Contiguous runs of hbm are moved as one memory access.
    std::vector<unsigned char> buf;
    auto read_hbm = [&](const tile& t, unsigned p, std::uint64_t i, float& v) {
        const std::uint64_t addr = t.address + static_cast<std::uint64_t>(p) * t.ap->partition_stride +
                                   static_cast<std::uint64_t>(so[i]) * t.bytes;
        std::uint32_t code = 0;
        if (!mem_access(tlm::TLM_READ_COMMAND, addr, reinterpret_cast<unsigned char*>(&code), t.bytes))
            throw fault{err_memory, fmt::format("DMA read at 0x{:x} failed", addr)};
        v = t.type == dtype::int32 ? static_cast<float>(static_cast<std::int32_t>(code))
                                   : numerics::decode(code, format_of(t.type));
        return code;
    };
    const bool same_type = src.type == dst.type;
    auto unit_stride = [](const access_pattern& ap) { return ap.dims == 1 && ap.step[0] == 1; };
    if (same_type && unit_stride(ins.src0) && unit_stride(ins.dst) && (src.space == space::hbm) != (dst.space == space::hbm)) {
        // Fast path: one memory access per partition row between device
        // memory and SBUF/PSUM (the common DMA); same bytes as the loop below.
        const unsigned row = static_cast<unsigned>(n) * src.bytes;
        for (unsigned p = 0; p < parts; ++p) {
            if (src.space == space::hbm) {
                const std::uint64_t addr = src.address + static_cast<std::uint64_t>(p) * ins.src0.partition_stride;
                if (!mem_access(tlm::TLM_READ_COMMAND, addr, element(dst, p, 0), row))
                    throw fault{err_memory, fmt::format("DMA read at 0x{:x} failed", addr)};
            } else {
                const std::uint64_t addr = dst.address + static_cast<std::uint64_t>(p) * ins.dst.partition_stride;
                if (!mem_access(tlm::TLM_WRITE_COMMAND, addr, element(src, p, 0), row))
                    throw fault{err_memory, fmt::format("DMA write at 0x{:x} failed", addr)};
            }
        }
    } else
    for (unsigned p = 0; p < parts; ++p) {
        for (std::uint64_t i = 0; i < n; ++i) {
            std::uint32_t code = 0;
            float v = 0;
            if (src.space == space::hbm)
                code = read_hbm(src, p, i, v);
            else {
                std::memcpy(&code, element(src, p, so[i]), src.bytes);
                v = src.type == dtype::int32 ? static_cast<float>(static_cast<std::int32_t>(code))
                                             : numerics::decode(code, format_of(src.type));
            }
            if (dst.space == space::hbm) {
                const std::uint64_t addr = dst.address + static_cast<std::uint64_t>(p) * ins.dst.partition_stride +
                                           static_cast<std::uint64_t>(dof[i]) * dst.bytes;
                std::uint32_t out = code;
                if (!same_type) out = numerics::encode(v, format_of(dst.type));
                if (!mem_access(tlm::TLM_WRITE_COMMAND, addr, reinterpret_cast<unsigned char*>(&out), dst.bytes))
                    throw fault{err_memory, fmt::format("DMA write at 0x{:x} failed", addr)};
            } else if (same_type) {
                std::memcpy(element(dst, p, dof[i]), &code, dst.bytes);
            } else {
                store(dst, p, dof[i], v, false);
            }
        }
    }
    const std::uint64_t bytes = static_cast<std::uint64_t>(parts) * n * std::max(src.bytes, dst.bytes);
    dma_bytes_ += bytes;
    // Timing: the queue takes its descriptors in order; the transfer books the
    // shared DMA bandwidth.
    const calendar::tick now = sc_core::sc_time_stamp().value();
    const calendar::tick ready = std::max(now, dma_queue_free_[q]) + dma_descriptor_cost.get().value();
    const calendar::tick start = dma_bus_.book(ready, dma_bandwidth.get().transfer_time(bytes).value());
    const calendar::tick end = start + dma_bandwidth.get().transfer_time(bytes).value();
    dma_queue_free_[q] = end;
    timeline::instance().slice(es.track, fmt::format("dma q{} {}", q, format_byte_count(byte_count{bytes})),
                               sc_time::from_value(ready), sc_time::from_value(end));
    if (ins.signal_sem != no_semaphore) signal(ins.signal_sem, ins.signal_add, sc_time::from_value(end));
}

sc_time neuroncore::execute(engine_state& es, const instruction& ins) {
    switch (static_cast<opcode>(ins.op)) {
    case opcode::nop: return sc_core::SC_ZERO_TIME;
    case opcode::memset:
    case opcode::tensor_copy:
    case opcode::iota:
    case opcode::tensor_tensor:
    case opcode::tensor_scalar:
    case opcode::tensor_reduce:
    case opcode::activation:
        if (es.id == engine::tensor || es.id == engine::sync) throw fault{err_illegal, "not a Tensor or Sync instruction"};
        if (static_cast<opcode>(ins.op) == opcode::activation && es.id != engine::scalar)
            throw fault{err_illegal, "activation runs on the Scalar engine"};
        if (static_cast<opcode>(ins.op) == opcode::iota && es.id != engine::gpsimd)
            throw fault{err_illegal, "iota runs on GpSimd"};
        return elementwise(es, ins);
    case opcode::affine_select:
        if (es.id != engine::gpsimd) throw fault{err_illegal, "affine_select runs on GpSimd"};
        return elementwise(es, ins);
    case opcode::quantize_mx:
        if (es.id != engine::vector) throw fault{err_illegal, "quantize_mx runs on the Vector engine"};
        return quantize_mx(es, ins);
    case opcode::matmul:
        if (es.id != engine::tensor) throw fault{err_illegal, "matmul runs on the Tensor engine"};
        return matmul(es, ins);
    case opcode::transpose:
        if (es.id != engine::tensor && es.id != engine::vector)
            throw fault{err_illegal, "transpose runs on the Tensor engine (or Vector, up to 32 x 32)"};
        return transpose(es, ins);
    default: throw fault{err_illegal, fmt::format("illegal opcode 0x{:02x}", ins.op)};
    }
}

void neuroncore::signal(unsigned sem, std::uint32_t add, const sc_time& at) {
    const sc_time now = sc_core::sc_time_stamp();
    if (at <= now) {
        semaphores_[sem] += add;
        semaphore_changed_.notify(sc_core::SC_ZERO_TIME);
        return;
    }
    pending_signals_.emplace(at, std::make_pair(sem, add));
    signals_due_.notify(pending_signals_.begin()->first - now);
}

void neuroncore::apply_due_signals() {
    const sc_time now = sc_core::sc_time_stamp();
    while (!pending_signals_.empty() && pending_signals_.begin()->first <= now) {
        auto [sem, add] = pending_signals_.begin()->second;
        semaphores_[sem] += add;
        pending_signals_.erase(pending_signals_.begin());
    }
    semaphore_changed_.notify(sc_core::SC_ZERO_TIME);
    if (!pending_signals_.empty()) signals_due_.notify(pending_signals_.begin()->first - now);
}

void neuroncore::stop_on_error(engine_state& es, std::uint32_t pc_index, const fault& f) {
    es.status = engine_status::error;
    es.error = f.code;
    es.error_pc = pc_index;
    ++errors_;
    log().error("{} engine stopped at instruction {}: error {} ({})", isa::name(es.id), pc_index, f.code, f.what);
    timeline::instance().instant(es.track, fmt::format("error {}", f.code), sc_core::sc_time_stamp());
    irq_status_.set(irq_status_.value() | TRN3_NC_IRQ_ENGINE(static_cast<unsigned>(es.id)));
    update_irq();
    stopped_.notify(sc_core::SC_ZERO_TIME);
}

void neuroncore::update_irq() { error_irq.set((irq_status_.value() & irq_enable_.value()) != 0); }

void neuroncore::run_engine(unsigned e) {
    engine_state& es = engines_[e];
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
                stop_on_error(es, index, {err_illegal, fmt::format("instruction for the {} engine in the {} stream",
                                                                   isa::name(static_cast<engine>(ins.engine)),
                                                                   isa::name(es.id))});
                break;
            }
            if (ins.wait_sem != no_semaphore && semaphores_[ins.wait_sem] < ins.wait_value) {
                es.waiting_sem = ins.wait_sem;
                es.waiting_value = ins.wait_value;
                es.waiting_pc = index;
                while (semaphores_[ins.wait_sem] < ins.wait_value && epoch_ == epoch && es.starts == served)
                    sc_core::wait(semaphore_changed_);
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
                case opcode::dma: dma(es, ins); break;
                default: {
                    const sc_time busy = execute(es, ins);
                    if (busy > sc_core::SC_ZERO_TIME) {
                        sc_core::wait(busy);
                        es.busy_until = sc_core::sc_time_stamp();
                        es.warm = true;
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
                signal(ins.signal_sem, ins.signal_add, sc_core::sc_time_stamp());
            index = next;
        }
        if (es.status == engine_status::halted) stopped_.notify(sc_core::SC_ZERO_TIME);
    }
}

// ---- registers ------------------------------------------------------------

void neuroncore::ctrl_transport(tlm::tlm_generic_payload& tx, sc_time& delay) {
    regs_.transport(tx);
    delay += cycles(1);
}

unsigned neuroncore::ctrl_dbg(tlm::tlm_generic_payload& tx) {
    regs_.transport(tx, true);
    return tx.is_response_ok() ? tx.get_data_length() : 0;
}

} // namespace trn3::neuroncore
