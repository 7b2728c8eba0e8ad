// Platforms: named systems built from models.
//
// A platform registers itself by name in its own .cpp file:
//   static const trn3::platform_registration reg{"bringup", "one-line description",
//       [] { return std::make_unique<bringup>("bringup"); }};
// so adding a platform touches no central list. The CLI builds the chosen
// platform (SystemC elaboration), runs it, and asks it whether it passed.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <spdlog/logger.h>
#include <systemc>

#include "trn3/core/param.h"
#include "trn3/core/registry.h"
#include "trn3/core/window_sync.h"

namespace trn3 {

class platform : public sc_core::sc_module {
public:
    param<std::string> log_level;

    explicit platform(const sc_core::sc_module_name& name);
    spdlog::logger& log() const { return *logger_; }
    // After the run: did the workload produce what it should have?
    virtual bool passed() const = 0;
    // After the run: what the workload did, for people (a few lines).
    virtual void report(std::ostream& os) const = 0;
    // After the run, before the report: the files the workload writes (a
    // kernel's outputs). A config_error here is the user's (exit 2).
    virtual void write_outputs() {}

    // A platform cut into partitions for a distributed run (one partition
    // or more per rank; window_sync.h): its window protocol, and when this
    // rank's part finished (none while it runs). Null: it runs whole in one
    // process, until it stops.
    virtual window_sync* windows() { return nullptr; }
    virtual std::optional<sc_core::sc_time> finished_at() const { return std::nullopt; }

private:
    std::shared_ptr<spdlog::logger> logger_;
};

struct platform_info {
    std::string name;
    std::string description;
    std::function<std::unique_ptr<platform>()> build;
};

class platform_registry : public named_registry<platform_info> {
public:
    static platform_registry& instance();

private:
    platform_registry() : named_registry("platform") {}
};

struct platform_registration {
    platform_registration(std::string name, std::string description, std::function<std::unique_ptr<platform>()> build) {
        platform_registry::instance().add({std::move(name), std::move(description), std::move(build)});
    }
};

}  // namespace trn3
