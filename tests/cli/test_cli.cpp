// The trn3vp command line, run as a user runs it: a separate process. The
// platforms one by one; test_cli_systems.cpp has trn3-dev and the UltraServers,
// test_cli_input.cpp bad input.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli.h"

using namespace trn3::cli_test;

TEST_CASE("bad calls exit 2 with one line naming the problem") {
    expect_user_error("", "A subcommand is required");
    expect_user_error("frobnicate", "unknown command 'frobnicate' (run, list-platforms, list-params, topology");
    expect_user_error("run --no-such-option", "--no-such-option");
    expect_user_error("run --platform nl999", "unknown platform 'nl999' (available: bringup");
    expect_user_error("run -p bringup.tg0.cuont=5", "did you mean 'bringup.tg0.count'?");
    expect_user_error("run -p bringup.dram.read_latency=fast", "param bringup.dram.read_latency");
    expect_user_error("run -p bringup.dram.size=0B", "outside its range");
    expect_user_error("run -p novalue", "expected key=value");
    expect_user_error("run --config /nonexistent/config.json",
                      "config file '/nonexistent/config.json': cannot open it");
    expect_user_error("run --log-level chatty", "unknown log level 'chatty'");
    expect_user_error("run --trace nosuchblock", "unknown param 'bringup.nosuchblock.trace'");
}

TEST_CASE("help exits 0") {
    result r = trn3vp("--help");
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("list-params"));
}

TEST_CASE("the bringup platform runs, passes and ends with the run summary") {
    result r = trn3vp("run --platform bringup" + small);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("platform bringup: PASSED"));
    CHECK_THAT(r.out, Catch::Contains("simulated time") && Catch::Contains("wall time") &&
                          Catch::Contains("simulation speed") && Catch::Contains("transactions      1600 "));
    CHECK_THAT(r.out, Catch::Contains("0x000000000000 - 0x0023ffffffff      144GiB  dram"));
}

TEST_CASE("list-platforms names each platform with a description") {
    result r = trn3vp("list-platforms");
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::StartsWith("bringup          traffic generators"));
}

TEST_CASE("list-params prints every param with type, default, value and description") {
    result r = trn3vp("list-params -p bringup.dram.read_latency=25ns");
    CHECK(r.code == 0);
    CHECK_THAT(line_with(r.out, "bringup.dram.read_latency "),
               Catch::Matches(
                   "bringup\\.dram\\.read_latency +time +10ns +25ns +time annotated on every read \\[0ps, 3600s\\]"));
    CHECK_THAT(r.out, Catch::Contains("sim.quantum"));
    // Every numeric param has a range: declared, or its type's default.
    CHECK_THAT(line_with(r.out, "bringup.dram.size "), Catch::EndsWith("[1B, 4194304TiB]"));
    CHECK_THAT(line_with(r.out, "bringup.tg0.count "), Catch::EndsWith("[0, 4294967295]"));
}

TEST_CASE("a dumped config fed back reproduces the run exactly") {
    std::string cfg = temp_path("config.json"), s1 = temp_path("s1.json"), s2 = temp_path("s2.json"),
                cfg2 = temp_path("config2.json");
    result a = trn3vp("run" + small + " -p bringup.tg1.seed=7 -p bringup.dram.write_latency=3ns --dump-config " + cfg +
                      " --stats " + s1);
    REQUIRE(a.code == 0);
    result b = trn3vp("run --config " + cfg + " --stats " + s2 + " --dump-config " + cfg2);
    REQUIRE(b.code == 0);
    auto j1 = nlohmann::json::parse(slurp(s1));
    auto j2 = nlohmann::json::parse(slurp(s2));
    CHECK(j1 == j2);
    CHECK(slurp(cfg) == slurp(cfg2));
    CHECK(nlohmann::json::parse(slurp(cfg))["bringup.tg1.seed"] == 7);
    CHECK(j1["bringup.tg0.writes"] == 500);
    for (const auto& f : {cfg, s1, s2, cfg2}) std::remove(f.c_str());
}

