#include "trn3/numerics/reduce.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "trn3/numerics/float_format.h"

namespace trn3::numerics {
namespace {

float combine(reduce_op op, float a, float b) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<float>::quiet_NaN();
    switch (op) {
    case reduce_op::sum: return a + b;
    case reduce_op::max: return (a > b || (a == b && !std::signbit(a))) ? a : b;
    case reduce_op::min: return (a < b || (a == b && std::signbit(a))) ? a : b;
    case reduce_op::prod: return a * b;
    }
    return a;
}

std::int32_t combine(reduce_op op, std::int32_t a, std::int32_t b) {
    switch (op) {
    case reduce_op::sum:
        return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b));
    case reduce_op::max: return a > b ? a : b;
    case reduce_op::min: return a < b ? a : b;
    case reduce_op::prod:
        return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) * static_cast<std::uint32_t>(b));
    }
    return a;
}

}  // namespace

format format_of(reduce_type t) {
    switch (t) {
    case reduce_type::bf16: return format::bf16;
    case reduce_type::fp16: return format::fp16;
    case reduce_type::e4m3fn: return format::e4m3fn;
    case reduce_type::e5m2: return format::e5m2;
    default: return format::fp32;
    }
}

unsigned element_bytes(reduce_type t) {
    switch (t) {
    case reduce_type::fp32:
    case reduce_type::int32: return 4;
    case reduce_type::bf16:
    case reduce_type::fp16: return 2;
    case reduce_type::e4m3fn:
    case reduce_type::e5m2: return 1;
    }
    return 4;
}

const char* name(reduce_op op) {
    switch (op) {
    case reduce_op::sum: return "sum";
    case reduce_op::max: return "max";
    case reduce_op::min: return "min";
    case reduce_op::prod: return "prod";
    }
    return "?";
}

const char* name(reduce_type t) {
    switch (t) {
    case reduce_type::fp32: return "fp32";
    case reduce_type::bf16: return "bf16";
    case reduce_type::fp16: return "fp16";
    case reduce_type::e4m3fn: return "e4m3fn";
    case reduce_type::e5m2: return "e5m2";
    case reduce_type::int32: return "int32";
    }
    return "?";
}

std::optional<reduction> reduction_of(unsigned op_code, unsigned type_code) {
    if (op_code > static_cast<unsigned>(reduce_op::prod) || type_code > static_cast<unsigned>(reduce_type::int32))
        return std::nullopt;
    return reduction{static_cast<reduce_op>(op_code), static_cast<reduce_type>(type_code)};
}

bool reduce_into(const reduction& r, std::uint8_t* dst, const std::uint8_t* src, std::size_t bytes) {
    const unsigned es = element_bytes(r.type);
    if (bytes % es != 0) return false;
    for (std::size_t at = 0; at < bytes; at += es) {
        if (r.type == reduce_type::int32) {
            std::int32_t a, b;
            std::memcpy(&a, dst + at, 4);
            std::memcpy(&b, src + at, 4);
            const std::int32_t c = combine(r.op, a, b);
            std::memcpy(dst + at, &c, 4);
            continue;
        }
        std::uint32_t a = 0, b = 0;
        std::memcpy(&a, dst + at, es);
        std::memcpy(&b, src + at, es);
        const format f = format_of(r.type);
        const float c = combine(r.op, decode(a, f), decode(b, f));
        const std::uint32_t code = encode(c, f);
        std::memcpy(dst + at, &code, es);
    }
    return true;
}

}  // namespace trn3::numerics
