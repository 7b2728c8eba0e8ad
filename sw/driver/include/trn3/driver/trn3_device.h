// The Trainium3 host driver: probe, firmware handshake, core reset, device
// memory, DMA rings, notification queue, interrupts, counters.
//
// Host-compiled C++ over host_ops (every device access is a TLM access in
// the host model); the chip's programming model is spec/device.h.
//
//   probe()      find 1d0f:7364 among the enumerated functions, take its BARs,
//                program MSI-X (every vector to the host's MSI window, data =
//                0x7300 + vector), set up DMA queue 0 (a 256-entry ring, its
//                completion records and a 4 MiB bounce buffer in host memory)
//                and the notification ring
//   wait_boot()  the MCU's boot status: running, or refused (a tampered image)
//   handshake()  mailbox VERSION and STATUS
//   alloc/free   device memory (first fit over the HBM stacks, 4 KiB aligned)
//   write/read   host <-> device through DMA queue 0; copy() from any host bus address
//   launch()     start engines of a core (chip LAUNCH); wait_core() its notification
//   reset_core() chip CORE_RESET
//   counters()   a sysfs-like dump
//
// Every call returns a status; none throws or hangs (each wait has a timeout).
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "trn3/driver/host_ops.h"
#include "trn3/driver/pci_enum.h"
#include "trn3/spec/device.h"
#include "trn3/spec/mailbox.h"

namespace trn3::driver {

enum class status {
    ok = 0,
    no_device,  // no Trainium3 among the enumerated functions
    firmware_refused,  // the boot ROM refused the firmware image
    firmware_timeout,  // the firmware did not come up or answer
    firmware_error,  // the firmware answered out of protocol (unknown command, bad length, wrong tag or version)
    bad_argument,
    out_of_memory,  // device memory
    dma_error,  // a DMA descriptor failed (IOMMU fault, bad address)
    exec_error,  // a kernel stopped on an error
    timeout,
    queue_full,  // a ring has no free entry (post again once completions are consumed)
};
const char* status_name(status s);

struct firmware_info {
    std::uint32_t version = 0, protocol = 0;
    std::string build;
    std::uint32_t uptime_us = 0;
};

struct core_result {
    std::uint32_t status = 0;  // 0 done, 1 error
    std::uint32_t error = 0;  // the failing engine's error code
};

class trn3_device {
public:
    static constexpr std::size_t bounce_bytes = 4 << 20;

    // MSI-X message data: device i of a host sends vector v as
    // msi_data_of(i) + v, so every device of a host has its own range.
    static constexpr std::uint32_t msi_data_first = 0x7300, msi_data_stride = 0x100;
    static constexpr std::uint32_t msi_data_of(unsigned device_index) {
        return msi_data_first + msi_data_stride * device_index;
    }

    // msi_data_base: the first MSI-X message data of this device (vector v
    // arrives as base + v).
    explicit trn3_device(host_ops& host, std::uint32_t msi_data_base = msi_data_first)
        : host_(host), msi_data_base_(msi_data_base) {}

    status probe(const std::vector<pci_function>& functions);  // the first Trainium3 found
    status probe(const pci_function& function);
    status wait_boot(std::uint64_t timeout_ns);
    status handshake(firmware_info& info);
    // The firmware stopped answering (a mailbox call gave firmware_timeout)
    // or restarted behind the driver's back (its uptime went back): reset
    // the MCU from the host (MCU_RESET: the mailbox is cleared, the boot ROM
    // checks the image again and starts it), probe the chip again (config
    // space and BAR0 still name it; the DMA rings, interrupts and device
    // memory stay, an MCU reset leaves them), wait for the boot and shake
    // hands. The caller runs its interrupted work again.
    status recover(firmware_info& info, std::uint64_t boot_timeout_ns);
    std::uint64_t recoveries() const { return recoveries_; }
    status reset_core(unsigned core);
    // Through the firmware (mailbox): telemetry, a NeuronLink port's state,
    // an HBM stack's ECC counters, a core reset done by the firmware.
    status telemetry(trn3_mbox_telemetry& t);
    status link_status(unsigned port, trn3_mbox_link& l);
    status ecc_counters(unsigned stack, trn3_mbox_ecc& e);
    status firmware_reset_core(unsigned core);

    status alloc(std::uint64_t bytes, std::uint64_t& device_address);
    status free(std::uint64_t device_address);

    status write(std::uint64_t device_address, const void* data, std::size_t bytes);
    status read(void* data, std::uint64_t device_address, std::size_t bytes);
    // One descriptor between a host bus address and device memory.
    status copy(std::uint64_t host_bus, std::uint64_t device_address, std::size_t bytes, bool to_device);