TEST_CASE("the trace option prints one line per transaction on the chosen socket") {
    result r = trn3vp("run -p bringup.tg0.count=2 -p bringup.tg1.count=1 -p bringup.tg0.use_dmi=false --trace dram.in");
    CHECK(r.code == 0);
    CHECK_THAT(r.err, Catch::Contains("[bringup.dram] [info] TLM in >> WR 0x0 [") &&
                          Catch::Contains("(TLM_OK_RESPONSE) +10 ns"));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 4);  // 2 writes + 2 reads
}

TEST_CASE("with protocol checks on, the bringup platform runs clean") {
    std::string s = temp_path("checked.json");
    result r = trn3vp("run" + small + " -p sim.protocol_checks=true --stats " + s);
    CHECK(r.code == 0);
    auto j = nlohmann::json::parse(slurp(s));
    int checkers = 0;
    for (auto it = j.begin(); it != j.end(); ++it)
        if (it.key().find("checker") != std::string::npos && it.key().find(".violations") != std::string::npos) {
            ++checkers;
            CHECK(it.value() == 0);
        }
    CHECK(checkers == 4);  // tg0, tg1 to the bus; bus to dram and sram
    std::remove(s.c_str());
}

namespace {
const std::string hbm_small =
    " --platform hbm -p hbm.tg0.count=300 -p hbm.tg1.count=300 -p hbm.tg2.count=300 -p hbm.tg3.count=300";
}  // namespace

TEST_CASE("the hbm platform writes and verifies all four stacks at the device addresses") {
    result r = trn3vp("run" + hbm_small);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("0x804000000000 - 0x8048ffffffff       36GiB  hbm3"));
    CHECK_THAT(r.out, Catch::Contains("hbm.hbm2: 300 reads, 300 writes, ECC corrected 0, uncorrectable 0"));
    CHECK_THAT(r.out, Catch::Contains("platform hbm: PASSED"));
}

TEST_CASE("DMI with its timing charged takes the same simulated time as b_transport") {
    result dmi = trn3vp("run" + hbm_small);
    result bt = trn3vp("run" + hbm_small +
                       " -p hbm.tg0.use_dmi=false -p hbm.tg1.use_dmi=false -p hbm.tg2.use_dmi=false"
                       " -p hbm.tg3.use_dmi=false");
    REQUIRE(dmi.code == 0);
    REQUIRE(bt.code == 0);
    CHECK(line_with(dmi.out, "simulated time") == line_with(bt.out, "simulated time"));
    CHECK(line_with(dmi.out, "simulated time") != "simulated time    0.000 ns");
}

TEST_CASE("injected single-bit errors are corrected and the run passes") {
    result r = trn3vp("run" + hbm_small + " -p hbm.hbm1.ecc.single_rate=1e-3");
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("platform hbm: PASSED"));
    CHECK_THAT(line_with(r.out, "hbm.hbm1:"),
               Catch::Matches("hbm\\.hbm1: 300 reads, 300 writes, ECC corrected [1-9][0-9]+, uncorrectable 0;.*"));
}

TEST_CASE("injected double-bit errors are reported, raise the interrupt and fail the run") {
    result r = trn3vp("run" + hbm_small + " -p hbm.hbm2.ecc.double_rate=1e-4");
    CHECK(r.code == 1);
    CHECK_THAT(r.out, Catch::Contains("platform hbm: FAILED"));
    CHECK_THAT(line_with(r.out, "hbm.hbm2:"),
               Catch::Matches(".*uncorrectable [1-9][0-9]*; hbm\\.tg2: 0 mismatches, [1-9][0-9]* errors"));
    CHECK_THAT(r.out, Catch::Contains("memory-error interrupts: 1"));
    CHECK_THAT(r.err, Catch::Contains("memory-error interrupt from hbm2"));
}

