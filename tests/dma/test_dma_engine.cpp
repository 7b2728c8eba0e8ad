// The chip's DMA engine (models/dma) on its own: descriptor rings, the
// TAIL doorbell, completion records, HEAD, STATUS and its errors, restarts,
// interrupts, round robin between queues, and its timing (the rig:
// tests/dma/rig.h; reductions: test_dma_reduce.cpp).
#include "rig.h"

using namespace trn3;
using namespace trn3::test::dma_rig;

TEST_CASE(
    "a descriptor moves exactly its bytes, writes its completion record (status 0, length, user) and advances HEAD") {
    rig r;
    const auto data = test::pattern(5000, 1);
    std::memcpy(r.host(host_base + 0x100003), data.data(), data.size());
    ring q = r.open(0, 8);
    r.submit(q, desc(host_base + 0x100003, dev0 + 0x1001, 5000, TRN3_DESC_SRC_HOST, 0xABCDEF0123456789ull));
    sc_core::sc_start();
    CHECK(std::memcmp(r.dev(dev0 + 0x1001), data.data(), data.size()) == 0);
    CHECK(r.dev(dev0 + 0x1000)[0] == 0);  // not a byte more on either side
    CHECK(r.dev(dev0 + 0x1001 + 5000)[0] == 0);
    check_record(r.record(q, 0), 0, 5000, 0xABCDEF0123456789ull);
    CHECK(r.head(0) == 1);
    CHECK(r.status(0) == TRN3_DMA_STATE_IDLE);
    CHECK(r.stopped.empty());
    CHECK(r.vectors.empty());  // no interrupt flag
}

TEST_CASE("the flags choose each side's address space: device to host, device to device and host to host") {
    rig r;
    const auto a = test::pattern(4096, 2), b = test::pattern(3000, 3), c = test::pattern(777, 4);
    std::memcpy(r.dev(dev0 + 0x2000), a.data(), a.size());
    std::memcpy(r.dev(dev1 + 0x300000), b.data(), b.size());
    std::memcpy(r.host(host_base + 0x200000), c.data(), c.size());
    ring q = r.open(0, 4);
    r.post(q, desc(dev0 + 0x2000, host_base + 0x400000, 4096, TRN3_DESC_DST_HOST, 1));
    r.post(q, desc(dev1 + 0x300000, dev0 + 0x10000, 3000, 0, 2));
    r.post(q, desc(host_base + 0x200000, host_base + 0x500000, 777, TRN3_DESC_SRC_HOST | TRN3_DESC_DST_HOST, 3));
    r.doorbell(q);
    sc_core::sc_start();
    CHECK(std::memcmp(r.host(host_base + 0x400000), a.data(), a.size()) == 0);
    CHECK(std::memcmp(r.dev(dev0 + 0x10000), b.data(), b.size()) == 0);
    CHECK(std::memcmp(r.host(host_base + 0x500000), c.data(), c.size()) == 0);
    CHECK(r.head(0) == 3);
    for (std::uint32_t i = 0; i < 3; ++i) CHECK(r.record(q, i).user == i + 1);
}

namespace {

// A 10,000-byte descriptor in 4 KiB pieces: the accesses in order.
void pieces_in_order(const char* reads_ahead, const std::vector<char>& order) {
    param_registry::instance().set_pending_text("dma.chunk", "4KiB", "test");
    param_registry::instance().set_pending_text("dma.reads_ahead", reads_ahead, "test");
    rig r;
    const auto data = test::pattern(10000, 5);
    std::memcpy(r.host(host_base + 0x100000), data.data(), data.size());
    ring q = r.open(0, 4);
    r.submit(q, desc(host_base + 0x100000, dev0 + 0x40000, 10000, TRN3_DESC_SRC_HOST, 9));
    sc_core::sc_start();
    const unsigned length[] = {4096, 4096, 1808};
    std::vector<access_record> expected{{'h', 'R', q.base, 32}};  // the descriptor
    unsigned reads = 0, writes = 0;
    for (char c : order) {
        const unsigned i = c == 'R' ? reads++ : writes++;
        if (c == 'R') expected.push_back({'h', 'R', host_base + 0x100000 + 0x1000 * i, length[i]});
        else expected.push_back({'d', 'W', dev0 + 0x40000 + 0x1000 * i, length[i]});
    }
    expected.push_back({'h', 'W', q.records, 16});  // the completion record
    CHECK(r.log == expected);
    CHECK(std::memcmp(r.dev(dev0 + 0x40000), data.data(), data.size()) == 0);
}

}  // namespace

