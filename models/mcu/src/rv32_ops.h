// The RV32 hart's internal operations, shared by its decoder
// (rv32_decode.cpp) and its execute loop (rv32_hart.cpp), and the bit
// helpers both use.
#pragma once

#include <cstdint>

#include "trn3/mcu/rv32_hart.h"

namespace trn3::mcu {

// Internal operations: every RV32IMC + Zicsr instruction decodes to one of
// these (compressed ones to their 32-bit equivalents).
enum op : std::uint16_t {
    op_none = 0,
    op_lui,
    op_auipc,
    op_jal,
    op_jalr,
    op_beq,
    op_bne,
    op_blt,
    op_bge,
    op_bltu,
    op_bgeu,
    op_lb,
    op_lh,
    op_lw,
    op_lbu,
    op_lhu,
    op_sb,
    op_sh,
    op_sw,
    op_addi,
    op_slti,
    op_sltiu,
    op_xori,
    op_ori,
    op_andi,
    op_slli,
    op_srli,
    op_srai,
    op_add,
    op_sub,
    op_sll,
    op_slt,
    op_sltu,
    op_xor,
    op_srl,
    op_sra,
    op_or,
    op_and,
    op_fence,
    op_ecall,
    op_ebreak,
    op_mret,
    op_wfi,
    op_csrrw,
    op_csrrs,
    op_csrrc,
    op_csrrwi,
    op_csrrsi,
    op_csrrci,
    op_mul,
    op_mulh,
    op_mulhsu,
    op_mulhu,
    op_div,
    op_divu,
    op_rem,
    op_remu,
    op_illegal,
};

// Machine-mode CSR fields this hart implements.
inline constexpr std::uint32_t mstatus_mie = 1u << 3, mstatus_mpie = 1u << 7, mstatus_mpp = 3u << 11;
inline constexpr std::uint32_t misa_value = (1u << 30) | (1u << 8) | (1u << 12) | (1u << 2);  // RV32 I M C
inline constexpr std::uint32_t mie_mask = (1u << irq_software) | (1u << irq_timer) | (1u << irq_external);

inline std::uint32_t bits(std::uint32_t v, unsigned hi, unsigned lo) { return (v >> lo) & ((1u << (hi - lo + 1)) - 1); }
inline std::int32_t sext(std::uint32_t v, unsigned width) {
    const std::uint32_t m = 1u << (width - 1);
    return static_cast<std::int32_t>((v ^ m) - m);
}

}  // namespace trn3::mcu
