#include "trn3/platforms/host_platform.h"

namespace trn3 {

namespace {
one_of<std::string> program_names() { return {apps::program_registry::instance().names()}; }
}  // namespace

host_platform::host_platform(const sc_core::sc_module_name& name, const std::string& default_app)
    : platform(name), app(this, "app", default_app, "the host program every host runs (sw/apps)", program_names()) {}

apps::host_program& host_platform::make_program(apps::host_system system) {
    system_ = std::move(system);
    system_.name = this->name();
    system_.stop = [this] {
        if (stop_) stop_();
        else sc_core::sc_stop();
    };
    program_ = apps::make_program(app.get(), system_);
    return *program_;
}

}  // namespace trn3
