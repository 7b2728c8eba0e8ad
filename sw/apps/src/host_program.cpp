#include "trn3/apps/host_program.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "trn3/core/error.h"

namespace trn3::apps {

program_registry& program_registry::instance() {
    static program_registry registry;
    return registry;
}

std::unique_ptr<host_program> make_program(const std::string& name, host_system& system) {
    const program_info* info = program_registry::instance().find(name);
    if (!info) throw config_error("unknown host program '" + name + "'");
    if (system.parts > 1 && !info->runs_in_parts) {
        std::string which;
        for (const std::string& n : program_registry::instance().names())
            if (program_registry::instance().find(n)->runs_in_parts) which += (which.empty() ? "" : ", ") + n;
        throw config_error(fmt::format("host program '{}' runs only on a whole system, not on {} cut into {} parts "
                                       "(programs that run in parts: {})",
                                       name, system.name, system.parts, which));
    }
    return info->make(system);
}

}  // namespace trn3::apps
