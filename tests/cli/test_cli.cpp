// The trn3vp command line, run as a user runs it: a separate process.
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

namespace {
struct result {
    int code;
    std::string out, err;
};

std::string slurp(const std::string& path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

std::string temp_path(const std::string& tag) { return "/tmp/trn3vp-test-" + std::to_string(getpid()) + "-" + tag; }

result trn3vp(const std::string& args) {
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
std::string line_with(const std::string& text, const std::string& start) {
    std::size_t at = text.compare(0, start.size(), start) == 0 ? 0 : text.find('\n' + start);
    if (at == std::string::npos) return "";
    if (at != 0) ++at;
    return text.substr(at, text.find('\n', at) - at);
}

// Small traffic so the end-to-end cases stay quick.
const std::string small = " -p bringup.tg0.count=500 -p bringup.tg1.count=300";

void expect_user_error(const std::string& args, const std::string& fragment) {
    INFO("trn3vp " << args);
    result r = trn3vp(args);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_THAT(r.err, Catch::StartsWith("trn3vp: error: ") && Catch::Contains(fragment));
}
}  // namespace

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
    CHECK_THAT(list.out, Catch::Contains("{boot, chip_checks, mailbox_checks, pcie_checks}"));
    const result pattern = trn3vp("run --platform bringup -p bringup.tg0.pattern=zigzag");
    CHECK(pattern.code == 2);
    CHECK_THAT(pattern.err, Catch::Contains("must be one of sequential, random"));
}

TEST_CASE(
    "a platform's hosts run the program its app param names, and one whose needs the platform lacks is a user error") {
    const result boot = trn3vp("run --platform trn3-dev -p trn3dev.app=boot");
    INFO(boot.out << boot.err);
    CHECK(boot.code == 0);
    CHECK_THAT(boot.out, Catch::Contains("chips up: 1 of 1; kernels verified: 1 of 1"));
    CHECK_THAT(boot.out, Catch::Contains("mcu0 console: ready"));
    const result bench = trn3vp("run --platform trn3-dev -p trn3dev.app=pcie_checks");
    CHECK(bench.code == 2);
    CHECK_THAT(bench.err, Catch::Contains("program pcie_checks needs a platform with four PCIe exercisers"));
    const result none = trn3vp("run --platform pcie -p pcie.app=boot");
    CHECK(none.code == 2);
    CHECK_THAT(none.err, Catch::Contains("program boot needs hosts with Trainium3 chips"));
}

TEST_CASE("trn3-dev: power-on, firmware, driver and runtime run the reference kernels to verified results") {
    const std::string trace = temp_path("trn3dev.json");
    const result r = trn3vp("run --platform trn3-dev --timeline " + trace);
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    for (const char* step : {"root port link up (Gen5 x16)", "enumerated (2 functions)", "driver probed the chip",
                             "firmware running (boot ROM verified the image)", "mailbox handshake (firmware 0.2",
                             "first verified kernel result", "all kernels verified"})
        CHECK_THAT(r.out, Catch::Contains(step));
    for (const char* k : {"nc0: gemm bf16 512x1024x512", "nc1: softmax 256x1024 fp32",
                          "nc2: attention 128x256, head dim 128", "nc3: rmsnorm 256x1024 fp32"})
        CHECK_THAT(r.out, Catch::Contains(k));
    CHECK_THAT(r.out, Catch::Contains("nc4+nc5 (LNC=2): gemm bf16 256x512x256 each"));
    CHECK_THAT(r.out,
               Catch::Contains("ok: a kernel with an illegal instruction: NRT_EXEC_ERROR, engine error 1 (illegal)"));
    CHECK_THAT(r.out, Catch::Contains("ok: the driver reset the core; the next kernel on it ran and verified"));
    CHECK_THAT(r.out, Catch::Contains("ok: DMA read of host memory outside the IOMMU's mappings"));
    CHECK_THAT(r.out, Catch::Contains("ok: DMA write to host memory outside the mappings: dropped by the IOMMU"));
    CHECK_THAT(r.out, Catch::Contains("01:00.0 [1d0f:7364] accelerator BAR0 0xe0000000 [64-bit 16M]"));
    CHECK_THAT(r.out, Catch::Contains("/sys/bus/pci/devices/0000:01:00.0/neuron/iommu_faults: 2"));
    CHECK_THAT(r.out, Catch::Contains("platform trn3-dev: PASSED"));
    // The timeline has engines, DMA queues, the mailbox and interrupts.
    const std::string t = slurp(trace);
    std::remove(trace.c_str());
    for (const char* track :
         {"\"tensor\"", "\"dma0.q0\"", "\"chip0.mailbox\"", "\"host0.interrupts\"", "\"control.notify\""})
        CHECK_THAT(t, Catch::Contains(track));
    CHECK_THAT(t, Catch::Contains("response (MCU rang)"));
    // From power-on: the links' training, the boot ROM's verdict, the host's phases.
    for (const char* event : {"\"training to L0: Gen5 x16\"", "\"boot: verified\"", "\"boot: running\"",
                              "\"enumerated (2 functions)\"", "\"host0 software\""})
        CHECK_THAT(t, Catch::Contains(event));
}

TEST_CASE("trn3-dev: a firmware image that fails its boot check is reported clearly, without a hang") {
    const result r = trn3vp("run --platform trn3-dev -p trn3dev.chip0.mcu0.fuse_digest=" + std::string(64, '0'));
    INFO(r.out << r.err);
    CHECK(r.code == 1);
    CHECK_THAT(r.out, Catch::Contains("FAILED: firmware: the boot ROM refused the firmware image"));
    CHECK_THAT(r.out, Catch::Contains("firmware image refused"));
}

TEST_CASE("trn3-dev: the firmware trains HBM and NeuronLink, reports lane sparing, and handles HBM errors") {
    const result r = trn3vp("run --platform trn3-dev");
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    for (unsigned s = 0; s < 4; ++s)
        CHECK_THAT(r.out, Catch::Contains("mcu0 console: hbm" + std::to_string(s) + ": trained in 25 us"));
    CHECK_THAT(r.out, Catch::Contains("mcu0 console: nl0: up, speed 6 x64 of x64, 0 failed lanes, 0 spares in use"));
    CHECK_THAT(r.out, Catch::Contains("HBM ready 0xf, NeuronLink ports 0x3 up 0x3 degraded 0x0"));
    CHECK_THAT(r.out,
               Catch::Contains("ok: an uncorrectable HBM error: poisoned read, the firmware's handler counted it"));
    CHECK_THAT(r.out, Catch::Contains("mcu0 console: hbm0: error interrupt 0x1: 1 uncorrectable"));
    CHECK_THAT(r.out, Catch::Contains("ok: mailbox RESET_CORE: the firmware reset nc6"));
}

TEST_CASE(
    "trn3-dev: 16 failed backplane lanes are spared, 17 degrade the link, a fault under traffic is retrained by the firmware") {
    const result spared = trn3vp("run --platform trn3-dev -p trn3dev.nl0.failed_lanes=0-15");
    INFO(spared.out << spared.err);
    CHECK(spared.code == 0);
    CHECK_THAT(spared.out, Catch::Contains("nl0: up x64 of x64, 16 failed lanes, 16 spares in use, 1 trainings\n"));
    const result degraded =
        trn3vp("run --platform trn3-dev -p trn3dev.nl0.failed_lanes=0-16 -p trn3dev.nl1.failed_lanes=5 "
               "-p trn3dev.nl1.fault_time=350us");
    INFO(degraded.out << degraded.err);
    CHECK(degraded.code == 0);
    CHECK_THAT(degraded.out,
               Catch::Contains("nl0: up x56 of x64, 17 failed lanes, 0 spares in use, 1 trainings, DEGRADED"));
    CHECK_THAT(degraded.out, Catch::Contains("mcu0 console: nl1: link down, retraining"));
    CHECK_THAT(degraded.out,
               Catch::Contains("nl1: up x8 of x16, 1 failed lanes, 0 spares in use, 2 trainings, DEGRADED"));
}

TEST_CASE("trn3vp topology prints counts, lanes, hops and the published examples, and json and dot export the graph") {
    const result r = trn3vp("topology --platform nl72x2 -p switch_gen=1");
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("scale-up switches   368 (80 x gen1-160, 288 x tray-32)"));
    CHECK_THAT(r.out, Catch::Contains("backplane cables    11520"));
    CHECK_THAT(r.out, Catch::Contains("rack A node 2 chip C: 3 hops (published 3)"));
    CHECK_THAT(r.out, Catch::Contains("rack B node 2 chip C: 4 hops (published 4)"));
    CHECK_THAT(r.out, Catch::Contains("every pair reachable"));
    const result j = trn3vp("topology --platform nl32x2 --format json");
    CHECK(j.code == 0);
    const auto doc = nlohmann::json::parse(j.out);
    CHECK(doc["counts"]["chips"] == 64);
    CHECK(doc["counts"]["backplane_cables"] == 5120);
    CHECK(doc["examples"][2]["hops"] == 3);
    const result d = trn3vp("topology --platform nl16-torus2d --format dot");
    CHECK(d.code == 0);
    CHECK_THAT(d.out, Catch::StartsWith("graph \"nl16-torus2d gen1\" {"));
    CHECK_THAT(d.out, Catch::Contains("\"x0.y0.z0\" -- \"x1.y0.z0\" [label=\"x36 torus\"];"));
    const result bad = trn3vp("topology -p switch_gen=4");
    CHECK(bad.code == 2);
    CHECK_THAT(bad.err, Catch::Contains("switch_gen 4: 1, 2 or 3"));
}