TEST_CASE("a descriptor longer than chunk moves in chunk-sized pieces: with reads_ahead 4 all three are read first") {
    pieces_in_order("4", {'R', 'R', 'R', 'W', 'W', 'W'});
}

TEST_CASE("with reads_ahead 1 a piece's write goes out before the next piece is read") {
    pieces_in_order("1", {'R', 'W', 'R', 'W', 'R', 'W'});
}

TEST_CASE("ring indices wrap at the ring size: entry = index & (size - 1), and HEAD counts every descriptor") {
    rig r;
    ring q = r.open(0, 4);
    for (std::uint32_t i = 0; i < 3; ++i) r.post(q, desc(dev0 + 0x1000 * i, dev1 + 0x1000 * i, 64, 0, 100 + i));
    r.doorbell(q);
    sc_core::sc_start();
    CHECK(r.head(0) == 3);
    // Three more: entries 3, 0 and 1.
    for (std::uint32_t i = 3; i < 6; ++i) {
        std::memset(r.dev(dev0 + 0x1000 * i), static_cast<int>(i + 1), 64);
        r.post(q, desc(dev0 + 0x1000 * i, dev1 + 0x1000 * i, 64, 0, 100 + i));
    }
    r.doorbell(q);
    sc_core::sc_start();
    CHECK(r.head(0) == 6);
    CHECK(r.record(q, 3).user == 103);
    CHECK(r.record(q, 0).user == 104);
    CHECK(r.record(q, 1).user == 105);
    CHECK(r.record(q, 2).user == 102);  // not rewritten
    for (std::uint32_t i = 3; i < 6; ++i) CHECK(r.dev(dev1 + 0x1000 * i + 63)[0] == i + 1);
}

TEST_CASE("HEAD and TAIL are free-running 32-bit counters: HEAD wraps from 0xFFFFFFFF to 0") {
    rig r;
    ring q = r.open(0, 4);
    r.deposit(0, TRN3_DMA_HEAD, 0xFFFFFFFEu);
    r.deposit(0, TRN3_DMA_TAIL, 0xFFFFFFFEu);
    q.tail = 0xFFFFFFFEu;
    std::memset(r.dev(dev0), 0x11, 16);
    std::memset(r.dev(dev0 + 16), 0x22, 16);
    r.post(q, desc(dev0, dev1, 16, 0, 1));  // entry 2
    r.post(q, desc(dev0 + 16, dev1 + 16, 16, 0, 2));  // entry 3
    CHECK(q.tail == 0);
    r.doorbell(q);
    sc_core::sc_start();
    CHECK(r.head(0) == 0);
    CHECK(r.record(q, 2).user == 1);
    CHECK(r.record(q, 3).user == 2);
    CHECK(r.dev(dev1)[0] == 0x11);
    CHECK(r.dev(dev1 + 16)[0] == 0x22);
    CHECK(r.status(0) == TRN3_DMA_STATE_IDLE);
}

TEST_CASE("with CONTROL bit 1 the ring and the completion records are read and written in device memory") {
    rig r;
    const auto data = test::pattern(2048, 6);
    std::memcpy(r.dev(dev0 + 0x8000), data.data(), data.size());
    ring q = r.open(2, 8, true);
    r.submit(q, desc(dev0 + 0x8000, host_base + 0x600000, 2048, TRN3_DESC_DST_HOST, 77));
    sc_core::sc_start();
    CHECK(std::memcmp(r.host(host_base + 0x600000), data.data(), data.size()) == 0);
    check_record(r.record(q, 0), 0, 2048, 77);
    const std::vector<access_record> expected = {{'d', 'R', q.base, 32},
                                                 {'d', 'R', dev0 + 0x8000, 2048},
                                                 {'h', 'W', host_base + 0x600000, 2048},
                                                 {'d', 'W', q.records, 16}};
    CHECK(r.log == expected);
}

