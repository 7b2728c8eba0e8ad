// chip_checks (chip_checks.cpp: bring-up and report; chip_checks_kernels.cpp:
// the reference kernels and the error paths).
#pragma once

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include "phase_track.h"
#include "trn3/apps/host_program.h"
#include "trn3/core/param.h"
#include "trn3/driver/trn3_device.h"
#include "trn3/kernels/norm.h"
#include "trn3/runtime/nrt.h"

namespace trn3::apps {

class chip_checks final : public host_program {
public:
    param<std::uint64_t> gemm_m{nullptr, "chip_checks.gemm_m", 512, "GEMM on core 0: M (multiple of 128)"};
    param<std::uint64_t> gemm_n{nullptr, "chip_checks.gemm_n", 1024, "GEMM on core 0: N (multiple of 512)"};
    param<std::uint64_t> gemm_k{nullptr, "chip_checks.gemm_k", 512, "GEMM on core 0: K (multiple of 128)"};
    param<std::uint64_t> seed{nullptr, "chip_checks.seed", 1, "seed of the random inputs", seed_range()};
    param<double> tolerance{nullptr, "chip_checks.tolerance", 1e-4,
                            "largest accepted error against fp64 (attention: 1e-2)", range<double>{0.0, {}}};
    param<sc_core::sc_time> boot_timeout{nullptr, "chip_checks.boot_timeout", sc_core::sc_time(50, sc_core::SC_MS),
                                         "longest the driver waits for the firmware"};
    param<sc_core::sc_time> link_timeout{nullptr, "chip_checks.link_timeout", sc_core::sc_time(10, sc_core::SC_MS),
                                         "longest the host waits for its root port's link"};

    explicit chip_checks(host_system& s);
    void run(unsigned h) override;
    bool passed() const override { return done_ && failures_.empty(); }
    void report(std::ostream& os) const override;

private:
    struct phase_record {
        std::string what;
        double simulated, wall;
    };
    struct tensor {
        nrt_tensor_t* t = nullptr;
        std::uint64_t at() const { return nrt_tensor_get_device_address(t); }
    };

    // chip_checks.cpp
    void bring_up();
    void chip_state(const std::string& when);
    void phase(const std::string& what);
    bool check(bool ok, const std::string& what);
    bool expect(driver::status s, const std::string& what);
    void finish();
    // chip_checks_kernels.cpp
    void reference_kernels();
    void error_paths();
    std::vector<float> random_floats(std::size_t n, float scale, std::uint64_t salt) const;
    tensor alloc(std::size_t bytes, const char* name);
    template <typename T>
    tensor upload(const std::vector<T>& v, const char* name);
    std::vector<float> download(const tensor& x, std::size_t n);
    double run_kernel(const std::vector<const kernels::program*>& programs, int first, const std::string& what,
                      NRT_STATUS want = NRT_SUCCESS, std::uint32_t* error = nullptr,
                      const std::vector<std::uint8_t>* container = nullptr);
    void report_kernel(const std::string& what, double seconds, double error, double tol, double flops = 0);
    bool gemm_on(const std::vector<int>& cores, unsigned M, unsigned N, unsigned K, const std::string& what);

    host_system& sys_;
    driver::host_ops& host_;
    driver::trn3_device device_;
    nrt_runtime_t* rt_ = nullptr;
    std::uint64_t iommu_faults_ = 0;  // seen through the host's fault reports
    std::size_t hosts_done_ = 0;
    std::vector<phase_record> phases_;
    phase_track track_;
    std::chrono::steady_clock::time_point wall0_ = std::chrono::steady_clock::now();
    std::ostringstream kernels_, checks_;
    std::string listing_, counters_;
    std::vector<std::string> failures_;
    std::vector<nrt_tensor_t*> tensors_;  // every tensor alloc() made: finish() frees them
    bool done_ = false;
};

}  // namespace trn3::apps