TEST_CASE("nl32x2 at reduced size boots: every MCU, every link, every host, a verified kernel on every chip") {
    const result r = trn3vp("run --platform nl32x2 -p nl32x2.trays=2 -p boot.fabric_check=all");
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("elaboration: 8 chips, 2 hosts, 32 switches, 86 links"));
    // Every pair of chips writes to each other over NeuronLink, through switches and forwarding chips.
    CHECK_THAT(r.out, Catch::Contains("fabric: 56 of 56 chip-to-chip writes over NeuronLink verified (all pairs)"));
    CHECK_THAT(r.out, Catch::Contains("chips up: 8 of 8; kernels verified: 8 of 8"));
    CHECK_THAT(r.out, Catch::Contains("links backplane          64 up of 64, 0 degraded, 0 failed (64 Gen6 x8)"));
    // Each JBOG tray's PCIe 6.0 x16 cable, x8 per chip; the NICs (one per two chips, one per host) at Gen5.
    CHECK_THAT(r.out, Catch::Contains("links host               8 up of 8, 0 degraded, 0 failed (8 Gen6 x8)"));
    CHECK_THAT(r.out, Catch::Contains("links nic                6 up of 6, 0 degraded, 0 failed (6 Gen5 x16)"));
    CHECK_THAT(r.out, Catch::Contains("NIC placeholders enumerated: 6 of 6"));
    CHECK_THAT(r.out, Catch::Contains("platform nl32x2: PASSED"));
}

