// The process entry every trn3vp executable uses: silences SystemC's banner
// (it would be the first line of every run and every test) and hands over to
// SystemC, which calls sc_main.
#pragma once

namespace trn3 {
int systemc_entry(int argc, char** argv);
}  // namespace trn3
