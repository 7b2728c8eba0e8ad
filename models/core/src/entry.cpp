#include "trn3/core/entry.h"

#include <cstdlib>

#include <systemc>

namespace trn3 {
int systemc_entry(int argc, char** argv) {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
    return sc_core::sc_elab_and_sim(argc, argv);
}
}  // namespace trn3
