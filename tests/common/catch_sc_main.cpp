// Catch2 inside SystemC: SystemC owns main() and calls sc_main, which runs
// the Catch session. ctest runs each test case in its own process
// (catch_discover_tests), so each case may elaborate its own modules.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <systemc>

#include "trn3/core/entry.h"

int sc_main(int argc, char** argv) { return Catch::Session().run(argc, argv); }

int main(int argc, char** argv) { return trn3::systemc_entry(argc, argv); }
