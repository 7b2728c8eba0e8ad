#include "trn3/platforms/platform.h"

#include <algorithm>
#include <stdexcept>

#include "trn3/core/log.h"

namespace trn3 {

platform::platform(const sc_core::sc_module_name& name)
    : sc_core::sc_module(name),
      log_level(this, "log_level", "", "log level of the platform itself; empty = the global --log-level"),
      logger_(make_logger(this->name(), log_level.get())) {}

platform_registry& platform_registry::instance() {
    static platform_registry registry;
    return registry;
}

void platform_registry::add(platform_info info) {
    if (find(info.name)) throw std::logic_error("platform " + info.name + " registered twice");
    platforms_.push_back(std::move(info));
}

const platform_info* platform_registry::find(const std::string& name) const {
    for (const auto& p : platforms_)
        if (p.name == name) return &p;
    return nullptr;
}

std::vector<const platform_info*> platform_registry::all() const {
    std::vector<const platform_info*> out;
    for (const auto& p : platforms_) out.push_back(&p);
    std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->name < b->name; });
    return out;
}

} // namespace trn3
