#include "trn3/mcu/rv32_hart.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

#include <fmt/format.h>

#include "rv32_ops.h"

namespace trn3::mcu {

rv32_hart::rv32_hart() { reset(0); }

void rv32_hart::reset(std::uint32_t pc) {
    x_.fill(0);
    pc_ = pc;
    instret_ = 0;
    cycle_offset = 0;
    minstret_offset_ = 0;
    step_over_breakpoint = false;
    mstatus_ = mstatus_mpp;  // machine mode only: MPP reads 3
    mie_ = mip_ = 0;
    mtvec_ = mscratch_ = mepc_ = mcause_ = mtval_ = 0;
    for (auto& r : regions_) {
        r.cache.clear();
        r.code_lo = ~0u;
        r.code_hi = 0;
    }
}

void rv32_hart::add_region(const region& r) {
    code_region cr;
    cr.mem = r;
    static_assert(std::is_trivially_copyable<decoded>::value && op_none == 0, "zero bytes are a never-decoded entry");
    cr.cache.entries = r.size / 2 + 1;  // + a sentinel: running off the end goes to the slow path
    cr.cache.store = std::make_unique<sparse_store>(fmt::format("decode cache at {:#x}", r.base),
                                                    cr.cache.entries * sizeof(decoded));
    regions_.push_back(std::move(cr));
    last_data_ = nullptr;  // the vector may have moved
}

rv32_hart::code_region* rv32_hart::region_of(std::uint32_t address) {
    for (auto& r : regions_)
        if (address - r.mem.base < r.mem.size) return &r;
    return nullptr;
}

void rv32_hart::set_pending(std::uint32_t bit, bool level) {
    if (level) mip_ |= 1u << bit;
    else mip_ &= ~(1u << bit);
}

void rv32_hart::set_breakpoint(std::uint32_t address, bool on) {
    auto it = std::find(breakpoints_.begin(), breakpoints_.end(), address);
    if (on && it == breakpoints_.end()) breakpoints_.push_back(address);
    if (!on && it != breakpoints_.end()) breakpoints_.erase(it);
}

// ---- memory -----------------------------------------------------------------

void rv32_hart::invalidate(std::uint32_t address, unsigned bytes) {
    code_region* r = region_of(address);
    if (!r) return;
    // The halfwords written, and the one before (a 32-bit instruction starting there).
    const std::uint32_t first = (address - r->mem.base) / 2, last = (address + bytes - 1 - r->mem.base) / 2;
    for (std::uint32_t h = first ? first - 1 : 0; h <= last && h + 1 < r->cache.size(); ++h) r->cache[h] = decoded{};
}

bool rv32_hart::load(std::uint32_t address, unsigned bytes, std::uint32_t& value) {
    for (auto& r : regions_)
        if (address - r.mem.base <= r.mem.size - bytes) {
            value = 0;
            std::memcpy(&value, r.mem.host + (address - r.mem.base), bytes);
            return true;
        }
    value = 0;
    return bus_.load && bus_.load(address, bytes, value);
}

bool rv32_hart::store(std::uint32_t address, unsigned bytes, std::uint32_t value) {
    for (auto& r : regions_)
        if (address - r.mem.base <= r.mem.size - bytes) {
            if (!r.mem.writable) return false;
            std::memcpy(r.mem.host + (address - r.mem.base), &value, bytes);
            // Drop decoded instructions the store overlaps (rarely any).
            const std::uint32_t off = address - r.mem.base;
            if (off + bytes + 2 > r.code_lo && off < r.code_hi) invalidate(address, bytes);
            return true;
        }
    mmio_stored_ = true;
    return bus_.store && bus_.store(address, bytes, value);
}

inline std::uint8_t* rv32_hart::direct(std::uint32_t address, unsigned bytes, bool write) {
    code_region* r = last_data_;
    if (!r || address - r->mem.base > r->mem.size - bytes) {
        r = nullptr;
        for (auto& c : regions_)
            if (address - c.mem.base <= c.mem.size - bytes) r = &c;
        if (!r) return nullptr;
        last_data_ = r;
    }
    const std::uint32_t off = address - r->mem.base;
    // Stores into ROM, or near decoded code, take the slow path.
    if (write && (!r->mem.writable || (off + bytes + 2 > r->code_lo && off < r->code_hi))) return nullptr;
    return r->mem.host + off;
}

bool rv32_hart::fetch(std::uint32_t pc, std::uint32_t& insn) {
    code_region* r = region_of(pc);
    if (!r || pc - r->mem.base > r->mem.size - 2) return false;
    std::uint16_t lo;
    std::memcpy(&lo, r->mem.host + (pc - r->mem.base), 2);
    insn = lo;
    if ((lo & 3) == 3) {
        if (pc - r->mem.base > r->mem.size - 4) return false;
        std::uint16_t hi;
        std::memcpy(&hi, r->mem.host + (pc - r->mem.base) + 2, 2);
        insn |= static_cast<std::uint32_t>(hi) << 16;
    }
    return true;
}

bool rv32_hart::debug_read(std::uint32_t address, std::uint8_t& value) {
    std::uint32_t v;
    if (!load(address, 1, v)) return false;
    value = static_cast<std::uint8_t>(v);
    return true;
}

bool rv32_hart::debug_write(std::uint32_t address, std::uint8_t value) {
    code_region* r = region_of(address);
    if (r) {  // a debugger may patch ROM too (software breakpoints)
        r->mem.host[address - r->mem.base] = value;
        invalidate(address, 1);
        return true;
    }
    return store(address, 1, value);
}

// ---- the interpreter ----------------------------------------------------------

// The interpreter is direct-threaded: every operation's handler ends with its
// own fetch and indirect jump to the next handler (GCC's labels as values),
// so the branch predictor learns each handler's successors; one shared
// switch would funnel every instruction through a single indirect branch.
// Region changes, decoding and breakpoints leave the fast path for `slow`.
rv32_hart::stop rv32_hart::run(std::uint64_t budget) {
    take_interrupt();
    // The hot state lives in locals (a register write through x could alias
    // a member); flush() writes it back before anything that reads the
    // members (traps, CSRs, returns), reload() picks it up after.
    std::uint32_t pc = pc_;
    // done: steps taken; those past `accounted` are retired instructions not
    // yet added to instret_ (traps and the instructions that update the
    // members themselves are accounted for as they happen).
    std::uint64_t done = 0, accounted = 0, limit = budget;
    code_region* cr = nullptr;
    std::uint32_t base = 1, size = 0;  // the current code region (none yet)
    decoded* cache = nullptr;
    std::uint32_t* const x = x_.data();
    const bool watch = !breakpoints_.empty();
    decoded* d = nullptr;
    std::uint32_t next = 0;
// Operands, read where a handler needs them (not for every instruction).
#define a (x[d->rs1])
#define b (x[d->rs2])
#define IMM (static_cast<std::uint32_t>(d->imm))
    auto flush = [&] {
        pc_ = pc;
        instret_ += done - accounted;
        accounted = done;
    };
    auto reload = [&] { pc = pc_; };
    auto fault = [&](std::uint32_t cause, std::uint32_t tval) {
        flush();
        trap(cause, tval);
        reload();
    };
    static const void* const handlers[] = {
        &&h_illegal, &&h_lui,    &&h_auipc, &&h_jal, &&h_jalr, &&h_beq,  &&h_bne,  &&h_blt,     &&h_bge,   &&h_bltu,
        &&h_bgeu,    &&h_lb,     &&h_lh,    &&h_lw,  &&h_lbu,  &&h_lhu,  &&h_sb,   &&h_sh,      &&h_sw,    &&h_addi,
        &&h_slti,    &&h_sltiu,  &&h_xori,  &&h_ori, &&h_andi, &&h_slli, &&h_srli, &&h_srai,    &&h_add,   &&h_sub,
        &&h_sll,     &&h_slt,    &&h_sltu,  &&h_xor, &&h_srl,  &&h_sra,  &&h_or,   &&h_and,     &&h_fence, &&h_ecall,
        &&h_ebreak,  &&h_mret,   &&h_wfi,   &&h_csr, &&h_csr,  &&h_csr,  &&h_csr,  &&h_csr,     &&h_csr,   &&h_mul,
        &&h_mulh,    &&h_mulhsu, &&h_mulhu, &&h_div, &&h_divu, &&h_rem,  &&h_remu, &&h_illegal,
    };
    static_assert(sizeof handlers / sizeof handlers[0] == op_illegal + 1, "one handler per operation");

// Retire the current instruction and go to the next one's handler.
// Straight-line code cannot leave its region except into the sentinel.
#define NEXT_SEQ                        \
    do {                                \
        pc = next;                      \
        if (++done == limit) goto slow; \
        d = &cache[(pc - base) >> 1];   \
        if (!d->handler) goto slow;     \
        next = pc + d->len;             \
        goto * d->handler;              \
    } while (0)
// After a jump or branch: the target may lie in another region.
#define NEXT                       \
    do {                           \
        if (next - base >= size) { \
            pc = next;             \
            ++done;                \
            goto slow;             \
        }                          \
        NEXT_SEQ;                  \
    } while (0)
// After a trap or a change of state through the members: on to the next.
#define RESUME              \
    do {                    \
        accounted = ++done; \
        goto slow;          \
    } while (0)

slow:
    if (done >= budget) goto out;
    limit = watch ? done + 1 : budget;  // with breakpoints set, every instruction comes through here
    if (pc - base >= size) {
        cr = region_of(pc);
        if (!cr) {
            base = 1;
            size = 0;
            fault(cause_fetch_fault, pc);
            RESUME;
        }
        base = cr->mem.base;
        size = cr->mem.size;
        cache = cr->cache.data();
    }
    d = &cache[(pc - base) >> 1];
    if (d->op == op_none) {
        std::uint32_t insn;
        if (!fetch(pc, insn)) {
            fault(cause_fetch_fault, pc);
            RESUME;
        }
        decode(*d, insn);
        d->handler = handlers[d->op];
        const std::uint32_t off = pc - base;
        cr->code_lo = std::min(cr->code_lo, off);
        cr->code_hi = std::max(cr->code_hi, off + d->len);
    }
    if (watch && std::find(breakpoints_.begin(), breakpoints_.end(), pc) != breakpoints_.end()) {
        if (step_over_breakpoint && done == 0) {
            step_over_breakpoint = false;  // the debugger resumes from this one
        } else {
            flush();
            return stop::breakpoint;
        }
    }
    step_over_breakpoint = false;
    next = pc + d->len;
    goto * d->handler;

h_lui:
    x[d->rd] = IMM;
    NEXT_SEQ;
h_auipc:
    x[d->rd] = pc + IMM;
    NEXT_SEQ;
h_jal:
    x[d->rd] = next;
    next = pc + IMM;
    NEXT;
h_jalr : {
    const std::uint32_t target = (a + IMM) & ~1u;
    x[d->rd] = next;
    next = target;
}
    NEXT;
h_beq:
    if (a == b) next = pc + IMM;
    NEXT;
h_bne:
    if (a != b) next = pc + IMM;
    NEXT;
h_blt:
    if (static_cast<std::int32_t>(a) < static_cast<std::int32_t>(b)) next = pc + IMM;
    NEXT;
h_bge:
    if (static_cast<std::int32_t>(a) >= static_cast<std::int32_t>(b)) next = pc + IMM;
    NEXT;
h_bltu:
    if (a < b) next = pc + IMM;
    NEXT;
h_bgeu:
    if (a >= b) next = pc + IMM;
    NEXT;
h_lw : {
    const std::uint32_t addr = a + IMM;
    if (addr & 3) {
        fault(cause_load_misaligned, addr);
        RESUME;
    }
    std::uint32_t v;
    if (const std::uint8_t* p = direct(addr, 4, false)) {
        std::memcpy(&v, p, 4);
    } else {
        flush();  // a device may read the time (instret)
        if (!load(addr, 4, v)) {
            fault(cause_load_fault, addr);
            RESUME;
        }
    }
    x[d->rd] = v;
    NEXT_SEQ;
}
h_lb:
h_lh:
h_lbu:
h_lhu : {
    const unsigned sz = (d->op == op_lh || d->op == op_lhu) ? 2 : 1;
    const std::uint32_t addr = a + IMM;
    std::uint32_t v;
    if (addr & (sz - 1)) {
        fault(cause_load_misaligned, addr);
        RESUME;
    }
    if (const std::uint8_t* p = direct(addr, sz, false)) {
        v = 0;
        std::memcpy(&v, p, sz);
    } else {
        flush();  // a device may read the time (instret)
        if (!load(addr, sz, v)) {
            fault(cause_load_fault, addr);
            RESUME;
        }
    }
    if (d->op == op_lb) v = static_cast<std::uint32_t>(sext(v & 0xff, 8));
    if (d->op == op_lh) v = static_cast<std::uint32_t>(sext(v & 0xffff, 16));
    x[d->rd] = v;
    NEXT_SEQ;
}
h_sw : {
    const std::uint32_t addr = a + IMM;
    if (addr & 3) {
        fault(cause_store_misaligned, addr);
        RESUME;
    }
    if (std::uint8_t* p = direct(addr, 4, true)) {
        std::memcpy(p, &b, 4);
        NEXT_SEQ;
    }
    goto store_slow;
}
h_sb:
h_sh:
store_slow : {
    const unsigned sz = d->op == op_sw ? 4 : d->op == op_sh ? 2 : 1;
    const std::uint32_t addr = a + IMM;
    if (addr & (sz - 1)) {
        fault(cause_store_misaligned, addr);
        RESUME;
    }
    flush();  // a store may reach a device that reads the time (instret)
    if (!store(addr, sz, sz == 4 ? b : b & ((1u << (8 * sz)) - 1))) {
        trap(cause_store_fault, addr);
        reload();
        RESUME;
    }
    if (mmio_stored_) {  // a device register may have raised an interrupt
        mmio_stored_ = false;
        pc_ = next;
        ++instret_;
        take_interrupt();
        reload();
        RESUME;
    }
    NEXT;
}
h_addi:
    x[d->rd] = a + IMM;
    NEXT_SEQ;
h_slti:
    x[d->rd] = static_cast<std::int32_t>(a) < d->imm;
    NEXT_SEQ;
h_sltiu:
    x[d->rd] = a < IMM;
    NEXT_SEQ;
h_xori:
    x[d->rd] = a ^ IMM;
    NEXT_SEQ;
h_ori:
    x[d->rd] = a | IMM;
    NEXT_SEQ;
h_andi:
    x[d->rd] = a & IMM;
    NEXT_SEQ;
h_slli:
    x[d->rd] = a << IMM;
    NEXT_SEQ;
h_srli:
    x[d->rd] = a >> IMM;
    NEXT_SEQ;
h_srai:
    x[d->rd] = static_cast<std::uint32_t>(static_cast<std::int32_t>(a) >> IMM);
    NEXT_SEQ;
h_add:
    x[d->rd] = a + b;
    NEXT_SEQ;
h_sub:
    x[d->rd] = a - b;
    NEXT_SEQ;
h_sll:
    x[d->rd] = a << (b & 31);
    NEXT_SEQ;
h_slt:
    x[d->rd] = static_cast<std::int32_t>(a) < static_cast<std::int32_t>(b);
    NEXT_SEQ;
h_sltu:
    x[d->rd] = a < b;
    NEXT_SEQ;
h_xor:
    x[d->rd] = a ^ b;
    NEXT_SEQ;
h_srl:
    x[d->rd] = a >> (b & 31);
    NEXT_SEQ;
h_sra:
    x[d->rd] = static_cast<std::uint32_t>(static_cast<std::int32_t>(a) >> (b & 31));
    NEXT_SEQ;
h_or:
    x[d->rd] = a | b;
    NEXT_SEQ;
h_and:
    x[d->rd] = a & b;
    NEXT_SEQ;
h_mul:
    x[d->rd] = a * b;
    NEXT_SEQ;
h_mulh:
    x[d->rd] = static_cast<std::uint32_t>(
        (static_cast<std::int64_t>(static_cast<std::int32_t>(a)) * static_cast<std::int32_t>(b)) >> 32);
    NEXT_SEQ;
h_mulhsu:
    x[d->rd] =
        static_cast<std::uint32_t>(static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int32_t>(a)) *
                                                              static_cast<std::int64_t>(b)) >>
                                   32);
    NEXT_SEQ;
