// neuroncore: one NeuronCore with device memory, running one reference kernel.
//
//      nc0 (NeuronCore-v4) ── mem ──> device (sparse, 16 GiB)
//
// The platform writes seeded random inputs to device memory, loads the
// kernel's instruction streams, starts the engines, waits for them to stop,
// and checks the result against an fp64 reference. It reports the simulated
// kernel time, TFLOP/s and % of the core's peak (matmul kernels), the host
// time, and the largest error.
//
//   trn3vp run --platform neuroncore -p neuroncore.kernel=gemm -p neuroncore.m=1024
//   trn3vp run --platform neuroncore -p neuroncore.kernel=softmax -p neuroncore.cols=2048
//   trn3vp run --platform neuroncore -p neuroncore.kernel=attention -p neuroncore.keys=512
//
// kernel=file runs a kernel from files instead (the Python module's kernels,
// docs/python.md): `kernel_file` is a JSON manifest
//   {"program": "k.trn3prog",                                 a program container (runtime/container.h)
//    "inputs":  [{"address": 0, "file": "a.bin"}, ...],       written to device memory first
//    "outputs": [{"address": 8589934592, "bytes": 4096, "file": "c.bin"}, ...],   read back after
//    "result":  "result.json"}                                what ran: times, engines, errors
// (relative names are the manifest's folder's). The result holds the simulated
// time, each engine's status, error, failing instruction and busy time, the
// matmul FLOPs, DMA bytes and instructions.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "trn3/core/protocol_checker.h"
#include "trn3/core/sparse_memory.h"
#include "trn3/core/stats.h"
#include "trn3/core/user_file.h"
#include "trn3/kernels/attention.h"
#include "trn3/kernels/gemm.h"
#include "trn3/kernels/norm.h"
#include "trn3/kernels/reference.h"
#include "trn3/neuroncore/neuroncore.h"
#include "trn3/numerics/float_format.h"
#include "trn3/numerics/mx.h"
#include "trn3/platforms/platform.h"
#include "trn3/rtl/systolic_array.h"
#include "trn3/runtime/container.h"

namespace trn3 {
namespace {

using namespace kernels;

class neuroncore_platform final : public platform {
public:
    param<std::string> kernel{
        this, "kernel", "gemm", "kernel to run",
        one_of<std::string>{{"gemm", "softmax", "rmsnorm", "attention", "matmul_stream", "file"}}};
    param<std::string> kernel_file{this, "kernel_file", "",
                                   "kernel=file: the JSON manifest of a kernel to run (program container, inputs, "
                                   "outputs, result file)"};
    param<std::uint64_t> m{this, "m", 512, "gemm: M (multiple of 128)"};
    param<std::uint64_t> n{this, "n", 1024, "gemm: N (multiple of 512)"};
    param<std::uint64_t> k{this, "k", 512, "gemm: K (multiple of 128)"};
    param<std::uint64_t> rows{this, "rows", 256, "softmax, rmsnorm: rows (multiple of 128)"};
    param<std::uint64_t> cols{this, "cols", 1024, "softmax, rmsnorm: columns (up to 4096)"};
    param<std::uint64_t> keys{
        this, "keys", 256,
        "attention: keys (a multiple of 128; above 512, flash-style blocks of 512); queries are 128"};
    param<std::uint64_t> head_dim{this, "head_dim", 128, "attention: head dimension (up to 128)"};
    param<std::uint64_t> repeats{this, "repeats", 1000, "matmul_stream: back-to-back 128x128x512 matmuls",
                                 range<std::uint64_t>{1, {}}};
    param<std::string> operands{this, "dtype", "bf16",
                                "gemm operands (all; mxfp8 and mxfp4 are OCP MX blocks of 32 with E8M0 scales); "
                                "matmul_stream: bf16 or e4m3fn",
                                one_of<std::string>{{"bf16", "e4m3fn", "mxfp8", "mxfp4"}}};
    param<std::uint64_t> seed{this, "seed", 1, "seed of the random inputs", seed_range()};
    param<double> tolerance{this, "tolerance", 1e-4,
                            "largest accepted error against fp64, relative to max(|reference|, typical magnitude); "
                            "attention rounds P to bf16, so it takes the larger of this and 1e-2",
                            range<double>{0.0, {}}};

