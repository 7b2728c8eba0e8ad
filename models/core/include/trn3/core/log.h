// Logging: one spdlog sink for the whole simulation, one logger per module.
//
// Lines carry the simulated time and the module's hierarchical name:
//   [   1.250 us] [chip0.mcu] [info] firmware booted
// The level of each module is its `log_level` param; "" inherits the global
// level (the CLI's --log-level).
#pragma once

#include <memory>
#include <string>

#include <spdlog/logger.h>

#include "trn3/core/param.h"

namespace trn3 {

// A logger named `name` writing to the shared sink at `level` ("" = global).
std::shared_ptr<spdlog::logger> make_logger(const std::string& name, const std::string& level);

// The global level, applied to loggers whose own level is "". Throws
// config_error for a name spdlog does not know.
void set_global_log_level(const std::string& level);
spdlog::level::level_enum parse_log_level(const std::string& level);
// The values of a log_level param: "" (the global level) and the level names.
one_of<std::string> log_level_choices();

}  // namespace trn3
