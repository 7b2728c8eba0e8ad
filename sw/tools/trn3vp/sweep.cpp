// `trn3vp sweep` (sweep.h).
#include "sweep.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>
#include <map>
// GCC 12's std::regex trips -Wmaybe-uninitialized in its own automaton under the sanitizer build's flags.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <regex>
#pragma GCC diagnostic pop
#include <sstream>
#include <vector>

#include <fcntl.h>
#include <fnmatch.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "trn3/core/error.h"
#include "trn3/core/ranks.h"
#include "trn3/core/user_file.h"

extern char** environ;

namespace trn3 {
namespace {

using nlohmann::json;

struct figure {
    std::string name;
    std::regex pattern;
};

struct plan {
    std::string platform;
    std::vector<std::map<std::string, std::string>> points;  // every param of each point
    std::vector<std::string> varying;  // the params that are columns: the grid's, then the points'
    std::vector<figure> figures;
    std::vector<std::string> stats;
    std::string plot_x, plot_y, plot_series;
    std::map<std::string, std::string> plot_where;  // only the rows with these values
};

struct result {
    int exit_code = -1;
    bool passed = false;
    double simulated_us = NAN, wall_s = 0;
    std::map<std::string, double> values;  // figures and stats; absent: not found
};

[[noreturn]] void bad(const std::string& file, const std::string& what) {
    throw config_error("sweep file '" + file + "': " + what);
}

std::string scalar_text(const std::string& file, const std::string& key, const json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
    if (v.is_number()) return v.dump();
    bad(file, "'" + key + "' must be a string, a number or a boolean");
}

plan load(const std::string& file) {
    json doc;
    try {
        doc = json::parse(read_user_text(file, "sweep file", 16 << 20));
    } catch (const json::parse_error& e) {
        bad(file, std::string("not JSON: ") + e.what());
    }
    if (!doc.is_object()) bad(file, "must be a JSON object");
    for (const auto& [key, v] : doc.items())
        if (key != "platform" && key != "params" && key != "grid" && key != "points" && key != "figures" &&
            key != "stats" && key != "plot")
            bad(file, "unknown key '" + key + "' (platform, params, grid, points, figures, stats, plot)");
    plan p;
    const bool varied = (doc.contains("grid") && doc["grid"].is_object() && doc["grid"].contains("platform"));
    if (!varied && (!doc.contains("platform") || !doc["platform"].is_string()))
        bad(file, "'platform' (a string) is required, unless the grid varies it");
    if (doc.contains("platform")) {
        if (!doc["platform"].is_string()) bad(file, "'platform' must be a string");
        p.platform = doc["platform"].get<std::string>();
    }
    std::map<std::string, std::string> common;
    if (doc.contains("params")) {
        if (!doc["params"].is_object()) bad(file, "'params' must be an object of param values");
        for (const auto& [k, v] : doc["params"].items()) common[k] = scalar_text(file, k, v);
    }
    // The grid's combinations, its keys in order with the last varying fastest.
    std::vector<std::map<std::string, std::string>> combos{{}};
    if (doc.contains("grid")) {
        if (!doc["grid"].is_object()) bad(file, "'grid' must be an object of value lists");
        for (const auto& [k, values] : doc["grid"].items()) {
            if (!values.is_array() || values.empty()) bad(file, "grid '" + k + "' must be a non-empty list");
            p.varying.push_back(k);
            std::vector<std::map<std::string, std::string>> next;
            for (const auto& c : combos)
                for (const auto& v : values) {
                    auto m = c;
                    m[k] = scalar_text(file, k, v);
                    next.push_back(std::move(m));
                }
            combos = std::move(next);
        }
    }
    std::vector<std::map<std::string, std::string>> listed{{}};
    if (doc.contains("points")) {
        if (!doc["points"].is_array() || doc["points"].empty()) bad(file, "'points' must be a non-empty list");
        listed.clear();
        for (const auto& pt : doc["points"]) {
            if (!pt.is_object()) bad(file, "each of 'points' must be an object of param values");
            std::map<std::string, std::string> m;
            for (const auto& [k, v] : pt.items()) {
                m[k] = scalar_text(file, k, v);
                if (std::find(p.varying.begin(), p.varying.end(), k) == p.varying.end()) p.varying.push_back(k);
            }
            listed.push_back(std::move(m));
        }
    }
    for (const auto& l : listed)
        for (const auto& c : combos) {
            auto m = common;
            for (const auto& [k, v] : l) m[k] = v;
            for (const auto& [k, v] : c) m[k] = v;
            p.points.push_back(std::move(m));
        }
    if (p.points.size() > 100000) bad(file, fmt::format("{} points: at most 100,000", p.points.size()));
    if (doc.contains("figures")) {
        if (!doc["figures"].is_object()) bad(file, "'figures' must be an object of name: regex");
        for (const auto& [name, re] : doc["figures"].items()) {
            if (!re.is_string()) bad(file, "figure '" + name + "' must be a regex (a string)");
            try {
                std::regex r(re.get<std::string>());
                if (r.mark_count() < 1) bad(file, "figure '" + name + "': its regex needs a group (the number)");
                p.figures.push_back({name, std::move(r)});
            } catch (const std::regex_error& e) {
                bad(file, "figure '" + name + "': not a regex (" + e.what() + ")");
            }
        }
    }
    if (doc.contains("stats")) {
        if (!doc["stats"].is_array()) bad(file, "'stats' must be a list of stat names or globs");
        for (const auto& s : doc["stats"]) {
            if (!s.is_string()) bad(file, "each of 'stats' must be a string");
            p.stats.push_back(s.get<std::string>());
        }
    }
    if (doc.contains("plot")) {
        const json& pl = doc["plot"];
        if (!pl.is_object() || !pl.contains("x") || !pl.contains("y") || !pl["x"].is_string() || !pl["y"].is_string())
            bad(file,
                "'plot' needs \"x\" (a param of the grid or points) and \"y\" (a figure, a stat or simulated_us)");
        p.plot_x = pl["x"].get<std::string>();
        p.plot_y = pl["y"].get<std::string>();
        if (pl.contains("series")) p.plot_series = pl["series"].get<std::string>();
        if (pl.contains("where")) {
            if (!pl["where"].is_object()) bad(file, "plot 'where' must be an object of param values");
            for (const auto& [k, v] : pl["where"].items()) p.plot_where[k] = scalar_text(file, k, v);
        }
        auto varies = [&](const std::string& k) {
            return std::find(p.varying.begin(), p.varying.end(), k) != p.varying.end();
        };
        if (!varies(p.plot_x)) bad(file, "plot x '" + p.plot_x + "' is not a param of the grid or points");
        if (!p.plot_series.empty() && !varies(p.plot_series))
            bad(file, "plot series '" + p.plot_series + "' is not a param of the grid or points");
        for (const auto& [k, v] : p.plot_where)
            if (!varies(k)) bad(file, "plot where '" + k + "' is not a param of the grid or points");
        bool known = p.plot_y == "simulated_us" || std::find(p.stats.begin(), p.stats.end(), p.plot_y) != p.stats.end();
        for (const auto& f : p.figures) known = known || f.name == p.plot_y;
        if (!known) bad(file, "plot y '" + p.plot_y + "' is not a figure, a stat or simulated_us");
    }
    return p;
}

// A point's platform: its own "platform" (a grid or a point may vary it), else the file's.
std::string platform_of(const plan& p, std::size_t i) {
    const auto it = p.points[i].find("platform");
    return it == p.points[i].end() ? p.platform : it->second;
}

std::string point_file(const std::string& dir, std::size_t i, const char* ext) {
    return fmt::format("{}/point_{:04}.{}", dir, i, ext);
}

// Starts `trn3vp run` for point i (not an MPI rank itself: the launcher's variables are left out).
// Starts `args` (args[0] a path, or a name found on PATH) with stdout and
// stderr to files, outside the MPI job (the launcher's variables left out).
pid_t spawn(std::vector<std::string> args, const std::string& out, const std::string& err) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<char*> env;
    for (char** e = environ; *e; ++e)
        if (std::strncmp(*e, "OMPI_", 5) != 0 && std::strncmp(*e, "PMIX_", 5) != 0) env.push_back(*e);
    env.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (err == out) posix_spawn_file_actions_adddup2(&fa, 1, 2);  // one file: one offset
    else posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = -1;
    const int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), env.data());
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) throw config_error(fmt::format("sweep: cannot start {}: {}", args[0], std::strerror(rc)));
    return pid;
}

