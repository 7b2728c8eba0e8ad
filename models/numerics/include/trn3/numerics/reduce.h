// Element-wise reductions of one buffer into another, as the chips' DMA
// engines do them at the destination ("near-memory" read-add-write): the
// collectives' reduce steps. The rules, format by format:
//
//   fp32            IEEE single: sum and prod round to nearest even; max/min of two
//                   numbers is the larger/smaller (-0 < +0); a NaN in
//                   either operand gives the canonical quiet NaN.
//   bf16, fp16,     both operands decoded exactly to fp32, combined as
//   e4m3fn, e5m2    fp32 above, the result encoded back to the format with
//                   round to nearest even, no saturation (e4m3fn overflows
//                   to NaN, the others to infinity). A sum is rounded twice
//                   (fp32, then the format); it is exact whenever the exact
//                   sum fits the format, as the collectives' tests arrange.
//   int32           two's complement: sum and prod wrap, max/min signed.
//
// avg is not a reduction here: the collectives sum, then multiply by 1/n
// rounded to the type (a prod with a buffer of that constant).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "trn3/numerics/float_format.h"

namespace trn3::numerics {

enum class reduce_op : std::uint8_t { sum = 0, max = 1, min = 2, prod = 3 };
enum class reduce_type : std::uint8_t { fp32 = 0, bf16 = 1, fp16 = 2, e4m3fn = 3, e5m2 = 4, int32 = 5 };

struct reduction {
    reduce_op op = reduce_op::sum;
    reduce_type type = reduce_type::fp32;
};

unsigned element_bytes(reduce_type t);
// The float format of a floating reduce type (int32 has none: fp32 returned).
format format_of(reduce_type t);
const char* name(reduce_op op);
const char* name(reduce_type t);
// From the codes the programming model uses (spec/device.h TRN3_REDUCE_*):
// nothing for a code that names no op or type.
std::optional<reduction> reduction_of(unsigned op_code, unsigned type_code);

// dst[i] = dst[i] op src[i] over `bytes` (little-endian elements); false,
// touching nothing, when `bytes` is not a whole number of elements.
bool reduce_into(const reduction& r, std::uint8_t* dst, const std::uint8_t* src, std::size_t bytes);

}  // namespace trn3::numerics
