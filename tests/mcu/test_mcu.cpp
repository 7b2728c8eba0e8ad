// The MCU: self-checking RV32IMC programs (tests/mcu/programs, built with the
// RISC-V toolchain) run on the model and report through tohost; firmware ELF
// files that cannot be loaded are refused with one line.
#include <catch2/catch.hpp>

#include <cstdio>

#include <cstring>
#include <fstream>
#include <iterator>
#include <sysc/kernel/sc_dynamic_processes.h>
#include <vector>

#include "trn3/core/error.h"
#include "trn3/core/param.h"
#include "trn3/mcu/gdb_stub.h"
#include "trn3/mcu/mcu.h"
#include "trn3/spec/mcu.h"

using namespace trn3;

namespace {
std::string program(const std::string& name) { return std::string(TRN3_MCU_PROGRAMS) + "/mcu_" + name + ".elf"; }

// Runs a program to its tohost write (at most 10 ms of simulated time);
// returns tohost, and on failure says where the hart was.
std::uint32_t run_program(const std::string& name, mcu::mcu** out = nullptr) {
    static mcu::mcu* m = nullptr;
    tlm::tlm_global_quantum::instance().set(sc_core::sc_time(1, sc_core::SC_US));  // as sim.quantum's default
    m = new mcu::mcu("mcu0", {program(name), "", ""});
    if (out) *out = m;
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_MS));
    if (m->tohost() != TRN3_MCU_TOHOST_PASS)
        std::printf("%s: tohost %u (failed test %u), pc 0x%08x, %llu traps, last cause %u at 0x%08x (mtval 0x%08x), "
                    "gp %u\n",
                    name.c_str(), m->tohost(), TRN3_MCU_TOHOST_TEST(m->tohost()), m->hart().pc(),
                    static_cast<unsigned long long>(m->hart().traps()), m->hart().last_cause(),
                    m->hart().csr(mcu::csr_mepc), m->hart().csr(mcu::csr_mtval), m->hart().reg(3));
    return m->tohost();
}

