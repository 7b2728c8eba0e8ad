// The chip's management controller: an RV32IMC hart (rv32_hart.h) with its
// boot ROM and SRAM (direct access), and MMIO through TLM to its UART,
// timer, interrupt controller, system control page, mailbox, watchdog and
// SHA-256 engine (spec/mcu.h has the map). Addresses from TRN3_MCU_CHIP_BASE up leave through the `chip`
// socket (offset from that base) to the rest of the chip.
//
// Time: the hart runs in batches of instructions; each instruction costs one
// cycle of `clock`, MMIO adds its annotated delay, and the MCU synchronises
// with SystemC when its local time reaches the global quantum. A batch ends
// early at the timer's deadline, so a timer interrupt is taken at its cycle.
// wfi waits (in simulated time) for an interrupt.
//
// params:  firmware     ELF loaded into SRAM (the image the boot ROM checks)
//          boot_rom     ELF loaded into ROM; empty: start at the firmware's entry
//          fuse_digest  SHA-256 of the firmware image the chip was provisioned
//                       with (64 hex digits; empty: all zero, unprovisioned)
//          batch        largest number of instructions run between checks
//          gdb_port     TCP port on localhost for a GDB remote stub (0: none);
//                       the MCU then waits for GDB before its first instruction
//          hang_at      a fault campaign's: the firmware hangs at this time
//                       (0: never); the hart stops retiring instructions, as a
//                       lock-up with interrupts off would, until a reset (the
//                       watchdog's, two timeouts after its last kick, or the
//                       host's through the chip's MCU_RESET); once per run
// Platforms give the defaults of the first three (the build's images).
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>

#include "trn3/core/component.h"
#include "trn3/core/router.h"
#include "trn3/core/stats.h"
#include "trn3/mcu/elf_image.h"
#include "trn3/mcu/gdb_stub.h"
#include "trn3/mcu/hash_engine.h"
#include "trn3/mcu/intc.h"
#include "trn3/mcu/mailbox.h"
#include "trn3/mcu/rv32_hart.h"
#include "trn3/mcu/sysctl.h"
#include "trn3/mcu/timer.h"
#include "trn3/mcu/uart.h"
#include "trn3/mcu/watchdog.h"

namespace trn3::mcu {

class mcu : public component {
public:
    tlm_utils::simple_initiator_socket_optional<mcu> chip;

    param<std::string> firmware;
    param<std::string> boot_rom;
    param<std::string> fuse_digest;
    param<std::uint64_t> batch;
    param<std::uint64_t> gdb_port;  // 0: no debugger
    param<sc_core::sc_time> hang_at;  // 0: never

    uart uart0;
    timer timer0;
    intc intc0;
    sysctl sysctl0;
    mailbox mailbox0;  // its `host` socket and `host_irq` face the host
    watchdog watchdog0;
    hash_engine hash0;  // SHA-256 over ROM or SRAM: the boot ROM's image check

    struct images {
        std::string firmware, boot_rom, fuse_digest;
    };
    explicit mcu(const sc_core::sc_module_name& name, const images& defaults = {});

    enum class state { running, passed, failed, hung };
    state status() const { return state_; }
    // tohost's value once written (1 pass; (n << 1) | 1: failed test n).
    std::uint32_t tohost() const { return sysctl0.tohost(); }
    std::uint32_t boot_status() const { return sysctl0.boot_status(); }
    const std::string& console() const { return uart0.console(); }
    rv32_hart& hart() { return hart_; }
    // Debug access to SRAM (what a debugger or a fault-injection test reads
    // and writes: no time passes, nothing else happens); `offset` from
    // TRN3_MCU_SRAM_BASE, within sram_bytes().
    std::uint8_t* sram_debug(std::uint32_t offset) { return sram_.data() + offset; }
    std::size_t sram_bytes() const { return sram_.size(); }
    std::uint64_t instructions() const { return hart_.instret(); }
    // What went wrong in the firmware, for a report: its exceptions and the
    // first one's cause, pc and mtval ("" when it took none).
    std::string diagnosis() const;
    // Notified when the MCU stops (tohost written), and when that was.
    const sc_core::sc_event& stopped() const { return stopped_; }
    const sc_core::sc_time& stopped_at() const { return stopped_at_; }
    void reset() override;
    // A warm reset asked for from outside the hart (the chip's MCU_RESET):
    // the watchdog stops, and the hart restarts at its entry; asked for by the
    // firmware itself (its own store to MCU_RESET), when the current batch of
    // instructions ends, never in the middle of one.
    void request_reset();
    void end_of_elaboration() override;

private:
    void run();
    void load(const elf_image& img, std::uint32_t base, std::vector<std::uint8_t>& mem, const char* what);
    bool mmio(tlm::tlm_command cmd, std::uint32_t address, unsigned bytes, std::uint32_t& value);
    void update_interrupts();
    // The hart's time ahead of SystemC, counting the current batch so far.
    sc_core::sc_time hart_local() const;

    tlm_utils::simple_initiator_socket<mcu> mmio_;
    router bus_{"bus"};
    std::vector<std::uint8_t> rom_, sram_;
    rv32_hart hart_;
    std::unique_ptr<gdb_stub> gdb_;
    gdb_stub::action gdb_action_ = gdb_stub::action::resume;
    std::uint32_t entry_ = 0;
    sc_core::sc_time local_;  // time the hart is ahead of SystemC, at the start of the batch
    std::uint64_t batch_start_ = 0;  // instret + traps when the batch started
    state state_ = state::running;
    bool reset_pending_ = false;  // the watchdog asked for a reset
    bool hung_once_ = false;  // hang_at has struck
    sc_core::sc_process_handle run_process_;  // the hart's thread
    bool reset_while_waiting_ = false;  // reset() since the run loop last looked
    sc_core::sc_event stopped_, restart_;
    sc_core::sc_time stopped_at_;
    counter instructions_, mmio_accesses_, wfi_waits_, traps_;
};

}  // namespace trn3::mcu
