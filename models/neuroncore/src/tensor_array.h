// The Tensor engine's array arithmetic on its three back ends (param
// <core>.tensor_engine.backend, docs/rtl.md): the C++ model, the verilated
// systolic array (rtl/), or the model checked against the RTL on every
// check_every-th array job, bit for bit.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "trn3/core/stats.h"
#include "trn3/neuroncore/neuroncore.h"
#include "trn3/rtl/systolic_array.h"

namespace trn3::neuroncore {

class tensor_array {
public:
    // The array's arithmetic (rule 18, or a transpose's select): acc[m][n]
    // over K x M stationary a and K x N moving b (sparse: k_of maps kept
    // values to dense K).
    struct operands {
        unsigned K, M, N;
        const float* a;
        const float* b;
        bool select = false;
        unsigned cadence = 1;
        const std::uint16_t* k_of = nullptr;
        unsigned b_rows = 0;  // rows of b (sparse: the dense K; 0: K)
        bool fused = true;  // false: every product is exact, multiply-then-add rounds once
    };

    // Checks the backend param; builds the RTL array unless it is `model`.
    explicit tensor_array(const neuroncore& core);
    ~tensor_array();

    void compute(const operands& op, std::vector<float>& acc);
    // One array job on the chosen back end: `model` computes it in C++, `job`
    // describes it to the RTL.
    void run(const std::function<void(std::vector<float>&)>& model, const std::function<rtl::array_job()>& job,
             std::vector<float>& acc);
    std::uint64_t mismatches() const { return rtl_mismatches_.value(); }

private:
    static void on_model(const operands& op, std::vector<float>& acc);
    static rtl::array_job job_of(const operands& op);
    std::vector<float> on_rtl(const rtl::array_job& job);
    void report_mismatch(const rtl::array_job& job, const std::vector<float>& model, const std::vector<float>& rtl);

    const neuroncore& core_;
    std::unique_ptr<rtl::systolic_array> rtl_;
    std::uint64_t array_jobs_ = 0, rtl_jobs_ = 0;
    counter rtl_jobs_count_, rtl_cycles_, rtl_formula_cycles_, rtl_mismatches_;
};

}  // namespace trn3::neuroncore
