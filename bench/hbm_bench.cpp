// HBM3E benchmark: bandwidth as a share of the chip's peak (4 stacks x 32
// pseudo-channels x 38.4 GB/s = 4.915 TB/s), latency percentiles, the
// loaded-latency curve, and the model's host speed.
//
//   build/release/bench/hbm_bench [--quick] [--functional] [--out DIR] [-p key=value ...]
//
// By default the requests are timing-only (trn3::timing_only: the model
// charges time and moves no data, as when a DMA engine moves the data through
// DMI), so the host-speed figures measure the timing model. --functional
// moves the data too (and pays the host's page faults on first touch).
//
// Traffic is open-loop: request i arrives at i x (bytes / offered load),
// spread round-robin over the four stacks; each request is one b_transport
// whose annotated delay is its arrival time (loosely timed, so the whole
// experiment runs inside one delta cycle). Each experiment starts after the
// previous one has drained. Figures go to stdout and, with --out, to
// DIR/hbm_bench.json, DIR/hbm_latency_curve.csv and DIR/hbm_latency_curve.svg.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <tlm_utils/simple_initiator_socket.h>

#include "trn3/core/entry.h"
#include "trn3/core/payload.h"
#include "trn3/core/user_file.h"
#include "trn3/hbm/hbm_stack.h"

using namespace trn3;
using sc_core::sc_time;

namespace {

constexpr int stacks = 4;
constexpr double peak_bytes_per_s = stacks * 32 * 38.4e9;  // 4.9152 TB/s

struct port : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<port> out{"out"};
    explicit port(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {}
};

struct result {
    double bandwidth_share = 0;  // of peak
    double p50_ns = 0, p90_ns = 0, p99_ns = 0, mean_ns = 0;
    double wall_s = 0, sim_s = 0;
    std::uint64_t requests = 0, bytes = 0;
};

class bench {
public:
    bench() {
        for (int s = 0; s < stacks; ++s) {
            hbm.push_back(std::make_unique<hbm::hbm_stack>(("hbm" + std::to_string(s)).c_str()));
            ports.push_back(std::make_unique<port>(("dma" + std::to_string(s)).c_str()));
            ports.back()->out.bind(hbm.back()->in);
        }
    }

    // `pattern`: "seq" (4 KiB sequential per stack) or "rand" (64 B random).
    bool functional = false;