TEST_CASE(
    "a host read that fails stops the queue with error 1: STATUS, the queue reported, HEAD kept, nothing after it served") {
    rig r;
    ring q = r.open(3, 8);
    std::memset(r.dev(dev0), 0x5A, 256);
    r.post(q, desc(dev0, dev1, 256, 0, 1));
    r.post(q, desc(host_hole, dev1 + 0x1000, 256, TRN3_DESC_SRC_HOST | TRN3_DESC_INTERRUPT, 2));
    r.post(q, desc(dev0, dev1 + 0x2000, 256, 0, 3));
    r.doorbell(q);
    sc_core::sc_start();
    CHECK(r.head(3) == 1);
    CHECK(r.status(3) == stopped_with(TRN3_DMA_ERR_HOST));
    CHECK(r.dma.queue_status(3) == r.status(3));
    CHECK(r.stopped == std::vector<unsigned>{3});
    check_record(r.record(q, 1), TRN3_DMA_ERR_HOST, 256, 2);  // the failed descriptor's record says why
    CHECK(r.record(q, 2).user == 0);  // the next one was not served
    CHECK(all_zero(r.dev(dev1 + 0x2000), 256));
    CHECK(all_zero(r.dev(dev1 + 0x1000), 256));
    CHECK(r.vectors.empty());  // a failed descriptor raises no completion vector
    // A doorbell does not wake a stopped queue.
    r.doorbell(q);
    sc_core::sc_start();
    CHECK(r.head(3) == 1);
}

TEST_CASE("a device write that fails stops the queue with error 2 (device)") {
    rig r;
    ring q = r.open(0, 4);
    r.submit(q, desc(host_base + 0x100000, dev_hole, 64, TRN3_DESC_SRC_HOST, 5));
    sc_core::sc_start();
    CHECK(r.status(0) == stopped_with(TRN3_DMA_ERR_DEVICE));
    CHECK(r.head(0) == 0);
    check_record(r.record(q, 0), TRN3_DMA_ERR_DEVICE, 64, 5);
    CHECK(r.stopped == std::vector<unsigned>{0});
}

TEST_CASE("a piece whose read fails stops the descriptor: the pieces read before it are still written") {
    // Three 4 KiB pieces from the last 4 KiB of device memory on: the first
    // reads, the next two fall off its end (reads_ahead 4 asks for all three).
    param_registry::instance().set_pending_text("dma.chunk", "4KiB", "test");
    rig r;
    const auto data = test::pattern(4096, 11);
    std::memcpy(r.dev(dev0 + dev_size - 4096), data.data(), data.size());
    ring q = r.open(0, 4);
    r.submit(q, desc(dev0 + dev_size - 4096, dev1 + 0x1000, 3 * 4096, 0, 6));
    sc_core::sc_start();
    CHECK(std::memcmp(r.dev(dev1 + 0x1000), data.data(), data.size()) == 0);
    CHECK(r.dev(dev1 + 0x2000)[0] == 0);  // nothing of the pieces that were not read
    CHECK(r.status(0) == stopped_with(TRN3_DMA_ERR_DEVICE));
    check_record(r.record(q, 0), TRN3_DMA_ERR_DEVICE, 3 * 4096, 6);
}

