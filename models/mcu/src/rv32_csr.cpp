// The RV32 hart's machine-mode CSRs, traps and interrupt entry.
#include "trn3/mcu/rv32_hart.h"

#include "rv32_ops.h"

namespace trn3::mcu {

const char* cause_name(std::uint32_t cause) {
    switch (cause) {
    case cause_fetch_fault: return "instruction access fault";
    case cause_illegal: return "illegal instruction";
    case cause_breakpoint: return "breakpoint";
    case cause_load_misaligned: return "load address misaligned";
    case cause_load_fault: return "load access fault";
    case cause_store_misaligned: return "store address misaligned";
    case cause_store_fault: return "store access fault";
    case cause_ecall_m: return "environment call";
    default: return "exception";
    }
}

bool rv32_hart::csr_read(std::uint16_t n, std::uint32_t& v) const {
    const std::uint64_t cycles = instret_ + cycle_offset;
    switch (n) {
    case csr_mstatus: v = mstatus_; return true;
    case csr_misa: v = misa_value; return true;
    case csr_mie: v = mie_; return true;
    case csr_mip: v = mip_; return true;
    case csr_mtvec: v = mtvec_; return true;
    case csr_mscratch: v = mscratch_; return true;
    case csr_mepc: v = mepc_; return true;
    case csr_mcause: v = mcause_; return true;
    case csr_mtval: v = mtval_; return true;
    case csr_mcycle:
    case csr_cycle: v = static_cast<std::uint32_t>(cycles); return true;
    case csr_mcycleh:
    case csr_cycleh: v = static_cast<std::uint32_t>(cycles >> 32); return true;
    case csr_minstret:
    case csr_instret: v = static_cast<std::uint32_t>(instret_ + minstret_offset_); return true;
    case csr_minstreth:
    case csr_instreth: v = static_cast<std::uint32_t>((instret_ + minstret_offset_) >> 32); return true;
    case csr_time: v = bus_.time ? static_cast<std::uint32_t>(bus_.time()) : 0; return true;
    case csr_timeh: v = bus_.time ? static_cast<std::uint32_t>(bus_.time() >> 32) : 0; return true;
    case csr_mvendorid:
    case csr_marchid:
    case csr_mimpid:
    case csr_mhartid: v = 0; return true;
    default: return false;
    }
}

std::uint32_t rv32_hart::csr(std::uint16_t number) const {
    std::uint32_t v = 0;
    csr_read(number, v);
    return v;
}

bool rv32_hart::csr_write(std::uint16_t n, std::uint32_t v) {
    if ((n >> 10) == 3) return false;  // read-only CSR
    switch (n) {
    case csr_mstatus: mstatus_ = (v & (mstatus_mie | mstatus_mpie)) | mstatus_mpp; return true;
    case csr_misa: return true;  // WARL: fixed
    case csr_mie: mie_ = v & mie_mask; return true;
    case csr_mip: return true;  // the pending bits follow the platform's lines
    case csr_mtvec: mtvec_ = (v & ~3u) | (v & 1u); return true;  // modes direct and vectored
    case csr_mscratch: mscratch_ = v; return true;
    case csr_mepc: mepc_ = v & ~1u; return true;
    case csr_mcause: mcause_ = v; return true;
    case csr_mtval: mtval_ = v; return true;
    case csr_mcycle: cycle_offset = ((instret_ + cycle_offset) & ~0xffffffffull) + v - instret_; return true;
    case csr_mcycleh:
        cycle_offset = ((static_cast<std::uint64_t>(v) << 32) | ((instret_ + cycle_offset) & 0xffffffffull)) - instret_;
        return true;
    // Software sees minstret through an offset: the count the platform times
    // the hart by (instret_) never goes back.
    case csr_minstret: {
        const std::uint64_t seen = instret_ + minstret_offset_;
        minstret_offset_ = ((seen & ~0xffffffffull) | v) - instret_;
        return true;
    }
    case csr_minstreth: {
        const std::uint64_t seen = instret_ + minstret_offset_;
        minstret_offset_ = ((seen & 0xffffffffull) | (static_cast<std::uint64_t>(v) << 32)) - instret_;
        return true;
    }
    default: return false;
    }
}

void rv32_hart::trap(std::uint32_t cause, std::uint32_t tval) {
    ++traps_;
    if (!(cause & 0x80000000u) && exceptions_++ == 0) first_exception_ = {cause, pc_, tval};
    mepc_ = pc_;
    mcause_ = cause;
    mtval_ = tval;
    mstatus_ = (mstatus_ & mstatus_mie ? mstatus_mpie : 0) | mstatus_mpp;  // MPIE = MIE, MIE = 0
    const bool vectored = (mtvec_ & 1) && (cause & 0x80000000u);
    pc_ = (mtvec_ & ~3u) + (vectored ? 4 * (cause & 0x7fffffffu) : 0);
}

bool rv32_hart::take_interrupt() {
    const std::uint32_t ready = mip_ & mie_;
    if (!ready || !(mstatus_ & mstatus_mie)) return false;
    // Priority: external, software, timer (privileged spec 3.1.9).
    const std::uint32_t irq = ready & (1u << irq_external)   ? irq_external
                              : ready & (1u << irq_software) ? irq_software
                                                             : irq_timer;
    trap(0x80000000u | irq, 0);
    return true;
}

}  // namespace trn3::mcu