    neuroncore::neuroncore core{"nc0"};
    sparse_memory device{"device", byte_count{16ull << 30}};

    explicit neuroncore_platform(const sc_core::sc_module_name& name) : platform(name) {
        if (mx() && kernel.get() != "gemm")
            throw config_error("param " + operands.name() + " = '" + operands.get() +
                               "': only the gemm kernel runs MX operands");
        if (kernel.get() == "file") load_manifest();
        else check_layout();  // before the builder sees the shape: an outsize one takes it long
        // A shape the kernel cannot tile is the user's error: check it now.
        try {
            if (kernel.get() == "gemm")
                gemm({unsigned(m), unsigned(n), unsigned(k), mx() ? mx_elements() : dtype::bf16, mx()}, {0, 0, 0});
            if (kernel.get() == "softmax" || kernel.get() == "rmsnorm") softmax({unsigned(rows), unsigned(cols)}, 0, 0);
            if (kernel.get() == "attention") attention({unsigned(keys), unsigned(head_dim)}, 0, 0, 0, 0);
        } catch (const std::invalid_argument& e) {
            throw config_error(std::string(name) + ": " + e.what());
        }
        connect(core.mem, device.in);
        SC_HAS_PROCESS(neuroncore_platform);
        SC_THREAD(run);
    }

    // The kernels' device-memory layout: operands in slots of 1 GiB (attention)
    // or 4 GiB, the result at 8 GiB, MX scales at 10 and 11 GiB, the code at
    // 12 GiB. A shape whose operand outgrows its slot, or a device too small
    // for the layout, is the user's error, found before anything is written.
    void check_layout() const {
        constexpr std::uint64_t GiB = 1ull << 30;
        const std::uint64_t need = 13 * GiB;
        if (device.size.get().bytes < need)
            throw config_error(fmt::format(
                "param {} = {}: the kernels' layout needs {} (operands from 0, code at 12 GiB)", device.size.name(),
                format_byte_count(device.size.get()), format_byte_count(byte_count{need})));
        const std::uint64_t es = operands.get() == "bf16" ? 2 : 1;
        auto fits = [&](std::uint64_t bytes, std::uint64_t slot, const char* what) {
            if (bytes > slot)
                throw config_error(fmt::format("{}: {} takes {} of device memory, more than its {} slot", name(), what,
                                               format_byte_count(byte_count{bytes}),
                                               format_byte_count(byte_count{slot})));
        };
        const std::uint64_t M = m, N = n, K = k;
        if (kernel.get() == "gemm") {
            fits(K * M * es, 4 * GiB, "operand A (K x M)");
            fits(K * N * es, 4 * GiB, "operand B (K x N)");
            fits(M * N * 4, 2 * GiB, "the result (M x N fp32)");
        } else if (kernel.get() == "softmax" || kernel.get() == "rmsnorm") {
            fits(rows.get() * cols.get() * 4, 4 * GiB, "the input (rows x cols fp32)");
        }
    }

