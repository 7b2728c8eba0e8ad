#include "cli.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <fnmatch.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "command_line.h"
#include "sweep.h"
#include "trn3/core/component.h"
#include "trn3/core/log.h"
#include "trn3/core/param.h"
#include "trn3/core/protocol_checker.h"
#include "trn3/core/ranks.h"
#include "trn3/core/simulation.h"
#include "trn3/core/stats.h"
#include "trn3/core/timeline.h"
#include "trn3/core/user_file.h"
#include "trn3/platforms/platform.h"
#include "trn3/topology/cluster.h"
#include "trn3/topology/topology.h"

namespace trn3 {
namespace {

// This program's path, for the processes a sweep starts.
std::string self_exe() {
    char buf[4096];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) throw config_error("sweep: cannot find this program's path (/proc/self/exe)");
    return std::string(buf, static_cast<std::size_t>(n));
}

// "rank 1 of 2: " in a distributed run's messages.
std::string rank_prefix() {
    const ranks& r = process_ranks();
    return r.single() ? "" : fmt::format("rank {} of {}: ", r.rank(), r.size());
}

// Applies config file, -p values and --trace, then builds the platform.
std::unique_ptr<platform> build(options& o, std::unique_ptr<simulation>& sim) {
    set_global_log_level(o.log_level);
    auto& reg = param_registry::instance();
    if (!o.config.empty()) {
        const std::string from_config = reg.load_config_file(o.config);
        if (!o.platform_given && !from_config.empty()) o.platform = from_config;
    }
    for (const auto& [key, value] : o.params) reg.set_pending_text(key, value, "command line");
    for (const std::string& t : o.trace) {
        if (t == "all") component::set_trace_default(true);
        else reg.set_pending_text(o.platform + "." + t + ".trace", "true", "--trace");
    }
    const platform_info* info = platform_registry::instance().find(o.platform);
    if (!info) {
        std::string names;
        for (const auto* p : platform_registry::instance().all()) names += (names.empty() ? "" : ", ") + p->name;
        throw config_error("unknown platform '" + o.platform + "' (available: " + names + ")");
    }
    sim = std::make_unique<simulation>();
    std::unique_ptr<platform> p = info->build();
    ranks& r = process_ranks();
    if (r.single()) {
        reg.check_all_claimed();
    } else {
        // A distributed run: a value may be for a part another process
        // elaborates (a chip of the other rack). It is unknown only where no
        // process claimed it, and then every process says so.
        std::map<std::string, unsigned> unclaimed_on;
        for (const std::string& text : gather_text(r, nlohmann::json(reg.unclaimed()).dump()))
            for (const auto& key : nlohmann::json::parse(text)) ++unclaimed_on[key.get<std::string>()];
        reg.check_all_claimed([&](const std::string& key) { return unclaimed_on[key] < r.size(); });
    }
    if (!o.dump_config.empty()) reg.dump_config_file(o.dump_config, o.platform);
    return p;
}

int cmd_list_platforms() {
    for (const auto* p : platform_registry::instance().all())
        std::cout << fmt::format("{:<16} {}\n", p->name, p->description);
    return exit_ok;
}

int cmd_list_params(options& o) {
    std::unique_ptr<simulation> sim;
    auto p = build(o, sim);
    std::vector<const param_base*> params;
    for (const auto* q : param_registry::instance().all())
        if (o.filter.empty() || ::fnmatch(o.filter.c_str(), q->name().c_str(), 0) == 0) params.push_back(q);
    if (params.empty()) throw config_error("no param matches '" + o.filter + "'");
    if (o.format == "json") {
        // The SI unit of the quantity types; their values are texts with a unit ("120 ns", "64 GB/s").
        const std::map<std::string, std::string> units = {
            {"time", "s"}, {"frequency", "Hz"}, {"size", "B"}, {"bandwidth", "B/s"}};
        nlohmann::json out = nlohmann::json::array();
        for (const auto* q : params)
            out.push_back({{"name", q->name()},
                           {"type", q->type_name()},
                           {"unit", units.count(q->type_name()) ? units.at(q->type_name()) : ""},
                           {"default", q->default_string()},
                           {"value", q->value_string()},
                           {"description", q->description()},
                           {"range", q->range_string()}});
        std::cout << out.dump(1) << "\n";
        return exit_ok;
    }
    std::size_t w_name = 4, w_type = 4, w_value = 7;
    for (const auto* q : params) {
        w_name = std::max(w_name, q->name().size());
        w_type = std::max(w_type, std::string(q->type_name()).size());
        w_value = std::max({w_value, q->value_string().size(), q->default_string().size()});
    }
    std::cout << fmt::format("{:<{}}  {:<{}}  {:<{}}  {:<{}}  {}\n", "NAME", w_name, "TYPE", w_type, "DEFAULT", w_value,
                             "VALUE", w_value, "DESCRIPTION [RANGE]");
    for (const auto* q : params) {
        std::string desc = q->description();
        if (!q->range_string().empty()) desc += " " + q->range_string();
        std::cout << fmt::format("{:<{}}  {:<{}}  {:<{}}  {:<{}}  {}\n", q->name(), w_name, q->type_name(), w_type,
                                 q->default_string(), w_value, q->value_string(), w_value, desc);
    }
    return exit_ok;
}

// Two outputs into one file would silently keep only the last.
void check_outputs_distinct(const options& o) {
    const std::vector<std::pair<const char*, std::string>> outs = {
        {"--stats", o.stats}, {"--timeline", o.timeline_file}, {"--dump-config", o.dump_config}};
    for (std::size_t i = 0; i < outs.size(); ++i)
        for (std::size_t j = i + 1; j < outs.size(); ++j)
            if (!outs[i].second.empty() && outs[i].second == outs[j].second)
                throw config_error(
                    fmt::format("{} and {} name the same file '{}'", outs[i].first, outs[j].first, outs[i].second));
}

// Every rank's stats as one set: a stat one rank has is taken as it is; a
// counter several have (a cut link's, each direction counted where it is
// sent) is summed.
nlohmann::json merged_stats(ranks& r) {
    const std::vector<std::string> all = gather_text(r, stats_registry::instance().to_json().dump());
    nlohmann::json merged = nlohmann::json::object();
    for (const std::string& text : all) {
        const nlohmann::json one = nlohmann::json::parse(text);
        for (const auto& [name, value] : one.items()) {
            auto it = merged.find(name);
            if (it == merged.end()) merged[name] = value;
            else if (it->is_number_unsigned() && value.is_number_unsigned())
                *it = it->get<std::uint64_t>() + value.get<std::uint64_t>();
            else if (*it != value)
                throw std::logic_error("stats: '" + name + "' differs between ranks and is not a counter");
        }
    }
    return merged;
}

int cmd_run(options& o) {
    check_outputs_distinct(o);
    ranks& r = process_ranks();
    std::unique_ptr<simulation> sim;
    auto p = build(o, sim);
    if (!r.single() && !p->windows())
        throw config_error(fmt::format("platform {} runs in one process (it is not cut into partitions): run it "
                                       "without mpirun, or cut it (nl72x2, nl32x2: -p <platform>.partitions=racks; "
                                       "cluster: by UltraServer)",
                                       o.platform));
    // A distributed run's ranks each write a part; rank 0 joins them.
    const auto part = [&](unsigned rank) { return o.timeline_file + fmt::format(".rank{}", rank); };
    if (!o.timeline_file.empty()) timeline::instance().open(r.single() ? o.timeline_file : part(r.rank()));
    run_summary s = sim->run(p->windows(), [&] { return p->finished_at(); });
    p->write_outputs();
    bool timeline_ok = timeline::instance().close();
    if (!o.timeline_file.empty() && !r.single()) {
        timeline_ok = all_of(r, timeline_ok);  // every part is closed before rank 0 reads them
        if (timeline_ok && r.leader()) {
            std::vector<std::string> parts;
            for (unsigned k = 0; k < r.size(); ++k) parts.push_back(part(k));
            timeline_ok = timeline::merge(parts, o.timeline_file);
        }
    }
    if (!timeline_ok) throw config_error("timeline file '" + o.timeline_file + "': writing it failed (a full disk?)");
    // Output is the leader's; the platform's report and verdict gather the other ranks'.
    std::ostringstream elsewhere;
    std::ostream& out = r.leader() ? std::cout : elsewhere;
    p->report(out);
    if (!o.stats.empty()) {
        nlohmann::json stats = merged_stats(r);
        // The run's simulated time, exact (the summary line rounds it).
        stats["sim.simulated_ps"] = static_cast<std::uint64_t>(s.simulated / sc_core::sc_time(1, sc_core::SC_PS) + 0.5);
        if (r.leader()) write_user_file(o.stats, "stats file", stats.dump(2) + "\n");
    }
    const bool passed = p->passed();
    const bool checks_ok = all_of(r, protocol_checker::total_violations() == 0);
    const bool ok = passed && checks_ok;
    s.transactions = sum_of(r, s.transactions);
    out << fmt::format("platform {}: {}\n", o.platform,
                       ok          ? "PASSED"
                       : checks_ok ? "FAILED"
                                   : "FAILED (protocol violations)");
    out << s.text() << std::flush;
#ifndef __SANITIZE_ADDRESS__
    // Everything is reported and written: tearing down the platform (about a
    // second for nl72x2's 180,000 objects) would change nothing, so the
    // process exit takes it. Sanitizer builds tear down, for the leak check.
    (void)p.release();
    (void)sim.release();
#endif
    return ok ? exit_ok : exit_workload_failed;
}

// The two sides of a topology param "key=value" (std::invalid_argument without '=').
std::string key_of(const std::string& kv) {
    const std::size_t eq = kv.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("expected key=value, got '" + kv + "'");
    return kv.substr(0, eq);
}
std::string value_of(const std::string& kv) { return kv.substr(kv.find('=') + 1); }

// `trn3vp topology --platform cluster`: the scale-out network's arithmetic.
int cmd_cluster_topology(const std::vector<std::string>& params, const std::string& format) {
    topology::cluster_params cp;
    try {
        for (const std::string& kv : params) topology::set_param(cp, key_of(kv), value_of(kv));
        if (format == "dot") throw std::invalid_argument("--format dot draws an UltraServer's graph, not a cluster");
        const topology::cluster_network c = topology::plan_cluster(cp);
        std::cout << (format == "json" ? topology::to_json(c) : topology::report(c));
    } catch (const std::invalid_argument& e) {
        throw config_error(e.what());
    }
    return exit_ok;
}

// `trn3vp topology`: the UltraServer graph, without building a simulation.
int cmd_topology(const std::string& sku, const std::vector<std::string>& params, const std::string& format) {
    if (sku == "cluster") return cmd_cluster_topology(params, format);
    topology::topology_params tp;
    tp.sku = sku;
    try {
        for (const std::string& kv : params) topology::set_param(tp, key_of(kv), value_of(kv));
        const topology::topology t = topology::build(tp);
        std::cout << (format == "json"  ? topology::to_json(t)
                      : format == "dot" ? topology::to_dot(t)
                                        : topology::report(t));
    } catch (const std::invalid_argument& e) {
        throw config_error(e.what());
    }
    return exit_ok;
}

}  // namespace

int cli_main(int argc, char** argv) {
    command_line cl = parse_command_line(argc, argv, std::cout, std::cerr);
    if (cl.what == command_line::command::none) return cl.exit_code;
    options& o = cl.o;
    try {
        switch (cl.what) {
        case command_line::command::list_platforms: return cmd_list_platforms();
        case command_line::command::list_params: return cmd_list_params(o);
        case command_line::command::topology: return cmd_topology(cl.topo_sku, cl.topo_params, cl.topo_format);
        case command_line::command::sweep: return run_sweep(cl.sweep, self_exe());
        default: return cmd_run(o);
        }
    } catch (const config_error& e) {
        // One write: the ranks of a distributed run share the terminal.
        std::cerr << "trn3vp: " + rank_prefix() + "error: " + e.what() + "\n" << std::flush;
        return exit_user_error;
    } catch (const std::exception& e) {
        std::cerr << "trn3vp: " + rank_prefix() + "simulation error: " + e.what() + "\n" << std::flush;
        return exit_workload_failed;
    }
}

}  // namespace trn3