TEST_CASE("a malformed ECC injection is a user error") {
    result r = trn3vp("run --platform hbm -p hbm.hbm0.ecc.inject=0x40");
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::StartsWith("trn3vp: error: param hbm.hbm0.ecc.inject: '0x40' is not ADDR:MASK"));
}

TEST_CASE("the timeline option writes a trace-event file with tracks, slices, counters and instants") {
    const std::string path = temp_path("timeline.json");
    result r = trn3vp("run" + hbm_small + " -p hbm.hbm2.ecc.double_rate=1e-4 --timeline " + path);
    REQUIRE(r.code == 1);  // the injected errors fail the run; the timeline is still complete
    auto doc = nlohmann::json::parse(slurp(path));  // throws, failing the test, on an unfinished file
    std::map<std::string, int> phases;
    std::set<std::string> threads;
    double counter_max = 0;
    for (const auto& e : doc["traceEvents"]) {
        ++phases[e["ph"].get<std::string>()];
        if (e["ph"] == "M" && e["name"] == "thread_name") threads.insert(e["args"]["name"].get<std::string>());
        if (e["ph"] == "C") counter_max = std::max(counter_max, e["args"]["value"].get<double>());
        if (e["ph"] == "X") CHECK(e["dur"].get<double>() > 0);
    }
    for (const char* t : {"hbm0", "hbm3", "hbm2 errors", "tg0", "tg3"}) CHECK(threads.count(t) == 1);
    CHECK(phases["X"] == 4);  // one slice per traffic generator
    CHECK(phases["C"] > 10);  // bandwidth per microsecond per stack
    CHECK(phases["i"] >= 2);  // an error instant on the stack and on the generator, at least
    CHECK(counter_max > 0);
    CHECK(counter_max <= 1228.8 + 1e-6);  // never above a stack's 32 x 38.4 GB/s
    std::remove(path.c_str());
}

TEST_CASE("the neuroncore platform runs each reference kernel and checks it against fp64") {
    const std::string runs[] = {
        "-p neuroncore.kernel=gemm -p neuroncore.m=128 -p neuroncore.n=512 -p neuroncore.k=256",
        "-p neuroncore.kernel=gemm -p neuroncore.m=128 -p neuroncore.n=512 -p neuroncore.k=128 -p neuroncore.dtype=e4m3fn",
        "-p neuroncore.kernel=softmax -p neuroncore.rows=128 -p neuroncore.cols=300",
        "-p neuroncore.kernel=rmsnorm -p neuroncore.rows=128 -p neuroncore.cols=256",
        "-p neuroncore.kernel=matmul_stream -p neuroncore.repeats=20",
        "-p neuroncore.kernel=attention -p neuroncore.keys=256 -p neuroncore.head_dim=64",
        "-p neuroncore.kernel=gemm -p neuroncore.dtype=mxfp8 -p neuroncore.m=128 -p neuroncore.n=512 -p neuroncore.k=512",
        "-p neuroncore.kernel=gemm -p neuroncore.dtype=mxfp4 -p neuroncore.m=128 -p neuroncore.n=512 -p neuroncore.k=512",
    };
    for (const std::string& args : runs) {
        INFO(args);
        result r = trn3vp("run --platform neuroncore " + args);
        CHECK(r.code == 0);
        CHECK_THAT(r.out, Catch::Contains("platform neuroncore: PASSED"));
        CHECK_THAT(line_with(r.out, "  error vs fp64"),
                   Catch::Contains("(tolerance 0.0001)") || Catch::Contains("(tolerance 0.01)"));
    }
    result stream = trn3vp("run --platform neuroncore -p neuroncore.kernel=matmul_stream -p neuroncore.repeats=200");
    CHECK_THAT(line_with(stream.out, "  throughput"), Catch::StartsWith("  throughput       7"));  // 7x.xx TFLOP/s
}