    // Device memory to device memory (the other side may be another chip's
    // fabric address): one descriptor.
    status device_copy(std::uint64_t src, std::uint64_t dst, std::size_t bytes);
    // The chip's place in the fabric: its id and its route to every chip
    // (routes[d] = the NeuronLink ports towards chip d, TRN3_ROUTE_PORT(p)
    // each; TRN3_ROUTE_NONE for none).
    status program_fabric(unsigned id, const std::vector<std::uint32_t>& routes);
    // What the chip's fabric counters say: bytes of fabric writes landed in
    // its memory, TLPs it dropped.
    status fabric_counters(std::uint64_t& rx_bytes, std::uint32_t& dropped);
    // Bytes landed on one channel (the sending chips' DMA queue: TRN3_CHIP_FABRIC_RX_CHANNEL).
    status fabric_channel_bytes(unsigned channel, std::uint64_t& rx_bytes);
    // Where reducing writes of `channel` that ask for an operand
    // (TRN3_DESC_REDUCE_OPERAND) find it: `offset` bytes from where they
    // land (TRN3_CHIP_FABRIC_OPERAND; mod 2^64, so below is a wrapped
    // negative offset). One posted MMIO write.
    status set_fabric_operand(unsigned channel, std::uint64_t offset);
    // The DMA queues the chip has (its DMA_QUEUES register: TRN3_DMA_QUEUES
    // unless the platform says otherwise); one MMIO read, the first time.
    status dma_queues(unsigned& queues);
    // A DMA queue (1 to dma_queues() - 1: a queue the chip lacks is
    // bad_argument) run from device memory:
    // load_device_queue puts the descriptors (copies, reductions, waits;
    // spec/device.h) into a ring at `ring_address` in device memory, its
    // completion records after it, and enables the queue with DEVICE_RING;
    // start_device_queue rings its doorbell, and the chip runs them on its
    // own (the collectives' engines). queue_finished waits until the queue
    // has done them all: ok, dma_error if it stopped on an error (the queue
    // is reset), timeout.
    // Device memory a queue of this many descriptors takes at ring_address:
    // its ring (a power of two of entries, at least 2) and completion records.
    static std::uint64_t device_queue_bytes(std::size_t descriptors);
    status load_device_queue(unsigned queue, std::uint64_t ring_address,
                             const std::vector<trn3_dma_descriptor>& descriptors);
    status start_device_queue(unsigned queue);
    // give_up (when given) is asked at every look: true stops the queue as a
    // timeout does (the caller's own reason to stop waiting).
    status queue_finished(unsigned queue, std::uint64_t timeout_ns, std::uint64_t poll_ns,
                          const std::function<bool()>& give_up = {});
    // queues_finished waits for queues first .. first + count - 1 at once:
    // it reads the chip's DMA_PENDING words that hold them (one read for 32
    // queues) until none has descriptors left, then ERR_STATUS once; a
    // queue whose error bit is set, or every queue on a timeout, goes
    // through queue_finished (which resets a stopped one); so does a queue
    // loaded but not started since (its bit is clear with nothing run). The
    // first failure's status, else ok; a queue the chip lacks: bad_argument.
    // ERR_STATUS is the only sign of a stop here, so no other thread may
    // recover these queues meanwhile.
    status queues_finished(unsigned first, unsigned count, std::uint64_t timeout_ns, std::uint64_t poll_ns);

    status launch(unsigned core, const std::array<std::uint64_t, 5>& pcs, unsigned engine_mask);
    status wait_core(unsigned core, std::uint64_t timeout_ns, core_result& result);

    std::string counters();
    std::uint16_t bdf() const { return bdf_; }
    std::uint64_t bar0() const { return bar0_; }
    std::uint64_t bar2() const { return bar2_; }
    const pci_function& function() const { return fn_; }
    host_ops& host() { return host_; }

private:
    std::uint32_t rd(std::uint32_t off) { return host_.mmio_read32(bar0_ + off); }
    void wr(std::uint32_t off, std::uint32_t v) { host_.mmio_write32(bar0_ + off, v); }
    void wr64(std::uint32_t off, std::uint64_t v) { host_.mmio_write64(bar0_ + off, v); }
    std::array<std::uint32_t, TRN3_DMA_QUEUES_MAX> device_queue_tail_{};
    unsigned dma_queues_ = 0;  // DMA_QUEUES, once read (0: not yet)
    std::bitset<TRN3_DMA_QUEUES_MAX> handled_;  // stopped queues the driver recovered since their last load
    std::bitset<TRN3_DMA_QUEUES_MAX> started_;  // device queues rung since their last load
    bool queue_exists(unsigned q);
    void clear_dma_error(unsigned q);
    status mailbox(std::uint16_t command, const void* payload, std::uint16_t length, void* response,
                   std::uint16_t response_max, std::uint16_t& response_length);
    template <typename T>
    status query(std::uint16_t command, const std::uint32_t* arg, T& out);
    status run_descriptor(std::uint64_t src, std::uint64_t dst, std::uint32_t length, std::uint32_t flags);
    void drain_notifications();

    host_ops& host_;
    std::uint32_t msi_data_base_;
    pci_function fn_{};
    std::uint16_t bdf_ = 0;
    std::uint64_t bar0_ = 0, bar2_ = 0, bar4_ = 0;
    bool probed_ = false;

    // DMA queue 0
    static constexpr std::uint32_t ring_entries = 256;
    dma_buffer ring_, completions_, bounce_;
    std::uint32_t tail_ = 0;
    std::uint64_t descriptor_serial_ = 0;  // in each descriptor's `user`: matches its completion record
    // notification ring
    static constexpr std::uint32_t notify_entries = 64;
    dma_buffer notify_;
    std::uint32_t notify_tail_ = 0;
    std::array<std::vector<core_result>, 8> finished_;
    // interrupts seen
    volatile bool mailbox_answered_ = false;
    std::uint64_t irq_mailbox_ = 0, irq_notify_ = 0, irq_dma_ = 0, irq_error_ = 0;
    // device memory: free ranges (start -> size)
    std::map<std::uint64_t, std::uint64_t> free_;
    std::map<std::uint64_t, std::uint64_t> used_;
    // counters
    std::uint64_t dma_descriptors_ = 0, dma_bytes_ = 0, dma_errors_ = 0, kernels_ = 0, kernel_errors_ = 0, resets_ = 0,
                  recoveries_ = 0, iommu_faults_ = 0;
};

}  // namespace trn3::driver
