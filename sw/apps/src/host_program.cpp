#include "trn3/apps/host_program.h"

#include <algorithm>
#include <stdexcept>

#include "trn3/core/error.h"

namespace trn3::apps {

program_registry& program_registry::instance() {
    static program_registry registry;
    return registry;
}

std::unique_ptr<host_program> make_program(const std::string& name, host_system& system) {
    const program_info* info = program_registry::instance().find(name);
    if (!info) throw config_error("unknown host program '" + name + "'");
    return info->make(system);
}

}  // namespace trn3::apps
