// Transaction-layer packets: what crosses a PCIe (or NeuronLink) link.
//
// A `tlp` is one request, completion or message, with the fields a model
// routes and checks on: type, requester and completer ids (bus/device/
// function), tag, traffic class, the poisoned bit (EP), completion status,
// address, length. It travels over a `link` as a `message` whose data is the
// TLP's envelope (encode/decode below: our layout, not the wire's; the
// link charges the wire's size, header_bytes() + payload).
//
// Aggregates. A DMA engine may send `count` TLPs of `length` bytes at
// consecutive addresses as one tlp (count > 1). Every link and switch times
// it as the train of `count` TLPs it stands for: the link charges the whole
// train's flits and records the time between the train's first and last
// arrival (`train_span`); a forwarding element starts the train on its egress
// when the first TLP is ready and never lets its tail leave before the tail
// arrived (docs/pcie.md, "Aggregates"). Results equal the TLP train's when
// the train is alone on its path; with contention, the aggregate holds the
// egress for the train's whole length instead of interleaving with other
// traffic (same totals).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <systemc>

namespace trn3::pcie {

enum class tlp_type : std::uint8_t {
    mem_read,  // MRd: non-posted, answered by completions
    mem_write,  // MWr: posted (MSI-X interrupts are memory writes)
    cfg_read0,  // CfgRd0 / CfgWr0: to a function on the link's bus
    cfg_write0,
    cfg_read1,  // CfgRd1 / CfgWr1: to a bus further down, converted by the bridge above it
    cfg_write1,
    completion,  // Cpl: no data (write completions, errors)
    completion_data,  // CplD
    message,  // Msg (routed to the root)
};

enum class cpl_status : std::uint8_t { success = 0, unsupported = 1, config_retry = 2, completer_abort = 4 };

struct tlp {
    tlp_type type = tlp_type::mem_write;
    std::uint16_t requester = 0;  // bus/device/function of the requester
    std::uint16_t completer = 0;  // completions: of the completer; config requests: of the target
    std::uint16_t tag = 0;  // 14-bit tags (PCIe 6.0)
    std::uint8_t traffic_class = 0;
    // NeuronLink writes: `reduce` 0 plain, else the destination reduces into
    // its memory (bit 3: with the operand its FABRIC_OPERAND register says
    // where); `channel` the sending DMA queue, counted per channel where
    // the write lands (dma/fabric_write.h).
    std::uint8_t reduce = 0;
    std::uint8_t channel = 0;
    bool poisoned = false;  // EP: the data must not be used
    // Simulation only: a timing-only payload (DMA TRN3_DESC_TIMING_ONLY):
    // length and count as ever, on the wire for as long, and no data.
    bool no_data = false;
    cpl_status status = cpl_status::success;
    std::uint64_t address = 0;  // memory requests: byte address; config: register offset
    std::uint32_t length = 0;  // bytes per TLP (requests: asked; completions: carried)
    std::uint32_t count = 1;  // TLPs this one stands for (an aggregate); total bytes count x length
    std::uint32_t byte_count = 0;  // completions: bytes still to come for the request, this one included
    sc_core::sc_time train_span;  // set by the link: first to last TLP arrival of an aggregate
    std::vector<std::uint8_t> data;

    bool is_request() const { return type != tlp_type::completion && type != tlp_type::completion_data; }
    bool is_config() const { return type >= tlp_type::cfg_read0 && type <= tlp_type::cfg_write1; }
    bool is_memory() const { return type == tlp_type::mem_read || type == tlp_type::mem_write; }
    bool posted() const { return type == tlp_type::mem_write || type == tlp_type::message; }
    bool has_data() const {
        return type == tlp_type::mem_write || type == tlp_type::cfg_write0 || type == tlp_type::cfg_write1 ||
               type == tlp_type::completion_data || (type == tlp_type::message && length > 0);
    }
    std::uint64_t total_bytes() const { return std::uint64_t(count) * length; }
};

// Header size on the wire: 4 DW with a 64-bit address, else 3 DW (PCIe 6.0
// flit mode, no orthogonal header content).
unsigned header_bytes(const tlp& t);
// Bytes one TLP of `t` puts on the wire, before link framing: header and payload.
unsigned tlp_wire_bytes(const tlp& t);

// The completion a completer (bdf `completer`) returns for `request`:
// status only (Cpl), the caller adds data for a CplD.
tlp completion_for(const tlp& request, cpl_status status, std::uint16_t completer);
// The CplDs that return `data` for a read: `max_payload` bytes each, as one
// aggregate for the full ones and one for the rest; each carries its offset
// in the request in `address`.
// `data` null: as many bytes, timing only (no_data, for a no_data read).
std::vector<tlp> data_completions(const tlp& request, const std::uint8_t* data, std::uint64_t bytes,
                                  unsigned max_payload, std::uint16_t completer);
inline std::vector<tlp> data_completions(const tlp& request, const std::vector<std::uint8_t>& data,
                                         unsigned max_payload, std::uint16_t completer) {
    return data_completions(request, data.data(), data.size(), max_payload, completer);
}

// An access of `bytes` at `address` cut into TLPs of at most `unit` bytes
// (a power of two dividing 4 KiB) that never cross a `unit` boundary; with
// `aggregate`, equal full-size ones merge into trains (count, at most 2^20).
// `offset` is each piece's first byte in the access.
struct tlp_piece {
    std::uint64_t address, offset;
    std::uint32_t length, count;
};
std::vector<tlp_piece> split_access(std::uint64_t address, std::uint64_t bytes, unsigned unit, bool aggregate);

// The envelope goes after the data, so a TLP's data moves from hop to hop
// without being copied (pass rvalues).
std::vector<std::uint8_t> encode(tlp t);
tlp decode(std::vector<std::uint8_t> bytes);

const char* type_name(tlp_type t);
std::string describe(const tlp& t);  // "MRd 0x4000001000 len 512 x4 req 03:00.0 tag 7"
std::string bdf_text(std::uint16_t bdf);

}  // namespace trn3::pcie