TEST_CASE("a kernel shape or name the platform cannot run is a user error") {
    expect_user_error("run --platform neuroncore -p neuroncore.m=100", "M and K must be multiples of 128");
    expect_user_error("run --platform neuroncore -p neuroncore.kernel=fft",
                      "must be one of gemm, softmax, rmsnorm, attention, matmul_stream");
    expect_user_error("run --platform neuroncore -p neuroncore.dtype=fp64",
                      "must be one of bf16, e4m3fn, mxfp8, mxfp4");
    expect_user_error("run --platform neuroncore -p neuroncore.kernel=softmax -p neuroncore.dtype=mxfp8",
                      "only the gemm kernel runs MX operands");
    expect_user_error("run --platform neuroncore -p neuroncore.dtype=mxfp8 -p neuroncore.k=128",
                      "MX needs K a multiple of 512");
    expect_user_error("run --platform neuroncore -p neuroncore.kernel=attention -p neuroncore.dtype=mxfp4",
                      "param neuroncore.dtype = 'mxfp4': only the gemm kernel runs MX operands");
}

TEST_CASE("the neuroncore timeline shows engine and DMA activity") {
    const std::string path = temp_path("nc_timeline.json");
    result r = trn3vp(
        "run --platform neuroncore -p neuroncore.m=128 -p neuroncore.n=512 -p neuroncore.k=256 --timeline " + path);
    REQUIRE(r.code == 0);
    auto doc = nlohmann::json::parse(slurp(path));
    std::set<std::string> threads, slices;
    for (const auto& e : doc["traceEvents"]) {
        if (e["ph"] == "M" && e["name"] == "thread_name") threads.insert(e["args"]["name"].get<std::string>());
        if (e["ph"] == "X") slices.insert(e["name"].get<std::string>().substr(0, 5));
    }
    for (const char* t : {"tensor", "vector", "scalar", "gpsimd", "sync"}) CHECK(threads.count(t) == 1);
    CHECK(slices.count("matmu") == 1);
    CHECK(slices.count("tenso") == 1);  // tensor_copy on Vector
    CHECK(slices.count("dma q") == 1);
    std::remove(path.c_str());
}

TEST_CASE("the RTL back end runs a GEMM to the same verified result and reports its array jobs") {
    result r = trn3vp("run --platform neuroncore -p neuroncore.m=128 -p neuroncore.n=512 -p neuroncore.k=256 "
                      "-p neuroncore.nc0.tensor_engine.backend=rtl");
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("platform neuroncore: PASSED"));
    CHECK_THAT(line_with(r.out, "  tensor engine"),
               Catch::StartsWith("  tensor engine    rtl backend: 2 array jobs on the ") &&
                   Catch::EndsWith(" RTL cycles, 0 mismatches"));
}

TEST_CASE("check mode fails the run and names the first differing output with its operands") {
    result r = trn3vp("run --platform neuroncore -p neuroncore.kernel=matmul_stream -p neuroncore.repeats=3 "
                      "-p neuroncore.nc0.tensor_engine.backend=check -p neuroncore.nc0.tensor_engine.inject_flip=2");
    CHECK(r.code == 1);
    CHECK_THAT(r.out, Catch::Contains("platform neuroncore: FAILED"));
    const std::string line = r.err.substr(r.err.find("RTL check"), 300);
    CHECK_THAT(line, Catch::StartsWith("RTL check: array job 2 (128 x 128 x 512) differs at output (0, 0): model ") &&
                         Catch::Contains("operands a[k][0]*b[k][0] for k = 0..127: "));
}

TEST_CASE("an unknown Tensor engine back end is a user error") {
    expect_user_error(
        "run --platform neuroncore -p neuroncore.nc0.tensor_engine.backend=verilog",
        "neuroncore.nc0.tensor_engine.backend = 'verilog' (command line): must be one of model, rtl, check");
}