TEST_CASE("nl72x2 at reduced size boots with Gen3 UALink switches and with the PEX90144 Gen1 alternative too") {
    for (const char* gen : {"1", "3", "1 -p nl72x2.switch_model=pex90144"}) {
        const result r = trn3vp(
            std::string("run --platform nl72x2 -p nl72x2.trays=1 -p boot.fabric_check=all -p nl72x2.switch_gen=") +
            gen);
        INFO(r.out << r.err);
        CHECK(r.code == 0);
        CHECK_THAT(r.out, Catch::Contains("chips up: 8 of 8; kernels verified: 8 of 8"));
        CHECK_THAT(r.out, Catch::Contains("fabric: 56 of 56 chip-to-chip writes over NeuronLink verified (all pairs)"));
        CHECK_THAT(r.out, Catch::Contains("platform nl72x2: PASSED"));
        CHECK_THAT(r.out, Catch::Contains("links host               8 up of 8, 0 degraded, 0 failed (8 Gen5 x16)"));
        if (std::string(gen).find("pex90144") != std::string::npos)
            CHECK_THAT(r.out, Catch::Contains("scale-up switches   96 (80 x pex144-x8, 16 x tray-32)"));
    }
    expect_user_error("run --platform nl32x2 -p nl32x2.switch_model=pex90144",
                      "(NL32x2 with 144-lane switches needs switch_trays=5)");
}

