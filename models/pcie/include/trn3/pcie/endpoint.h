// A PCIe endpoint function: the device side of a link. It owns the
// function's configuration space and turns TLPs into TLM accesses of the
// device behind it and back.
//
//   link ══ endpoint ── bar0 (initiator): the device's registers   (BAR0, 64-bit)
//                    ── bar2 (initiator): the device's memory window (BAR2, 64-bit prefetchable)
//                    ── dma (target):     the device's own requests into PCIe space
//                    MSI-X table and pending bits in BAR4 (the endpoint's own)
//
// Configuration space: type-0 header (vendor 0x1D0F, `device_id`,
// `class_code`), BAR0/2/4 sized by software the usual way, the PCIe
// capability (link status from the link, flit mode), MSI-X (`msix_vectors`
// entries, table at BAR4 + 0, pending bits at BAR4 + 0x8000), AER. The
// function captures its bus and device number from the configuration
// writes that reach it (its requester id).
//
// Inbound: memory requests to BAR0/BAR2 become TLM accesses at the BAR
// offset (Memory Space must be enabled); a read is answered with CplDs of
// `max_payload`; an address error is an Unsupported Request, a generic
// error poisoned data (EP). A poisoned write is dropped and logged (AER).
//
// Outbound (dma socket; Bus Master must be enabled): writes go as MWr TLPs
// of `max_payload`, reads as MRd of `max_read_request`, never crossing a
// 4 KiB boundary, at most `tags` reads outstanding; with `aggregate` the
// equal TLPs of one access travel as one aggregate. An access returns when
// its TLPs are on the wire (writes, which are posted) or when its
// completions are in (reads); UR -> TLM_ADDRESS_ERROR_RESPONSE, poisoned data
// or completion timeout -> TLM_GENERIC_ERROR_RESPONSE, both logged in AER.
// Use the dma socket from a thread. The targets behind bar0 and bar2 are
// called from the link's delivery: they annotate their time and must not
// wait() (sparse_memory, register blocks, HBM do not).
//
// raise_msix(v): sends the vector's message (a 4-byte MWr of the table
// entry's data to its address) if MSI-X is enabled and neither the function
// nor the vector is masked; else sets its pending bit, and the message goes
// when software unmasks it.
//
// params: device_id, class_code, bar0_size, bar2_size, msix_vectors, max_payload,
//         max_read_request, tags, completion_timeout, aggregate, latency
// stats:  requests_in, writes_out, reads_out, msix_sent, msix_pending, unsupported, poisoned
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "trn3/core/component.h"
#include "trn3/core/payload.h"
#include "trn3/core/stats.h"
#include "trn3/pcie/config_space.h"
#include "trn3/pcie/link.h"
#include "trn3/pcie/requester.h"
#include "trn3/spec/pci.h"

namespace trn3::pcie {

class endpoint : public component {
public:
    tlm_utils::simple_initiator_socket<endpoint> bar0{"bar0"};
    tlm_utils::simple_initiator_socket<endpoint> bar2{"bar2"};
    tlm_utils::simple_target_socket_optional<endpoint> dma{"dma"};  // may stay unbound (no DMA engine)

    param<std::uint64_t> device_id;
    param<std::uint64_t> class_code;
    param<byte_count> bar0_size;
    param<byte_count> bar2_size;
    param<std::uint64_t> msix_vectors;
    param<std::uint64_t> max_payload;
    param<std::uint64_t> max_read_request;
    param<std::uint64_t> tags;
    param<sc_core::sc_time> completion_timeout;
    param<bool> aggregate;
    param<sc_core::sc_time> latency;

    static constexpr std::uint64_t msix_bar_size = 0x10000;
    static constexpr std::uint64_t msix_pba_offset = TRN3_EP_MSIX_PBA_OFFSET;

    explicit endpoint(const sc_core::sc_module_name& name, unsigned default_device_id = TRN3_PCI_DEVICE_TEST_EP,
                      std::uint64_t default_bar0 = 1 << 20, std::uint64_t default_bar2 = 1ull << 30,
                      unsigned default_class = TRN3_PCI_CLASS_ACCELERATOR);

    void attach(link_end& end);
    config_space& config() { return config_; }
    std::uint16_t bdf() const { return bdf_; }
    // The requester id on a link no configuration request reaches (a
    // scale-up fabric port: firmware sets its routing id).
    void set_bdf(std::uint16_t bdf) { bdf_ = bdf; }
    void raise_msix(unsigned vector);
    bool msix_pending(unsigned vector) const;

private:
    void receive(tlp& t);
    void dma_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay);
    void serve_request(tlp& t);
    void msix_access(tlp& t, std::uint64_t offset);
    void send_msix(unsigned vector);
    void reply(const tlp& request, cpl_status status, const std::vector<std::uint8_t>& data,
               const sc_core::sc_time& delay);
    // Splits [address, address + bytes) into TLP pieces of at most `unit`
    // without crossing a 4 KiB boundary; with `aggregate` equal pieces merge.
    std::vector<tlp_piece> split(std::uint64_t address, std::uint64_t bytes, unsigned unit) const {
        return split_access(address, bytes, unit, aggregate.get());
    }

    config_space config_;
    link_end* end_ = nullptr;
    std::uint16_t bdf_ = 0;
    requester requests_;
    std::vector<std::uint8_t> msix_table_;
    untouched_buffer untouched_;  // what timing-only accesses to the BARs point at
    std::vector<std::uint64_t> msix_pba_;
    counter requests_in_, writes_out_, reads_out_, msix_sent_, msix_pending_, unsupported_, poisoned_;
};

}  // namespace trn3::pcie