    // kernel=file: reads the manifest, checks it and writes the inputs, all
    // before the run (a bad file is the user's error, exit 2, found at once).
    void load_manifest() {
        constexpr std::uint64_t code_base = 12ull << 30;
        const std::string& path = kernel_file.get();
        if (path.empty()) throw config_error("param " + kernel_file.name() + ": kernel=file needs a manifest");
        const std::string dir = path.find('/') == std::string::npos ? "" : path.substr(0, path.rfind('/') + 1);
        auto resolve = [&](const std::string& f) { return f.empty() || f[0] == '/' ? f : dir + f; };
        auto bad = [&](const std::string& why) { return config_error("kernel file '" + path + "': " + why); };
        try {
            const nlohmann::json m = nlohmann::json::parse(read_user_text(path, "kernel file"));
            only_keys(m, {"program", "inputs", "outputs", "result"}, "the manifest", bad);
            const std::vector<std::uint8_t> container =
                read_user_file(resolve(m.at("program").get<std::string>()), "program container");
            runtime::container_view view;
            if (const std::string why = runtime::parse(container.data(), container.size(), view); !why.empty())
                throw bad("program: " + why);
            if (view.cores != 1) throw bad("program: one NeuronCore runs one core's program");
            try {
                program_ = runtime::unpack(container.data(), view, 0);
            } catch (const std::invalid_argument& e) {
                throw bad(std::string("program: ") + e.what());
            }
            // The code sits at 12 GiB, in 4 KiB-aligned streams (kernels::program::load).
            std::uint64_t code_bytes = 0;
            for (unsigned e = 0; e < isa::engine_count; ++e)
                code_bytes +=
                    (program_.on(static_cast<isa::engine>(e)).code().size() * sizeof(isa::instruction) + 4095) / 4096 *
                    4096;
            if (device.size.get().bytes < code_base + code_bytes)
                throw bad(fmt::format("param {} = {}: kernels take device memory below 12 GiB and their code above it "
                                      "({} bytes)",
                                      device.size.name(), format_byte_count(device.size.get()), code_bytes));
            auto address = [&](const nlohmann::json& j, const char* key, const std::string& what) {
                const nlohmann::json& v = j.at(key);
                if (!v.is_number_unsigned())
                    throw bad(fmt::format("{}: '{}' is {}, not a whole number of bytes", what, key, v.dump()));
                return v.get<std::uint64_t>();
            };
            auto region = [&](std::uint64_t at, std::uint64_t bytes, const std::string& what) {
                if (at > code_base || bytes > code_base - at)
                    throw bad(fmt::format("{} at {:#x}, {} bytes: device memory from 12 GiB up holds the code", what,
                                          at, bytes));
            };
            std::set<std::string> files;
            for (const auto& in : m.value("inputs", nlohmann::json::array())) {
                only_keys(in, {"address", "file"}, "an input", bad);
                const std::string f = resolve(in.at("file").get<std::string>());
                const std::uint64_t at = address(in, "address", "input '" + f + "'");
                const auto bytes = read_user_file(f, "kernel input", code_base);
                region(at, bytes.size(), "input '" + f + "'");
                std::memcpy(device.data() + at, bytes.data(), bytes.size());
            }
            for (const auto& out : m.value("outputs", nlohmann::json::array())) {
                only_keys(out, {"address", "bytes", "file"}, "an output", bad);
                const std::string f = resolve(out.at("file").get<std::string>());
                outputs_.push_back(
                    {address(out, "address", "output '" + f + "'"), address(out, "bytes", "output '" + f + "'"), f});
                region(outputs_.back().address, outputs_.back().bytes, "output '" + f + "'");
                if (!files.insert(f).second) throw bad("two outputs write '" + f + "'");
                check_writable(f, "kernel output");
            }
            result_file_ = resolve(m.value("result", std::string()));
            if (!result_file_.empty()) {
                if (files.count(result_file_)) throw bad("the result and an output both write '" + result_file_ + "'");
                check_writable(result_file_, "kernel result");
            }
        } catch (const nlohmann::json::exception& e) {
            throw bad(e.what());
        }
        shape_ = fmt::format("{}, {} instructions", path, program_.instructions());
    }
    template <typename Bad>
    static void only_keys(const nlohmann::json& j, std::initializer_list<const char*> keys, const char* what,
                          const Bad& bad) {
        if (!j.is_object()) throw bad(fmt::format("{} is not an object", what));
        for (const auto& [key, value] : j.items())
            if (std::none_of(keys.begin(), keys.end(), [&](const char* k) { return key == k; }))
                throw bad(fmt::format("{}: unknown key '{}'", what, key));
    }