TEST_CASE("16 failed backplane lanes leave every Gen6 SKU at full bandwidth, the 17th reduces it and is reported") {
    // NL32x2 Gen1 (4 switch trays: x8 links with 2 spare lanes each; 5 trays:
    // 8 x8 links and 2 standby ones), NL32x2 Gen2, NL72x2 Gen1 and Gen2 (2
    // standby links of a plane's spare switches).
    for (const char* sku :
         {"nl32x2 -p nl32x2.switch_gen=1", "nl32x2 -p nl32x2.switch_gen=1 -p nl32x2.switch_trays=5",
          "nl32x2 -p nl32x2.switch_gen=2", "nl72x2 -p nl72x2.switch_gen=1", "nl72x2 -p nl72x2.switch_gen=2"}) {
        const std::string platform = std::string(sku).substr(0, 6);
        const std::string base = std::string("run --platform ") + sku + " -p " + platform +
                                 ".trays=1 -p boot.kernels=false -p boot.fabric_check=off -p " + platform +
                                 ".faulty_lanes=";
        const result sixteen = trn3vp(base + "16");
        INFO(sku << "\n" << sixteen.out << sixteen.err);
        CHECK(sixteen.code == 0);
        CHECK_THAT(
            sixteen.out,
            Catch::Contains("backplane: 512 of 512 GB/s per direction, 16 lanes failed, 16 of 16 spare lanes used\n"));
        const result seventeen = trn3vp(base + "17");
        INFO(seventeen.out << seventeen.err);
        CHECK(seventeen.code == 0);
        CHECK_THAT(seventeen.out, Catch::Contains("17 lanes failed, 16 of 16 spare lanes used -- REDUCED"));
    }
}

TEST_CASE("Gen3's spare capacity is one standby x4 UALink port: 4 failed lanes cost nothing, the 5th reduces") {
    const std::string base =
        "run --platform nl72x2 -p nl72x2.switch_gen=3 -p nl72x2.trays=1 -p boot.kernels=false -p boot.fabric_check=off "
        "-p nl72x2.faulty_lanes=";
    CHECK_THAT(trn3vp(base + "4").out,
               Catch::Contains("backplane: 500 of 500 GB/s per direction, 4 lanes failed, 4 of 4 spare lanes used\n"));
    CHECK_THAT(trn3vp(base + "5").out, Catch::Contains("5 lanes failed, 4 of 4 spare lanes used -- REDUCED"));
}

TEST_CASE("more failed lanes than a chip's backplane has, or on a SKU without one, is a user error") {
    const result many = trn3vp("run --platform nl32x2 -p nl32x2.faulty_lanes=81");
    CHECK(many.code == 2);
    CHECK_THAT(many.err, Catch::Contains("nl32x2.faulty_lanes = 81: the first chip has 80 backplane lanes"));
    const result torus = trn3vp("run --platform nl16-torus2d -p nl16_torus2d.faulty_lanes=1");
    CHECK(torus.code == 2);
    CHECK_THAT(torus.err, Catch::Contains("the first chip has 0 backplane lanes"));
}

TEST_CASE("without kernels the fabric check still passes: chips join the fabric only when their routes are in") {
    const result r = trn3vp("run --platform nl32x2 -p boot.kernels=false");
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("fabric: 64 of 64 chip-to-chip writes over NeuronLink verified (far pairs)"));
    CHECK_THAT(r.out, Catch::Contains(", 0 dropped"));
    const result torus = trn3vp("run --platform nl16-torus2d -p boot.fabric_check=all -p boot.kernels=false");
    CHECK(torus.code == 0);
    CHECK_THAT(torus.out, Catch::Contains("fabric: 240 of 240 chip-to-chip writes"));
}

