#include <systemc>

#include "cli.h"
#include "trn3/core/entry.h"

int sc_main(int argc, char** argv) { return trn3::cli_main(argc, argv); }

int main(int argc, char** argv) { return trn3::systemc_entry(argc, argv); }