    // kernel=file, after the run (finished or not): the outputs and the result.
    void write_outputs() override {
        if (kernel.get() != "file") return;
        for (const auto& o : outputs_) write_user_file(o.file, "kernel output", device.data() + o.address, o.bytes);
        if (result_file_.empty()) return;
        const auto& st = stats_registry::instance();
        auto value = [&](const std::string& leaf) {
            return st.find(std::string(core.name()) + "." + leaf)->to_json().get<std::uint64_t>();
        };
        nlohmann::json r;
        // A kernel that never finished: the time the simulation ran out of things to do.
        const double simulated_s = ran_ ? sim_s_ : sc_core::sc_time_stamp().to_seconds();
        r["finished"] = ran_;
        r["simulated_ps"] = static_cast<std::uint64_t>(simulated_s * 1e12 + 0.5);
        r["wall_s"] = wall_s_;
        r["matmul_flops"] = value("matmul_flops");
        r["dma_bytes"] = value("dma_bytes");
        r["instructions"] = value("instructions");
        r["rtl_mismatches"] = core.rtl_mismatches();
        for (unsigned e = 0; e < isa::engine_count; ++e) {
            const auto id = static_cast<isa::engine>(e);
            const char* status[] = {"idle", "running", "halted", "error"};
            r["engines"][isa::name(id)] = {{"status", status[static_cast<unsigned>(core.status(id)) & 3]},
                                           {"error", core.error(id)},
                                           {"error_pc", core.error_pc(id)},
                                           {"busy_ps", value(std::string(isa::name(id)) + "_busy_ps")}};
        }
        r["blocked"] = core.all_stopped() ? "" : core.blocked_report();
        write_user_file(result_file_, "kernel result", r.dump(2) + "\n");
    }

    bool mx() const { return operands.get() == "mxfp8" || operands.get() == "mxfp4"; }
    dtype mx_elements() const { return operands.get() == "mxfp4" ? dtype::e2m1 : dtype::e4m3fn; }

    bool passed() const override {
        const bool checked = core.timing_only.get() || error_ <= effective_tolerance();  // timing only: no data
        return ran_ && !engine_error_ && checked && core.rtl_mismatches() == 0;
    }
    double effective_tolerance() const {
        return kernel.get() == "attention" ? std::max(tolerance.get(), 1e-2) : tolerance.get();
    }