TEST_CASE("the torus SKUs boot the same way: nl16-torus2d with every pair of chips writing to each other") {
    const result r = trn3vp("run --platform nl16-torus2d -p boot.fabric_check=all");
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("elaboration: 16 chips, 4 hosts, 0 switches, 60 links"));
    CHECK_THAT(r.out, Catch::Contains("fabric: 240 of 240 chip-to-chip writes over NeuronLink verified (all pairs)"));
    CHECK_THAT(r.out, Catch::Contains("links torus              32 up of 32, 0 degraded, 0 failed (32 Gen6 x36)"));
}

namespace {
std::string write_temp(const std::string& tag, const std::string& text) {
    const std::string path = temp_path(tag);
    std::ofstream(path) << text;
    return path;
}
}  // namespace

TEST_CASE("input that crashed the simulator is a one-line user error") {
    expect_user_error("run -p bringup.tg0.base=18446744073709551615", "bringup.tg0.base = 18446744073709551615");
    expect_user_error("run --platform neuroncore -p neuroncore.device.size=1MiB",
                      "neuroncore.device.size = 1MiB: the kernels' layout needs 13GiB");
    for (const char* p :
         {"vector_elements_per_cycle_wide", "vector_elements_per_cycle_narrow", "scalar_elements_per_cycle_wide",
          "scalar_elements_per_cycle_narrow", "gpsimd_elements_per_cycle"})
        expect_user_error(std::string("run --platform neuroncore -p neuroncore.nc0.") + p + "=0",
                          "outside its range [1, 65536]");
    expect_user_error("run --platform trn3-dev -p trn3dev.chip0.nc3.gpsimd_elements_per_cycle=0", "outside its range");
    std::string deep;
    for (int i = 0; i < 50000; ++i) deep += "{\"a\":";
    deep += "1";
    for (int i = 0; i < 50000; ++i) deep += "}";
    const std::string nested = write_temp("deep.json", deep);
    expect_user_error("run --config " + nested, "nested deeper than 64 levels");
    std::remove(nested.c_str());
}

TEST_CASE("sizes a platform cannot hold and values that would wrap are refused, never truncated") {
    expect_user_error("run --platform neuroncore -p neuroncore.m=1000000000", "more than its 4GiB slot");
    expect_user_error("run --platform neuroncore -p neuroncore.m=4294967424", "neuroncore.m = 4294967424");
    expect_user_error("run --platform pcie -p pcie.ep2_link.failed_lanes=4294967297", "4294967297");
    expect_user_error("run -p bringup.dram.read_latency=1e30s", "not a time the simulation can hold");
    expect_user_error("run -p sim.progress=nan", "NaN");
    expect_user_error("run --platform hbm -p hbm.hbm0.ecc.double_rate=nan", "NaN");
    expect_user_error("run --platform nl32x2 -p nl32x2.faulty_lanes=1000", "the first chip has 80 backplane lanes");
    expect_user_error("run --platform neuroncore -p neuroncore.tolerance=-1", "outside its range");
    expect_user_error("run --platform neuroncore -p neuroncore.kernel=matmul_stream -p neuroncore.repeats=0",
                      "outside its range");
}

TEST_CASE("a link that never trains ends the run with a failure, not a simulation that runs forever") {
    for (const char* args :
         {"--platform pcie -p pcie.host_link.failed_lanes=0-15", "--platform pcie -p pcie.host_link.auto_train=false",
          "--platform trn3-dev -p trn3dev.host_link.failed_lanes=0-15"}) {
        const result r = trn3vp(std::string("run ") + args);
        INFO(args << "\n" << r.out << r.err);
        CHECK(r.code == 1);
        CHECK_THAT(r.out, Catch::Contains("FAILED: the root port's link did not come up within 10 ms"));
        CHECK_THAT(r.out, Catch::Contains("simulated time    10.000 ms"));
    }
}

