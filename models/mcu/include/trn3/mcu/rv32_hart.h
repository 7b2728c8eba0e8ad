// An RV32IMC + Zicsr hart in machine mode: architectural state, traps and
// interrupts, and an interpreter over predecoded instructions.
//
// No SystemC here. The MCU module (mcu.h) runs the hart in batches of
// instructions, charges their cycles against the quantum, and between
// batches sets the interrupt-pending bits. Memory comes in two kinds:
// fast regions (ROM, SRAM) that the hart reads, writes and fetches from
// through host pointers, with decoded instructions cached per halfword; and
// everything else (MMIO), which goes through the platform's bus callbacks.
// Decoding happens once per instruction address; a store into a fast region
// drops the decoded entries it overlaps, so self-modifying code and loaded
// programs stay correct.
//
// Misaligned loads and stores trap (cause 4 / 6): this hart does not split
// them. Fetch is allowed from fast regions only (elsewhere: cause 1).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "trn3/core/sparse_store.h"

namespace trn3::mcu {

// Exception and interrupt causes (mcause).
enum cause : std::uint32_t {
    cause_fetch_fault = 1,
    cause_illegal = 2,
    cause_breakpoint = 3,
    cause_load_misaligned = 4,
    cause_load_fault = 5,
    cause_store_misaligned = 6,
    cause_store_fault = 7,
    cause_ecall_m = 11,
};
constexpr std::uint32_t irq_software = 3, irq_timer = 7, irq_external = 11;  // mip/mie bits
// "illegal instruction", "load access fault", ...: for reports.
const char* cause_name(std::uint32_t cause);

// CSR numbers this hart implements.
enum csr_number : std::uint16_t {
    csr_mstatus = 0x300,
    csr_misa = 0x301,
    csr_mie = 0x304,
    csr_mtvec = 0x305,
    csr_mscratch = 0x340,
    csr_mepc = 0x341,
    csr_mcause = 0x342,
    csr_mtval = 0x343,
    csr_mip = 0x344,
    csr_mcycle = 0xb00,
    csr_minstret = 0xb02,
    csr_mcycleh = 0xb80,
    csr_minstreth = 0xb82,
    csr_cycle = 0xc00,
    csr_time = 0xc01,
    csr_instret = 0xc02,
    csr_cycleh = 0xc80,
    csr_timeh = 0xc81,
    csr_instreth = 0xc82,
    csr_mvendorid = 0xf11,
    csr_marchid = 0xf12,
    csr_mimpid = 0xf13,
    csr_mhartid = 0xf14,
};

class rv32_hart {
public:
    // A fast region: host memory the hart reads (and fetches) directly.
    struct region {
        std::uint32_t base = 0, size = 0;
        std::uint8_t* host = nullptr;
        bool writable = false;
    };
    // The platform's bus for everything else; return false for an access fault.
    struct bus {
        std::function<bool(std::uint32_t address, unsigned bytes, std::uint32_t& value)> load;
        std::function<bool(std::uint32_t address, unsigned bytes, std::uint32_t value)> store;
        std::function<std::uint64_t()> time;  // the `time` CSR (mtime)
    };
    // Why run() returned.
    enum class stop { budget, wfi, ebreak_to_debugger, breakpoint, bus_wait };

    rv32_hart();

    void add_region(const region& r);
    void set_bus(bus b) { bus_ = std::move(b); }
    void reset(std::uint32_t pc);

    // Runs at most `budget` instructions (fewer if an interrupt is taken,
    // wfi is reached, or a breakpoint is hit). Counts retired instructions.
    stop run(std::uint64_t budget);

    // Interrupt-pending bits driven by the platform (MSIP, MTIP, MEIP).
    void set_pending(std::uint32_t bit, bool level);
    // An interrupt is pending and enabled in mie (what wakes wfi).
    bool interrupt_waiting() const { return (mip_ & mie_) != 0; }

    // Debugger support: software breakpoints at addresses, and whether
    // ebreak stops to the debugger instead of trapping.
    void set_breakpoint(std::uint32_t address, bool on);
    bool debugger_attached = false;
    // Set when the debugger resumes: a breakpoint at the current pc does not
    // stop the first instruction (the one the debugger stopped at).
    bool step_over_breakpoint = false;

