#include "trn3/mcu/mcu.h"

#include <iostream>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "trn3/core/error.h"
#include "trn3/core/payload.h"
#include "trn3/spec/mailbox.h"
#include "trn3/spec/mcu.h"

namespace trn3::mcu {

namespace {
std::array<std::uint8_t, 32> parse_digest(const param<std::string>& p) {
    std::array<std::uint8_t, 32> d{};
    const std::string& s = p.get();
    if (s.empty()) return d;
    if (s.size() != 64 || s.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
        throw config_error("param " + p.name() + " = '" + s + "': a SHA-256 is 64 hex digits");
    for (unsigned i = 0; i < 32; ++i) d[i] = static_cast<std::uint8_t>(std::stoul(s.substr(2 * i, 2), nullptr, 16));
    return d;
}
}  // namespace

mcu::mcu(const sc_core::sc_module_name& name, const images& defaults)
    : component(name, frequency{1e9}), chip("chip"),
      firmware(this, "firmware", defaults.firmware, "firmware ELF, loaded into SRAM"),
      boot_rom(this, "boot_rom", defaults.boot_rom, "boot ROM ELF (empty: start at the firmware's entry)"),
      fuse_digest(this, "fuse_digest", defaults.fuse_digest,
                  "SHA-256 of the firmware image the chip was provisioned with (64 hex digits)"),
      batch(this, "batch", 100000, "largest number of instructions run between interrupt checks",
            range<std::uint64_t>{1, {}}),
      gdb_port(this, "gdb_port", 0, "TCP port on localhost for a GDB remote stub (0: none)",
               range<std::uint64_t>{0, 65535}),
      hang_at(this, "hang_at", sc_core::SC_ZERO_TIME,
              "a fault campaign's: the firmware hangs at this time until a reset (0: never)"),
      uart0("uart"), timer0("timer"), intc0("intc"), sysctl0("sysctl"), mailbox0("mailbox"),
      watchdog0("watchdog", timer0),
      hash0("hash",
            [this](std::uint32_t address, std::uint32_t bytes) -> const std::uint8_t* {
                for (auto* m : {&rom_, &sram_}) {
                    const std::uint32_t base = m == &rom_ ? TRN3_MCU_ROM_BASE : TRN3_MCU_SRAM_BASE;
                    if (address - base < m->size() && bytes <= m->size() - (address - base))
                        return m->data() + (address - base);
                }
                return nullptr;
            }),
      mmio_("mmio"), rom_(TRN3_MCU_ROM_SIZE), sram_(TRN3_MCU_SRAM_SIZE),
      instructions_(this, "instructions", "instructions retired"),
      mmio_accesses_(this, "mmio_accesses", "loads and stores outside ROM and SRAM"),
      wfi_waits_(this, "wfi_waits", "times the hart waited in wfi"),
      traps_(this, "traps", "traps taken (exceptions and interrupts)") {
    mmio_.bind(bus_.in);
    bus_.map(uart0.in, TRN3_MCU_UART_BASE, TRN3_MCU_BLOCK_SIZE, "uart");
    bus_.map(timer0.in, TRN3_MCU_TIMER_BASE, TRN3_MCU_BLOCK_SIZE, "timer");
    bus_.map(intc0.in, TRN3_MCU_INTC_BASE, TRN3_MCU_BLOCK_SIZE, "intc");
    bus_.map(sysctl0.in, TRN3_MCU_SYSCTL_BASE, TRN3_MCU_BLOCK_SIZE, "sysctl");
    bus_.map(mailbox0.in, TRN3_MCU_MAILBOX_BASE, TRN3_MCU_BLOCK_SIZE, "mailbox");
    mailbox0.mcu_irq.on_change([this](bool level) { intc0.line(TRN3_MCU_IRQ_MAILBOX).set(level); });
    bus_.map(watchdog0.in, TRN3_MCU_WDT_BASE, TRN3_MCU_BLOCK_SIZE, "watchdog");
    bus_.map(hash0.in, TRN3_MCU_HASH_BASE, TRN3_MCU_BLOCK_SIZE, "hash");
    watchdog0.warning.on_change([this](bool level) { intc0.line(TRN3_MCU_IRQ_WATCHDOG).set(level); });
    watchdog0.reset_request = [this] {
        log().warn("watchdog reset");
        reset_pending_ = true;
        restart_.notify(sc_core::SC_ZERO_TIME);
    };

    hart_.add_region({TRN3_MCU_ROM_BASE, TRN3_MCU_ROM_SIZE, rom_.data(), false});
    hart_.add_region({TRN3_MCU_SRAM_BASE, TRN3_MCU_SRAM_SIZE, sram_.data(), true});
    hart_.set_bus(
        {[this](std::uint32_t a, unsigned n, std::uint32_t& v) { return mmio(tlm::TLM_READ_COMMAND, a, n, v); },
         [this](std::uint32_t a, unsigned n, std::uint32_t v) { return mmio(tlm::TLM_WRITE_COMMAND, a, n, v); },
         [this] { return timer0.mtime_at(sc_core::sc_time_stamp() + hart_local()); }});

    if (firmware.get().empty()) throw config_error("param " + firmware.name() + " names no firmware ELF");
    const elf_image fw = elf_image::load(firmware.get());
    load(fw, TRN3_MCU_SRAM_BASE, sram_, "SRAM");
    // The image the boot ROM hashes: from the lowest loaded byte to the end
    // of the file bytes (what objcopy -O binary writes).
    std::uint32_t lo = ~0u, hi = 0;
    for (const auto& seg : fw.segments)
        if (!seg.bytes.empty()) {
            lo = std::min(lo, seg.address);
            hi = std::max(hi, static_cast<std::uint32_t>(seg.address + seg.bytes.size()));
        }
    sysctl0.set_image(lo, hi > lo ? hi - lo : 0, fw.entry);
    sysctl0.set_digest(parse_digest(fuse_digest));
    entry_ = fw.entry;
    if (!boot_rom.get().empty()) {
        const elf_image rom = elf_image::load(boot_rom.get());
        load(rom, TRN3_MCU_ROM_BASE, rom_, "ROM");
        entry_ = rom.entry;
    }
    hart_.reset(entry_);
    if (gdb_port.get()) gdb_ = std::make_unique<gdb_stub>(hart_, static_cast<std::uint16_t>(gdb_port.get()));
    SC_HAS_PROCESS(mcu);
    SC_THREAD(run);
}

std::string mcu::diagnosis() const {
    if (hart_.exceptions() == 0) return "";
    const auto& e = hart_.first_exception();
    return fmt::format("{} exceptions; the first: {} (cause {}) at pc {:#010x}, mtval {:#010x}", hart_.exceptions(),
                       cause_name(e.cause), e.cause, e.pc, e.tval);
}

void mcu::load(const elf_image& img, std::uint32_t base, std::vector<std::uint8_t>& mem, const char* what) {
    for (const auto& seg : img.segments) {
        if (seg.address < base || seg.address - base > mem.size() ||
            seg.memory_size > mem.size() - (seg.address - base))
            throw config_error(fmt::format("firmware '{}': a segment at 0x{:08x} ({} bytes) lies outside the MCU's {} "
                                           "(0x{:08x}, {} KiB)",
                                           img.path, seg.address, seg.memory_size, what, base, mem.size() / 1024));
        if (!seg.bytes.empty()) std::memcpy(mem.data() + (seg.address - base), seg.bytes.data(), seg.bytes.size());
        std::memset(mem.data() + (seg.address - base) + seg.bytes.size(), 0, seg.memory_size - seg.bytes.size());
    }
}

void mcu::reset() {
    // A warm reset: the hart restarts at its entry; SRAM keeps the image.
    hart_.reset(entry_);
    sysctl0.reset();
    hash0.reset();
    batch_start_ = hart_.instret() + hart_.traps();
    state_ = state::running;
    reset_while_waiting_ = true;
    restart_.notify(sc_core::SC_ZERO_TIME);
}

bool mcu::mmio(tlm::tlm_command cmd, std::uint32_t address, unsigned bytes, std::uint32_t& value) {
    ++mmio_accesses_;
    tlm::tlm_generic_payload tx;
    unsigned char data[4] = {};
    if (cmd == tlm::TLM_WRITE_COMMAND) std::memcpy(data, &value, bytes);
    const bool to_chip = address >= TRN3_MCU_CHIP_BASE;
    set_access(tx, cmd, to_chip ? address - TRN3_MCU_CHIP_BASE : address, data, bytes);
    // The access happens at the hart's current time; its latency adds to local time.
    const sc_core::sc_time at = hart_local();
    sc_core::sc_time delay = at;
    if (to_chip) {
        if (chip.get_base_port().size() == 0) return false;  // no chip behind this MCU
        chip->b_transport(tx, delay);
    } else {
        mmio_->b_transport(tx, delay);
    }
    local_ += delay - at;
    if (!tx.is_response_ok()) return false;
    if (cmd == tlm::TLM_READ_COMMAND) std::memcpy(&value, data, bytes);
    else update_interrupts();  // the write may have raised or cleared one
    return true;
}

sc_core::sc_time mcu::hart_local() const {
    return local_ + clock_period() * static_cast<double>(hart_.instret() + hart_.traps() - batch_start_);
}

void mcu::update_interrupts() {
    const sc_core::sc_time now = sc_core::sc_time_stamp() + hart_local();
    hart_.set_pending(irq_timer, timer0.mtip(now));
    hart_.set_pending(irq_software, timer0.msip());
    hart_.set_pending(irq_external, intc0.meip());
}

void mcu::request_reset() {
    watchdog0.stop();
    if (sc_core::sc_get_current_process_handle() == run_process_) {
        reset_pending_ = true;  // the hart's own store: applied when its batch ends
        restart_.notify(sc_core::SC_ZERO_TIME);
        return;
    }
    reset();
}

void mcu::run() {
    run_process_ = sc_core::sc_get_current_process_handle();
    const sc_core::sc_time period = clock_period();
    if (gdb_) {
        // On stderr whatever the log level: until GDB connects the run waits, and must not look hung.
        std::cerr << fmt::format("[{}] waiting for GDB on localhost:{} (gdb-multiarch: target remote :{})\n", name(),
                                 gdb_port.get(), gdb_port.get());
        gdb_->accept();
        gdb_action_ = gdb_->serve();
        hart_.step_over_breakpoint = true;
    }
    for (;;) {
        reset_while_waiting_ = false;
        if (reset_pending_) {  // the watchdog's warm reset, or the firmware's own MCU_RESET
            reset_pending_ = false;
            hart_.reset(entry_);
            sysctl0.reset();
            hash0.reset();
            batch_start_ = hart_.instret() + hart_.traps();
            state_ = state::running;
        }
        if (state_ != state::running) {
            wait(restart_);  // stays stopped until reset
            continue;
        }
        update_interrupts();
        const sc_core::sc_time quantum = tlm::tlm_global_quantum::instance().get();
        const sc_core::sc_time now = sc_core::sc_time_stamp() + local_;
        std::uint64_t budget = batch.get();
        if (quantum > local_)
            budget = std::min<std::uint64_t>(budget, static_cast<std::uint64_t>((quantum - local_) / period) + 1);
        const sc_core::sc_time deadline = timer0.deadline();
        if (deadline > now && deadline != sc_core::sc_max_time())
            budget = std::min<std::uint64_t>(budget, static_cast<std::uint64_t>((deadline - now) / period) + 1);
        if (!hung_once_ && hang_at.get() > sc_core::SC_ZERO_TIME) {
            if (now >= hang_at.get()) {
                log().warn("the firmware hangs (hang_at) at pc {:#x}", hart_.pc());
                hung_once_ = true;
                state_ = state::hung;
                wait(local_);
                local_ = sc_core::SC_ZERO_TIME;
                continue;
            }
            budget = std::min<std::uint64_t>(budget, static_cast<std::uint64_t>((hang_at.get() - now) / period) + 1);
        }
        const std::uint64_t before = hart_.instret(), traps_before = hart_.traps(),
                            exceptions_before = hart_.exceptions();
        batch_start_ = before + traps_before;
        const bool debugging = gdb_ && gdb_->connected();
        if (debugging && gdb_action_ == gdb_stub::action::step) budget = 1;
        if (debugging) budget = std::min<std::uint64_t>(budget, 10000);  // poll for Ctrl-C
        const rv32_hart::stop why = hart_.run(budget);
        const std::uint64_t retired = hart_.instret() - before, trapped = hart_.traps() - traps_before;
        instructions_ += retired;
        traps_ += trapped;
        // An instruction costs a cycle, and so does a trap (a trap loop still moves time on).
        local_ += period * static_cast<double>(std::max<std::uint64_t>(1, retired + trapped));
        batch_start_ = hart_.instret() + hart_.traps();
        if (debugging) {
            // Stop to GDB after a step, at a breakpoint or ebreak, on an
            // exception, or when it interrupts.
            const bool exception = hart_.exceptions() != exceptions_before;
            int signal = 0;
            if (gdb_action_ == gdb_stub::action::step || why == rv32_hart::stop::breakpoint ||
                why == rv32_hart::stop::ebreak_to_debugger || exception)
                signal = 5;  // SIGTRAP
            else if (gdb_->interrupted()) signal = 2;  // SIGINT
            if (signal) {
                wait(local_);
                local_ = sc_core::SC_ZERO_TIME;
                batch_start_ = hart_.instret() + hart_.traps();
                gdb_action_ = gdb_->stopped(signal);
                hart_.step_over_breakpoint = true;
                if (gdb_action_ == gdb_stub::action::kill) {
                    sc_core::sc_stop();
                    return;
                }
                if (gdb_action_ == gdb_stub::action::detach) hart_.debugger_attached = false;
                continue;
            }
        }
        if (sysctl0.tohost()) {
            state_ = sysctl0.tohost() == TRN3_MCU_TOHOST_PASS ? state::passed : state::failed;
            wait(local_);
            local_ = sc_core::SC_ZERO_TIME;
            stopped_at_ = sc_core::sc_time_stamp();
            stopped_.notify(sc_core::SC_ZERO_TIME);
            continue;
        }
        if (why == rv32_hart::stop::wfi) {
            ++wfi_waits_;
            wait(local_);
            local_ = sc_core::SC_ZERO_TIME;
            // A reset during that wait: the hart starts again at its entry (not
            // waiting for an interrupt that, with interrupts off, never comes).
            if (reset_while_waiting_ || reset_pending_) continue;
            update_interrupts();
            if (!hart_.interrupt_waiting()) {
                const sc_core::sc_time d = timer0.deadline(), t = sc_core::sc_time_stamp();
                if (d != sc_core::sc_max_time() && d > t) wait(d - t, intc0.changed() | timer0.changed() | restart_);
                else if (d == sc_core::sc_max_time()) wait(intc0.changed() | timer0.changed() | restart_);
            }
            continue;
        }
        if (local_ >= quantum) {
            wait(local_);
            local_ = sc_core::SC_ZERO_TIME;
        }
    }
}

void mcu::end_of_elaboration() {
    component::end_of_elaboration();
    sysctl0.set_chip_present(chip.get_base_port().size() != 0);
}

}  // namespace trn3::mcu
