// SystemC's library calls sc_main from the main it defines, and links only
// where some object defines it. A fuzz target's main is libFuzzer's (or the
// replay's), which never starts SystemC; targets that reach SystemC's
// library (sc_time in units) link this definition, never called.
extern "C" int sc_main(int, char*[]) { return 1; }  // as <systemc> declares it
