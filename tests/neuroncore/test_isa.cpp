#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "trn3/kernels/builder.h"
#include "trn3/spec/isa.h"

using namespace trn3;
using namespace trn3::kernels;

namespace {
bool same(const isa::instruction& a, const isa::instruction& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

program every_kind() {
    program p;
    auto& t = p.on(isa::engine::tensor);
    t.matmul(psum(dtype::fp32, 0, 128, 2048, 512), sbuf(dtype::bf16, 0, 128, 0, 128),
             sbuf(dtype::bf16, 0, 128, 1024, 512), true)
        .wait(0, 2)
        .signal(2, 1)
        .stochastic();
    t.transpose(sbuf(dtype::fp32, 0, 32, 0, 64), sbuf(dtype::fp32, 0, 64, 512, 32));
    t.matmul_mx(psum(dtype::bf16, 0, 128, 0, 512), sbuf(dtype::e2m1, 0, 128, 0, 512),
                sbuf(dtype::e5m2, 0, 128, 4096, 2048), 100000, 101000, true);
    t.matmul(psum(dtype::fp32, 0, 64, 0, 256), sbuf(dtype::bf16, 0, 32, 0, 64), sbuf(dtype::bf16, 0, 32, 1024, 1024))
        .sparse(isa::sparsity::s4_16, 70000);
    t.set_reg(3, 77).add_reg(3, 0xffffffff).branch_lt(3, 100, 1).halt();
    auto& v = p.on(isa::engine::vector);
    v.tensor_tensor(sbuf(dtype::bf16, 64, 64, 0, 16), sbuf(dtype::bf16, 64, 64, 64, 16),
                    sbuf(dtype::fp32, 64, 64, 128, 16), isa::alu::max);
    v.tensor_scalar(with_base_reg(sbuf(dtype::e4m3fn, 0, 32, 8, 4), 7), sbuf(dtype::e5m2, 32, 32, 0, 4),
                    isa::alu::subtract, -0.0f);
    v.tensor_reduce(sbuf(dtype::fp32, 0, 1, 0, 1),
                    with_dims(sbuf(dtype::fp32, 0, 1, 0, 1), {{64, 4}, {1, 16}, {-1, 2}}), isa::alu::add);
    v.memset(sbuf(dtype::int32, 0, 2, 0, 8), 1.5e-7f).nop().wait(9, 123456);
    p.on(isa::engine::scalar)
        .activation(sbuf(dtype::fp16, 0, 8, 0, 8), psum(dtype::fp32, 0, 8, 0, 8), isa::function::gelu, 0.5f, -3.25f);
    p.on(isa::engine::gpsimd).iota(sbuf(dtype::int32, 0, 128, 0, 128), 5, 1.0f, 128.0f).sem_increment(200, 3);
    p.on(isa::engine::gpsimd)
        .affine_select(sbuf(dtype::fp32, 0, 64, 0, 64), sbuf(dtype::fp32, 0, 64, 256, 64), 1.0f, -1.0f, -3, -INFINITY);
    p.on(isa::engine::vector)
        .quantize_mx(sbuf(dtype::e2m1, 0, 16, 0, 64), sbuf(dtype::bf16, 0, 16, 64, 64), 9000, true);
    p.on(isa::engine::sync).dma(hbm(dtype::bf16, 0x123456789a, 128, 8192, 512), sbuf(dtype::bf16, 0, 128, 0, 512), 15);
    return p;
}
}  // namespace

TEST_CASE("every instruction kind survives disassemble then assemble, bit for bit") {
    program p = every_kind();
    unsigned n = 0;
    for (unsigned e = 0; e < isa::engine_count; ++e)
        for (const isa::instruction& i : p.on(static_cast<isa::engine>(e)).code()) {
            const std::string text = isa::disassemble(i);
            INFO(text);
            CHECK(same(isa::assemble(text), i));
            CHECK(isa::disassemble(isa::assemble(text)) == text);
            ++n;
        }
    CHECK(n == 19);
}

TEST_CASE("the text form names everything") {
    program p;
    p.on(isa::engine::tensor)
        .matmul(psum(dtype::fp32, 0, 128, 0, 512), sbuf(dtype::bf16, 0, 128, 0, 128),
                sbuf(dtype::bf16, 0, 128, 256, 512))
        .wait(1, 2)
        .signal(2, 1);
    CHECK(isa::disassemble(p.on(isa::engine::tensor).code()[0]) ==
          "matmul tensor wait=s1>=2 signal=s2+1 dst=psum:fp32:p0x128@0x0{1x512} src0=sbuf:bf16:p0x128@0x0{1x128} "
          "src1=sbuf:bf16:p0x128@0x100{1x512}");
}

TEST_CASE("random instructions round-trip through the text form") {
    std::mt19937 rng(1);
    program p = every_kind();
    std::vector<isa::instruction> pool;
    for (unsigned e = 0; e < isa::engine_count; ++e)
        for (const auto& i : p.on(static_cast<isa::engine>(e)).code()) pool.push_back(i);
    for (int trial = 0; trial < 2000; ++trial) {
        isa::instruction i = pool[rng() % pool.size()];
        // Fields that mean nothing without their semaphore stay zero (canonical form).
        if (i.wait_sem != isa::no_semaphore) i.wait_value = rng();
        if (i.signal_sem != isa::no_semaphore) i.signal_add = rng() & 0xffff;
        i.imm = rng();
        i.target = rng() & 0xfff;
        if (i.dst.partitions) i.dst.address = rng();
        float f;
        std::uint32_t u = rng() & 0x7f7fffff;
        std::memcpy(&f, &u, 4);
        i.scalar = f;
        INFO(isa::disassemble(i));
        INFO(isa::disassemble(isa::assemble(isa::disassemble(i))));
        REQUIRE(same(isa::assemble(isa::disassemble(i)), i));
    }
}

TEST_CASE("malformed text is refused with the reason") {
    CHECK_THROWS_WITH(isa::assemble("frobnicate tensor"), Catch::Contains("unknown opcode 'frobnicate'"));
    CHECK_THROWS_WITH(isa::assemble("matmul nowhere"), Catch::Contains("unknown engine"));
    CHECK_THROWS_WITH(isa::assemble("matmul tensor dst=dram:fp32:p0x1@0x0{1x1}"), Catch::Contains("unknown space"));
    CHECK_THROWS_WITH(isa::assemble("matmul tensor colour=red"), Catch::Contains("unknown field 'colour'"));
}

TEST_CASE("a number that does not fit its field is refused, never wrapped") {
    // Found by fuzz/targets/isa_stream.cpp: s767 was taken as s255, the
    // encoding's "no semaphore", so the signal was lost on the way back.
    CHECK_THROWS_WITH(isa::assemble("sem_increment gpsimd signal=s767+3"),
                      Catch::Contains("semaphore 767 does not fit its 8-bit field"));
    CHECK_THROWS_WITH(isa::assemble("sem_increment gpsimd signal=s255+3"), Catch::Contains("semaphore 255 is"));
    CHECK_THROWS_WITH(isa::assemble("nop sync wait=s255>=1"), Catch::Contains("semaphore 255 is"));
    CHECK_THROWS_WITH(isa::assemble("set_reg vector reg=r256"), Catch::Contains("register 256 does not fit"));
    CHECK_THROWS_WITH(isa::assemble("set_reg vector reg=r3 imm=4294967296"),
                      Catch::Contains("imm 4294967296 does not fit its 32-bit field"));
    CHECK_THROWS_WITH(isa::assemble("set_reg vector reg=r3 imm=-1"), Catch::Contains("bad number '-1'"));
    CHECK_THROWS_WITH(isa::assemble("memset vector dst=sbuf:fp32:p0x256@0x0{1x1}"),
                      Catch::Contains("partitions 256 does not fit"));
    CHECK_THROWS_WITH(isa::assemble("memset vector dst=sbuf:fp32:p0x1@0x0{1x65536}"),
                      Catch::Contains("count 65536 does not fit"));
    CHECK_THROWS_WITH(isa::assemble("memset vector dst=sbuf:fp32:p0x1@0x0{2147483648x1}"),
                      Catch::Contains("step 2147483648 does not fit"));
    CHECK_THROWS_WITH(isa::assemble("memset vector dst=sbuf:fp32:p0x1@0x0{fourx1}"),
                      Catch::Contains("bad number 'four'"));
    CHECK_THROWS_WITH(isa::assemble("memset vector dst=sbuf:fp32:p0x1@0x0{1x1} scalar=7.5x"),
                      Catch::Contains("bad number '7.5x'"));
    // The edges of each field still assemble.
    const isa::instruction i = isa::assemble("memset vector dst=sbuf:fp32:p0x255@0x0+r254{-2147483648x65535} "
                                             "scalar=-1e-45 signal=s254+4294967295 imm=4294967295");
    CHECK(i.dst.partitions == 255);
    CHECK(i.dst.base_reg == 254);
    CHECK(i.dst.step[0] == std::numeric_limits<std::int32_t>::min());
    CHECK(i.dst.num[0] == 65535);
    CHECK(i.signal_sem == 254);
    CHECK(i.signal_add == 4294967295u);
    CHECK(i.imm == 4294967295u);
    CHECK(same(isa::assemble(isa::disassemble(i)), i));
}

TEST_CASE("a stream assembles from text with labels and comments, and disassembles back") {
    const std::string text = R"(
        # fill eight columns of partition 0..127 with 7.5, one per loop turn
        set_reg vector reg=r0
    loop:
        memset vector dst=sbuf:fp32:p0x128@0x0+r0{1x1} scalar=7.5
        add_reg vector reg=r0 imm=4
        branch_lt vector reg=r0 imm=32 target=@loop   # back to the memset
        halt vector
    )";
    const auto code = isa::assemble_stream(text);
    REQUIRE(code.size() == 5);
    CHECK(code[3].target == 1);
    CHECK(code[1].dst.base_reg == 0);
    const std::string back = isa::disassemble_stream(code);
    CHECK_THAT(back, Catch::Contains("L1:\n") && Catch::Contains("target=@L1"));
    const auto again = isa::assemble_stream(back);
    REQUIRE(again.size() == code.size());
    for (std::size_t i = 0; i < code.size(); ++i) CHECK(same(again[i], code[i]));
}