    // State, as a debugger sees it.
    std::uint32_t reg(unsigned i) const { return i == 0 ? 0 : x_[i]; }
    void set_reg(unsigned i, std::uint32_t v) {
        if (i) x_[i] = v;
    }
    std::uint32_t pc() const { return pc_; }
    void set_pc(std::uint32_t v) { pc_ = v; }
    // Instructions retired since reset, as the platform times them (software
    // writes to minstret change what it reads, not this).
    std::uint64_t instret() const { return instret_; }
    std::uint32_t csr(std::uint16_t number) const;  // 0 for a CSR this hart lacks
    // The CSRs as csrr and csrw see them (the debugger's way in too): false for
    // a CSR this hart lacks, and for a write, a read-only one (0xc00-0xfff).
    // A debugger's write to a counter is not an instruction: no increment to replace.
    bool csr_read(std::uint16_t number, std::uint32_t& value) const;
    bool csr_write(std::uint16_t number, std::uint32_t value);
    // Debugger memory access: fast regions directly, else the bus; false on a fault.
    bool debug_read(std::uint32_t address, std::uint8_t& value);
    bool debug_write(std::uint32_t address, std::uint8_t value);

    // Cycles per instruction are the platform's business; this counts
    // retired instructions and the `mcycle` counter follows them.
    std::uint64_t cycle_offset = 0;  // mcycle = instret + cycle_offset

    // Traps taken (exceptions and interrupts), and the last one's cause.
    std::uint64_t traps() const { return traps_; }
    std::uint64_t exceptions() const { return exceptions_; }
    std::uint32_t last_cause() const { return mcause_; }
    // The first exception since reset (what a crash report starts from).
    struct exception_record {
        std::uint32_t cause = 0, pc = 0, tval = 0;
    };
    const exception_record& first_exception() const { return first_exception_; }

private:
    struct decoded {
        std::uint16_t op = 0;  // 0: not decoded yet
        std::uint8_t rd = 0, rs1 = 0, rs2 = 0, len = 4;
        std::int32_t imm = 0;
        const void* handler = nullptr;  // the interpreter's code for op (set when it first runs)
    };
    // One entry per halfword of a region, and a never-decoded sentinel past
    // the end, in pages the host maps when an instruction there is first
    // decoded: a region costs what its code touches, not 16 bytes per
    // halfword up front. Zero bytes are a never-decoded entry (op_none).
    struct decode_cache {
        std::unique_ptr<sparse_store> store;
        std::size_t entries = 0;
        decoded* data() const { return reinterpret_cast<decoded*>(store->data()); }
        std::size_t size() const { return entries; }
        decoded& operator[](std::size_t i) const { return data()[i]; }
        void clear() const { store->zero(0, store->size()); }  // gives the pages back
    };
    struct code_region {
        region mem;
        decode_cache cache;
        // Byte offsets [code_lo, code_hi) hold every decoded instruction: a
        // store outside them cannot change code.
        std::uint32_t code_lo = ~0u, code_hi = 0;
    };
    // Host pointer for an access of `bytes` at `address` in a fast region
    // (writable ones only when storing), or null.
    std::uint8_t* direct(std::uint32_t address, unsigned bytes, bool write);

    void decode(decoded& d, std::uint32_t insn) const;
    void decode_compressed(decoded& d, std::uint16_t insn) const;
    bool fetch(std::uint32_t pc, std::uint32_t& insn);
    code_region* region_of(std::uint32_t address);
    void invalidate(std::uint32_t address, unsigned bytes);
    bool load(std::uint32_t address, unsigned bytes, std::uint32_t& value);
    bool store(std::uint32_t address, unsigned bytes, std::uint32_t value);
    void trap(std::uint32_t cause, std::uint32_t tval);
    bool take_interrupt();

    std::array<std::uint32_t, 33> x_{};  // x_[32]: writes to x0 land here
    std::uint32_t pc_ = 0;
    std::uint64_t instret_ = 0;
    std::uint32_t mstatus_ = 0x1800, mie_ = 0, mip_ = 0, mtvec_ = 0, mscratch_ = 0, mepc_ = 0, mcause_ = 0, mtval_ = 0;
    std::vector<code_region> regions_;
    code_region* last_data_ = nullptr;  // the region the last direct access hit
    std::vector<std::uint32_t> breakpoints_;
    std::uint64_t traps_ = 0, exceptions_ = 0;
    exception_record first_exception_;
    std::uint64_t minstret_offset_ = 0;  // minstret = instret_ + this
    bool mmio_stored_ = false;  // the last store went to the bus
    bus bus_;
};

}  // namespace trn3::mcu
