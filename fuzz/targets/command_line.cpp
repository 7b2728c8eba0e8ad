// Fuzz target: the trn3vp command line, parsed and nothing run
// (sw/tools/trn3vp/command_line.h: CLI11 and the project's own checks).
// The input is argv after the program's name, split on NUL bytes. Any
// argv either names a command to run, or ends the program with help or
// the version (exit 0, nothing on stderr) or with bad input (exit 2 and
// exactly one line on stderr: "trn3vp: error: ..."); nothing is thrown.
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "command_line.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    constexpr std::size_t max_args = 64;
    std::vector<std::string> words{"trn3vp"};
    std::string word;
    for (std::size_t i = 0; i < size && words.size() < max_args; ++i) {
        if (data[i] == 0) {
            words.push_back(word);
            word.clear();
        } else {
            word += static_cast<char>(data[i]);
        }
    }
    if (!word.empty() && words.size() < max_args) words.push_back(word);
    std::vector<const char*> argv;
    for (const auto& w : words) argv.push_back(w.c_str());
    argv.push_back(nullptr);

    std::ostringstream out, err;
    const trn3::command_line cl = trn3::parse_command_line(static_cast<int>(words.size()), argv.data(), out, err);
    const std::string e = err.str();
    if (cl.what == trn3::command_line::command::none) {
        TRN3_FUZZ_CHECK(cl.exit_code == trn3::exit_ok || cl.exit_code == trn3::exit_user_error);
        if (cl.exit_code == trn3::exit_ok) {
            TRN3_FUZZ_CHECK(e.empty());
            TRN3_FUZZ_CHECK(!out.str().empty());  // the help or the version
        } else {
            TRN3_FUZZ_CHECK(e.rfind("trn3vp: error: ", 0) == 0);
            TRN3_FUZZ_CHECK(e.find('\n') == e.size() - 1);  // one line
        }
        return 0;
    }
    TRN3_FUZZ_CHECK(cl.exit_code == trn3::exit_ok && e.empty());
    for (const auto& [key, value] : cl.o.params) TRN3_FUZZ_CHECK(!key.empty());
    TRN3_FUZZ_CHECK(cl.o.format == "text" || cl.o.format == "json");
    TRN3_FUZZ_CHECK(cl.topo_format == "text" || cl.topo_format == "json" || cl.topo_format == "dot");
    return 0;
}