// Starts `trn3vp run` for point i.
pid_t start(const std::string& self, const plan& p, std::size_t i, const std::string& dir) {
    std::vector<std::string> args = {
        self, "run", "--platform", platform_of(p, i), "--stats", point_file(dir, i, "stats.json")};
    for (const auto& [k, v] : p.points[i]) {
        if (k == "platform") continue;
        args.push_back("-p");
        args.push_back(k + "=" + v);
    }
    return spawn(std::move(args), point_file(dir, i, "out"), point_file(dir, i, "err"));
}

// "simulated time    2.904 ms" -> 2904 (us).
double simulated_us(const std::string& line) {
    std::istringstream in(line.substr(std::strlen("simulated time")));
    double v = NAN;
    std::string unit;
    in >> v >> unit;
    const std::map<std::string, double> us = {{"s", 1e6}, {"ms", 1e3}, {"us", 1}, {"ns", 1e-3}};
    const auto u = us.find(unit);
    return u == us.end() ? NAN : v * u->second;
}

result read_result(const plan& p, std::size_t i, const std::string& dir, int exit_code, double wall_s) {
    result r;
    r.exit_code = exit_code;
    r.wall_s = wall_s;
    std::istringstream out(read_user_text(point_file(dir, i, "out"), "a point's output", 256 << 20));
    std::string line;
    while (std::getline(out, line)) {
        if (line.rfind("simulated time", 0) == 0) r.simulated_us = simulated_us(line);
        if (line == "platform " + platform_of(p, i) + ": PASSED") r.passed = true;
        for (const auto& f : p.figures) {
            std::smatch m;
            if (r.values.count(f.name) || !std::regex_search(line, m, f.pattern)) continue;
            try {
                r.values[f.name] = std::stod(m[1].str());
            } catch (const std::exception&) {  // group 1 is not a number: the figure stays empty
            }
        }
    }
    if (p.stats.empty() || exit_code != 0) return r;
    json stats;
    try {
        stats = json::parse(read_user_text(point_file(dir, i, "stats.json"), "a point's stats", 1ull << 30));
    } catch (const std::exception&) {
        return r;
    }
    for (const std::string& s : p.stats) {
        double sum = 0;
        bool any = false;
        for (const auto& [name, v] : stats.items())
            if (v.is_number() && ::fnmatch(s.c_str(), name.c_str(), 0) == 0) {
                sum += v.get<double>();
                any = true;
            }
        if (any) r.values[s] = sum;
    }
    return r;
}