std::vector<char> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void write_file(const std::string& path, const std::vector<char>& bytes) {
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}
std::string hex(unsigned v) {
    char s[16];
    std::snprintf(s, sizeof s, "%x", v);
    return s;
}
std::string hex32_le(std::uint32_t v) {  // a register's value in GDB's packets: target byte order
    char s[16];
    std::snprintf(s, sizeof s, "%02x%02x%02x%02x", v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >> 24);
    return s;
}
std::string refusal(const std::string& path) {
    try {
        mcu::mcu m("mcu0", {path, "", ""});
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST_CASE("every RV32I instruction behaves as the ISA says") { CHECK(run_program("rv32i") == TRN3_MCU_TOHOST_PASS); }
TEST_CASE("every RV32M instruction, division by zero and overflow included") {
    CHECK(run_program("rv32m") == TRN3_MCU_TOHOST_PASS);
}
TEST_CASE("every RV32C instruction expands to its RV32I equivalent") {
    CHECK(run_program("rv32c") == TRN3_MCU_TOHOST_PASS);
}
TEST_CASE("illegal instructions, misaligned and faulting accesses, ecall and ebreak trap with their causes") {
    CHECK(run_program("traps") == TRN3_MCU_TOHOST_PASS);
}
TEST_CASE("CSR instructions, machine CSRs and counters, and illegal CSR accesses") {
    mcu::mcu* m = nullptr;
    CHECK(run_program("csr", &m) == TRN3_MCU_TOHOST_PASS);
    // The program rewrites minstret: the MCU's own clock must not follow it.
    CHECK(m->stopped_at() > sc_core::SC_ZERO_TIME);
    CHECK(m->stopped_at() < sc_core::sc_time(100, sc_core::SC_US));
}
TEST_CASE("timer and software interrupts, wfi, and vectored mtvec") {
    mcu::mcu* m = nullptr;
    CHECK(run_program("interrupts", &m) == TRN3_MCU_TOHOST_PASS);
    CHECK(stats_registry::instance().find("mcu0.wfi_waits")->to_json().get<std::uint64_t>() >= 2);
}

TEST_CASE("an external interrupt from a chip block through the interrupt controller wakes wfi and is taken") {
    // The program waits; a chip block raises line 5 at 2 us.
    static mcu::mcu* m = nullptr;
    sc_core::sc_spawn([] {
        sc_core::wait(2, sc_core::SC_US);
        m->intc0.line(5).set(true);
    });
    CHECK(run_program("external", &m) == TRN3_MCU_TOHOST_PASS);
    CHECK(sc_core::sc_time_stamp() >= sc_core::sc_time(2, sc_core::SC_US));
}

TEST_CASE("a watchdog never kicked warns by interrupt, then resets the MCU") {
    mcu::mcu* m = nullptr;
    CHECK(run_program("watchdog", &m) == TRN3_MCU_TOHOST_PASS);
    CHECK(m->watchdog0.resets() == 1);
}

TEST_CASE("a missing firmware file is refused with one line") {
    CHECK(refusal("/nonexistent/fw.elf") ==
          "firmware '/nonexistent/fw.elf': cannot open it (No such file or directory)");
}

TEST_CASE("a truncated firmware file is refused") {
    auto bytes = read_file(program("rv32i"));
    bytes.resize(bytes.size() / 3);
    write_file("truncated.elf", bytes);
    CHECK_THAT(refusal("truncated.elf"), Catch::StartsWith("firmware 'truncated.elf': truncated"));
}

TEST_CASE("a firmware for another architecture is refused") {
    auto bytes = read_file(program("rv32i"));
    bytes[18] = 62;  // e_machine: x86-64
    bytes[19] = 0;
    write_file("x86.elf", bytes);
    CHECK(refusal("x86.elf") == "firmware 'x86.elf': not a RISC-V executable (e_machine 62)");
    auto wide = read_file(program("rv32i"));
    wide[4] = 2;  // ELFCLASS64
    write_file("elf64.elf", wide);
    CHECK(refusal("elf64.elf") == "firmware 'elf64.elf': not a 32-bit ELF file (the MCU is RV32)");
}

TEST_CASE("a firmware whose segments overlap is refused") {
    // Two PT_LOAD headers at the same address: the first one, duplicated.
    auto bytes = read_file(program("rv32i"));
    std::uint32_t phoff;
    std::uint16_t phnum;
    std::memcpy(&phoff, &bytes[28], 4);
    std::memcpy(&phnum, &bytes[44], 2);
    REQUIRE(phnum >= 2);
    std::uint32_t first_type;
    std::memcpy(&first_type, &bytes[phoff], 4);
    unsigned load = 0;
    while (load < phnum) {
        std::uint32_t type;
        std::memcpy(&type, &bytes[phoff + 32 * load], 4);
        if (type == 1) break;
        ++load;
    }
    for (unsigned i = 0; i < phnum; ++i)
        if (i != load) std::memcpy(&bytes[phoff + 32 * i], &bytes[phoff + 32 * load], 32);
    write_file("overlap.elf", bytes);
    CHECK_THAT(refusal("overlap.elf"), Catch::StartsWith("firmware 'overlap.elf': segments overlap at 0x20000000"));
}

TEST_CASE("a firmware segment outside SRAM is refused") {
    auto bytes = read_file(program("rv32i"));
    std::uint32_t phoff;
    std::memcpy(&phoff, &bytes[28], 4);
    std::uint16_t phnum;
    std::memcpy(&phnum, &bytes[44], 2);
    for (unsigned i = 0; i < phnum; ++i) {
        std::uint32_t type;
        std::memcpy(&type, &bytes[phoff + 32 * i], 4);
        if (type != 1) continue;
        const std::uint32_t paddr = 0x30000000;
        std::memcpy(&bytes[phoff + 32 * i + 12], &paddr, 4);
        break;
    }
    write_file("outside.elf", bytes);
    CHECK_THAT(refusal("outside.elf"), Catch::Contains("lies outside the MCU's SRAM"));
}

TEST_CASE("the GDB stub describes x0-x31, pc and every CSR the hart implements, and p and P reach the CSRs") {
    mcu::rv32_hart hart;
    hart.reset(0);
    mcu::gdb_stub stub(hart, 0);
    CHECK_THAT(stub.reply("qSupported:multiprocess+;swbreak+;hwbreak+;qRelocInsn+;xmlRegisters=i386"),
               Catch::Contains("qXfer:features:read+"));

    // target.xml in parts of 100 bytes ('m': more follows, 'l': the last), as
    // GDB reads it; read whole, the same document.
    std::string xml;
    for (;;) {
        const std::string part = stub.reply("qXfer:features:read:target.xml:" + hex(xml.size()) + ",64");
        REQUIRE(!part.empty());
        REQUIRE((part[0] == 'm' || part[0] == 'l'));
        xml += part.substr(1);
        if (part[0] == 'l') break;
        REQUIRE(part.size() == 1 + 100);
    }
    CHECK(stub.reply("qXfer:features:read:target.xml:0,4000") == "l" + xml);
    CHECK(stub.reply("qXfer:features:read:target.xml:" + hex(xml.size()) + ",64") == "l");
    CHECK(stub.reply("qXfer:features:read:target.xml:" + hex(xml.size() + 1) + ",64")[0] == 'E');
    CHECK(stub.reply("qXfer:features:read:other.xml:0,64")[0] == 'E');
    CHECK(xml.find_first_of("$#}*") == std::string::npos);  // nothing to escape: the parts above are the document
    CHECK_THAT(xml, Catch::StartsWith("<?xml version=\"1.0\"?>") &&
                        Catch::Contains("<architecture>riscv:rv32</architecture>") &&
                        Catch::Contains("<feature name=\"org.gnu.gdb.riscv.cpu\">") &&
                        Catch::Contains("<feature name=\"org.gnu.gdb.riscv.csr\">") && Catch::EndsWith("</target>\n"));
    for (unsigned i = 0; i < 32; ++i)
        CHECK_THAT(xml, Catch::Contains("<reg name=\"x" + std::to_string(i) + "\" bitsize=\"32\" regnum=\"" +
                                        std::to_string(i) + "\""));
    CHECK_THAT(xml, Catch::Contains("<reg name=\"pc\" bitsize=\"32\" regnum=\"32\""));
    CHECK_THAT(xml, Catch::Contains("<reg name=\"mstatus\" bitsize=\"32\" regnum=\"833\""));  // 65 + 0x300

    // CSR n is register 65 + n: described, and read by p, exactly when the hart has it.
    unsigned described = 0;
    for (unsigned n = 0; n < 4096; ++n) {
        std::uint32_t value = 0;
        const bool has = hart.csr_read(static_cast<std::uint16_t>(n), value);
        const std::string regnum = "regnum=\"" + std::to_string(65 + n) + "\"";
        const std::size_t at = xml.find(regnum);
        INFO("CSR 0x" << hex(n));
        CHECK(has == (at != std::string::npos));
        if (has) {
            ++described;
            CHECK(xml.rfind("<reg ", at) > xml.find("org.gnu.gdb.riscv.csr"));
            CHECK(stub.reply("p" + hex(65 + n)) == hex32_le(value));
        } else {
            CHECK(stub.reply("p" + hex(65 + n)) == "E01");
        }
    }
    CHECK(described == 23);
    CHECK(stub.reply("p" + hex(65 + mcu::csr_misa)) == hex32_le(0x40001104));  // RV32IMC
    CHECK(stub.reply("p" + hex(65 + mcu::csr_mhartid)) == "00000000");

    // P writes through csr_write: mscratch takes any value, mtvec keeps its
    // WARL bits, mcycle moves the counter; read-only CSRs and registers
    // without a number here are refused.
    CHECK(stub.reply("P" + hex(65 + mcu::csr_mscratch) + "=78563412") == "OK");
    CHECK(hart.csr(mcu::csr_mscratch) == 0x12345678);
    CHECK(stub.reply("p" + hex(65 + mcu::csr_mscratch)) == "78563412");
    CHECK(stub.reply("P" + hex(65 + mcu::csr_mtvec) + "=06010020") == "OK");
    CHECK(hart.csr(mcu::csr_mtvec) == 0x20000104);
    CHECK(stub.reply("P" + hex(65 + mcu::csr_mcycle) + "=e8030000") == "OK");
    CHECK(hart.csr(mcu::csr_mcycle) == 1000);
    CHECK(stub.reply("P" + hex(65 + mcu::csr_mhartid) + "=01000000") == "E01");
    CHECK(stub.reply("P" + hex(65 + mcu::csr_cycle) + "=01000000") == "E01");
    CHECK(stub.reply("P" + hex(65 + 0x7c0) + "=01000000") == "E01");  // no such CSR
    CHECK(stub.reply("P40=01000000") == "E01");  // 64: an FP register, none here
    CHECK(stub.reply("P" + hex(65 + 4096) + "=01000000") == "E01");

    // g and G still carry x0-x31 and pc only.
    hart.set_reg(5, 0xdeadbeef);
    const std::string g = stub.reply("g");
    CHECK(g.size() == 33 * 8);
    CHECK(g.substr(5 * 8, 8) == "efbeadde");
}