h_mulhu:
    x[d->rd] = static_cast<std::uint32_t>((static_cast<std::uint64_t>(a) * b) >> 32);
    NEXT_SEQ;
h_div : {
    const auto sa = static_cast<std::int32_t>(a), sb = static_cast<std::int32_t>(b);
    x[d->rd] = b == 0                                                         ? 0xffffffffu
               : (sa == std::numeric_limits<std::int32_t>::min() && sb == -1) ? a
                                                                              : static_cast<std::uint32_t>(sa / sb);
    NEXT_SEQ;
}
h_divu:
    x[d->rd] = b == 0 ? 0xffffffffu : a / b;
    NEXT_SEQ;
h_rem : {
    const auto sa = static_cast<std::int32_t>(a), sb = static_cast<std::int32_t>(b);
    x[d->rd] = b == 0                                                         ? a
               : (sa == std::numeric_limits<std::int32_t>::min() && sb == -1) ? 0
                                                                              : static_cast<std::uint32_t>(sa % sb);
    NEXT_SEQ;
}
h_remu:
    x[d->rd] = b == 0 ? a : a % b;
    NEXT_SEQ;
h_fence:
    NEXT_SEQ;
h_ecall:
    fault(cause_ecall_m, 0);
    RESUME;
h_ebreak:
    if (debugger_attached) {
        flush();
        return stop::ebreak_to_debugger;
    }
    fault(cause_breakpoint, pc);
    RESUME;
