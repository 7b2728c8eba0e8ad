#include "trn3/platforms/platform.h"

#include <algorithm>
#include <stdexcept>

#include "trn3/core/log.h"

namespace trn3 {

platform::platform(const sc_core::sc_module_name& name)
    : sc_core::sc_module(name),
      log_level(this, "log_level", "", "log level of the platform itself; empty = the global --log-level",
                log_level_choices()),
      logger_(make_logger(this->name(), log_level.get())) {}

platform_registry& platform_registry::instance() {
    static platform_registry registry;
    return registry;
}

}  // namespace trn3