TEST_CASE("the mcu platform boots the verified firmware and the host's mailbox requests are answered") {
    result r = trn3vp("run --platform mcu");
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("platform mcu: PASSED"));
    CHECK_THAT(line_with(r.out, "boot status"), Catch::StartsWith("boot status running (4)"));
    CHECK_THAT(r.out, Catch::Contains("mcu0 console: boot: firmware image verified"));
    CHECK_THAT(r.out, Catch::Contains("mcu0 console: self-test passed"));
    CHECK_THAT(line_with(r.out, "  firmware 0.2"),
               Catch::StartsWith("  firmware 0.2 'trn3vp mcu firmware', protocol 2"));
    CHECK_THAT(line_with(r.out, "  mailbox command 30583"),
               Catch::StartsWith("  mailbox command 30583 answered with status 1"));
}

TEST_CASE("a firmware image that does not match the provisioned digest is refused and the run fails without hanging") {
    result r = trn3vp("run --platform mcu -p mcu.mcu0.fuse_digest=" + std::string(64, '0'));
    CHECK(r.code == 1);
    CHECK_THAT(r.out, Catch::Contains("platform mcu: FAILED"));
    CHECK_THAT(line_with(r.out, "boot status"), Catch::StartsWith("boot status refused (3)"));
    CHECK_THAT(r.out, Catch::Contains("mcu0 console: boot: firmware image refused"));
    CHECK_THAT(r.out, Catch::Contains("FAILED: command 1: no answer within 10 ms"));
}

TEST_CASE("a missing firmware ELF or a malformed digest is a user error") {
    expect_user_error("run --platform mcu -p mcu.mcu0.firmware=/nonexistent/fw.elf",
                      "firmware '/nonexistent/fw.elf': cannot open it");
    expect_user_error("run --platform mcu -p mcu.mcu0.fuse_digest=abc",
                      "param mcu.mcu0.fuse_digest = 'abc': a SHA-256 is 64 hex digits");
}

namespace {
// Starts `trn3vp run --platform mcu` with its GDB stub on a port of its own,
// then runs gdb-multiarch in batch mode: `setup`, `target remote`, `commands`
// (GDB arguments: -ex '...'). Tries again while the simulator starts, until
// GDB's output contains `expected` or the simulator has ended; returns the
// output, and the simulator's in `sim`.
std::string gdb_session(const std::string& tag, const std::string& setup, const std::string& commands,
                        const std::string& expected, std::string& sim) {
    static int sessions = 0;
    const std::string port = std::to_string(20000 + (getpid() + 7919 * sessions++) % 20000);
    const std::string out = temp_path(tag + "-sim");
    // The simulator waits for GDB before the MCU's first instruction.
    const std::string run =
        std::string(TRN3VP_BINARY) + " run --platform mcu -p mcu.mcu0.gdb_port=" + port + " >" + out + " 2>&1 &";
    REQUIRE(std::system(run.c_str()) == 0);
    const std::string gdb_out = temp_path(tag + "-gdb");
    const std::string gdb = "timeout 60 gdb-multiarch -batch -nx " + setup + " -ex 'target remote localhost:" + port +
                            "' " + commands + " >" + gdb_out + " 2>&1";
    std::string text;
    for (int attempt = 0; attempt < 20; ++attempt) {
        std::system(gdb.c_str());
        text = slurp(gdb_out);
        if (text.find(expected) != std::string::npos) break;
        if (slurp(out).find("platform mcu:") != std::string::npos) break;  // the simulator ended: no stub to reach
        usleep(250000);
    }
    std::remove(gdb_out.c_str());
    sim = slurp(out);
    std::remove(out.c_str());
    return text;
}
}  // namespace