    result run(const std::string& pattern, bool write, double offered_share, std::uint64_t requests) {
        const unsigned len = pattern == "seq" ? 4096 : 64;
        const double interval_ps = len / (offered_share * peak_bytes_per_s) * 1e12;
        const std::uint64_t stack_bytes = hbm[0]->size.get().bytes;
        std::mt19937_64 rng(12345);
        std::vector<unsigned char> buf(len);
        std::vector<double> latencies;
        latencies.reserve(requests);
        tlm::tlm_generic_payload tx;
        tx.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
        tx.set_data_ptr(buf.data());
        tx.set_data_length(len);
        tx.set_streaming_width(len);
        timing_only marker;
        if (!functional) tx.set_extension(&marker);
        std::uint64_t next_seq[stacks] = {};
        sc_time last = start_;
        auto wall0 = std::chrono::steady_clock::now();
        for (std::uint64_t i = 0; i < requests; ++i) {
            const int s = static_cast<int>(i % stacks);
            std::uint64_t addr;
            if (pattern == "seq") {
                addr = next_seq[s];
                next_seq[s] = (next_seq[s] + len) % stack_bytes;
            } else {
                addr = (rng() % (stack_bytes / len)) * len;
            }
            const sc_time arrival = start_ + sc_time::from_value(static_cast<std::uint64_t>(i * interval_ps));
            sc_time delay = arrival;
            tx.set_address(addr);
            tx.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
            ports[static_cast<std::size_t>(s)]->out->b_transport(tx, delay);
            latencies.push_back((delay - arrival).to_seconds() * 1e9);
            last = std::max(last, delay);
        }
        if (!functional) tx.clear_extension(&marker);
        if (write)
            for (auto& h : hbm) last = std::max(last, h->flush());
        result r;
        r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
        r.requests = requests;
        r.bytes = requests * len;
        r.sim_s = (last - start_).to_seconds();
        r.bandwidth_share = static_cast<double>(r.bytes) / r.sim_s / peak_bytes_per_s;
        std::sort(latencies.begin(), latencies.end());
        auto pct = [&](double p) { return latencies[static_cast<std::size_t>(p / 100.0 * (latencies.size() - 1))]; };
        r.p50_ns = pct(50);
        r.p90_ns = pct(90);
        r.p99_ns = pct(99);
        double sum = 0;
        for (double l : latencies) sum += l;
        r.mean_ns = sum / static_cast<double>(latencies.size());
        start_ = last + sc_time(20, sc_core::SC_US);  // the next experiment finds idle channels
        return r;
    }

private:
    std::vector<std::unique_ptr<hbm::hbm_stack>> hbm;
    std::vector<std::unique_ptr<port>> ports;
    sc_time start_{1, sc_core::SC_US};
};

struct figures {
    nlohmann::json list = nlohmann::json::array();
    std::string command;
    void add(const std::string& name, double value, const std::string& unit) {
        list.push_back({{"name", name}, {"value", value}, {"unit", unit}, {"command", command}});
        std::printf("  %-44s %12.3f %s\n", name.c_str(), value, unit.c_str());
    }
};

std::string svg_text(const std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>>& curves) {
    const double w = 640, h = 400, left = 60, bottom = 40, top = 20, right = 20;
    double max_x = 100, max_y = 0;
    for (auto& [name, pts] : curves)
        for (auto& [x, y] : pts) max_y = std::max(max_y, y);
    max_y = std::ceil(max_y / 100) * 100;
    auto px = [&](double x) { return left + x / max_x * (w - left - right); };
    auto py = [&](double y) { return h - bottom - y / max_y * (h - top - bottom); };
    std::ostringstream f;
    f << fmt::format(
        "<svg xmlns='http://www.w3.org/2000/svg' width='{}' height='{}' font-family='sans-serif' font-size='12'>\n", w,
        h);
    f << "<rect width='100%' height='100%' fill='white'/>\n";
    f << fmt::format("<line x1='{}' y1='{}' x2='{}' y2='{}' stroke='black'/>\n", left, py(0), px(max_x), py(0));
    f << fmt::format("<line x1='{}' y1='{}' x2='{}' y2='{}' stroke='black'/>\n", left, py(0), left, py(max_y));
    for (int x = 0; x <= 100; x += 20)
        f << fmt::format("<text x='{}' y='{}' text-anchor='middle'>{}%</text>\n", px(x), py(0) + 16, x);
    for (int i = 0; i <= 4; ++i)
        f << fmt::format("<text x='{}' y='{}' text-anchor='end'>{:.0f}</text>\n", left - 6, py(max_y * i / 4) + 4,
                         max_y * i / 4);
    f << fmt::format("<text x='{}' y='{}' text-anchor='middle'>offered load (% of 4.915 TB/s)</text>\n", (left + w) / 2,
                     h - 4);
    f << fmt::format(
        "<text x='14' y='{}' transform='rotate(-90 14 {})' text-anchor='middle'>p50 read latency (ns)</text>\n", h / 2,
        h / 2);
    const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c"};
    int c = 0;
    for (auto& [name, pts] : curves) {
        f << "<polyline fill='none' stroke-width='2' stroke='" << colors[c % 3] << "' points='";
        for (auto& [x, y] : pts) f << px(x) << "," << py(y) << " ";
        f << "'/>\n";
        f << fmt::format("<text x='{}' y='{}' fill='{}'>{}</text>\n", left + 10, top + 14 + 16 * c, colors[c % 3],
                         name);
        ++c;
    }
    f << "</svg>\n";
    return f.str();
}

}  // namespace