TEST_CASE("a ring the engine cannot read stops its queue: error 1 for a host ring, error 2 for a device ring") {
    rig r;
    r.set(0, TRN3_DMA_RING_BASE, host_hole, 8);
    r.set(0, TRN3_DMA_RING_SIZE, 4);
    r.set(0, TRN3_DMA_CPL_BASE, host_base, 8);
    r.set(0, TRN3_DMA_CONTROL, TRN3_DMA_CONTROL_ENABLE);
    r.set(1, TRN3_DMA_RING_BASE, dev_hole, 8);
    r.set(1, TRN3_DMA_RING_SIZE, 4);
    r.set(1, TRN3_DMA_CPL_BASE, dev0, 8);
    r.set(1, TRN3_DMA_CONTROL, TRN3_DMA_CONTROL_ENABLE | TRN3_DMA_CONTROL_DEVICE_RING);
    r.set(0, TRN3_DMA_TAIL, 1);
    r.set(1, TRN3_DMA_TAIL, 1);
    sc_core::sc_start();
    CHECK(r.status(0) == stopped_with(TRN3_DMA_ERR_HOST));
    CHECK(r.status(1) == stopped_with(TRN3_DMA_ERR_DEVICE));
    CHECK(r.head(0) == 0);
    CHECK(r.head(1) == 0);
    CHECK(all_zero(r.host(host_base), 16));  // no record without a descriptor
    CHECK(all_zero(r.dev(dev0), 16));
    CHECK(r.stopped == std::vector<unsigned>{0, 1});
}

TEST_CASE("a completion record that cannot be written stops the queue: the bytes moved but HEAD stays") {
    rig r;
    ring q = r.open(0, 4);
    r.set(0, TRN3_DMA_CPL_BASE, host_hole, 8);
    std::memset(r.dev(dev0), 0x3C, 128);
    r.submit(q, desc(dev0, dev1, 128, 0, 1));
    sc_core::sc_start();
    CHECK(r.dev(dev1 + 127)[0] == 0x3C);
    CHECK(r.status(0) == stopped_with(TRN3_DMA_ERR_HOST));
    CHECK(r.head(0) == 0);
}

TEST_CASE("a ring size that is not a power of two stops the queue with error 3 (descriptor) before anything is read") {
    rig r;
    ring q = r.open(0, 6);
    std::memset(r.dev(dev0), 0x77, 64);
    r.submit(q, desc(dev0, dev1, 64, 0, 1));
    sc_core::sc_start();
    CHECK(r.status(0) == stopped_with(TRN3_DMA_ERR_DESCRIPTOR));
    CHECK(r.head(0) == 0);
    CHECK(r.log.empty());  // not even the descriptor was fetched
    CHECK(all_zero(r.dev(dev1), 64));
    CHECK(r.stopped == std::vector<unsigned>{0});
}

TEST_CASE("a ring size of 0 leaves the queue idle: the doorbell is ignored, no error") {
    rig r;
    ring q = r.open(0, 0);
    q.size = 1;  // where post() puts the descriptor; the engine reads nothing
    r.submit(q, desc(dev0, dev1, 64, 0, 1));
    sc_core::sc_start();
    CHECK(r.status(0) == TRN3_DMA_STATE_IDLE);
    CHECK(r.head(0) == 0);
    CHECK(r.log.empty());
    CHECK(r.stopped.empty());
}

TEST_CASE("a stopped queue restarts on a 0-to-1 edge of CONTROL.enable once TAIL is set back to HEAD") {
    rig r;
    ring q = r.open(0, 8);
    r.submit(q, desc(host_hole, dev1, 64, TRN3_DESC_SRC_HOST, 1));
    sc_core::sc_start();
    REQUIRE(r.status(0) == stopped_with(TRN3_DMA_ERR_HOST));
    const std::size_t accesses = r.log.size();
    r.set(0, TRN3_DMA_CONTROL,
          TRN3_DMA_CONTROL_ENABLE);  // enable again without an edge: still stopped, nothing retried
    sc_core::sc_start();
    CHECK(r.status(0) == stopped_with(TRN3_DMA_ERR_HOST));
    CHECK(r.log.size() == accesses);
    CHECK(r.stopped.size() == 1);
    // The documented recovery: disable, drop the failed descriptor, enable.
    r.set(0, TRN3_DMA_CONTROL, 0);
    q.tail = r.head(0);
    r.doorbell(q);
    r.set(0, TRN3_DMA_CONTROL, TRN3_DMA_CONTROL_ENABLE);
    sc_core::sc_start();
    CHECK(r.status(0) == TRN3_DMA_STATE_IDLE);
    std::memset(r.dev(dev0), 0x42, 64);
    r.submit(q, desc(dev0, dev1 + 0x100, 64, 0, 2));  // entry 0 again
    sc_core::sc_start();
    CHECK(r.head(0) == 1);
    check_record(r.record(q, 0), 0, 64, 2);
    CHECK(r.dev(dev1 + 0x100)[63] == 0x42);
}