    void report(std::ostream& os) const override {
        os << fmt::format("kernel {} ({})\n", kernel.get(), shape_);
        if (!ran_) {
            os << "  the kernel did not finish: " << core.blocked_report() << "\n";
            report_engine_errors(os);
            return;
        }
        os << fmt::format("  simulated time   {:.3f} us\n", sim_s_ * 1e6);
        if (flops_ > 0 && kernel.get() == "file") {
            const double peak = 128.0 * 128 * 2 * core.tensor_clock.get().hz;
            os << fmt::format("  throughput       {:.2f} TFLOP/s (the core's peak: {:.2f} dense, {:.2f} MX)\n",
                              flops_ / sim_s_ / 1e12, peak / 1e12, 4 * peak / 1e12);
        } else if (flops_ > 0) {
            // MX matmuls do four times the work per cycle.
            const double peak = 128.0 * 128 * 2 * core.tensor_clock.get().hz * (mx() ? 4 : 1);
            os << fmt::format(
                "  throughput       {:.2f} TFLOP/s, {:.1f}% of the core's {:.2f} TFLOP/s peak for this type\n",
                flops_ / sim_s_ / 1e12, flops_ / sim_s_ / peak * 100, peak / 1e12);
        }
        os << fmt::format("  host time        {:.3f} s{}\n", wall_s_,
                          flops_ > 0 ? fmt::format(" ({:.2f} simulated GFLOP per wall second)", flops_ / wall_s_ / 1e9)
                                     : std::string());
        if (kernel.get() == "file") {
            report_engine_errors(os);
        } else if (core.timing_only.get()) {
            os << fmt::format("  error vs fp64    not checked: timing only (no element computed){}\n",
                              engine_error_ ? "; an engine stopped on an error" : "");
        } else {
            os << fmt::format("  error vs fp64    {:.3g} (tolerance {:.3g}){}\n", error_, effective_tolerance(),
                              engine_error_ ? "; an engine stopped on an error" : "");
        }
        if (core.tensor_backend.get() != "model") {
            const auto& st = stats_registry::instance();
            auto value = [&](const char* leaf) {
                return st.find(std::string(core.name()) + "." + leaf)->to_json().get<std::uint64_t>();
            };
            os << fmt::format("  tensor engine    {} backend: {} array jobs on the {} x {} RTL array, {} RTL cycles, "
                              "{} mismatches\n",
                              core.tensor_backend.get(), value("rtl_array_jobs"), rtl::systolic_array::rows(),
                              rtl::systolic_array::cols(), value("rtl_array_cycles"), core.rtl_mismatches());
        }
    }

private:
    void report_engine_errors(std::ostream& os) const {
        for (unsigned e = 0; e < isa::engine_count; ++e) {
            const auto id = static_cast<isa::engine>(e);
            if (core.status(id) == neuroncore::engine_status::error)
                os << fmt::format("  engine {} stopped on error {} at instruction {}\n", isa::name(id), core.error(id),
                                  core.error_pc(id));
        }
    }
    std::vector<float> random_floats(std::size_t count, float scale, std::uint64_t salt) {
        std::mt19937_64 rng(seed.get() * 1000003 + salt);
        std::normal_distribution<float> nd(0.0f, scale);
        std::vector<float> v(count);
        for (auto& x : v) x = nd(rng);
        return v;
    }
    // Rounds values to the operand type and writes their codes.
    std::vector<float> write_operands(std::uint64_t at, std::vector<float> v, dtype t) {
        const auto f = t == dtype::bf16 ? numerics::format::bf16 : numerics::format::e4m3fn;
        const unsigned es = isa::dtype_bytes(t);
        for (std::size_t i = 0; i < v.size(); ++i) {
            const std::uint32_t c = numerics::encode(v[i], f);
            std::memcpy(device.data() + at + i * es, &c, es);
            v[i] = numerics::decode(c, f);
        }
        return v;
    }
    // MX-quantises a [rows][cols] matrix per 32-row group of each column;
    // writes codes and E8M0 scales; returns the values the blocks hold.
    // Elements are one per byte (e2m1 too, in its low four bits).
    std::vector<float> write_mx(std::uint64_t codes, std::uint64_t scales, unsigned rows, unsigned cols,
                                std::uint64_t salt) {
        const auto element = mx_elements() == dtype::e2m1 ? numerics::format::e2m1 : numerics::format::e4m3fn;
        const auto v = random_floats(static_cast<std::size_t>(rows) * cols, 1.0f, salt);
        std::vector<float> held(v.size());
        for (unsigned c = 0; c < cols; ++c)
            for (unsigned g = 0; g < rows / 32; ++g) {
                float block[32];
                for (unsigned i = 0; i < 32; ++i) block[i] = v[static_cast<std::size_t>(32 * g + i) * cols + c];
                const numerics::mx_block b = numerics::quantize_mx(block, element);
                device.data()[scales + static_cast<std::uint64_t>(g) * cols + c] = b.scale;
                for (unsigned i = 0; i < 32; ++i) {
                    const std::size_t at = static_cast<std::size_t>(32 * g + i) * cols + c;
                    device.data()[codes + at] = b.elements[i];
                    held[at] = b.value(i);
                }
            }
        return held;
    }
    std::vector<float> read_floats(std::uint64_t at, std::size_t count) {
        std::vector<float> v(count);
        std::memcpy(v.data(), device.data() + at, count * 4);
        return v;
    }

