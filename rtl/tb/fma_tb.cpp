// Standalone check of the PE's arithmetic: trn3_fma_unit (verilated) against
// std::fma on random and special operand triples. NaN results must be the one
// canonical NaN (docs/numerics.md rule 24).
//
//   rtl_fma_tb [count] [seed]
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "Vtrn3_fma_unit.h"
#include "fp32_bits.h"
#include "verilated.h"

using namespace trn3::rtl_tb;

namespace {
std::uint32_t expected(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
    return fma_bits(value(a), value(b), value(c));
}
}  // namespace

int main(int argc, char** argv) {
    const unsigned long count = argc > 1 ? std::strtoul(argv[1], nullptr, 0) : 2'000'000;
    const unsigned seed = argc > 2 ? static_cast<unsigned>(std::strtoul(argv[2], nullptr, 0)) : 1;
    VerilatedContext context;
    Vtrn3_fma_unit fma{&context};
    std::mt19937 rng(seed);
    // Operands drawn to hit every path: random bits; bf16-like values (low
    // mantissa bits clear) over the full exponent range; subnormals; values
    // near each other (cancellation); specials.
    const std::uint32_t specials[] = {0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001,
                                      0x00000001, 0x80000001, 0x007fffff, 0x00800000, 0x7f7fffff, 0xff7fffff,
                                      0x3f800000, 0xbf800000, 0x33800000, 0x4b800000};
    auto pick = [&](unsigned kind) -> std::uint32_t {
        switch (kind % 6) {
        case 0: return rng();
        case 1: return rng() & 0xffff0000u;  // bf16
        case 2: return (rng() & 0x807fffffu);  // subnormal or zero
        case 3: return specials[rng() % (sizeof specials / sizeof specials[0])];
        case 4: return (rng() & 0x80ffffffu) | ((120u + rng() % 16) << 23);  // near 1.0
        default: return (rng() & 0xffff0000u) | ((rng() % 20) << 23);  // tiny bf16
        }
    };
    unsigned long failures = 0;
    for (unsigned long i = 0; i < count; ++i) {
        std::uint32_t a = pick(rng()), b = pick(rng()), c = pick(rng());
        if (i % 4 == 3) {  // c close to -a*b: heavy cancellation
            const float p = value(a) * value(b);
            c = bits(-p) ^ (rng() & 0x7u);
        }
        fma.a = a;
        fma.b = b;
        fma.c = c;
        fma.eval();
        const std::uint32_t want = expected(a, b, c);
        if (fma.r != want) {
            if (++failures <= 10)
                std::printf("mismatch: fma(%08x, %08x, %08x) = %08x, want %08x\n", a, b, c, fma.r, want);
        }
    }
    std::printf("%lu operand triples, %lu mismatches\n", count, failures);
    return failures ? 1 : 0;
}
