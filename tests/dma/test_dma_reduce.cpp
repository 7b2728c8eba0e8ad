// The DMA engine's REDUCE descriptors (spec/device.h TRN3_DESC_REDUCE): the
// reduction done at the destination, the operand a fabric write asks for
// (TRN3_DESC_REDUCE_OPERAND), and the malformed ones refused.
#include "rig.h"

using namespace trn3;
using namespace trn3::test::dma_rig;

TEST_CASE("a REDUCE descriptor reduces its bytes into the destination: fp32 sum, bf16 max, int32 min") {
    rig r;
    const std::vector<float> acc = {1.0f, -2.0f, 0.5f, 100.0f}, add = {2.0f, 3.0f, 0.25f, -1.0f};
    std::memcpy(r.dev(dev0 + 0x1000), acc.data(), 16);
    std::memcpy(r.host(host_base + 0x1000), add.data(), 16);
    const std::vector<std::uint16_t> bf_acc = {0x3f80, 0xc000}, bf_src = {0x4000, 0xbf80};  // {1, -2} max {2, -1}
    std::memcpy(r.dev(dev1 + 0x2000), bf_acc.data(), 4);
    std::memcpy(r.dev(dev0 + 0x3000), bf_src.data(), 4);
    const std::vector<std::int32_t> i_acc = {5, -7}, i_src = {-3, 9};
    std::memcpy(r.dev(dev0 + 0x4000), i_acc.data(), 8);
    std::memcpy(r.dev(dev0 + 0x5000), i_src.data(), 8);
    ring q = r.open(0, 8);
    r.post(q, desc(host_base + 0x1000, dev0 + 0x1000, 16,
                   TRN3_DESC_SRC_HOST | TRN3_DESC_REDUCE_WITH(TRN3_REDUCE_SUM, TRN3_REDUCE_FP32), 1));
    r.post(q, desc(dev0 + 0x3000, dev1 + 0x2000, 4, TRN3_DESC_REDUCE_WITH(TRN3_REDUCE_MAX, TRN3_REDUCE_BF16), 2));
    r.post(q, desc(dev0 + 0x5000, dev0 + 0x4000, 8, TRN3_DESC_REDUCE_WITH(TRN3_REDUCE_MIN, TRN3_REDUCE_INT32), 3));
    r.doorbell(q);
    sc_core::sc_start();
    std::vector<float> sum(4);
    std::memcpy(sum.data(), r.dev(dev0 + 0x1000), 16);
    CHECK(sum == std::vector<float>{3.0f, 1.0f, 0.75f, 99.0f});
    std::vector<std::uint16_t> mx(2);
    std::memcpy(mx.data(), r.dev(dev1 + 0x2000), 4);
    CHECK(mx == std::vector<std::uint16_t>{0x4000, 0xbf80});
    std::vector<std::int32_t> mn(2);
    std::memcpy(mn.data(), r.dev(dev0 + 0x4000), 8);
    CHECK(mn == std::vector<std::int32_t>{-3, -7});
    CHECK(r.head(0) == 3);
}

TEST_CASE("a malformed REDUCE descriptor stops its queue with error 3 and touches nothing") {
    // A host destination, a partial element, an op or a type without a code: one per queue.
    const trn3_dma_descriptor bad[] = {
        desc(dev0, host_base + 0x300000, 8,
             TRN3_DESC_DST_HOST | TRN3_DESC_REDUCE_WITH(TRN3_REDUCE_SUM, TRN3_REDUCE_FP32), 4),
        desc(dev0, dev1, 6, TRN3_DESC_REDUCE_WITH(TRN3_REDUCE_SUM, TRN3_REDUCE_FP32), 5),
        desc(dev0, dev1, 8, TRN3_DESC_REDUCE_WITH(4, TRN3_REDUCE_FP32), 6),
        desc(dev0, dev1, 8, TRN3_DESC_REDUCE_WITH(TRN3_REDUCE_SUM, 6), 7)};
    rig r;
    std::memcpy(r.dev(dev1), "ABCDEFGH", 8);
    std::memcpy(r.host(host_base + 0x300000), "ABCDEFGH", 8);
    std::vector<ring> queues;
    for (unsigned q = 0; q < 4; ++q) {
        queues.push_back(r.open(q, 4));
        r.submit(queues.back(), bad[q]);
    }
    sc_core::sc_start();
    for (unsigned q = 0; q < 4; ++q) {
        INFO("queue " << q);
        CHECK(r.status(q) == stopped_with(TRN3_DMA_ERR_DESCRIPTOR));
        CHECK(r.record(queues[q], 0).status == TRN3_DMA_ERR_DESCRIPTOR);
    }
    CHECK(std::memcmp(r.dev(dev1), "ABCDEFGH", 8) == 0);  // untouched
    CHECK(std::memcmp(r.host(host_base + 0x300000), "ABCDEFGH", 8) == 0);
}

TEST_CASE("a REDUCE_OPERAND descriptor's fabric writes ask for an operand, and one without REDUCE or to a local "
          "address is malformed") {
    rig r;
    const std::vector<float> v = {1.0f, 2.0f, 3.0f, 4.0f};
    std::memcpy(r.dev(dev0 + 0x100), v.data(), 16);
    std::memcpy(r.dev(dev1), "ABCDEFGHIJKLMNOP", 16);
    const std::uint32_t sum = TRN3_DESC_REDUCE_WITH(TRN3_REDUCE_SUM, TRN3_REDUCE_FP32);
    ring good = r.open(0, 4);
    r.post(good, desc(dev0 + 0x100, TRN3_FABRIC_ADDR(0, 0x2000), 16, sum | TRN3_DESC_REDUCE_OPERAND, 1));
    r.post(good, desc(dev0 + 0x100, TRN3_FABRIC_ADDR(0, 0x3000), 16, sum, 2));
    r.doorbell(good);
    const trn3_dma_descriptor bad[] = {
        desc(dev0 + 0x100, TRN3_FABRIC_ADDR(0, 0x4000), 16, TRN3_DESC_REDUCE_OPERAND, 3),  // no REDUCE
        desc(dev0 + 0x100, dev1, 16, sum | TRN3_DESC_REDUCE_OPERAND, 4)};  // a device address: no landing
    std::vector<ring> queues;
    for (unsigned q = 0; q < 2; ++q) {
        queues.push_back(r.open(1 + q, 4));
        r.submit(queues.back(), bad[q]);
    }
    sc_core::sc_start();
    CHECK(r.head(0) == 2);
    REQUIRE(r.fabric.writes.size() == 2);
    CHECK((r.fabric.writes[0].reduce && r.fabric.writes[0].operand));
    CHECK((r.fabric.writes[1].reduce && !r.fabric.writes[1].operand));
    for (unsigned q = 0; q < 2; ++q) {
        INFO("queue " << 1 + q);
        CHECK(r.status(1 + q) == stopped_with(TRN3_DMA_ERR_DESCRIPTOR));
        CHECK(r.record(queues[q], 0).status == TRN3_DMA_ERR_DESCRIPTOR);
    }
    CHECK(std::memcmp(r.dev(dev1), "ABCDEFGHIJKLMNOP", 16) == 0);  // untouched
}
