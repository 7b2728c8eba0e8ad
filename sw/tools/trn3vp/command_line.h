// The trn3vp command line, parsed and nothing run: cli.cpp runs what it
// says; the command_line fuzz target (fuzz/targets/command_line.cpp) feeds
// it any argv.
#pragma once

#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "sweep.h"

namespace trn3 {

constexpr int exit_ok = 0;
constexpr int exit_workload_failed = 1;
constexpr int exit_user_error = 2;

struct options {
    std::string platform = "bringup";
    bool platform_given = false;  // --platform on the command line (else a dumped config's, else bringup)
    std::string filter;  // list-params: a glob over names
    std::string format = "text";  // list-params: text or json
    std::vector<std::pair<std::string, std::string>> params;  // -p key=value, in order
    std::string config;
    std::string dump_config;
    std::string log_level = "warn";
    std::vector<std::string> trace;
    std::string stats;
    std::string timeline_file;
};

struct command_line {
    enum class command { none, run, list_platforms, list_params, topology, sweep };
    command what = command::none;  // none: the parse ended the program with exit_code
    int exit_code = exit_ok;  // help or version: exit_ok; bad input: exit_user_error (one line on err)
    options o;
    std::string topo_sku = "nl72x2", topo_format = "text";
    std::vector<std::string> topo_params;
    sweep_options sweep;
};

// Help and version go to `out`; an error is one line on `err`.
command_line parse_command_line(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace trn3
