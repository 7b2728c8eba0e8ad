// Fuzz target: the driver's parsing of the firmware's mailbox answers
// (sw/driver trn3_device). A host of its own here stands for the platform:
// the chip's registers read as a Trainium3's, and each time the driver
// rings the mailbox the answer area holds the next bytes of the input (a
// whole trn3_mbox_response's worth, status, length and tag included; the
// tag the driver expects when the input's first byte is even), then the
// mailbox interrupt fires. The driver asks what a bring-up asks: the
// version and status (handshake), telemetry, each NeuronLink port, each
// stack's ECC counters, a core reset. Whatever the answers, it must return
// ok, bad_argument or firmware_error (firmware_timeout for a status that
// is not running), never read past the answer area, and a call that says
// ok must have got an answer of exactly the right size.
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <vector>

#include "fuzz_check.h"
#include "trn3/driver/trn3_device.h"
#include "trn3/spec/device.h"
#include "trn3/spec/mailbox.h"
#include "trn3/spec/pci.h"

namespace {

using namespace trn3::driver;

constexpr std::uint64_t bar0 = 0x10000000, bar2 = 0x4000000000, bar4 = 0x20000000;

class answering_host final : public host_ops, private config_access {
public:
    answering_host(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

    config_access& config() override { return *this; }
    std::uint32_t mmio_read32(std::uint64_t a) override {
        std::uint32_t v = 0;
        mmio_read(a, &v, 4);
        return v;
    }
    void mmio_write32(std::uint64_t a, std::uint32_t v) override { mmio_write(a, &v, 4); }
    void mmio_write64(std::uint64_t a, std::uint64_t v) override { mmio_write(a, &v, 8); }
    void mmio_read(std::uint64_t a, void* d, std::size_t n) override {
        std::memset(d, 0, n);
        if (a == bar0 + TRN3_CHIP_ID && n == 4) {
            const std::uint32_t id = TRN3_CHIP_ID_VALUE;
            std::memcpy(d, &id, 4);
            return;
        }
        const std::uint64_t answer = bar0 + TRN3_BAR0_MAILBOX + TRN3_MBOX_RESPONSE;
        if (a >= answer && a - answer <= sizeof response_) {
            // Never past the answer area: the driver's own bound.
            TRN3_FUZZ_CHECK(a - answer + n <= sizeof response_);
            std::memcpy(d, response_ + (a - answer), n);
        }
    }
    void mmio_write(std::uint64_t a, const void* d, std::size_t n) override {
        const std::uint64_t mailbox = bar0 + TRN3_BAR0_MAILBOX;
        if (a == mailbox + TRN3_MBOX_REQUEST && n >= sizeof(std::uint32_t) * 2)
            std::memcpy(&request_, d, std::min(n, sizeof request_));
        if (a == mailbox + TRN3_MBOX_H2M_DOORBELL) answer();
    }
    dma_buffer alloc_dma(std::uint16_t, std::size_t bytes) override { return keep(bytes); }
    dma_buffer alloc_unmapped(std::size_t bytes) override { return keep(bytes); }
    dma_buffer pin(std::uint16_t, void* cpu, std::size_t bytes) override {
        return {reinterpret_cast<std::uintptr_t>(cpu), static_cast<std::uint8_t*>(cpu), bytes};
    }
    void unpin(std::uint16_t, const dma_buffer&) override {}
    void request_irq(std::uint32_t data, std::function<void()> handler) override { irq_[data] = std::move(handler); }
    void on_iommu_fault(std::function<void(std::uint16_t, std::uint64_t, bool)>) override {}
    bool wait_until(const std::function<bool()>& ready, std::uint64_t, std::uint64_t) override { return ready(); }
    void sleep_ns(std::uint64_t ns) override { now_ += ns; }
    std::uint64_t now_ns() const override { return now_; }
    void log(const std::string&) override {}

private:
    std::uint32_t read(std::uint16_t, std::uint16_t, unsigned) override { return 0; }
    void write(std::uint16_t, std::uint16_t, unsigned, std::uint32_t) override {}

    // The next answer from the input; the interrupt only while input lasts
    // (past it the firmware stays silent: a timeout).
    void answer() {
        if (at_ >= size_) return;
        const bool keep_tag = (data_[at_] & 1) == 0;
        std::memset(response_, 0, sizeof response_);
        const std::size_t n = std::min(sizeof response_, size_ - at_);
        std::memcpy(response_, data_ + at_, n);
        at_ += n;
        trn3_mbox_response r;
        std::memcpy(&r, response_, sizeof r);
        if (keep_tag) r.tag = request_.tag;
        std::memcpy(response_, &r, sizeof r);
        const auto it = irq_.find(trn3_device::msi_data_first + TRN3_MSIX_MAILBOX);
        if (it != irq_.end()) it->second();
    }
    // Host memory for the driver's rings and bounce buffer (4 MiB): made
    // once and handed out again in the same order on every input (zeroing
    // it each time would cost most of a run; nothing here reads it back).
    dma_buffer keep(std::size_t bytes) {
        static std::vector<std::vector<std::uint8_t>> pool;
        if (pool.size() <= handed_) pool.emplace_back(bytes);
        std::vector<std::uint8_t>& b = pool[handed_++];
        if (b.size() < bytes) b.resize(bytes);
        return {reinterpret_cast<std::uintptr_t>(b.data()), b.data(), bytes};
    }

    const std::uint8_t* data_;
    std::size_t size_, at_ = 0;
    std::uint8_t response_[sizeof(trn3_mbox_response)] = {};
    trn3_mbox_request request_{};
    std::map<std::uint32_t, std::function<void()>> irq_;
    std::size_t handed_ = 0;
    std::uint64_t now_ = 0;
};

bool expected(status s) {
    return s == status::ok || s == status::bad_argument || s == status::firmware_error || s == status::firmware_timeout;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    answering_host host(data, size);
    trn3_device d(host);
    pci_function f;
    f.vendor = TRN3_PCI_VENDOR_AMAZON;
    f.device = TRN3_PCI_DEVICE_TRN3;
    f.bdf = 0x100;
    f.bars = {{0, bar0, 1u << 24, true, false}, {2, bar2, 1ull << 38, true, true}, {4, bar4, 1u << 16, true, false}};
    if (d.probe(f) != status::ok) return 0;
    firmware_info info;
    TRN3_FUZZ_CHECK(expected(d.handshake(info)));
    trn3_mbox_telemetry t{};
    TRN3_FUZZ_CHECK(expected(d.telemetry(t)));
    for (unsigned port = 0; port < 2; ++port) {
        trn3_mbox_link l{};
        TRN3_FUZZ_CHECK(expected(d.link_status(port, l)));
    }
    trn3_mbox_ecc e{};
    TRN3_FUZZ_CHECK(expected(d.ecc_counters(0, e)));
    TRN3_FUZZ_CHECK(expected(d.firmware_reset_core(0)));
    return 0;
}