    void execute(const program& p) {
        auto pcs =
            p.load([this](std::uint64_t a, const void* d, std::size_t len) { std::memcpy(device.data() + a, d, len); },
                   12ull << 30);
        const std::uint64_t flops_before = flops_counter();
        const sc_core::sc_time t0 = sc_core::sc_time_stamp();
        const auto w0 = std::chrono::steady_clock::now();
        for (unsigned e = 0; e < isa::engine_count; ++e)
            if (!p.on(static_cast<isa::engine>(e)).code().empty()) core.start(static_cast<isa::engine>(e), pcs[e]);
        do wait(core.engine_stopped());
        while (!core.all_stopped());
        wall_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
        sim_s_ = (sc_core::sc_time_stamp() - t0).to_seconds();
        flops_ = static_cast<double>(flops_counter() - flops_before);
        for (unsigned e = 0; e < isa::engine_count; ++e)
            if (core.status(static_cast<isa::engine>(e)) == neuroncore::engine_status::error) engine_error_ = true;
    }
    std::uint64_t flops_counter() const {
        return stats_registry::instance()
            .find(std::string(core.name()) + ".matmul_flops")
            ->to_json()
            .get<std::uint64_t>();
    }

    // The reference kernel's program (gemm, attention, softmax, rmsnorm) at
    // its layout's addresses, for the data runs below and timed only; sets shape_.
    program reference_program() {
        const unsigned M = static_cast<unsigned>(m), N = static_cast<unsigned>(n), K = static_cast<unsigned>(k);
        if (kernel.get() == "gemm") {
            shape_ = fmt::format("{} M {} N {} K {}", operands.get(), M, N, K);
            if (mx())
                return gemm({M, N, K, mx_elements(), true}, {0, 4ull << 30, 8ull << 30, 10ull << 30, 11ull << 30});
            return gemm({M, N, K, operands.get() == "bf16" ? dtype::bf16 : dtype::e4m3fn}, {0, 4ull << 30, 8ull << 30});
        }
        if (kernel.get() == "attention") {
            shape_ = fmt::format("128 queries x {} keys, head dim {}, bf16", keys.get(), head_dim.get());
            return attention({unsigned(keys), unsigned(head_dim)}, 0, 1ull << 30, 2ull << 30, 3ull << 30);
        }
        const rows_shape s{static_cast<unsigned>(rows), static_cast<unsigned>(cols)};
        shape_ = fmt::format("{} rows x {} fp32", s.rows, s.cols);
        if (kernel.get() == "softmax") return softmax(s, 0, 8ull << 30);
        return rmsnorm(s, 0, 4ull << 30, 8ull << 30, 1e-6f);
    }

