// Helpers of the command-line tests: trn3vp run as a separate process, as a user runs it.
#pragma once

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace trn3::cli_test {

struct result {
    int code;
    std::string out, err;
};

inline std::string slurp(const std::string& path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

inline std::string temp_path(const std::string& tag) {
    return "/tmp/trn3vp-test-" + std::to_string(getpid()) + "-" + tag;
}

inline result trn3vp(const std::string& args) {
    std::string out = temp_path("stdout"), err = temp_path("stderr");
    std::string cmd = std::string(TRN3VP_BINARY) + " " + args + " >" + out + " 2>" + err + " </dev/null";
    int status = std::system(cmd.c_str());
    result r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
    std::remove(out.c_str());
    std::remove(err.c_str());
    return r;
}

// The first line of `text` that starts with `start` ("" if none). Tests match
// single lines: std::regex over a whole output recurses too deeply.
inline std::string line_with(const std::string& text, const std::string& start) {
    std::size_t at = text.compare(0, start.size(), start) == 0 ? 0 : text.find('\n' + start);
    if (at == std::string::npos) return "";
    if (at != 0) ++at;
    return text.substr(at, text.find('\n', at) - at);
}

// Small traffic so the end-to-end cases stay quick.
inline const std::string small = " -p bringup.tg0.count=500 -p bringup.tg1.count=300";

inline void expect_user_error(const std::string& args, const std::string& fragment) {
    INFO("trn3vp " << args);
    result r = trn3vp(args);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_THAT(r.err, Catch::StartsWith("trn3vp: error: ") && Catch::Contains(fragment));
}

}  // namespace trn3::cli_test
