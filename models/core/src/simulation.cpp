#include "trn3/core/simulation.h"

#include <chrono>
#include <iostream>

#include <fmt/format.h>
#include <tlm>

#include "trn3/core/heap_noise.h"
#include "trn3/core/protocol_checker.h"
#include "trn3/core/ranks.h"
#include "trn3/core/stats.h"

namespace trn3 {
namespace {

std::string si(double v) {
    if (v >= 1e9) return fmt::format("{:.2f} G", v / 1e9);
    if (v >= 1e6) return fmt::format("{:.2f} M", v / 1e6);
    if (v >= 1e3) return fmt::format("{:.2f} k", v / 1e3);
    return fmt::format("{:.2f} ", v);
}

std::string human_time(double seconds) {
    if (seconds >= 1) return fmt::format("{:.3f} s", seconds);
    if (seconds >= 1e-3) return fmt::format("{:.3f} ms", seconds * 1e3);
    if (seconds >= 1e-6) return fmt::format("{:.3f} us", seconds * 1e6);
    return fmt::format("{:.3f} ns", seconds * 1e9);
}

// Prints a progress line every `interval` wall seconds while the simulation
// has other work pending. Reads the wall clock only to decide when to print:
// nothing it does reaches the models.
class progress_reporter : public sc_core::sc_module {
public:
    progress_reporter(const sc_core::sc_module_name& name, double interval)
        : sc_core::sc_module(name), interval_(interval), start_(std::chrono::steady_clock::now()), last_(start_) {
        SC_HAS_PROCESS(progress_reporter);
        SC_METHOD(tick);
    }

private:
    void tick() {
        auto now = std::chrono::steady_clock::now();
        if (std::chrono::duration<double>(now - last_).count() >= interval_) {
            last_ = now;
            double wall = std::chrono::duration<double>(now - start_).count();
            double sim = sc_core::sc_time_stamp().to_seconds();
            std::cerr << fmt::format("[progress] simulated {}, wall {:.1f} s, {}/s\n", human_time(sim), wall,
                                     human_time(sim / wall));
        }
        // Tick in simulated steps that grow with the run so the cost stays
        // negligible; stop once nothing else is pending, so the run can end.
        if (sc_core::sc_pending_activity_at_future_time()) {
            step_ = std::max(step_, sc_core::sc_time_stamp() / 64.0);
            next_trigger(step_);
        }
    }
    double interval_;
    std::chrono::steady_clock::time_point start_, last_;
    sc_core::sc_time step_{1, sc_core::SC_US};
};

}  // namespace

std::string run_summary::text() const {
    double sim = simulated.to_seconds();
    double ratio = wall_seconds > 0 ? sim / wall_seconds : 0.0;
    double tps = wall_seconds > 0 ? static_cast<double>(transactions) / wall_seconds : 0.0;
    return fmt::format("simulated time    {}\n"
                       "wall time         {:.3f} s\n"
                       "simulation speed  {}/s of simulated time (simulated/wall = {:.3g})\n"
                       "transactions      {} ({}transactions/s)\n",
                       human_time(sim), wall_seconds, human_time(ratio), ratio, transactions, si(tps));
}

simulation::simulation()
    : quantum(nullptr, "sim.quantum", sc_core::sc_time(1, sc_core::SC_US),
              "global TLM quantum: how far an initiator may run ahead before it synchronises",
              range<sc_core::sc_time>{sc_core::sc_time(1, sc_core::SC_PS), {}}),
      duration(nullptr, "sim.duration", sc_core::SC_ZERO_TIME,
               "stop after this much simulated time; 0 = run until the platform stops"),
      protocol_checks(nullptr, "sim.protocol_checks", protocol_checks_enabled(),
                      "insert a TLM protocol checker between every connected socket pair"),
      progress_seconds(nullptr, "sim.progress", 5.0, "print a progress line every this many wall seconds; 0 = never",
                       range<double>{0.0, {}}),
      heap_noise_events(
          nullptr, "sim.heap_noise", 0,
          "unrelated timed events kept pending while the platform runs: a check that results do not "
          "depend on the kernel's order of same-time events (they must not change); no progress lines while on",
          range<std::uint64_t>{0, 1000}) {
    tlm::tlm_global_quantum::instance().set(quantum.get());
    // sc_stop() is how platforms end a run: not worth a line of output.
    sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    set_protocol_checks(protocol_checks.get());
}

run_summary simulation::run(window_sync* windows, const std::function<std::optional<sc_core::sc_time>()>& finished_at) {
    const double every = progress_seconds.get();
    // No progress line under heap noise: each would keep the other going in
    // a run that never stops by itself (both re-arm while anything is pending).
    if (!windows && every > 0 && heap_noise_events.get() == 0 && !sc_core::sc_is_running() &&
        sc_core::sc_get_status() == sc_core::SC_ELABORATION)
        new progress_reporter("progress", every);
    if (heap_noise_events.get() > 0 && sc_core::sc_get_status() == sc_core::SC_ELABORATION)
        new heap_noise("heap_noise", heap_noise_events.get());
    const std::uint64_t tx_before = transaction_count();
    run_summary s;
    auto start = std::chrono::steady_clock::now();
    if (windows) {
        auto last = start;
        const bool leader = process_ranks().leader();
        s.simulated = windows->run(finished_at, duration.get(), [&] {
            const auto now = std::chrono::steady_clock::now();
            if (!leader || every <= 0 || std::chrono::duration<double>(now - last).count() < every) return;
            last = now;
            const double wall = std::chrono::duration<double>(now - start).count();
            const double sim = sc_core::sc_time_stamp().to_seconds();
            std::cerr << fmt::format("[progress] simulated {}, wall {:.1f} s, {}/s\n", human_time(sim), wall,
                                     human_time(sim / wall));
        });
    } else if (duration.get() == sc_core::SC_ZERO_TIME) {
        sc_core::sc_start();
    } else {
        sc_core::sc_start(duration.get());
    }
    s.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (windows && !process_ranks().single()) {
        // The cost of the window protocol, per rank (standard error: wall-clock figures, not the run's results).
        const std::vector<std::string> each =
            gather_text(process_ranks(), fmt::format("{:.3f} {} {}", windows->exchange_seconds(),
                                                     windows->messages_out(), windows->bytes_out()));
        if (process_ranks().leader()) {
            std::string line = fmt::format(
                "[distributed] {} ranks, {} windows of {}; exchange {:.3f} s, imbalance {:.3f} s; per rank: s at "
                "boundaries, messages and bytes sent across:",
                each.size(), windows->windows(), windows->window().to_string(), windows->sync_seconds(),
                windows->imbalance_seconds());
            for (std::size_t r = 0; r < each.size(); ++r) line += fmt::format(" [{}] {}", r, each[r]);
            std::cerr << line << "\n";
        }
    }
    if (!windows) s.simulated = sc_core::sc_time_stamp();
    s.transactions = transaction_count() - tx_before;
    return s;
}

}  // namespace trn3
