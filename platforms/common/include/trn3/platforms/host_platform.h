// A platform with hosts: it wires chips, hosts and fabric, then hands the
// hosts to the host program its `app` param names (sw/apps). The program
// runs in each host's software context; the platform reports its hardware
// around the program's report.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "trn3/apps/host_program.h"
#include "trn3/platforms/platform.h"

namespace trn3 {

class host_platform : public platform {
public:
    param<std::string> app;

    // Every program instance here passed (one, or one per part held here).
    bool passed() const override;
    // What ends the run when the program is done on every host (default:
    // sc_stop). A platform of platforms (cluster) sets its own.
    void set_stop(std::function<void()> stop) { stop_ = std::move(stop); }
    void report(std::ostream& os) const override {
        program().report(os);
        program().report_failures(os);
    }

protected:
    host_platform(const sc_core::sc_module_name& name, const std::string& default_app);
    // After wiring: builds the program over `system` (its `stop` is set here:
    // once every instance made here is done, it ends the run). The caller
    // then starts `run(h)` in each host's software context. A system cut
    // into parts (host_system::parts) makes an instance per part it holds.
    apps::host_program& make_program(apps::host_system system);
    // The first instance made here (the only one of a system not cut).
    apps::host_program& program() const { return *programs_.front(); }
    const std::vector<std::unique_ptr<apps::host_program>>& programs() const { return programs_; }

private:
    std::vector<std::unique_ptr<apps::host_system>> systems_;  // the programs hold them by reference
    std::vector<std::unique_ptr<apps::host_program>> programs_;
    std::size_t programs_done_ = 0;
    std::function<void()> stop_;
};

}  // namespace trn3