TEST_CASE("a branch past the stream's end (a label after the last instruction, or a number beyond) disassembles to a "
          "number that assembles back (found by fuzzing)") {
    const auto code = isa::assemble_stream("branch_lt vector reg=r0 imm=1 target=@end\n"
                                           "branch_lt vector reg=r0 imm=1 target=7\n"
                                           "end:\n");
    REQUIRE(code.size() == 2);
    CHECK(code[0].target == 2);
    const std::string back = isa::disassemble_stream(code);
    CHECK_THAT(back, Catch::Contains("target=2") && Catch::Contains("target=7") && !Catch::Contains("@L"));
    const auto again = isa::assemble_stream(back);
    REQUIRE(again.size() == 2);
    CHECK(same(again[0], code[0]));
    CHECK(same(again[1], code[1]));
}

TEST_CASE("assembler errors name the line") {
    CHECK_THROWS_WITH(isa::assemble_stream("nop vector\n\nbranch_lt vector reg=r0 imm=1 target=@nowhere\n"),
                      Catch::StartsWith("line 3: unknown label 'nowhere'"));
    CHECK_THROWS_WITH(isa::assemble_stream("nop vector\nfly vector\n"), Catch::StartsWith("line 2: unknown opcode"));
    CHECK_THROWS_WITH(isa::assemble_stream("a:\na:\nnop vector\n"),
                      Catch::StartsWith("line 2: label 'a' defined twice"));
}