TEST_CASE("gdb-multiarch debugs the firmware through the MCU's remote stub: breakpoint, step, registers, memory") {
    std::string sim;
    const std::string text =
        gdb_session("gdb", "-ex 'set architecture riscv:rv32' -ex 'file " + std::string(TRN3_FIRMWARE_ELF) + "'",
                    "-ex 'info registers pc' -ex 'break main' -ex 'continue' -ex 'info registers pc' -ex "
                    "'stepi' -ex 'info registers pc' -ex 'x/2xw 0x20000000' -ex 'kill'",
                    "Breakpoint 1, main ()", sim);
    INFO("simulator: " << sim);
    CHECK_THAT(line_with(text, "pc"),
               Catch::StartsWith("pc             0x0"));  // stopped before the boot ROM's first instruction
    CHECK_THAT(text, Catch::Contains("Breakpoint 1, main ()"));
    CHECK_THAT(text,
               Catch::Contains("<main>") && Catch::Contains("<main+2>"));  // stepi moved one (compressed) instruction
    CHECK_THAT(text, Catch::Contains("0x20000000 <_start>:"));
    CHECK_THAT(text, Catch::Contains("[Inferior 1 (Remote target) killed]"));
}

TEST_CASE("gdb-multiarch reads and writes the MCU's CSRs by name from the stub's target description") {
    // No `set architecture`, no ELF: the target description says rv32 and names the CSRs.
    std::string sim;
    const std::string text = gdb_session(
        "gdb-csr", "",
        "-ex 'show architecture' -ex 'p/x $misa' -ex 'p/x $mstatus' -ex 'p $mhartid' -ex 'set $mscratch = "
        "0x12345678' -ex 'p/x $mscratch' -ex 'info registers mcause' -ex 'p/x $mcycle' -ex 'set $mhartid = 1' -ex "
        "'p $mhartid' -ex 'kill'",
        "$1 = 0x40001104", sim);
    INFO("simulator: " << sim);
    INFO("gdb: " << text);
    CHECK_THAT(text, Catch::Contains("(currently \"riscv:rv32\")"));
    CHECK(line_with(text, "$1 = ") == "$1 = 0x40001104");  // misa: RV32IMC
    CHECK(line_with(text, "$2 = ") == "$2 = 0x1800");  // mstatus after reset: MPP = 3, interrupts off
    CHECK(line_with(text, "$3 = ") == "$3 = 0");  // mhartid
    CHECK(line_with(text, "$4 = ") == "$4 = 0x12345678");  // mscratch, written and read back
    CHECK_THAT(line_with(text, "mcause"), Catch::StartsWith("mcause         0x0"));
    CHECK(line_with(text, "$5 = ") == "$5 = 0x0");  // mcycle: no instruction has run yet
    CHECK_THAT(text, Catch::Contains("Could not write register \"mhartid\""));  // read-only: the stub's E01
    CHECK(line_with(text, "$6 = ") == "$6 = 0");
    CHECK_THAT(text, Catch::Contains("[Inferior 1 (Remote target) killed]"));
}

TEST_CASE("idle for 50 ms the firmware keeps kicking its 10 ms watchdog: no reset") {
    result r = trn3vp("run --platform mcu -p mailbox_checks.idle=50ms");
    CHECK(r.code == 0);
    CHECK_THAT(line_with(r.out, "boot status"), Catch::EndsWith("4 mailbox requests, 0 watchdog resets"));
    CHECK_THAT(line_with(r.out, "  firmware status"),
               Catch::Matches("  firmware status: uptime (4[89]|50)[0-9]{3} us, 2 commands served"));
}

