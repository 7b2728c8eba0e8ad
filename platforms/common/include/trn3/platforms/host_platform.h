// A platform with hosts: it wires chips, hosts and fabric, then hands the
// hosts to the host program its `app` param names (sw/apps). The program
// runs in each host's software context; the platform reports its hardware
// around the program's report.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "trn3/apps/host_program.h"
#include "trn3/platforms/platform.h"

namespace trn3 {

class host_platform : public platform {
public:
    param<std::string> app;

    bool passed() const override { return program_ && program_->passed(); }
    // What ends the run when the program is done on every host (default:
    // sc_stop). A platform of platforms (cluster) sets its own.
    void set_stop(std::function<void()> stop) { stop_ = std::move(stop); }
    void report(std::ostream& os) const override {
        program_->report(os);
        program_->report_failures(os);
    }

protected:
    host_platform(const sc_core::sc_module_name& name, const std::string& default_app);
    // After wiring: builds the program over `system` (its `stop` is set here:
    // it ends the run). The caller then starts `run(h)` in each host's
    // software context.
    apps::host_program& make_program(apps::host_system system);
    apps::host_program& program() const { return *program_; }

private:
    apps::host_system system_;
    std::unique_ptr<apps::host_program> program_;
    std::function<void()> stop_;
};

}  // namespace trn3