json to_json(const plan& p, std::size_t i, const result& r) {
    json row;
    row["point"] = i;
    row["params"] = p.points[i];
    row["exit"] = r.exit_code;
    row["passed"] = r.passed;
    row["simulated_us"] = std::isnan(r.simulated_us) ? json() : json(r.simulated_us);
    row["wall_s"] = r.wall_s;
    for (const auto& [k, v] : r.values) row["values"][k] = v;
    return row;
}

std::string csv_cell(std::string s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

std::string number(const json& v) {
    if (v.is_null()) return "";
    return fmt::format("{:.6g}", v.get<double>());
}

std::string csv_text(const plan& p, const json& rows) {
    std::string text = "point";
    for (const auto& k : p.varying) text += "," + csv_cell(k);
    text += ",exit,passed,simulated_us";
    for (const auto& f : p.figures) text += "," + csv_cell(f.name);
    for (const auto& s : p.stats) text += "," + csv_cell(s);
    text += "\n";
    for (const json& row : rows) {
        text += std::to_string(row["point"].get<std::size_t>());
        for (const auto& k : p.varying) text += "," + csv_cell(row["params"].value(k, ""));
        text += fmt::format(",{},{},{}", row["exit"].get<int>(), row["passed"].get<bool>() ? 1 : 0,
                            number(row["simulated_us"]));
        auto value = [&](const std::string& k) {
            return row.contains("values") && row["values"].contains(k) ? number(row["values"][k]) : std::string();
        };
        for (const auto& f : p.figures) text += "," + value(f.name);
        for (const auto& s : p.stats) text += "," + value(s);
        text += "\n";
    }
    return text;
}

}  // namespace

