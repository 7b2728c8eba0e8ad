// The verilated systolic array (rtl/trn3_systolic_array.sv) behind a C++
// transactor: it runs whole matmuls, tiling K by the array's rows (each
// fold's results feed the next fold's partial-sum input, so the sum runs in
// the same order as on one full-height array) and M by its columns, and
// counts the RTL's clock cycles. No Verilator header leaks from here.
//
// Semantics (docs/numerics.md rules 18 and 24): acc[m][n] = +0, then
// acc = fma32(a[k][m], b[k][n], acc) for k = 0 .. K-1; a NaN result is
// 0x7FC00000. With `select` (a transpose) each PE passes its weight down
// where the moving value is 1.0 instead. MX jobs follow rule 22, four K
// values per array row.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace trn3::rtl {

// MX element formats, as the RTL's in_fmt_w / in_fmt_x encode them.
enum class mx_format : unsigned { e4m3fn = 0, e5m2 = 1, e2m1 = 2 };

struct array_job {
    unsigned K = 0, M = 0, N = 0;
    std::vector<std::uint32_t> a;  // stationary, K x M fp32 bits (k * M + m); MX: element codes
    std::vector<std::uint32_t> b;  // moving, K x N fp32 bits (k * N + n); MX: element codes
    bool select = false;  // transpose mode
    unsigned cadence = 1;  // clock cycles per moving column (fp32 operands: 4)
    // MX (docs/numerics.md rule 22): K a multiple of 32, codes above, E8M0
    // scales of block g = k / 32 per column: scales_a[g * M + m], scales_b[g * N + n].
    bool mx = false;
    mx_format format_a = mx_format::e4m3fn, format_b = mx_format::e4m3fn;
    std::vector<std::uint8_t> scales_a, scales_b;
    // Structured sparsity, expanded: holes[k * M + m] = 1 where the
    // stationary value was pruned (never multiplied). Empty: dense.
    std::vector<std::uint8_t> holes;
};

struct array_result {
    std::vector<std::uint32_t> acc;  // M x N fp32 bits (m * N + n)
    std::uint64_t cycles = 0;  // RTL clock cycles, weight loads and drains included
};

class systolic_array {
public:
    systolic_array();
    ~systolic_array();
    systolic_array(const systolic_array&) = delete;
    systolic_array& operator=(const systolic_array&) = delete;

    // The verilated size (TRN3_RTL_FULL: 128 x 128; otherwise 32 x 32).
    static unsigned rows();
    static unsigned cols();
    // Cycles the RTL takes for one pass of N moving columns: weights R, the
    // columns (N - 1) x cadence + 1, drain R + C - 2 (docs/rtl.md).
    static std::uint64_t pass_cycles(unsigned N, unsigned cadence = 1);

    array_result run(const array_job& job);

    // Writes a VCD waveform of every clock cycle of the next run() to path.
    void trace_next_run(const std::string& path);

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace trn3::rtl