TEST_CASE("a disabled queue ignores its doorbell, and enabling it serves what is pending") {
    rig r;
    ring q = r.open(0, 4);
    r.set(0, TRN3_DMA_CONTROL, 0);
    std::memset(r.dev(dev0), 0x66, 64);
    r.submit(q, desc(dev0, dev1, 64, 0, 1));
    sc_core::sc_start();
    CHECK(r.head(0) == 0);
    CHECK(r.log.empty());
    r.set(0, TRN3_DMA_CONTROL, TRN3_DMA_CONTROL_ENABLE);
    sc_core::sc_start();
    CHECK(r.head(0) == 1);
    CHECK(r.dev(dev1)[0] == 0x66);
}

TEST_CASE(
    "a descriptor with the interrupt flag raises MSI-X vector 8 + q once it is complete, one without raises none") {
    rig r;
    ring q = r.open(5, 4);
    r.post(q, desc(dev0, dev1, 64, 0, 1));
    r.post(q, desc(dev0, dev1 + 64, 64, TRN3_DESC_INTERRUPT, 2));
    r.doorbell(q);
    // What software would see when the interrupt arrives.
    trn3_dma_completion at_irq{};
    std::uint32_t head_at_irq = 0;
    r.dma.raise_msix = [&](unsigned v) {
        r.vectors.push_back(v);
        at_irq = r.record(q, 1);
        head_at_irq = r.head(5);
    };
    sc_core::sc_start();
    CHECK(r.vectors == std::vector<unsigned>{13});
    CHECK(TRN3_MSIX_DMA(5) == 13);
    check_record(at_irq, 0, 64, 2);  // the record is written and HEAD advanced before the vector
    CHECK(head_at_irq == 2);
}

TEST_CASE("queues are served round robin, one descriptor at a time") {
    rig r;
    ring a = r.open(2, 4), b = r.open(9, 4);
    for (std::uint32_t i = 0; i < 3; ++i) {
        r.post(a, desc(dev0, dev1 + 0x100 * i, 64, TRN3_DESC_INTERRUPT, i));
        r.post(b, desc(dev0, dev1 + 0x1000 + 0x100 * i, 64, TRN3_DESC_INTERRUPT, i));
    }
    r.doorbell(b);
    r.doorbell(a);
    sc_core::sc_start();
    const unsigned va = TRN3_MSIX_DMA(2), vb = TRN3_MSIX_DMA(9);
    CHECK(r.vectors == std::vector<unsigned>{va, vb, va, vb, va, vb});
}

TEST_CASE("a queue stopped on an error leaves the other queues running") {
    rig r;
    ring bad = r.open(0, 4), good = r.open(1, 4);
    r.submit(bad, desc(dev_hole, dev1, 64, 0, 1));
    for (std::uint32_t i = 0; i < 3; ++i) r.post(good, desc(dev0, dev1 + 0x100 * i, 64, 0, i));
    r.doorbell(good);
    sc_core::sc_start();
    CHECK(r.status(0) == stopped_with(TRN3_DMA_ERR_DEVICE));
    CHECK(r.head(1) == 3);
    CHECK(r.status(1) == TRN3_DMA_STATE_IDLE);
}

TEST_CASE("a doorbell rung while the engine is busy is not lost") {
    rig r;
    ring q = r.open(0, 4);
    r.submit(q, desc(dev0, dev1, 1 << 20, 0, 1));
    sc_core::sc_start(sc_time(15, SC_NS));  // the engine is busy with the first descriptor
    CHECK(r.status(0) == TRN3_DMA_STATE_RUNNING);
    r.submit(q, desc(dev0, dev1 + (2 << 20), 64, 0, 2));
    sc_core::sc_start();
    CHECK(r.head(0) == 2);
    CHECK(r.record(q, 1).user == 2);
}