int run_sweep(const sweep_options& o, const std::string& self_exe) {
    const plan p = load(o.file);
    ranks& r = process_ranks();
    if (o.dry_run) {
        if (r.leader())
            for (std::size_t i = 0; i < p.points.size(); ++i) {
                std::string line = fmt::format("point {}: --platform {}", i, platform_of(p, i));
                for (const auto& [k, v] : p.points[i])
                    if (k != "platform") line += " -p " + k + "=" + v;
                std::cout << line << "\n";
            }
        return 0;
    }
    if (o.jobs == 0) throw config_error("sweep: -j must be at least 1");
    if (::mkdir(o.out_dir.c_str(), 0755) != 0 && errno != EEXIST)
        throw config_error(fmt::format("sweep: cannot make directory '{}': {}", o.out_dir, std::strerror(errno)));
    const std::string who = r.single() ? "" : fmt::format(" (rank {} of {})", r.rank(), r.size());
    // This rank's share: points i with i mod ranks = rank.
    std::vector<std::size_t> mine;
    for (std::size_t i = r.rank(); i < p.points.size(); i += r.size()) mine.push_back(i);
    struct running {
        std::size_t point;
        std::chrono::steady_clock::time_point started;
    };
    std::map<pid_t, running> active;
    json rows = json::array();
    std::size_t next = 0, done = 0;
    while (next < mine.size() || !active.empty()) {
        while (next < mine.size() && active.size() < o.jobs) {
            const std::size_t i = mine[next++];
            active[start(self_exe, p, i, o.out_dir)] = {i, std::chrono::steady_clock::now()};
        }
        int status = 0;
        const pid_t pid = ::waitpid(-1, &status, 0);
        if (pid < 0) throw config_error(std::string("sweep: waitpid: ") + std::strerror(errno));
        const auto it = active.find(pid);
        if (it == active.end()) continue;
        const double wall =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - it->second.started).count();
        const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        const result res = read_result(p, it->second.point, o.out_dir, code, wall);
        rows.push_back(to_json(p, it->second.point, res));
        std::cerr << fmt::format("[sweep] point {} done{}: exit {}, {:.1f} s; {} of {} here\n", it->second.point, who,
                                 code, wall, ++done, mine.size())
                  << std::flush;
        active.erase(it);
    }
    // Every rank's rows, in point order.
    json all = json::array();
    for (const std::string& text : gather_text(r, rows.dump()))
        for (const json& row : json::parse(text)) all.push_back(row);
    std::sort(all.begin(), all.end(), [](const json& a, const json& b) {
        return a["point"].get<std::size_t>() < b["point"].get<std::size_t>();
    });
    bool ok = true;
    for (const json& row : all) ok = ok && row["exit"].get<int>() == 0 && row["passed"].get<bool>();
    if (!r.leader()) return ok ? 0 : 1;
    json doc;
    doc["sweep"] = o.file;
    doc["platform"] = p.platform;
    doc["points"] = all;
    write_user_file(o.out_dir + "/sweep.json", "sweep results", doc.dump(2) + "\n");
    write_user_file(o.out_dir + "/sweep.csv", "sweep results", csv_text(p, all));
    std::cout << fmt::format(
        "sweep: {} points, {} passed; {}/sweep.csv and {}/sweep.json\n", all.size(),
        std::count_if(all.begin(), all.end(),
                      [](const json& row) { return row["exit"].get<int>() == 0 && row["passed"].get<bool>(); }),
        o.out_dir, o.out_dir);
    if (!p.plot_x.empty()) {
        // matplotlib draws it (scripts/plot_sweep.py), with Debian's python3 (python3-matplotlib) if it is there.
        const char* python = ::access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
        std::vector<std::string> args = {python,
                                         std::string(TRN3_SOURCE_DIR) + "/scripts/plot_sweep.py",
                                         o.out_dir + "/sweep.csv",
                                         "--x",
                                         p.plot_x,
                                         "--y",
                                         p.plot_y,
                                         "-o",
                                         o.out_dir + "/sweep.svg"};
        if (!p.plot_series.empty()) args.insert(args.end(), {"--series", p.plot_series});
        for (const auto& [k, v] : p.plot_where) args.insert(args.end(), {"--where", k + "=" + v});
        const std::string log = o.out_dir + "/plot.err";
        int status = 0;
        if (::waitpid(spawn(std::move(args), log, log), &status, 0) < 0 || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0) {
            std::cerr << "trn3vp: sweep: the plot failed (python3 with matplotlib: scripts/install-deps.sh); see "
                      << log << "\n";
            return 1;
        }
        std::cout << fmt::format("plot: {}/sweep.svg\n", o.out_dir);
    }
    return ok ? 0 : 1;
}

}  // namespace trn3
