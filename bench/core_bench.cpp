// Host-speed benchmarks of the modelling core (Google Benchmark).
//
//   build/release/bench/core_bench                       # table
//   build/release/bench/core_bench --benchmark_out=core.json --benchmark_out_format=json
//
// Figures (docs/performance.md quotes them):
//   router_b_transport   8-byte reads initiator -> router -> sparse memory, decode-cache hits
//   router_b_transport_miss   the same, alternating between 16 regions (binary-search decode)
//   direct_b_transport   8-byte reads initiator -> sparse memory (no router), for the ratio
//   dmi_read             8-byte reads through dmi_cache
//   sparse_144x144GiB    144 sparse memories of 144 GiB: reserve time and resident memory after
//                        touching one page in each
// All SystemC objects are built once (SystemC elaborates once per process),
// then the benchmarks run against them.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>

#include "trn3/core/dmi_cache.h"
#include "trn3/core/entry.h"
#include "trn3/core/router.h"
#include "trn3/core/sparse_memory.h"

using namespace trn3;

namespace {

struct initiator : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<initiator> out{"out"};
    explicit initiator(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {}
};

struct world {
    static constexpr int regions = 16;
    static constexpr int sparse_count = 144;

    initiator via_router{"via_router"};
    initiator direct{"direct"};
    router bus{"bus"};
    std::vector<std::unique_ptr<sparse_memory>> rams;
    sparse_memory direct_ram{"direct_ram", byte_count{1 << 20}};
    initiator hbm_host{"hbm_host"};
    router hbm_bus{"hbm_bus"};
    std::vector<std::unique_ptr<sparse_memory>> hbm;
    double reserve_ms = 0;
    std::uint64_t rss_before = 0, rss_after = 0;

    world() {
        via_router.out.bind(bus.in);
        direct.out.bind(direct_ram.in);
        for (int i = 0; i < regions; ++i) {
            rams.push_back(std::make_unique<sparse_memory>(("ram" + std::to_string(i)).c_str(), byte_count{1 << 20}));
            bus.map(rams.back()->in, static_cast<std::uint64_t>(i) << 32, 1 << 20, "ram" + std::to_string(i));
        }
        rss_before = process_resident_bytes();
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < sparse_count; ++i)
            hbm.push_back(
                std::make_unique<sparse_memory>(("hbm" + std::to_string(i)).c_str(), byte_count{144ull << 30}));
        reserve_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        hbm_host.out.bind(hbm_bus.in);
        for (int i = 0; i < sparse_count; ++i)
            hbm_bus.map(hbm[static_cast<std::size_t>(i)]->in, static_cast<std::uint64_t>(i) * (144ull << 30),
                        144ull << 30, "hbm" + std::to_string(i));
        for (auto& m : hbm) m->data()[77ull << 30] = 1;  // one page in each
        rss_after = process_resident_bytes();
    }
};

world* w = nullptr;

void run_reads(benchmark::State& state, initiator& ini, std::uint64_t stride_regions) {
    std::uint64_t value = 0;
    tlm::tlm_generic_payload tx;
    tx.set_read();
    tx.set_data_ptr(reinterpret_cast<unsigned char*>(&value));
    tx.set_data_length(8);
    tx.set_streaming_width(8);
    sc_core::sc_time delay;
    std::uint64_t i = 0;
    for (auto _ : state) {
        const std::uint64_t region = stride_regions ? (i % world::regions) : 0;
        tx.set_address((region << 32) + ((i * 8) & 0xffff));
        tx.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        ini.out->b_transport(tx, delay);
        benchmark::DoNotOptimize(value);
        ++i;
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

void router_b_transport(benchmark::State& state) { run_reads(state, w->via_router, 0); }
void router_b_transport_miss(benchmark::State& state) { run_reads(state, w->via_router, 1); }
void direct_b_transport(benchmark::State& state) { run_reads(state, w->direct, 0); }

void dmi_read(benchmark::State& state) {
    dmi_cache cache;
    tlm::tlm_generic_payload tx;
    tx.set_read();
    tx.set_address(0);
    tlm::tlm_dmi grant;
    w->via_router.out->get_direct_mem_ptr(tx, grant);
    cache.insert(grant);
    std::uint64_t sum = 0, i = 0;
    for (auto _ : state) {
        const std::uint64_t addr = (i * 8) & 0xffff;
        const unsigned char* p = cache.lookup(addr, 8, false);
        std::uint64_t v;
        std::memcpy(&v, p, 8);
        sum += v;
        ++i;
    }
    benchmark::DoNotOptimize(sum);
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

void sparse_144x144GiB(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(w->hbm.size());
    state.counters["reserve_ms_total"] = w->reserve_ms;
    state.counters["reserve_ms_each"] = w->reserve_ms / world::sparse_count;
    state.counters["resident_MiB"] = static_cast<double>(w->rss_after - w->rss_before) / (1 << 20);
    std::uint64_t pages = 0;
    for (auto& m : w->hbm) pages += m->resident_pages();
    state.counters["resident_pages"] = static_cast<double>(pages);
    state.counters["reserved_TiB"] = 144.0 * 144.0 / 1024.0;
}

BENCHMARK(router_b_transport);
BENCHMARK(router_b_transport_miss);
BENCHMARK(direct_b_transport);
BENCHMARK(dmi_read);
BENCHMARK(sparse_144x144GiB)->Iterations(1);

}  // namespace

int sc_main(int argc, char** argv) {
    world the_world;
    w = &the_world;
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    std::string command;
    for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
    benchmark::AddCustomContext("command", command);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}

int main(int argc, char** argv) { return systemc_entry(argc, argv); }