TEST_CASE("a doorbell rung while the engine serves a descriptor that then fails is not lost") {
    rig r;
    ring bad = r.open(1, 4), good = r.open(0, 4);
    r.submit(bad, desc(dev_hole, dev1, 64, 0, 1));  // fails after its fetch and descriptor_cost
    sc_core::sc_start(sc_time(15, SC_NS));
    CHECK(r.status(1) == TRN3_DMA_STATE_RUNNING);
    r.submit(good, desc(dev0, dev1 + 0x100, 64, 0, 2));  // queue 0: already passed in this round
    sc_core::sc_start();
    CHECK(r.status(1) == stopped_with(TRN3_DMA_ERR_DEVICE));
    CHECK(r.head(0) == 1);
}

namespace {

// Reads 20 ns, writes 11 ns, descriptor_cost 50 ns: a one-piece descriptor,
// then a three-piece one; each raises its vector when its record is written.
// Both are fetched at once (descriptor_prefetch): the second costs no read.
void piece_timing(const char* reads_ahead, unsigned pieces_ns) {
    for (const char* m : {"host_mem", "hbm0", "hbm1"}) {
        param_registry::instance().set_pending_text(std::string(m) + ".read_latency", "20ns", "test");
        param_registry::instance().set_pending_text(std::string(m) + ".write_latency", "11ns", "test");
    }
    param_registry::instance().set_pending_text("dma.descriptor_cost", "50ns", "test");
    param_registry::instance().set_pending_text("dma.chunk", "4KiB", "test");
    param_registry::instance().set_pending_text("dma.reads_ahead", reads_ahead, "test");
    rig r;
    ring q = r.open(0, 4);
    r.submit(q, desc(dev0, dev1, 64, TRN3_DESC_INTERRUPT, 1));
    r.submit(q, desc(dev0, dev1, 3 * 4096, TRN3_DESC_INTERRUPT, 2));  // three pieces
    sc_core::sc_start();
    REQUIRE(r.vector_times.size() == 2);
    const sc_time one = sc_time(20 + 50 + 20 + 11 + 11, SC_NS);  // fetch, cost, read, write, record
    CHECK(r.vector_times[0] == one);
    CHECK(r.vector_times[1] == one + sc_time(50 + pieces_ns + 11, SC_NS));
}

}  // namespace

TEST_CASE(
    "a descriptor takes its fetch, descriptor_cost, its pieces and its record: reads_ahead 4 reads them at once") {
    // The three reads together (20), then the writes one after another (3 x
    // 11); one piece after another would take 3 x (20 + 11).
    piece_timing("4", 20 + 3 * 11);
}

TEST_CASE("with reads_ahead 1 each piece's write overlaps the next piece's read") { piece_timing("1", 3 * 20 + 11); }

TEST_CASE("descriptors are read descriptor_prefetch at a time, none past TAIL") {
    param_registry::instance().set_pending_text("dma.descriptor_prefetch", "2", "test");
    rig r;
    ring q = r.open(0, 4);  // entries 0..3
    for (unsigned i = 0; i < 3; ++i) r.post(q, desc(dev0 + 64 * i, dev1 + 64 * i, 64, 0, i));
    r.doorbell(q);
    sc_core::sc_start();
    // Entries 0 and 1 in one read, then entry 2 (TAIL is 3), each moving its 64 bytes.
    std::vector<access_record> expected = {{'h', 'R', q.base, 64}};
    for (unsigned i = 0; i < 3; ++i) {
        if (i == 2) expected.push_back({'h', 'R', q.base + 64, 32});
        expected.push_back({'d', 'R', dev0 + 64 * i, 64});
        expected.push_back({'d', 'W', dev1 + 64 * i, 64});
        expected.push_back({'h', 'W', q.records + 16 * i, 16});
    }
    CHECK(r.log == expected);
    CHECK(r.head(0) == 3);
}

