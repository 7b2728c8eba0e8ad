// The runtime's program container: what pack() writes, parse() reads back,
// and what parse() refuses.
#include <catch2/catch.hpp>

#include <cstring>

#include "trn3/kernels/norm.h"
#include "trn3/runtime/container.h"
#include "trn3/runtime/nrt.h"

using namespace trn3;

TEST_CASE("a packed program parses back stream by stream, 64-byte aligned, with its instructions intact") {
    const kernels::program a = kernels::softmax({128, 512}, 0x1000, 0x200000);
    const kernels::program b = kernels::softmax({256, 512}, 0x400000, 0x800000);
    const std::vector<std::uint8_t> c = runtime::pack({&a, &b});
    runtime::container_view v;
    REQUIRE(runtime::parse(c.data(), c.size(), v).empty());
    CHECK(v.cores == 2);
    unsigned streams = 0;
    for (unsigned core = 0; core < 2; ++core) {
        const kernels::program& p = core == 0 ? a : b;
        for (unsigned e = 0; e < 5; ++e) {
            const auto& code = p.on(static_cast<isa::engine>(e)).code();
            const runtime::stream_ref r = v.streams[core][e];
            CHECK(r.instructions == code.size());
            if (code.empty()) continue;
            ++streams;
            CHECK(r.offset % 64 == 0);
            CHECK(std::memcmp(c.data() + r.offset, code.data(), code.size() * sizeof(isa::instruction)) == 0);
        }
    }
    CHECK(streams >= 2);
}

TEST_CASE("malformed containers are refused with what is wrong") {
    const kernels::program a = kernels::softmax({128, 512}, 0x1000, 0x200000);
    const std::vector<std::uint8_t> good = runtime::pack({&a});
    runtime::container_view v;
    auto why = [&](std::vector<std::uint8_t> c) { return runtime::parse(c.data(), c.size(), v); };
    std::vector<std::uint8_t> bad = good;
    bad[0] = 'X';
    CHECK_THAT(why(bad), Catch::Contains("bad magic"));
    bad = good;
    bad[8] = 9;
    CHECK_THAT(why(bad), Catch::Contains("container version 9"));
    bad = good;
    bad[12] = 3;
    CHECK_THAT(why(bad), Catch::Contains("3 programs"));
    bad = good;
    bad.resize(good.size() - 1);
    CHECK_THAT(why(bad), Catch::Contains("stream outside the container"));
    bad = good;
    for (int i = 0; i < 4; ++i) bad[16 + i] = 0xFF;  // an offset past the end
    std::uint32_t n = 1;
    std::memcpy(bad.data() + 20, &n, 4);
    CHECK_THAT(why(bad), Catch::Contains("stream outside the container"));
    CHECK_THAT(why({}), Catch::Contains("shorter than a container header"));
    std::vector<std::uint8_t> empty(good.begin(), good.begin() + 56);
    std::memset(empty.data() + 16, 0, 40);
    CHECK_THAT(why(empty), Catch::Contains("no instruction streams"));
}

TEST_CASE("the C API refuses null handles and bad arguments without a device") {
    nrt_runtime_t* rt = nullptr;
    CHECK(nrt_init(nullptr, &rt) == NRT_INVALID);
    CHECK(nrt_execute(nullptr) == NRT_INVALID_HANDLE);
    CHECK(nrt_wait(nullptr, 1) == NRT_INVALID_HANDLE);
    CHECK(nrt_tensor_write(nullptr, "x", 0, 1) == NRT_INVALID_HANDLE);
    CHECK(nrt_load(nullptr, nullptr, 0, 0, 1, nullptr) == NRT_INVALID_HANDLE);
    CHECK(nrt_get_last_error(nullptr) == 0);
    CHECK(std::string(nrt_status_string(NRT_EXEC_ERROR)) == "the kernel stopped on an error");
    nrt_tensor_t* t = nullptr;
    nrt_tensor_free(&t);  // a no-op on null
    CHECK(t == nullptr);
}

TEST_CASE("unpack gives back each core's program, stream for stream, and packs to the same bytes") {
    const kernels::program a = kernels::softmax({128, 512}, 0x1000, 0x200000);
    const kernels::program b = kernels::rmsnorm({256, 256}, 0x1000, 0x2000, 0x200000, 1e-6f);
    const std::vector<std::uint8_t> c = runtime::pack({&a, &b});
    runtime::container_view v;
    REQUIRE(runtime::parse(c.data(), c.size(), v).empty());
    const kernels::program b2 = runtime::unpack(c.data(), v, 1);
    CHECK(b2.instructions() == b.instructions());
    for (unsigned e = 0; e < 5; ++e) {
        const auto& want = b.on(static_cast<isa::engine>(e)).code();
        const auto& got = b2.on(static_cast<isa::engine>(e)).code();
        REQUIRE(got.size() == want.size());
        CHECK(std::memcmp(got.data(), want.data(), want.size() * sizeof(isa::instruction)) == 0);
    }
    CHECK(runtime::pack({&b2}) == runtime::pack({&b}));
}

TEST_CASE("a raw instruction goes only into its own engine's stream") {
    kernels::program p;
    isa::instruction i{};
    i.op = static_cast<std::uint8_t>(isa::opcode::halt);
    i.engine = static_cast<std::uint8_t>(isa::engine::vector);
    p.on(isa::engine::vector).raw(i);
    CHECK(p.on(isa::engine::vector).code().size() == 1);
    CHECK_THROWS_WITH(p.on(isa::engine::tensor).raw(i),
                      Catch::Contains("an instruction of engine vector in the tensor stream"));
}
