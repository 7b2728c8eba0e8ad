// A GDB remote serial protocol stub for the MCU's hart, on a TCP port of
// localhost (param <mcu>.gdb_port). While GDB holds the hart stopped the
// simulation waits for it; `continue` runs until a breakpoint, an ebreak or
// a trap; `stepi` runs one instruction.
//
// Packets: ? g G p P m M c s Z0/z0 Z1/z1 (both software breakpoints kept by
// the hart), qSupported qXfer:features:read qAttached qC qfThreadInfo
// qsThreadInfo H k D; others get the empty reply (unsupported), as the
// protocol says.
//
// Registers: g and G carry x0-x31 and pc (GDB's numbers 0-32); p and P reach
// those and the CSRs, CSR n as register 65 + n (GDB's RISC-V numbering),
// through the hart's csr_read and csr_write (a write to a read-only CSR is
// refused with E01). The target description (qXfer:features:read, annex
// target.xml) names them: org.gnu.gdb.riscv.cpu and org.gnu.gdb.riscv.csr
// with every CSR the hart implements, so GDB knows `$mstatus`, `$mcause`...
#pragma once

#include <cstdint>
#include <string>

#include "trn3/mcu/rv32_hart.h"

namespace trn3::mcu {

class gdb_stub {
public:
    // Listens on localhost:port (0: any free port).
    gdb_stub(rv32_hart& hart, std::uint16_t port);
    ~gdb_stub();
    gdb_stub(const gdb_stub&) = delete;
    gdb_stub& operator=(const gdb_stub&) = delete;

    // Waits for GDB to connect (the hart is stopped meanwhile).
    void accept();
    enum class action { resume, step, detach, kill };
    // Tells GDB why the hart stopped (after a resume or step), then serves
    // its requests until it resumes, steps, detaches or kills.
    action stopped(int signal);
    // Serves requests until GDB resumes or steps, without a stop reply (the
    // first stop, right after connecting).
    action serve();
    // While the hart runs: true if GDB sent an interrupt (Ctrl-C).
    bool interrupted();
    bool connected() const { return client_ >= 0; }
    // The reply serve() would send to one packet (its payload, unframed):
    // the protocol without a socket, for tests. Meant for packets that do
    // not resume, step, detach or kill.
    std::string reply(const std::string& packet);

private:
    bool read_packet(std::string& packet);
    void disconnect();
    void send(const std::string& payload);
    std::string answer(const std::string& packet, action& act, bool& done);  // handle(), errors as E01
    std::string handle(const std::string& packet, action& act, bool& done);

    rv32_hart& hart_;
    std::uint16_t port_;
    int listener_ = -1, client_ = -1;
};

}  // namespace trn3::mcu