TEST_CASE("a descriptor of length 0 moves nothing and still completes with its record") {
    rig r;
    ring q = r.open(0, 4);
    r.submit(q, desc(dev0, dev1, 0, TRN3_DESC_INTERRUPT, 42));
    sc_core::sc_start();
    CHECK(r.head(0) == 1);
    check_record(r.record(q, 0), 0, 0, 42);
    const std::vector<access_record> expected = {{'h', 'R', q.base, 32}, {'h', 'W', q.records, 16}};
    CHECK(r.log == expected);
    CHECK(r.vectors == std::vector<unsigned>{TRN3_MSIX_DMA(0)});
}

TEST_CASE("each queue's registers sit at q x 0x100 and read back what software wrote, HEAD and STATUS ignore writes") {
    rig r;
    r.set(15, TRN3_DMA_RING_BASE, 0x123456789ABCDEF0ull, 8);
    r.set(15, TRN3_DMA_RING_SIZE, 64);
    r.set(15, TRN3_DMA_CPL_BASE, 0x0FEDCBA987654321ull, 8);
    r.set(15, TRN3_DMA_HEAD, 7);
    r.set(15, TRN3_DMA_STATUS, TRN3_DMA_STATE_ERROR);
    CHECK(r.reg(15, TRN3_DMA_RING_BASE, 8) == 0x123456789ABCDEF0ull);
    CHECK(r.reg(15, TRN3_DMA_RING_SIZE) == 64);
    CHECK(r.reg(15, TRN3_DMA_CPL_BASE, 8) == 0x0FEDCBA987654321ull);
    CHECK(r.reg(15, TRN3_DMA_HEAD) == 0);
    CHECK(r.reg(15, TRN3_DMA_STATUS) == 0);
    CHECK(r.reg(0, TRN3_DMA_RING_BASE, 8) == 0);  // queue 0 untouched
    CHECK(r.reg(14, TRN3_DMA_RING_SIZE) == 0);
    // Past the last queue there is no register.
    std::uint32_t v = 0;
    CHECK(r.cpu.access(tlm::TLM_READ_COMMAND, std::uint64_t(TRN3_DMA_QUEUE_BLOCK_SIZE) * TRN3_DMA_QUEUES, &v, 4) ==
          tlm::TLM_ADDRESS_ERROR_RESPONSE);
}

TEST_CASE("queues sets how many rings the engine has: queue 63 of 64 runs and raises vector 8 + 63 mod 24, and "
          "queue 64 has no register") {
    param_registry::instance().set_pending_text("dma.queues", "64", "test");
    param_registry::instance().set_pending_text("dma.engines", "64", "test");
    {
        rig r;
        const auto data = test::pattern(3000, 7);
        std::memcpy(r.host(host_base + 0x100000), data.data(), data.size());
        ring q = r.open(63, 4);
        r.submit(q, desc(host_base + 0x100000, dev0 + 0x7000, 3000, TRN3_DESC_SRC_HOST | TRN3_DESC_INTERRUPT, 63));
        sc_core::sc_start();
        CHECK(std::memcmp(r.dev(dev0 + 0x7000), data.data(), data.size()) == 0);
        check_record(r.record(q, 0), 0, 3000, 63);
        CHECK(r.head(63) == 1);
        CHECK(r.vectors == std::vector<unsigned>{8 + 15});  // queues 24 apart share a vector
        CHECK(TRN3_MSIX_DMA(63) == TRN3_MSIX_DMA(15));
        CHECK(TRN3_MSIX_DMA(15) == 8 + 15);
        std::uint32_t v = 0;
        CHECK(r.cpu.access(tlm::TLM_READ_COMMAND, std::uint64_t(TRN3_DMA_QUEUE_BLOCK_SIZE) * 64, &v, 4) ==
              tlm::TLM_ADDRESS_ERROR_RESPONSE);
    }
}

TEST_CASE("a DMA engine with more engines than queues is refused, naming both params") {
    param_registry::instance().set_pending_text("dma.queues", "8", "test");
    param_registry::instance().set_pending_text("dma.engines", "9", "test");
    CHECK_THROWS_WITH(dma::dma_engine("dma"), "param dma.engines = 9: more engines than queues (dma.queues = 8)");
}