TEST_CASE(
    "files: a directory or an endless device is refused, every output is checked, two outputs never share a file") {
    expect_user_error("run --config /tmp", "config file '/tmp': not a regular file");
    expect_user_error("run --platform mcu -p mcu.mcu0.firmware=/tmp", "firmware '/tmp': not a regular file");
    expect_user_error("run --platform mcu -p mcu.mcu0.boot_rom=/dev/zero", "firmware '/dev/zero': not a regular file");
    const result stats = trn3vp("run" + small + " --stats /dev/full");
    CHECK(stats.code == 2);
    CHECK_THAT(stats.err, Catch::Contains("stats file '/dev/full': writing it failed"));
    expect_user_error("run --dump-config /dev/full", "config file '/dev/full': writing it failed");
    const result timeline = trn3vp("run" + small + " --timeline /dev/full");
    CHECK(timeline.code == 2);
    CHECK_THAT(timeline.err, Catch::Contains("timeline file '/dev/full': writing it failed"));
    expect_user_error("run --platform neuroncore -p neuroncore.nc0.tensor_engine.backend=rtl "
                      "-p neuroncore.nc0.tensor_engine.waveform=/nonexistent/w.vcd",
                      "waveform file '/nonexistent/w.vcd': cannot write it");
    const std::string same = temp_path("same.json");
    expect_user_error("run --stats " + same + " --timeline " + same, "--stats and --timeline name the same file");
    const std::string garbage = write_temp("garbage.json", "{\"bringup.tg0.count\": 5} trailing");
    expect_user_error("run --config " + garbage, "is not valid JSON");
    std::remove(garbage.c_str());
    const result big = trn3vp("run -p bringup.tg0.pattern=" + std::string(100000, 'x'));
    CHECK(big.code == 2);
    CHECK(big.err.size() < 400);  // the value is quoted, not echoed whole
}

TEST_CASE("firmware that traps at its first instruction: the report names the trap's cause and pc") {
    const result r = trn3vp(std::string("run --platform mcu -p mcu.mcu0.boot_rom= -p mcu.mcu0.firmware=") +
                            TRN3_MCU_PROGRAMS + "/mcu_trap_at_entry.elf");
    INFO(r.out << r.err);
    CHECK(r.code == 1);
    CHECK_THAT(r.out, Catch::Contains("exceptions; the first: illegal instruction (cause 2) at pc 0x20000000"));
    CHECK_THAT(r.out, Catch::Contains("FAILED: command 1: no answer within 10 ms"));
}

TEST_CASE("the command line: --version, a dumped config names its platform, list-params filters by glob") {
    const result v = trn3vp("--version");
    CHECK(v.code == 0);
    CHECK_THAT(v.out, Catch::StartsWith("trn3vp "));
    const std::string dump = temp_path("nc-dump.json");
    REQUIRE(trn3vp("run --platform neuroncore -p neuroncore.kernel=softmax --dump-config " + dump).code == 0);
    CHECK_THAT(slurp(dump), Catch::Contains("\"platform\": \"neuroncore\""));
    const result again = trn3vp("run --config " + dump);
    std::remove(dump.c_str());
    CHECK(again.code == 0);
    CHECK_THAT(again.out, Catch::Contains("platform neuroncore: PASSED"));
    CHECK_THAT(again.out, Catch::Contains("kernel softmax"));
    const result f = trn3vp("list-params --platform trn3-dev --filter 'trn3dev.chip0.nc0.tensor_engine.*'");
    CHECK(f.code == 0);
    CHECK(std::count(f.out.begin(), f.out.end(), '\n') == 6);  // the header and five params
    expect_user_error("list-params --filter 'nothing.*'", "no param matches 'nothing.*'");
    const result help = trn3vp("run --help");
    CHECK_THAT(help.out, Catch::Contains("-p bringup.dram.read_latency=120ns"));
}