TEST_CASE("access patterns walk up to four free dimensions, and no more") {
    auto ap = with_dims(sbuf(dtype::fp32, 0, 1, 0, 1), {{60, 2}, {20, 3}, {5, 4}, {1, 5}});
    CHECK(isa::free_elements(ap) == 120);
    CHECK_THROWS_AS(with_dims(ap, {{1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}}), std::invalid_argument);
    isa::instruction i{};
    i.op = static_cast<std::uint8_t>(isa::opcode::dma);
    i.engine = static_cast<std::uint8_t>(isa::engine::sync);
    i.reg_a = isa::no_reg;
    i.wait_sem = i.signal_sem = isa::no_semaphore;
    i.dst = ap;
    i.src0 = ap;
    CHECK(same(isa::assemble(isa::disassemble(i)), i));
}

TEST_CASE("a builder modifier on an empty stream, or sparse() on what is not a matmul, is refused") {
    using namespace trn3::kernels;
    stream s(trn3::isa::engine::tensor);
    CHECK_THROWS_WITH(s.wait(1, 1), Catch::Contains("wait() modifies the last instruction"));
    CHECK_THROWS_WITH(s.signal(1, 1), Catch::Contains("signal()"));
    CHECK_THROWS_WITH(s.stochastic(), Catch::Contains("stochastic()"));
    s.nop();
    CHECK_THROWS_WITH(s.sparse(trn3::isa::sparsity::s4_8, 0), Catch::Contains("sparse() applies to a matmul"));
    CHECK_NOTHROW(s.wait(1, 1).signal(2, 1));
    CHECK(s.code().back().wait_sem == 1);
    CHECK(s.code().back().signal_sem == 2);
}
