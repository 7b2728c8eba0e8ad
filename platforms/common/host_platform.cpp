#include "trn3/platforms/host_platform.h"

namespace trn3 {

namespace {
one_of<std::string> program_names() { return {apps::program_registry::instance().names()}; }
}  // namespace

host_platform::host_platform(const sc_core::sc_module_name& name, const std::string& default_app)
    : platform(name), app(this, "app", default_app, "the host program every host runs (sw/apps)", program_names()) {}

apps::host_program& host_platform::make_program(apps::host_system system) {
    systems_.push_back(std::make_unique<apps::host_system>(std::move(system)));
    apps::host_system& s = *systems_.back();
    s.name = this->name();
    s.stop = [this] {
        if (++programs_done_ < programs_.size()) return;
        if (stop_) stop_();
        else sc_core::sc_stop();
    };
    programs_.push_back(apps::make_program(app.get(), s));
    return *programs_.back();
}

bool host_platform::passed() const {
    if (programs_.empty()) return false;
    for (const auto& p : programs_)
        if (!p->passed()) return false;
    return true;
}

}  // namespace trn3