h_mret:
    flush();
    mstatus_ = (mstatus_ & mstatus_mpie ? mstatus_mie : 0) | mstatus_mpie | mstatus_mpp;
    pc_ = mepc_;
    ++instret_;
    take_interrupt();
    reload();
    RESUME;
h_wfi:
    flush();
    pc_ = next;
    ++instret_;
    if (!interrupt_waiting()) return stop::wfi;
    take_interrupt();
    reload();
    RESUME;
h_csr : {
    flush();
    const auto n = static_cast<std::uint16_t>(d->imm);
    const bool immediate = d->op >= op_csrrwi;
    const std::uint32_t src = immediate ? d->rs1 : a;
    const bool is_write = d->op == op_csrrw || d->op == op_csrrwi || d->rs1 != 0;
    std::uint32_t old = 0;
    const bool reads = !((d->op == op_csrrw || d->op == op_csrrwi) && d->rd == 32);
    if ((reads || is_write) && !csr_read(n, old)) {
        trap(cause_illegal, 0);
        reload();
        RESUME;
    }
    if (is_write) {
        std::uint32_t v = src;
        if (d->op == op_csrrs || d->op == op_csrrsi) v = old | src;
        if (d->op == op_csrrc || d->op == op_csrrci) v = old & ~src;
        if (!csr_write(n, v)) {
            trap(cause_illegal, 0);
            reload();
            RESUME;
        }
    }
    // The instruction retires. A write to a counter replaces the increment
    // this instruction would have made to it (the privileged spec's rule, as
    // its reference models do): the next instruction reads what was written.
    ++instret_;
    if (is_write) {
        if (n == csr_minstret || n == csr_minstreth) --minstret_offset_;
        if (n == csr_mcycle || n == csr_mcycleh) --cycle_offset;
    }
    x[d->rd] = old;
    pc_ = next;
    take_interrupt();  // mstatus.MIE or mie may have just enabled one
    reload();
    RESUME;
}
h_illegal:
    fault(cause_illegal, 0);
    RESUME;

out:
    flush();
    return stop::budget;
#undef NEXT
#undef NEXT_SEQ
#undef a
#undef b
#undef IMM
#undef RESUME
}

}  // namespace trn3::mcu