TEST_CASE("the pcie platform enumerates its switch tree and passes its fabric checks") {
    const result r = trn3vp("run --platform pcie");
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    // The listing: the root port, a switch's ports, an endpoint with its BARs and link.
    CHECK_THAT(r.out, Catch::Contains("00:00.0 [1d0f:7f00] PCI bridge (root port) bus 01-0a"));
    CHECK_THAT(r.out, Catch::Contains("02:01.0 [1d0f:7f11] PCI bridge (downstream) bus 07-0a"));
    // Registers and MSI-X (64-bit, not prefetchable) below 4 GiB; the memory window above.
    CHECK_THAT(r.out, Catch::Contains("05:00.0 [1d0f:7ff0] accelerator BAR0 0xe0000000 [64-bit 1M] BAR2 0x4000000000 "
                                      "[64-bit pref 1G] BAR4 0xe0100000 [64-bit 64K] MSI-X 32  Gen6 64GT/s x8"));
    CHECK_THAT(r.out, Catch::Contains("04:00.0 [1d0f:7f11] PCI bridge (downstream) bus 05-05 mem 0xe0000000-0xe01fffff "
                                      "pref 0x4000000000-0x403fffffff"));
    CHECK_THAT(r.out, Catch::Contains("ok: peer to peer ep0 -> ep2 through three switches"));
    CHECK_THAT(r.out, Catch::Contains("ok: ACS request and completion redirect"));
    CHECK_THAT(r.out, Catch::Contains("platform pcie: PASSED"));
}

TEST_CASE("enumeration retries configuration requests while a link below is still training") {
    // sw0 -> sw1 equalises for 400 us: its endpoints answer CRS until then.
    const result r = trn3vp("run --platform pcie -p pcie.sw0_sw1.eq_phase2=200us -p pcie.sw0_sw1.eq_phase3=200us");
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("retried while links trained"));
    CHECK_THAT(r.out, !Catch::Contains(", 0 retried while links trained"));
    CHECK_THAT(r.out, Catch::Contains("platform pcie: PASSED"));
}

TEST_CASE("a lane fault on a switch link shows in the listing as a narrower link") {
    const result r = trn3vp("run --platform pcie -p pcie.ep2_link.failed_lanes=4");
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK_THAT(
        r.out,
        Catch::Contains("09:00.0 [1d0f:7ff0] accelerator BAR0 0xe0400000 [64-bit 1M] BAR2 0x4080000000 "
                        "[64-bit pref 1G] BAR4 0xe0500000 [64-bit 64K] MSI-X 32  Gen6 64GT/s x4 (max Gen6 64GT/s x8)"));
}

TEST_CASE("bad fabric params are user errors") {
    const result lanes = trn3vp("run --platform pcie -p pcie.ep0_link.failed_lanes=3,x");
    CHECK(lanes.code == 2);
    CHECK_THAT(lanes.err, Catch::Contains("'x' is not a lane number"));
    const result preset = trn3vp("run --platform pcie -p pcie.sw1.preset=gen9");
    CHECK(preset.code == 2);
    CHECK_THAT(preset.err,
               Catch::Contains("param pcie.sw1.preset = 'gen9' (command line): must be one of gen1-160, gen2-320"));
    const result gen = trn3vp("run --platform pcie -p pcie.up_link.generation=gen7");
    CHECK(gen.code == 2);
    CHECK_THAT(
        gen.err,
        Catch::Contains("param pcie.up_link.generation = 'gen7' (command line): must be one of gen5, gen6, ualink"));
}

TEST_CASE("fixed-choice params are enum params: checked, and list-params prints their choices") {
    const result list = trn3vp("list-params --platform pcie");
    CHECK(list.code == 0);
    const std::size_t row = list.out.find("pcie.up_link.generation ");
    REQUIRE(row != std::string::npos);
    const std::string line = list.out.substr(row, list.out.find('\n', row) - row);
    CHECK_THAT(line, Catch::Contains(" enum ") && Catch::EndsWith("{gen5, gen6, ualink}"));
    CHECK_THAT(
        list.out,
        Catch::Contains("{boot, chip_checks, collectives, firmware_recovery, mailbox_checks, pcie_checks, workload}"));
    const result pattern = trn3vp("run --platform bringup -p bringup.tg0.pattern=zigzag");
    CHECK(pattern.code == 2);
    CHECK_THAT(pattern.err, Catch::Contains("must be one of sequential, random"));
}
