// The RV32IMC + Zicsr decoder: each instruction to one internal operation
// with its operands (compressed ones to their 32-bit equivalents).
#include "trn3/mcu/rv32_hart.h"

#include "rv32_ops.h"

namespace trn3::mcu {

void rv32_hart::decode(decoded& d, std::uint32_t insn) const {
    d = decoded{};
    if ((insn & 3) != 3) return decode_compressed(d, static_cast<std::uint16_t>(insn));
    d.len = 4;
    const std::uint32_t opcode = bits(insn, 6, 0), f3 = bits(insn, 14, 12), f7 = bits(insn, 31, 25);
    const std::uint8_t rd = static_cast<std::uint8_t>(bits(insn, 11, 7));
    d.rd = rd ? rd : 32;
    d.rs1 = static_cast<std::uint8_t>(bits(insn, 19, 15));
    d.rs2 = static_cast<std::uint8_t>(bits(insn, 24, 20));
    const std::int32_t imm_i = sext(bits(insn, 31, 20), 12);
    d.op = op_illegal;
    switch (opcode) {
    case 0x37:
        d.op = op_lui;
        d.imm = static_cast<std::int32_t>(insn & 0xfffff000u);
        break;
    case 0x17:
        d.op = op_auipc;
        d.imm = static_cast<std::int32_t>(insn & 0xfffff000u);
        break;
    case 0x6f:
        d.op = op_jal;
        d.imm = sext((bits(insn, 31, 31) << 20) | (bits(insn, 19, 12) << 12) | (bits(insn, 20, 20) << 11) |
                         (bits(insn, 30, 21) << 1),
                     21);
        break;
    case 0x67:
        if (f3 == 0) {
            d.op = op_jalr;
            d.imm = imm_i;
        }
        break;
    case 0x63: {
        static const std::uint16_t ops[8] = {op_beq, op_bne, op_illegal, op_illegal, op_blt, op_bge, op_bltu, op_bgeu};
        d.op = ops[f3];
        d.imm = sext((bits(insn, 31, 31) << 12) | (bits(insn, 7, 7) << 11) | (bits(insn, 30, 25) << 5) |
                         (bits(insn, 11, 8) << 1),
                     13);
        break;
    }
    case 0x03: {
        static const std::uint16_t ops[8] = {op_lb, op_lh, op_lw, op_illegal, op_lbu, op_lhu, op_illegal, op_illegal};
        d.op = ops[f3];
        d.imm = imm_i;
        break;
    }
    case 0x23: {
        static const std::uint16_t ops[8] = {op_sb,      op_sh,      op_sw,      op_illegal,
                                             op_illegal, op_illegal, op_illegal, op_illegal};
        d.op = ops[f3];
        d.imm = sext((f7 << 5) | bits(insn, 11, 7), 12);
        break;
    }
    case 0x13:
        d.imm = imm_i;
        switch (f3) {
        case 0: d.op = op_addi; break;
        case 2: d.op = op_slti; break;
        case 3: d.op = op_sltiu; break;
        case 4: d.op = op_xori; break;
        case 6: d.op = op_ori; break;
        case 7: d.op = op_andi; break;
        case 1:
            if (f7 == 0) {
                d.op = op_slli;
                d.imm = static_cast<std::int32_t>(d.rs2);
            }
            break;
        case 5:
            if (f7 == 0) {
                d.op = op_srli;
                d.imm = static_cast<std::int32_t>(d.rs2);
            }
            if (f7 == 0x20) {
                d.op = op_srai;
                d.imm = static_cast<std::int32_t>(d.rs2);
            }
            break;
        }
        break;
    case 0x33:
        if (f7 == 0) {
            static const std::uint16_t ops[8] = {op_add, op_sll, op_slt, op_sltu, op_xor, op_srl, op_or, op_and};
            d.op = ops[f3];
        } else if (f7 == 0x20) {
            if (f3 == 0) d.op = op_sub;
            if (f3 == 5) d.op = op_sra;
        } else if (f7 == 1) {
            static const std::uint16_t ops[8] = {op_mul, op_mulh, op_mulhsu, op_mulhu,
                                                 op_div, op_divu, op_rem,    op_remu};
            d.op = ops[f3];
        }
        break;
    case 0x0f:
        if (f3 == 0 || f3 == 1) d.op = op_fence;  // fence, fence.i (decoded instructions follow stores already)
        break;
    case 0x73:
        if (f3 == 0) {
            if (insn == 0x00000073) d.op = op_ecall;
            else if (insn == 0x00100073) d.op = op_ebreak;
            else if (insn == 0x30200073) d.op = op_mret;
            else if (insn == 0x10500073) d.op = op_wfi;
        } else if (f3 != 4) {
            static const std::uint16_t ops[8] = {op_illegal, op_csrrw,  op_csrrs,  op_csrrc,
                                                 op_illegal, op_csrrwi, op_csrrsi, op_csrrci};
            d.op = ops[f3];
            d.imm = static_cast<std::int32_t>(bits(insn, 31, 20));  // CSR number
        }
        break;
    default: break;
    }
}

void rv32_hart::decode_compressed(decoded& d, std::uint16_t c) const {
    d.len = 2;
    d.op = op_illegal;
    const std::uint32_t q = c & 3, f3 = bits(c, 15, 13);
    const std::uint8_t r_hi = static_cast<std::uint8_t>(bits(c, 11, 7)),
                       r_lo = static_cast<std::uint8_t>(bits(c, 6, 2));
    const std::uint8_t rp_hi = static_cast<std::uint8_t>(bits(c, 9, 7) + 8),
                       rp_lo = static_cast<std::uint8_t>(bits(c, 4, 2) + 8);
    auto set = [&](std::uint16_t o, std::uint8_t rd, std::uint8_t rs1, std::uint8_t rs2, std::int32_t imm) {
        d.op = o;
        d.rd = rd ? rd : 32;
        d.rs1 = rs1;
        d.rs2 = rs2;
        d.imm = imm;
    };
    const std::int32_t imm6 = sext((bits(c, 12, 12) << 5) | bits(c, 6, 2), 6);
    const std::int32_t imm_j =
        sext((bits(c, 12, 12) << 11) | (bits(c, 11, 11) << 4) | (bits(c, 10, 9) << 8) | (bits(c, 8, 8) << 10) |
                 (bits(c, 7, 7) << 6) | (bits(c, 6, 6) << 7) | (bits(c, 5, 3) << 1) | (bits(c, 2, 2) << 5),
             12);
    const std::int32_t imm_b = sext((bits(c, 12, 12) << 8) | (bits(c, 11, 10) << 3) | (bits(c, 6, 5) << 6) |
                                        (bits(c, 4, 3) << 1) | (bits(c, 2, 2) << 5),
                                    9);
    const std::int32_t uimm_lw =
        static_cast<std::int32_t>((bits(c, 12, 10) << 3) | (bits(c, 6, 6) << 2) | (bits(c, 5, 5) << 6));
    if (c == 0) return;  // the all-zero halfword is illegal
    switch (q) {
    case 0:
        if (f3 == 0) {
            const std::uint32_t nzuimm =
                (bits(c, 12, 11) << 4) | (bits(c, 10, 7) << 6) | (bits(c, 6, 6) << 2) | (bits(c, 5, 5) << 3);
            if (nzuimm) set(op_addi, rp_lo, 2, 0, static_cast<std::int32_t>(nzuimm));  // c.addi4spn
        } else if (f3 == 2) {
            set(op_lw, rp_lo, rp_hi, 0, uimm_lw);  // c.lw
        } else if (f3 == 6) {
            set(op_sw, 0, rp_hi, rp_lo, uimm_lw);  // c.sw
            d.rd = 32;
        }
        break;
    case 1:
        switch (f3) {
        case 0: set(op_addi, r_hi, r_hi, 0, imm6); break;  // c.addi (c.nop)
        case 1: set(op_jal, 1, 0, 0, imm_j); break;  // c.jal
        case 2: set(op_addi, r_hi, 0, 0, imm6); break;  // c.li
        case 3:
            if (r_hi == 2) {  // c.addi16sp
                const std::int32_t nz = sext((bits(c, 12, 12) << 9) | (bits(c, 6, 6) << 4) | (bits(c, 5, 5) << 6) |
                                                 (bits(c, 4, 3) << 7) | (bits(c, 2, 2) << 5),
                                             10);
                if (nz) set(op_addi, 2, 2, 0, nz);
            } else if (imm6) {  // c.lui
                set(op_lui, r_hi, 0, 0, static_cast<std::int32_t>(static_cast<std::uint32_t>(imm6) << 12));
            }
            break;
        case 4: {
            const std::uint32_t f2 = bits(c, 11, 10);
            if (f2 == 0 && !bits(c, 12, 12)) set(op_srli, rp_hi, rp_hi, 0, static_cast<std::int32_t>(bits(c, 6, 2)));
            else if (f2 == 1 && !bits(c, 12, 12))
                set(op_srai, rp_hi, rp_hi, 0, static_cast<std::int32_t>(bits(c, 6, 2)));
            else if (f2 == 2) set(op_andi, rp_hi, rp_hi, 0, imm6);
            else if (f2 == 3 && !bits(c, 12, 12)) {
                static const std::uint16_t ops[4] = {op_sub, op_xor, op_or, op_and};
                set(ops[bits(c, 6, 5)], rp_hi, rp_hi, rp_lo, 0);
            }
            break;
        }
        case 5: set(op_jal, 0, 0, 0, imm_j); break;  // c.j
        case 6:
            set(op_beq, 0, rp_hi, 0, imm_b);
            d.rd = 32;
            break;  // c.beqz
        case 7:
            set(op_bne, 0, rp_hi, 0, imm_b);
            d.rd = 32;
            break;  // c.bnez
        }
        break;
    case 2:
        switch (f3) {
        case 0:
            if (!bits(c, 12, 12)) set(op_slli, r_hi, r_hi, 0, static_cast<std::int32_t>(bits(c, 6, 2)));  // c.slli
            break;
        case 2:
            if (r_hi)  // c.lwsp
                set(op_lw, r_hi, 2, 0,
                    static_cast<std::int32_t>((bits(c, 12, 12) << 5) | (bits(c, 6, 4) << 2) | (bits(c, 3, 2) << 6)));
            break;
        case 4:
            if (!bits(c, 12, 12)) {
                if (r_lo == 0) {
                    if (r_hi) set(op_jalr, 0, r_hi, 0, 0);  // c.jr
                } else {
                    set(op_add, r_hi, 0, r_lo, 0);  // c.mv
                }
            } else {
                if (r_hi == 0 && r_lo == 0) set(op_ebreak, 0, 0, 0, 0);  // c.ebreak
                else if (r_lo == 0) set(op_jalr, 1, r_hi, 0, 0);  // c.jalr
                else set(op_add, r_hi, r_hi, r_lo, 0);  // c.add
            }
            break;
        case 6:  // c.swsp
            set(op_sw, 0, 2, r_lo, static_cast<std::int32_t>((bits(c, 12, 9) << 2) | (bits(c, 8, 7) << 6)));
            d.rd = 32;
            break;
        }
        break;
    }
}

}  // namespace trn3::mcu