    void run() {
        const dtype t = operands.get() == "bf16" ? dtype::bf16 : dtype::e4m3fn;
        if (core.timing_only.get() && kernel.get() != "file" && kernel.get() != "matmul_stream") {
            // No element is computed: no inputs to make, no reference to check against.
            execute(reference_program());
            shape_ += ", timing only";
        } else if (kernel.get() == "file") {
            execute(program_);
        } else if (kernel.get() == "gemm" && mx()) {
            const gemm_shape s{static_cast<unsigned>(m), static_cast<unsigned>(n), static_cast<unsigned>(k),
                               mx_elements(), true};
            const gemm_addresses at{0, 4ull << 30, 8ull << 30, 10ull << 30, 11ull << 30};
            auto a = write_mx(at.a, at.scales_a, s.K, s.M, 1);
            auto b = write_mx(at.b, at.scales_b, s.K, s.N, 2);
            execute(reference_program());
            error_ = reference::max_relative_error(read_floats(at.c, static_cast<std::size_t>(s.M) * s.N),
                                                   reference::gemm(a, b, s.M, s.N, s.K), std::sqrt(double(s.K)));
        } else if (kernel.get() == "gemm") {
            const gemm_shape s{static_cast<unsigned>(m), static_cast<unsigned>(n), static_cast<unsigned>(k), t};
            const gemm_addresses at{0, 4ull << 30, 8ull << 30};
            auto a = write_operands(at.a, random_floats(static_cast<std::size_t>(s.K) * s.M, 1.0f, 1), t);
            auto b = write_operands(at.b, random_floats(static_cast<std::size_t>(s.K) * s.N, 1.0f, 2), t);
            execute(reference_program());
            error_ = reference::max_relative_error(read_floats(at.c, static_cast<std::size_t>(s.M) * s.N),
                                                   reference::gemm(a, b, s.M, s.N, s.K), std::sqrt(double(s.K)));
        } else if (kernel.get() == "attention") {
            const unsigned Sk = static_cast<unsigned>(keys), D = static_cast<unsigned>(head_dim);
            auto q = write_operands(0, random_floats(128ull * D, 1.0f, 1), dtype::bf16);
            auto kk = write_operands(1ull << 30, random_floats(static_cast<std::size_t>(Sk) * D, 1.0f, 2), dtype::bf16);
            auto v = write_operands(2ull << 30, random_floats(static_cast<std::size_t>(Sk) * D, 1.0f, 3), dtype::bf16);
            execute(reference_program());
            const auto want = reference::attention(q, kk, v, 128, Sk, D);
            double scale = 0;
            for (double x : want) scale = std::max(scale, std::fabs(x));
            error_ = reference::max_relative_error(read_floats(3ull << 30, 128ull * D), want, scale);
        } else if (kernel.get() == "matmul_stream") {
            shape_ = fmt::format("{} x 128x128x512 {}", repeats.get(), operands.get());
            auto a = write_operands(0, random_floats(128 * 128, 1.0f, 1), t);
            auto b = write_operands(1 << 20, random_floats(128 * 512, 1.0f, 2), t);
            program p;
            p.on(isa::engine::sync)
                .dma(sbuf(t, 0, 128, 0, 128), hbm(t, 0, 128, 128 * isa::dtype_bytes(t), 128))
                .signal(0, 1)
                .dma(sbuf(t, 0, 128, 1024, 512), hbm(t, 1 << 20, 128, 512 * isa::dtype_bytes(t), 512))
                .signal(0, 1)
                .halt();
            auto& ts = p.on(isa::engine::tensor);
            ts.set_reg(0, 0).nop().wait(0, 2);
            const std::uint32_t loop = ts.here();
            ts.matmul(psum(dtype::fp32, 0, 128, 0, 512), sbuf(t, 0, 128, 0, 128), sbuf(t, 0, 128, 1024, 512))
                .add_reg(0, 1)
                .branch_lt(0, static_cast<std::uint32_t>(repeats.get()), loop)
                .halt();
            execute(p);
            std::vector<float> c(128 * 512);
            for (unsigned row = 0; row < 128; ++row) std::memcpy(&c[row * 512], core.psum(row), 512 * 4);
            error_ = reference::max_relative_error(c, reference::gemm(a, b, 128, 512, 128), std::sqrt(128.0));
        } else {
            const rows_shape s{static_cast<unsigned>(rows), static_cast<unsigned>(cols)};
            auto x = random_floats(static_cast<std::size_t>(s.rows) * s.cols, 3.0f, 1);
            std::memcpy(device.data(), x.data(), x.size() * 4);
            if (kernel.get() == "softmax") {
                execute(reference_program());
                error_ = reference::max_relative_error(read_floats(8ull << 30, x.size()),
                                                       reference::softmax(x, s.rows, s.cols), 0.0);
            } else {
                auto gamma = random_floats(s.cols, 1.0f, 2);
                std::memcpy(device.data() + (4ull << 30), gamma.data(), gamma.size() * 4);
                execute(reference_program());
                error_ = reference::max_relative_error(read_floats(8ull << 30, x.size()),
                                                       reference::rmsnorm(x, gamma, s.rows, s.cols, 1e-6), 1e-3);
            }
        }
        ran_ = true;
        sc_core::sc_stop();
    }

    bool ran_ = false, engine_error_ = false;
    double sim_s_ = 0, wall_s_ = 0, flops_ = 0, error_ = 0;
    std::string shape_;
    // kernel=file: the manifest's program, outputs and result file.
    struct output_file {
        std::uint64_t address, bytes;
        std::string file;
    };
    program program_;
    std::vector<output_file> outputs_;
    std::string result_file_;
};

const platform_registration registration{
    "neuroncore",
    "one NeuronCore with device memory running a reference kernel (gemm, softmax, rmsnorm, attention, matmul_stream)",
    [] { return std::make_unique<neuroncore_platform>("neuroncore"); }};

}  // namespace
}  // namespace trn3
