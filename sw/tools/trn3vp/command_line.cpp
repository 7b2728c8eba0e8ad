#include "command_line.h"

#include <ostream>

#include <CLI/CLI.hpp>

#include "trn3/core/user_file.h"

#ifndef TRN3_VERSION
#define TRN3_VERSION "unknown"
#endif

namespace trn3 {
namespace {

// Options shared by the subcommands that build a platform.
void add_platform_options(CLI::App& cmd, options& o, std::vector<std::string>& params) {
    cmd.add_option("--platform", o.platform, "platform to build (see list-platforms)")->capture_default_str();
    cmd.add_option("-p,--param", params, "set a param: -p bringup.dram.read_latency=120ns (repeatable)");
    cmd.add_option("--config", o.config, "JSON file of param values (applied before -p)");
    cmd.add_option("--dump-config", o.dump_config,
                   "write the resolved params as JSON; feeding it back reproduces the run");
    cmd.add_option("--log-level", o.log_level, "global log level: trace, debug, info, warn, error, critical, off")
        ->capture_default_str();
    cmd.add_option("--trace", o.trace, "trace transactions of a module or socket (its hierarchical name), or 'all'");
}

}  // namespace

command_line parse_command_line(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
    command_line cl;
    options& o = cl.o;
    std::vector<std::string> params;
    CLI::App app{"trn3vp: a SystemC/TLM-2.0 virtual platform of the AWS Trn3 UltraServer", "trn3vp"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "trn3vp " TRN3_VERSION);
    CLI::App* run = app.add_subcommand("run", "build a platform and run its workload");
    add_platform_options(*run, o, params);
    run->add_option("--stats", o.stats, "write every counter and histogram as JSON to this file");
    run->add_option("--timeline", o.timeline_file,
                    "write a Perfetto / chrome://tracing timeline (trace-event JSON) of the run to this file");
    CLI::App* list_platforms = app.add_subcommand("list-platforms", "list the platforms that can be built");
    CLI::App* list_params =
        app.add_subcommand("list-params", "list every param of a platform with default, unit and description");
    add_platform_options(*list_params, o, params);
    list_params->add_option("--format", o.format, "text (a table) or json (for scripts)")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
    list_params->add_option("--filter", o.filter,
                            "only the params whose names match this glob, e.g. 'nl72x2.r0_t0_c0.nc0.*'");
    CLI::App* topo = app.add_subcommand(
        "topology",
        "print an UltraServer's topology (counts, lanes, hop counts, published examples) or a cluster's network");
    topo->add_option("--platform", cl.topo_sku, "nl32x2, nl72x2, nl16-torus2d, nl32x2-torus3d or cluster")
        ->capture_default_str();
    topo->add_option("-p,--param", cl.topo_params,
                     "switch_gen=1|2|3, racks, trays, switch_trays=4|5, nic_option=1|2, "
                     "switch_model=scorpio-x|pex90144; cluster: ultraserver=nl32x2|nl72x2, ultraservers, "
                     "switch_capacity=12.8|25.6|51.2 (Tb/s), port_speed=100|200|400 (Gb/s), nic_option=1|2");
    topo->add_option("--format", cl.topo_format, "text, json or dot (Graphviz)")
        ->check(CLI::IsMember({"text", "json", "dot"}))
        ->capture_default_str();
    CLI::App* sweep = app.add_subcommand(
        "sweep", "run every point of a sweep file (a grid or list of param sets), each its own simulation, in -j "
                 "local processes or shared among MPI ranks; gather a CSV, a JSON and a plot (docs/sweeps.md)");
    sweep->add_option("file", cl.sweep.file, "the sweep file (JSON)")->required();
    sweep->add_option("-j,--jobs", cl.sweep.jobs, "simulations at once (on each rank)")->capture_default_str();
    sweep->add_option("--out", cl.sweep.out_dir, "directory for the points' outputs, sweep.csv, sweep.json, sweep.svg")
        ->capture_default_str();
    sweep->add_flag("--dry-run", cl.sweep.dry_run, "list the points and stop");

    auto refuse = [&](const std::string& line) {
        err << "trn3vp: error: " << line << "\n";
        cl.exit_code = exit_user_error;
        return cl;
    };
    // A first word that is neither an option nor a command gets its own answer
    // (CLI11 would only say that a subcommand is required).
    if (argc > 1 && argv[1][0] != '-') {
        bool known = false;
        std::string names;
        for (const CLI::App* c : app.get_subcommands({})) {
            known = known || c->get_name() == argv[1];
            names += (names.empty() ? "" : ", ") + c->get_name();
        }
        if (!known)
            return refuse("unknown command '" + quoted_excerpt(argv[1]) + "' (" + names + "; see trn3vp --help)");
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForVersion& e) {
        cl.exit_code = app.exit(e, out, err);
        return cl;
    } catch (const CLI::CallForHelp& e) {
        cl.exit_code = app.exit(e, out, err);
        return cl;
    } catch (const CLI::CallForAllHelp& e) {
        cl.exit_code = app.exit(e, out, err);
        return cl;
    } catch (const CLI::ParseError& e) {
        return refuse(quoted_excerpt(e.what(), 200) + " (see trn3vp --help)");
    }
    for (const std::string& kv : params) {
        const auto eq = kv.find('=');
        if (eq == std::string::npos || eq == 0) return refuse("-p '" + quoted_excerpt(kv) + "': expected key=value");
        o.params.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    }
    o.platform_given = (*run && run->count("--platform")) || (*list_params && list_params->count("--platform"));
    cl.what = *run              ? command_line::command::run
              : *list_platforms ? command_line::command::list_platforms
              : *list_params    ? command_line::command::list_params
              : *topo           ? command_line::command::topology
                                : command_line::command::sweep;
    return cl;
}

}  // namespace trn3