int sc_main(int argc, char** argv) {
    bool quick = false, functional = false;
    std::string out_dir;
    figures fig;
    for (int i = 0; i < argc; ++i) fig.command += (i ? " " : "") + std::string(argv[i]);
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--quick") quick = true;
        else if (a == "--functional") functional = true;
        else if (a == "--out" && i + 1 < argc) out_dir = argv[++i];
        else if (a == "-p" && i + 1 < argc) {
            std::string kv = argv[++i];
            auto eq = kv.find('=');
            if (eq == std::string::npos) {
                std::fprintf(stderr, "hbm_bench: error: -p '%s': expected key=value\n", kv.c_str());
                return 2;
            }
            param_registry::instance().set_pending_text(kv.substr(0, eq), kv.substr(eq + 1), "command line");
        } else {
            std::fprintf(stderr, "hbm_bench: error: unknown argument '%s' (--quick, --functional, --out DIR, -p k=v)\n",
                         a.c_str());
            return 2;
        }
    }
    struct stat st {};
    if (!out_dir.empty() &&
        (::stat(out_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || ::access(out_dir.c_str(), W_OK) != 0)) {
        std::fprintf(stderr, "hbm_bench: error: --out '%s' is not a directory this run can write to\n",
                     out_dir.c_str());
        return 2;
    }
    std::unique_ptr<bench> made;
    try {
        made = std::make_unique<bench>();
        param_registry::instance().check_all_claimed();
    } catch (const config_error& e) {
        std::fprintf(stderr, "hbm_bench: error: %s\n", e.what());
        return 2;
    }
    bench& b = *made;
    b.functional = functional;
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    const std::uint64_t scale = quick ? 16 : 1;

    std::printf("HBM3E, 4 stacks, peak %.4f TB/s, %s requests\n", peak_bytes_per_s / 1e12,
                functional ? "functional" : "timing-only");
    std::printf("bandwidth (offered 110%% of peak for streams, 60%% for random):\n");
    auto add_run = [&](const std::string& name, const result& r) {
        fig.add(name + "_bandwidth", r.bandwidth_share * 100, "% of peak");
        fig.add(name + "_latency_p50", r.p50_ns, "ns");
        fig.add(name + "_latency_p99", r.p99_ns, "ns");
    };
    result sr = b.run("seq", false, 1.10, 262144 / scale);
    add_run("stream_read", sr);
    result sw = b.run("seq", true, 1.10, 262144 / scale);
    add_run("stream_write", sw);  // writes: latency to acceptance (posted)
    result rr = b.run("rand", false, 0.60, 2000000 / scale);
    add_run("random_64B_read", rr);

    std::printf("unloaded latency (random 64 B reads at 0.5%% of peak, as seen by a DMA engine):\n");
    result idle = b.run("rand", false, 0.005, 100000 / scale);
    fig.add("unloaded_read_latency_p50", idle.p50_ns, "ns");
    fig.add("unloaded_read_latency_p90", idle.p90_ns, "ns");
    fig.add("unloaded_read_latency_p99", idle.p99_ns, "ns");

    std::printf("host speed (stream read run above):\n");
    fig.add("simulated_bytes_per_wall_second", static_cast<double>(sr.bytes) / sr.wall_s / 1e9, "GB/s");
    fig.add("requests_per_wall_second", static_cast<double>(sr.requests) / sr.wall_s / 1e6, "M/s");
    const double per_stack_us_per_s = sr.sim_s * 1e6 / sr.wall_s * stacks;
    fig.add("simulated_time_per_wall_second_per_stack", per_stack_us_per_s, "us/s");
    fig.add("speedup_vs_cycle_accurate_5us_per_s", per_stack_us_per_s / 5.0, "x");
    std::printf("host speed (random 64 B run above):\n");
    fig.add("random_requests_per_wall_second", static_cast<double>(rr.requests) / rr.wall_s / 1e6, "M/s");
    const double rand_us_per_s = rr.sim_s * 1e6 / rr.wall_s * stacks;
    fig.add("random_simulated_time_per_wall_second_per_stack", rand_us_per_s, "us/s");

    std::printf("\nloaded latency (read latency in ns against offered load):\n");
    std::printf("  %-10s %8s %10s %8s %8s %8s %14s\n", "pattern", "offered", "achieved", "p50", "p90", "p99",
                "us/s per stack");
    std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>> curves = {
        {"sequential 4 KiB reads", {}}, {"random 64 B reads", {}}};
    std::string csv = "pattern,offered_pct,achieved_pct,p50_ns,p90_ns,p99_ns\n";
    // One curve: a pattern swept over offered loads, with the requests per run.
    auto sweep = [&](std::size_t curve, const char* pattern, const char* label, const char* csv_name,
                     std::initializer_list<double> loads, double requests_per_load, double extra) {
        for (double load : loads) {
            result r =
                b.run(pattern, false, load, static_cast<std::uint64_t>(requests_per_load * load + extra) / scale);
            std::printf("  %-10s %7.0f%% %9.1f%% %8.1f %8.1f %8.1f %14.0f\n", label, load * 100,
                        r.bandwidth_share * 100, r.p50_ns, r.p90_ns, r.p99_ns, r.sim_s * 1e6 / r.wall_s * stacks);
            curves[curve].second.emplace_back(load * 100, r.p50_ns);
            csv += fmt::format("{},{},{:.2f},{:.1f},{:.1f},{:.1f}\n", csv_name, load * 100, r.bandwidth_share * 100,
                               r.p50_ns, r.p90_ns, r.p99_ns);
        }
    };
    sweep(0, "seq", "seq 4KiB", "seq4k", {0.05, 0.2, 0.4, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95}, 65536, 4096);
    sweep(1, "rand", "rand 64B", "rand64", {0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4}, 2000000, 20000);
    if (!out_dir.empty()) {
        try {
            write_user_file(out_dir + "/hbm_bench.json", "figures", fig.list.dump(2) + "\n");
            write_user_file(out_dir + "/hbm_latency_curve.csv", "curve", csv);
            write_user_file(out_dir + "/hbm_latency_curve.svg", "plot", svg_text(curves));
        } catch (const config_error& e) {
            std::fprintf(stderr, "hbm_bench: error: %s\n", e.what());
            return 2;
        }
        std::printf("\nwrote %s/hbm_bench.json, hbm_latency_curve.csv, hbm_latency_curve.svg\n", out_dir.c_str());
    }
    return 0;
}

int main(int argc, char** argv) { return systemc_entry(argc, argv); }
