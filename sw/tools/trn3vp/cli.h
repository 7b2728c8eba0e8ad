// The trn3vp command line: subcommands run, list-platforms, list-params.
#pragma once

namespace trn3 {
// Exit codes: 0 success; 1 the simulated workload failed (a mismatch, a
// protocol violation); 2 the user's input was bad (one line on stderr).
int cli_main(int argc, char** argv);
}  // namespace trn3
