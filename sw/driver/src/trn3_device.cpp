#include "trn3/driver/trn3_device.h"

#include <cstddef>
#include <cstring>

#include <fmt/format.h>

#include "trn3/spec/device.h"
#include "trn3/spec/mailbox.h"
#include "trn3/spec/mcu.h"
#include "trn3/spec/pci.h"

namespace trn3::driver {

const char* status_name(status s) {
    switch (s) {
    case status::ok: return "ok";
    case status::no_device: return "no Trainium3 device found";
    case status::firmware_refused: return "the boot ROM refused the firmware image";
    case status::firmware_timeout: return "the firmware did not answer";
    case status::firmware_error: return "the firmware answered out of protocol";
    case status::bad_argument: return "bad argument";
    case status::out_of_memory: return "out of device memory";
    case status::dma_error: return "DMA failed";
    case status::exec_error: return "the kernel stopped on an error";
    case status::timeout: return "timed out";
    case status::queue_full: return "the queue is full";
    }
    return "?";
}

status trn3_device::probe(const std::vector<pci_function>& functions) {
    for (const auto& fn : functions)
        if (fn.vendor == TRN3_PCI_VENDOR_AMAZON && fn.device == TRN3_PCI_DEVICE_TRN3) return probe(fn);
    return status::no_device;
}

status trn3_device::probe(const pci_function& function) {
    const pci_function* f = &function;
    if (f->vendor != TRN3_PCI_VENDOR_AMAZON || f->device != TRN3_PCI_DEVICE_TRN3) return status::no_device;
    fn_ = *f;
    bdf_ = f->bdf;
    for (const auto& b : f->bars) {
        if (b.index == 0) bar0_ = b.base;
        if (b.index == 2) bar2_ = b.base;
        if (b.index == 4) bar4_ = b.base;
    }
    if (!bar0_ || !bar4_) return status::no_device;
    if (host_.mmio_read32(bar0_ + TRN3_CHIP_ID) != TRN3_CHIP_ID_VALUE) return status::no_device;

    // Interrupts: every vector to the MSI window, one handler each.
    for (std::uint32_t v = 0; v < TRN3_MSIX_VECTORS; ++v) {
        const std::uint32_t e[4] = {static_cast<std::uint32_t>(TRN3_MSI_WINDOW_BASE), 0, msi_data_base_ + v, 0};
        host_.mmio_write(bar4_ + v * TRN3_MSIX_ENTRY_SIZE, e, sizeof e);
    }
    host_.request_irq(msi_data_base_ + TRN3_MSIX_MAILBOX, [this] {
        mailbox_answered_ = true;
        ++irq_mailbox_;
    });
    host_.request_irq(msi_data_base_ + TRN3_MSIX_NOTIFY, [this] { ++irq_notify_; });
    host_.request_irq(msi_data_base_ + TRN3_MSIX_ERROR, [this] { ++irq_error_; });
    // A descriptor with TRN3_DESC_INTERRUPT, on any queue (queues 24 apart share a vector).
    for (unsigned q = 0; q < TRN3_MSIX_DMA_VECTORS; ++q)
        host_.request_irq(msi_data_base_ + TRN3_MSIX_DMA(q), [this] { ++irq_dma_; });
    host_.on_iommu_fault([this](std::uint16_t device, std::uint64_t, bool) {
        if (device == bdf_) ++iommu_faults_;  // the host's other devices have drivers of their own
    });
    host_.config().write(bdf_, TRN3_PCI_MSIX_CAP + TRN3_MSIX_CONTROL, 2, TRN3_MSIX_ENABLE);

    // DMA queue 0 and the notification ring, in host memory the device may reach.
    ring_ = host_.alloc_dma(bdf_, ring_entries * sizeof(trn3_dma_descriptor));
    completions_ = host_.alloc_dma(bdf_, ring_entries * sizeof(trn3_dma_completion));
    bounce_ = host_.alloc_dma(bdf_, bounce_bytes);
    notify_ = host_.alloc_dma(bdf_, notify_entries * sizeof(trn3_notification));
    if (!ring_.cpu || !completions_.cpu || !bounce_.cpu || !notify_.cpu) return status::out_of_memory;
    wr64(TRN3_BAR0_DMA(0) + TRN3_DMA_RING_BASE, ring_.bus_address);
    wr(TRN3_BAR0_DMA(0) + TRN3_DMA_RING_SIZE, ring_entries);
    wr64(TRN3_BAR0_DMA(0) + TRN3_DMA_CPL_BASE, completions_.bus_address);
    wr(TRN3_BAR0_DMA(0) + TRN3_DMA_CONTROL, TRN3_DMA_CONTROL_ENABLE);
    tail_ = rd(TRN3_BAR0_DMA(0) + TRN3_DMA_HEAD);
    wr64(TRN3_BAR0_NOTIFY + TRN3_NOTIFY_BASE, notify_.bus_address);
    wr(TRN3_BAR0_NOTIFY + TRN3_NOTIFY_SIZE, notify_entries);
    notify_tail_ = rd(TRN3_BAR0_NOTIFY + TRN3_NOTIFY_HEAD);
    wr(TRN3_BAR0_NOTIFY + TRN3_NOTIFY_TAIL, notify_tail_);
    wr(TRN3_BAR0_NOTIFY + TRN3_NOTIFY_CONTROL, TRN3_NOTIFY_CONTROL_ENABLE);

    // Device memory: the HBM stacks (36 GiB each).
    free_.clear();
    used_.clear();
    for (unsigned s = 0; s < TRN3_DEV_HBM_STACKS; ++s) free_[TRN3_DEV_HBM_BASE(s)] = 36ull << 30;
    dma_queues_ = 0;  // read when a queue past the default count is asked for
    probed_ = true;
    host_.log(fmt::format("trn3 {}: BAR0 {:#x} BAR2 {:#x}, Gen{} x{}", bdf_name(bdf_), bar0_, bar2_, f->link_speed,
                          f->link_width));
    return status::ok;
}

status trn3_device::wait_boot(std::uint64_t timeout_ns) {
    if (!probed_) return status::no_device;
    std::uint32_t boot = 0;
    const bool settled = host_.wait_until(
        [&] {
            boot = rd(TRN3_CHIP_BOOT_STATUS);
            return boot == TRN3_BOOT_RUNNING || boot == TRN3_BOOT_REFUSED;
        },
        timeout_ns, 10000);
    if (boot == TRN3_BOOT_REFUSED) return status::firmware_refused;
    return settled ? status::ok : status::firmware_timeout;
}

status trn3_device::mailbox(std::uint16_t command, const void* payload, std::uint16_t length, void* response,
                            std::uint16_t response_max, std::uint16_t& response_length) {
    if (length > TRN3_MBOX_PAYLOAD_MAX) return status::bad_argument;
    trn3_mbox_request rq{};
    rq.command = command;
    rq.length = length;
    rq.tag = 0x5A000000u | command;
    if (length) std::memcpy(rq.payload, payload, length);
    mailbox_answered_ = false;
    host_.mmio_write(bar0_ + TRN3_BAR0_MAILBOX + TRN3_MBOX_REQUEST, &rq, offsetof(trn3_mbox_request, payload) + length);
    wr(TRN3_BAR0_MAILBOX + TRN3_MBOX_H2M_DOORBELL, TRN3_MBOX_DOORBELL_RING);
    if (!host_.wait_until([this] { return mailbox_answered_; }, 10'000'000, 100'000)) return status::firmware_timeout;
    trn3_mbox_response rs{};
    host_.mmio_read(bar0_ + TRN3_BAR0_MAILBOX + TRN3_MBOX_RESPONSE, &rs, offsetof(trn3_mbox_response, payload));
    if (rs.length > TRN3_MBOX_PAYLOAD_MAX) return status::firmware_error;
    if (rs.length)
        host_.mmio_read(bar0_ + TRN3_BAR0_MAILBOX + TRN3_MBOX_RESPONSE + offsetof(trn3_mbox_response, payload),
                        rs.payload, rs.length);
    wr(TRN3_BAR0_MAILBOX + TRN3_MBOX_M2H_DOORBELL, TRN3_MBOX_DOORBELL_CLEAR);
    if (rs.tag != rq.tag) return status::firmware_error;
    // The firmware's refusal of an argument (a stack, port or core that is
    // not there) is the caller's error; anything else is out of protocol.
    if (rs.status == TRN3_MBOX_STATUS_BAD_ARGUMENT || rs.status == TRN3_MBOX_STATUS_NOT_AVAILABLE)
        return status::bad_argument;
    if (rs.status != TRN3_MBOX_STATUS_OK) return status::firmware_error;
    response_length = std::min<std::uint16_t>(rs.length, response_max);
    std::memcpy(response, rs.payload, response_length);
    return status::ok;
}

status trn3_device::handshake(firmware_info& info) {
    if (!probed_) return status::no_device;
    trn3_mbox_version v{};
    std::uint16_t n = 0;
    if (status s = mailbox(TRN3_MBOX_CMD_VERSION, nullptr, 0, &v, sizeof v, n); s != status::ok) return s;
    if (n != sizeof v || v.protocol_version != TRN3_MBOX_PROTOCOL_VERSION) return status::firmware_error;
    info.version = v.firmware_version;
    info.protocol = v.protocol_version;
    v.build[sizeof v.build - 1] = 0;
    info.build = v.build;
    trn3_mbox_status st{};
    if (status s = mailbox(TRN3_MBOX_CMD_STATUS, nullptr, 0, &st, sizeof st, n); s != status::ok) return s;
    info.uptime_us = st.uptime_us;
    return st.boot_status == TRN3_BOOT_RUNNING ? status::ok : status::firmware_timeout;
}

status trn3_device::recover(firmware_info& info, std::uint64_t boot_timeout_ns) {
    if (!probed_) return status::no_device;
    ++recoveries_;
    host_.log(fmt::format("trn3 {}: the firmware is not answering: MCU reset, probe, boot, handshake", bdf_name(bdf_)));
    wr(TRN3_CHIP_MCU_RESET, TRN3_MCU_RESET_KEY);
    const std::uint32_t ids = host_.config().read(bdf_, 0, 4);
    if (ids != (std::uint32_t(TRN3_PCI_DEVICE_TRN3) << 16 | TRN3_PCI_VENDOR_AMAZON) ||
        rd(TRN3_CHIP_ID) != TRN3_CHIP_ID_VALUE)
        return status::no_device;
    if (status s = wait_boot(boot_timeout_ns); s != status::ok) return s;
    return handshake(info);
}

template <typename T>
status trn3_device::query(std::uint16_t command, const std::uint32_t* arg, T& out) {
    if (!probed_) return status::no_device;
    std::uint16_t n = 0;
    const status s = mailbox(command, arg, arg ? 4 : 0, &out, sizeof out, n);
    return s == status::ok && n != sizeof out ? status::firmware_error : s;  // a short answer is a broken firmware
}

status trn3_device::telemetry(trn3_mbox_telemetry& t) { return query(TRN3_MBOX_CMD_TELEMETRY, nullptr, t); }

status trn3_device::link_status(unsigned port, trn3_mbox_link& l) {
    const std::uint32_t p = port;
    return query(TRN3_MBOX_CMD_LINK_STATUS, &p, l);
}

status trn3_device::ecc_counters(unsigned stack, trn3_mbox_ecc& e) {
    const std::uint32_t s = stack;
    return query(TRN3_MBOX_CMD_ECC_COUNTERS, &s, e);
}

status trn3_device::firmware_reset_core(unsigned core) {
    if (!probed_) return status::no_device;
    const std::uint32_t c = core;
    std::uint16_t n = 0;
    char none = 0;
    if (status s = mailbox(TRN3_MBOX_CMD_RESET_CORE, &c, 4, &none, 0, n); s != status::ok) return s;
    drain_notifications();
    finished_[core % finished_.size()].clear();
    ++resets_;
    return status::ok;
}

status trn3_device::reset_core(unsigned core) {
    if (!probed_) return status::no_device;
    if (core >= TRN3_DEV_CORES) return status::bad_argument;
    wr(TRN3_CHIP_CORE_RESET, TRN3_CORE_RESET_BIT(core));
    wr(TRN3_CHIP_ERR_STATUS, TRN3_ERR_CORE(core));
    drain_notifications();  // what the core reported before the reset is stale now
    finished_[core].clear();
    ++resets_;
    return status::ok;
}

status trn3_device::alloc(std::uint64_t bytes, std::uint64_t& address) {
    if (!probed_) return status::no_device;
    if (bytes == 0 || bytes > (36ull << 30)) return status::bad_argument;  // nothing larger than a stack
    const std::uint64_t size = (bytes + 4095) / 4096 * 4096;
    for (auto it = free_.begin(); it != free_.end(); ++it) {
        if (it->second < size) continue;
        address = it->first;
        const std::uint64_t rest = it->second - size;
        free_.erase(it);
        if (rest) free_[address + size] = rest;
        used_[address] = size;
        return status::ok;
    }
    return status::out_of_memory;
}

status trn3_device::free(std::uint64_t address) {
    auto it = used_.find(address);
    if (it == used_.end()) return status::bad_argument;
    std::uint64_t start = it->first, size = it->second;
    used_.erase(it);
    // Coalesce with the neighbours.
    auto next = free_.lower_bound(start);
    if (next != free_.end() && start + size == next->first) {
        size += next->second;
        next = free_.erase(next);
    }
    if (next != free_.begin()) {
        auto prev = std::prev(next);
        if (prev->first + prev->second == start) {
            prev->second += size;
            return status::ok;
        }
    }
    free_[start] = size;
    return status::ok;
}

status trn3_device::run_descriptor(std::uint64_t src, std::uint64_t dst, std::uint32_t length, std::uint32_t flags) {
    const std::uint32_t index = tail_ & (ring_entries - 1);
    trn3_dma_descriptor d{src, dst, length, flags | TRN3_DESC_INTERRUPT, 0xD000000000000000ull | ++descriptor_serial_};
    std::memcpy(ring_.cpu + index * sizeof d, &d, sizeof d);
    std::memset(completions_.cpu + index * sizeof(trn3_dma_completion), 0xFF, sizeof(trn3_dma_completion));
    ++tail_;
    wr(TRN3_BAR0_DMA(0) + TRN3_DMA_TAIL, tail_);
    trn3_dma_completion c{};
    const std::uint64_t expected_user = d.user, faults_before = iommu_faults_;
    const bool done = host_.wait_until(
        [&] {
            std::memcpy(&c, completions_.cpu + index * sizeof c, sizeof c);
            if (c.user == expected_user) return true;
            // A queue that stopped on an error may not have written its record.
            return TRN3_DMA_STATUS_STATE(rd(TRN3_BAR0_DMA(0) + TRN3_DMA_STATUS)) == TRN3_DMA_STATE_ERROR;
        },
        1'000'000'000, 20'000);
    const bool ok = done && c.user == expected_user && c.status == 0;
    if (!ok) {
        ++dma_errors_;
        // Drop the failed descriptor (tail back to head), then restart the
        // queue; a descriptor still running (a timeout) finishes first.
        wr(TRN3_BAR0_DMA(0) + TRN3_DMA_CONTROL, 0);
        host_.wait_until(
            [&] { return TRN3_DMA_STATUS_STATE(rd(TRN3_BAR0_DMA(0) + TRN3_DMA_STATUS)) != TRN3_DMA_STATE_RUNNING; },
            1'000'000'000, 20'000);
        tail_ = rd(TRN3_BAR0_DMA(0) + TRN3_DMA_HEAD);
        wr(TRN3_BAR0_DMA(0) + TRN3_DMA_TAIL, tail_);
        clear_dma_error(0);
        wr(TRN3_BAR0_DMA(0) + TRN3_DMA_CONTROL, TRN3_DMA_CONTROL_ENABLE);
        return done ? status::dma_error : status::timeout;
    }
    if (iommu_faults_ != faults_before) {
        // The chip finished, but the IOMMU refused some of its writes to host
        // memory (posted: the chip is not told): the transfer is incomplete.
        ++dma_errors_;
        return status::dma_error;
    }
    ++dma_descriptors_;
    dma_bytes_ += length;
    return status::ok;
}

status trn3_device::write(std::uint64_t device_address, const void* data, std::size_t bytes) {
    if (!probed_) return status::no_device;
    const auto* p = static_cast<const std::uint8_t*>(data);
    for (std::size_t off = 0; off < bytes; off += bounce_bytes) {
        const std::size_t n = std::min(bounce_bytes, bytes - off);
        std::memcpy(bounce_.cpu, p + off, n);
        if (status s = run_descriptor(bounce_.bus_address, device_address + off, static_cast<std::uint32_t>(n),
                                      TRN3_DESC_SRC_HOST);
            s != status::ok)
            return s;
    }
    return status::ok;
}

status trn3_device::read(void* data, std::uint64_t device_address, std::size_t bytes) {
    if (!probed_) return status::no_device;
    auto* p = static_cast<std::uint8_t*>(data);
    for (std::size_t off = 0; off < bytes; off += bounce_bytes) {
        const std::size_t n = std::min(bounce_bytes, bytes - off);
        if (status s = run_descriptor(device_address + off, bounce_.bus_address, static_cast<std::uint32_t>(n),
                                      TRN3_DESC_DST_HOST);
            s != status::ok)
            return s;
        std::memcpy(p + off, bounce_.cpu, n);
    }
    return status::ok;
}

status trn3_device::copy(std::uint64_t host_bus, std::uint64_t device_address, std::size_t bytes, bool to_device) {
    if (!probed_) return status::no_device;
    if (bytes == 0 || bytes > 0xFFFFFFFFu) return status::bad_argument;
    return to_device ? run_descriptor(host_bus, device_address, static_cast<std::uint32_t>(bytes), TRN3_DESC_SRC_HOST)
                     : run_descriptor(device_address, host_bus, static_cast<std::uint32_t>(bytes), TRN3_DESC_DST_HOST);
}

status trn3_device::device_copy(std::uint64_t src, std::uint64_t dst, std::size_t bytes) {
    if (!probed_) return status::no_device;
    if (bytes == 0 || bytes > 0xFFFFFFFFu) return status::bad_argument;
    return run_descriptor(src, dst, static_cast<std::uint32_t>(bytes), 0);
}

status trn3_device::program_fabric(unsigned id, const std::vector<std::uint32_t>& routes) {
    if (!probed_) return status::no_device;
    if (id >= TRN3_FABRIC_CHIPS || routes.size() > TRN3_FABRIC_CHIPS) return status::bad_argument;
    // Routes first, then the id with ENABLE: the chip joins the fabric ready to forward.
    for (std::size_t d = 0; d < routes.size(); ++d) wr(TRN3_CHIP_ROUTE(d), routes[d]);
    wr(TRN3_CHIP_FABRIC_ID, id | TRN3_FABRIC_ENABLE);
    return status::ok;
}

status trn3_device::fabric_counters(std::uint64_t& rx_bytes, std::uint32_t& dropped) {
    if (!probed_) return status::no_device;
    host_.mmio_read(bar0_ + TRN3_CHIP_FABRIC_RX_BYTES, &rx_bytes, 8);
    dropped = rd(TRN3_CHIP_FABRIC_DROPPED);
    return status::ok;
}

status trn3_device::dma_queues(unsigned& queues) {
    if (!probed_) return status::no_device;
    if (dma_queues_ == 0) dma_queues_ = rd(TRN3_CHIP_DMA_QUEUES);
    queues = dma_queues_;
    return status::ok;
}

// Queues 1 to TRN3_DMA_QUEUES - 1 every chip has; past them the chip's
// DMA_QUEUES says (read once: the default paths make no extra access).
bool trn3_device::queue_exists(unsigned q) {
    if (q == 0 || q >= TRN3_DMA_QUEUES_MAX) return false;
    if (q < TRN3_DMA_QUEUES) return true;
    unsigned n = 0;
    return dma_queues(n) == status::ok && q < n;
}

// ERR_STATUS's bit for queue q is shared by the queues TRN3_ERR_DMA_BITS apart: once q
// is handled it is cleared unless one of them is stopped and not yet
// handled (only a chip with more queues than the default has such
// neighbours; none of them was used unless dma_queues_ was read).
void trn3_device::clear_dma_error(unsigned q) {
    handled_[q] = true;
    bool neighbour_stopped = false;
    for (unsigned o = q % TRN3_ERR_DMA_BITS; o < dma_queues_ && dma_queues_ > TRN3_DMA_QUEUES; o += TRN3_ERR_DMA_BITS)
        if (o != q && !handled_[o] &&
            TRN3_DMA_STATUS_STATE(rd(TRN3_BAR0_DMA(o) + TRN3_DMA_STATUS)) == TRN3_DMA_STATE_ERROR)
            neighbour_stopped = true;
    wr(TRN3_CHIP_ERR_STATUS, neighbour_stopped ? 0u : TRN3_ERR_DMA(q));
}

status trn3_device::fabric_channel_bytes(unsigned channel, std::uint64_t& rx_bytes) {
    if (!probed_) return status::no_device;
    if (channel >= TRN3_FABRIC_CHANNELS) return status::bad_argument;
    host_.mmio_read(bar0_ + TRN3_CHIP_FABRIC_RX_CHANNEL(channel), &rx_bytes, 8);
    return status::ok;
}

status trn3_device::set_fabric_operand(unsigned channel, std::uint64_t offset) {
    if (!probed_) return status::no_device;
    if (channel >= TRN3_FABRIC_CHANNELS) return status::bad_argument;
    host_.mmio_write(bar0_ + TRN3_CHIP_FABRIC_OPERAND(channel), &offset, 8);
    return status::ok;
}

namespace {
std::uint32_t entries_for(std::size_t descriptors) {
    std::uint32_t entries = 2;
    while (entries < descriptors) entries *= 2;
    return entries;
}
}  // namespace

std::uint64_t trn3_device::device_queue_bytes(std::size_t descriptors) {
    return std::uint64_t(entries_for(descriptors)) * (sizeof(trn3_dma_descriptor) + sizeof(trn3_dma_completion));
}

status trn3_device::load_device_queue(unsigned q, std::uint64_t ring_address,
                                      const std::vector<trn3_dma_descriptor>& descriptors) {
    if (!probed_) return status::no_device;
    if (!queue_exists(q) || descriptors.empty() || descriptors.size() > (1u << 20)) return status::bad_argument;
    const std::uint32_t entries = entries_for(descriptors.size());
    // HEAD runs free: the ring's entries start where the queue stands.
    const std::uint32_t head = rd(TRN3_BAR0_DMA(q) + TRN3_DMA_HEAD);
    std::vector<trn3_dma_descriptor> ring(entries);
    for (std::size_t i = 0; i < descriptors.size(); ++i) ring[(head + i) & (entries - 1)] = descriptors[i];
    const std::uint64_t records = ring_address + std::uint64_t(entries) * sizeof(trn3_dma_descriptor);
    const status s = write(ring_address, ring.data(), ring.size() * sizeof(trn3_dma_descriptor));
    if (s != status::ok) return s;
    wr(TRN3_BAR0_DMA(q) + TRN3_DMA_CONTROL, 0);
    wr64(TRN3_BAR0_DMA(q) + TRN3_DMA_RING_BASE, ring_address);
    wr(TRN3_BAR0_DMA(q) + TRN3_DMA_RING_SIZE, entries);
    wr64(TRN3_BAR0_DMA(q) + TRN3_DMA_CPL_BASE, records);
    wr(TRN3_BAR0_DMA(q) + TRN3_DMA_CONTROL, TRN3_DMA_CONTROL_ENABLE | TRN3_DMA_CONTROL_DEVICE_RING);
    device_queue_tail_[q] = head + static_cast<std::uint32_t>(descriptors.size());
    handled_[q] = false;
    started_[q] = false;
    return status::ok;
}

status trn3_device::start_device_queue(unsigned q) {
    if (!probed_) return status::no_device;
    if (!queue_exists(q)) return status::bad_argument;
    wr(TRN3_BAR0_DMA(q) + TRN3_DMA_TAIL, device_queue_tail_[q]);
    started_[q] = true;
    return status::ok;
}

status trn3_device::queue_finished(unsigned q, std::uint64_t timeout_ns, std::uint64_t poll_ns,
                                   const std::function<bool()>& give_up) {
    if (!probed_) return status::no_device;
    if (!queue_exists(q)) return status::bad_argument;
    bool failed = false, gave_up = false;
    const bool done = host_.wait_until(
        [&] {
            failed = TRN3_DMA_STATUS_STATE(rd(TRN3_BAR0_DMA(q) + TRN3_DMA_STATUS)) == TRN3_DMA_STATE_ERROR;
            if (failed || rd(TRN3_BAR0_DMA(q) + TRN3_DMA_HEAD) == device_queue_tail_[q]) return true;
            gave_up = give_up && give_up();
            return gave_up;
        },
        timeout_ns, poll_ns);
    if (done && !failed && !gave_up) return status::ok;
    // Stop the queue and drop what is left, so it can run again.
    ++dma_errors_;
    wr(TRN3_BAR0_DMA(q) + TRN3_DMA_CONTROL, 0);
    device_queue_tail_[q] = rd(TRN3_BAR0_DMA(q) + TRN3_DMA_HEAD);
    wr(TRN3_BAR0_DMA(q) + TRN3_DMA_TAIL, device_queue_tail_[q]);
    clear_dma_error(q);
    return failed ? status::dma_error : status::timeout;
}

status trn3_device::queues_finished(unsigned first, unsigned count, std::uint64_t timeout_ns, std::uint64_t poll_ns) {
    if (!probed_) return status::no_device;
    if (first >= TRN3_DMA_QUEUES_MAX || count > TRN3_DMA_QUEUES_MAX - first) return status::bad_argument;
    for (unsigned q = first; q < first + count; ++q)
        if (!queue_exists(q)) return status::bad_argument;
    if (count == 0) return status::ok;
    const unsigned last = first + count - 1;
    const bool done = host_.wait_until(
        [&] {
            for (unsigned w = first / 32; w <= last / 32; ++w) {
                std::uint32_t mine = ~0u;  // this word's bits of queues first..last
                if (w == first / 32) mine &= ~0u << (first % 32);
                if (w == last / 32) mine &= ~0u >> (31 - last % 32);
                if (rd(TRN3_CHIP_DMA_PENDING(w)) & mine) return false;
            }
            return true;
        },
        timeout_ns, poll_ns);
    const std::uint32_t errors = rd(TRN3_CHIP_ERR_STATUS);
    status first_failure = status::ok;
    for (unsigned q = first; q <= last; ++q)
        if (!done || (errors & TRN3_ERR_DMA(q)) || !started_[q]) {
            const status st = queue_finished(q, 0, poll_ns);
            if (first_failure == status::ok) first_failure = st;
        }
    return first_failure;
}

status trn3_device::launch(unsigned core, const std::array<std::uint64_t, 5>& pcs, unsigned mask) {
    if (!probed_) return status::no_device;
    if (core >= TRN3_DEV_CORES || mask == 0 || TRN3_LAUNCH_ENGINES(mask) != mask) return status::bad_argument;
    for (unsigned e = 0; e < 5; ++e)
        if (mask & (1u << e)) wr64(TRN3_CHIP_LAUNCH_PC(e), pcs[e]);
    wr(TRN3_CHIP_LAUNCH, TRN3_LAUNCH_VALUE(core, mask));
    ++kernels_;
    return status::ok;
}

void trn3_device::drain_notifications() {
    bool any = false;
    for (;;) {
        trn3_notification n{};
        std::memcpy(&n, notify_.cpu + (notify_tail_ & (notify_entries - 1)) * sizeof n, sizeof n);
        if (n.sequence != notify_tail_ + 1) break;  // not written yet
        if (n.core < finished_.size()) finished_[n.core].push_back({n.status, n.error});
        ++notify_tail_;
        any = true;
    }
    if (any) wr(TRN3_BAR0_NOTIFY + TRN3_NOTIFY_TAIL, notify_tail_);
}

status trn3_device::wait_core(unsigned core, std::uint64_t timeout_ns, core_result& result) {
    if (!probed_) return status::no_device;
    if (core >= TRN3_DEV_CORES) return status::bad_argument;
    const bool done = host_.wait_until(
        [&] {
            drain_notifications();
            return !finished_[core].empty();
        },
        timeout_ns, 1'000'000);
    if (!done) return status::timeout;
    result = finished_[core].front();
    finished_[core].erase(finished_[core].begin());
    if (result.status != 0) {
        ++kernel_errors_;
        return status::exec_error;
    }
    return status::ok;
}

std::string trn3_device::counters() {
    const std::string dev = "/sys/bus/pci/devices/0000:" + bdf_name(bdf_);
    std::string s;
    auto line = [&](const std::string& k, const std::string& v) { s += dev + "/" + k + ": " + v + "\n"; };
    line("vendor", fmt::format("{:#06x}", fn_.vendor));
    line("device", fmt::format("{:#06x}", fn_.device));
    line("current_link_speed", fmt::format("{} GT/s", fn_.link_speed == 6 ? 64 : fn_.link_speed == 5 ? 32 : 0));
    line("current_link_width", std::to_string(fn_.link_width));
    if (probed_) {
        line("neuron/boot_status", std::to_string(rd(TRN3_CHIP_BOOT_STATUS)));
        line("neuron/core_state", fmt::format("{:#06x}", rd(TRN3_CHIP_CORE_STATE)));
        line("neuron/err_status", fmt::format("{:#x}", rd(TRN3_CHIP_ERR_STATUS)));
        line("neuron/lnc", std::to_string(rd(TRN3_CHIP_LNC)));
    }
    line("neuron/dma_descriptors", std::to_string(dma_descriptors_));
    line("neuron/dma_bytes", std::to_string(dma_bytes_));
    line("neuron/dma_errors", std::to_string(dma_errors_));
    line("neuron/iommu_faults", std::to_string(iommu_faults_));
    line("neuron/kernels", std::to_string(kernels_));
    line("neuron/kernel_errors", std::to_string(kernel_errors_));
    line("neuron/core_resets", std::to_string(resets_));
    line("neuron/firmware_recoveries", std::to_string(recoveries_));
    line("neuron/interrupts",
         fmt::format("mailbox {} notify {} dma {} error {}", irq_mailbox_, irq_notify_, irq_dma_, irq_error_));
    std::uint64_t used = 0;
    for (const auto& [a, n] : used_) used += n;
    line("neuron/device_memory_used", std::to_string(used));
    return s;
}

}  // namespace trn3::driver
