#include "trn3/core/log.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <systemc>

#include "trn3/core/error.h"

namespace trn3 {
namespace {

// %* in the pattern: the simulated time of the current delta cycle.
class sim_time_flag final : public spdlog::custom_flag_formatter {
public:
    void format(const spdlog::details::log_msg&, const std::tm&, spdlog::memory_buf_t& dest) override {
        double us = sc_core::sc_time_stamp().to_seconds() * 1e6;
        fmt::format_to(std::back_inserter(dest), "{:12.6f} us", us);
    }
    std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<sim_time_flag>(); }
};

spdlog::sink_ptr shared_sink() {
    static spdlog::sink_ptr sink = [] {
        auto s = std::make_shared<spdlog::sinks::stderr_color_sink_st>();
        auto formatter = std::make_unique<spdlog::pattern_formatter>();
        formatter->add_flag<sim_time_flag>('*').set_pattern("[%*] [%n] [%^%l%$] %v");
        s->set_formatter(std::move(formatter));
        return s;
    }();
    return sink;
}

spdlog::level::level_enum& global_level() {
    static spdlog::level::level_enum level = spdlog::level::warn;
    return level;
}

}  // namespace

spdlog::level::level_enum parse_log_level(const std::string& level) {
    auto l = spdlog::level::from_str(level);
    // from_str maps unknown names to "off"; only accept "off" when asked for.
    if (l == spdlog::level::off && level != "off")
        throw config_error("unknown log level '" + level + "' (trace, debug, info, warn, error, critical, off)");
    return l;
}

one_of<std::string> log_level_choices() { return {{"", "trace", "debug", "info", "warn", "error", "critical", "off"}}; }

void set_global_log_level(const std::string& level) { global_level() = parse_log_level(level); }

std::shared_ptr<spdlog::logger> make_logger(const std::string& name, const std::string& level) {
    auto logger = std::make_shared<spdlog::logger>(name, shared_sink());
    logger->set_level(level.empty() ? global_level() : parse_log_level(level));
    return logger;
}

}  // namespace trn3
