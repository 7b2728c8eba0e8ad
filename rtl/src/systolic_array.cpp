#include "trn3/rtl/systolic_array.h"

#include <algorithm>
#include <stdexcept>

#include "Vtrn3_systolic_array.h"
#include "verilated.h"
#include "verilated_vcd_c.h"

namespace trn3::rtl {

namespace {
constexpr unsigned R = TRN3_RTL_ROWS, C = TRN3_RTL_COLS;
}  // namespace

struct systolic_array::impl {
    VerilatedContext context;
    std::unique_ptr<Vtrn3_systolic_array> top;
    std::unique_ptr<VerilatedVcdC> vcd;
    std::string vcd_path;
    std::uint64_t cycles = 0, vcd_time = 0;

    impl() {
        context.traceEverOn(true);
        top = std::make_unique<Vtrn3_systolic_array>(&context, "array");
        top->rst_n = 0;
        top->out_ready = 1;
        top->in_valid = 0;
        top->w_valid = 0;
        tick();
        top->rst_n = 1;
    }
    void tick() {
        top->clk = 0;
        top->eval();
        if (vcd) vcd->dump(vcd_time++);
        top->clk = 1;
        top->eval();
        if (vcd) vcd->dump(vcd_time++);
        ++cycles;
    }
};

systolic_array::systolic_array() : impl_(std::make_unique<impl>()) {}
systolic_array::~systolic_array() = default;

unsigned systolic_array::rows() { return R; }
unsigned systolic_array::cols() { return C; }

std::uint64_t systolic_array::pass_cycles(unsigned N, unsigned cadence) {
    // Weights, then a column every `cadence` cycles (the last one's result
    // leaves R + C - 2 cycles after it went in).
    return R + (static_cast<std::uint64_t>(N) - 1) * cadence + 1 + (R + C - 2);
}

void systolic_array::trace_next_run(const std::string& path) { impl_->vcd_path = path; }

array_result systolic_array::run(const array_job& job) {
    if (job.a.size() != static_cast<std::size_t>(job.K) * job.M ||
        job.b.size() != static_cast<std::size_t>(job.K) * job.N)
        throw std::invalid_argument("systolic_array::run: operand sizes do not match K, M, N");
    if (job.mx && (job.K % 32 || job.scales_a.size() != job.K / 32 * static_cast<std::size_t>(job.M) ||
                   job.scales_b.size() != job.K / 32 * static_cast<std::size_t>(job.N)))
        throw std::invalid_argument(
            "systolic_array::run: MX needs K a multiple of 32 and a scale per block and column");
    static_assert(R % 8 == 0, "MX blocks (8 rows) must not straddle folds");
    impl& x = *impl_;
    Vtrn3_systolic_array& top = *x.top;
    if (!x.vcd_path.empty()) {
        x.vcd = std::make_unique<VerilatedVcdC>();
        top.trace(x.vcd.get(), 99);
        x.vcd->open(x.vcd_path.c_str());
        x.vcd_path.clear();
    }
    array_result out;
    out.acc.assign(static_cast<std::size_t>(job.M) * job.N, 0u);
    const std::uint64_t start = x.cycles;
    const unsigned cadence = std::max(1u, job.cadence);
    // Array rows: one K value each, or (MX) four, lowest byte first.
    const unsigned per_row = job.mx ? 4 : 1, array_rows = job.K / per_row;
    auto value = [&](const std::vector<std::uint32_t>& v, unsigned width, unsigned row, unsigned col) -> std::uint32_t {
        if (!job.mx) return v[static_cast<std::size_t>(row) * width + col];
        std::uint32_t word = 0;
        for (unsigned j = 0; j < 4; ++j)
            word |= (v[static_cast<std::size_t>(4 * row + j) * width + col] & 0xffu) << (8 * j);
        return word;
    };
    if (!job.holes.empty() && job.holes.size() != job.a.size())
        throw std::invalid_argument("systolic_array::run: one hole flag per stationary element");
    auto holes = [&](unsigned row, unsigned col) -> std::uint8_t {
        if (job.holes.empty()) return 0;
        std::uint8_t h = 0;
        for (unsigned j = 0; j < per_row; ++j)
            h |= (job.holes[static_cast<std::size_t>(per_row * row + j) * job.M + col] & 1) << j;
        return h;
    };
    auto scale = [&](const std::vector<std::uint8_t>& v, unsigned width, unsigned row, unsigned col) -> std::uint8_t {
        return job.mx ? v[static_cast<std::size_t>(row / 8) * width + col] : 0;  // block of 32 = 8 rows
    };
    top.in_mx = job.mx;
    top.in_fmt_w = static_cast<std::uint8_t>(job.format_a);
    top.in_fmt_x = static_cast<std::uint8_t>(job.format_b);
    // One pass per (M tile, K fold); folds chain through the psum input.
    for (unsigned m0 = 0; m0 < job.M; m0 += C) {
        const unsigned cols = std::min(C, job.M - m0);
        for (unsigned k0 = 0; k0 < array_rows; k0 += R) {
            const unsigned rows = std::min(R, array_rows - k0);
            // Weights: all R rows (zero beyond K), one row per cycle.
            top.w_bank = 0;
            for (unsigned r = 0; r < R; ++r) {
                top.w_valid = 1;
                top.w_row = static_cast<std::uint8_t>(r);
                for (unsigned c = 0; c < C; ++c) {
                    const bool in = r < rows && c < cols;
                    top.w_data[c] = in ? value(job.a, job.M, k0 + r, m0 + c) : 0u;
                    top.w_scale[c] = in ? scale(job.scales_a, job.M, k0 + r, m0 + c) : 0;
                    top.w_hole[c] = in ? holes(k0 + r, m0 + c) : 0;
                }
                x.tick();
            }
            top.w_valid = 0;
            // Moving columns, with cadence - 1 idle cycles after each; results
            // come back in order.
            unsigned fed = 0, received = 0;
            const std::uint64_t pass_start = x.cycles;
            while (received < job.N) {
                if (fed < job.N && x.cycles - pass_start == static_cast<std::uint64_t>(fed) * cadence) {
                    top.in_valid = 1;
                    top.in_bank = 0;
                    top.in_select = job.select;
                    top.in_rows = static_cast<std::uint16_t>(rows);
                    top.in_first = k0 == 0;
                    for (unsigned r = 0; r < R; ++r) {
                        top.in_data[r] = r < rows ? value(job.b, job.N, k0 + r, fed) : 0u;
                        top.in_scale[r] = r < rows ? scale(job.scales_b, job.N, k0 + r, fed) : 0;
                    }
                    for (unsigned c = 0; c < C; ++c)
                        top.in_psum[c] = c < cols ? out.acc[static_cast<std::size_t>(m0 + c) * job.N + fed] : 0u;
                    ++fed;
                } else {
                    top.in_valid = 0;
                }
                x.tick();
                if (top.out_valid) {
                    for (unsigned c = 0; c < cols; ++c)
                        out.acc[static_cast<std::size_t>(m0 + c) * job.N + received] = top.out_data[c];
                    ++received;
                }
            }
            top.in_valid = 0;
        }
    }
    out.cycles = x.cycles - start;
    if (x.vcd) {
        x.vcd->close();
        x.vcd.reset();
    }
    return out;
}

}  // namespace trn3::rtl
