// component: the base of every model.
//
// Adds to sc_module what every hardware block has: a clock, a reset, a
// logger whose level is a param, and a transaction-trace switch. Params and
// stats declared by derived classes are named under the module's
// hierarchical name.
//
// params:  <name>.clock      frequency  the block's clock
//          <name>.log_level  string     spdlog level, "" = the global --log-level
//          <name>.trace      bool       trace every transaction on every socket
#pragma once

#include <memory>
#include <string>

#include <spdlog/logger.h>
#include <systemc>
#include <tlm>

#include "trn3/core/param.h"

namespace trn3 {

class component : public sc_core::sc_module {
public:
    param<frequency> clock;
    param<std::string> log_level;
    param<bool> trace;

    component(const sc_core::sc_module_name& name, frequency default_clock);

    spdlog::logger& log() const { return *logger_; }
    const sc_core::sc_time& clock_period() const { return period_; }
    // n cycles, computed from the frequency (not n x a rounded period, which
    // drifts: 12 cycles at 1.2 GHz are exactly 10 ns).
    sc_core::sc_time cycles(std::uint64_t n) const {
        return sc_core::sc_time(static_cast<double>(n) / clock.get().hz, sc_core::SC_SEC);
    }

    // Returns the block to its reset state (registers, queues, counters that
    // the hardware resets). Models override; the default does nothing.
    virtual void reset() {}

    // Default of every component's `trace` param (the CLI's --trace all).
    static void set_trace_default(bool on);
    static bool trace_default();

private:
    std::shared_ptr<spdlog::logger> logger_;
    sc_core::sc_time period_;
};

// A per-socket trace switch. Param <module>.<socket>.trace; a socket traces
// when its own switch or its module's is on. A trace line reads
//   [  0.000010 us] [bringup.mem] [info] TLM in >> WR 0x40 [de ad be ef] (TLM_OK_RESPONSE) +10 ns
class trace_point {
public:
    trace_point(const component& owner, const std::string& socket);
    bool enabled() const { return enabled_; }
    // Logs the transaction after it completed. `delay` is the annotated time.
    void record(const tlm::tlm_generic_payload& tx, const sc_core::sc_time& delay, bool debug = false) const;

private:
    param<bool> switch_;
    bool enabled_;
    std::string socket_;
    std::shared_ptr<spdlog::logger> logger_;
};

// "TLM in >> WR 0x40 [de ad be ef] (TLM_OK_RESPONSE)": the text of one trace
// line, shared by trace_point and the protocol checker's reports.
std::string describe(const tlm::tlm_generic_payload& tx, const std::string& socket);

}  // namespace trn3
