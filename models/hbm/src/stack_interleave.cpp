// The HBM stacks as one striped memory (stack_interleave.h).
#include "trn3/hbm/stack_interleave.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "trn3/core/payload.h"
#include "trn3/spec/device.h"

namespace trn3::hbm {

stack_interleave::stack_interleave(const sc_core::sc_module_name& name, unsigned stacks)
    : component(name, frequency{1.4e9}),
      granule(this, "granule", byte_count{1 << 20},
              "bytes of the striped window on one stack before the next (a power of two)",
              range<byte_count>{byte_count{64}, byte_count{1ull << 30}}),
      stacks_(stacks), accesses_(this, "accesses", "accesses to the striped window"),
      split_accesses_(this, "split_accesses", "of those, accesses that touched more than one stack") {
    const std::uint64_t g = granule.get().bytes;
    if (g & (g - 1)) throw config_error(fmt::format("param {} = {}: a power of two", granule.name(), g));
    in.register_b_transport(this, &stack_interleave::b_transport);
    in.register_transport_dbg(this, &stack_interleave::transport_dbg);
}

stack_interleave::place stack_interleave::locate(std::uint64_t x) const {
    const std::uint64_t g = granule.get().bytes, run = x / g;
    return {static_cast<unsigned>(run % stacks_), (run / stacks_) * g + x % g};
}

std::vector<stack_interleave::part> stack_interleave::split(std::uint64_t address, std::uint64_t length) const {
    std::vector<part> parts(stacks_);
    const std::uint64_t g = granule.get().bytes;
    for (std::uint64_t done = 0; done < length;) {
        const std::uint64_t x = address + done, n = std::min(g - x % g, length - done);
        const place p = locate(x);
        part& s = parts[p.stack];
        if (s.pieces.empty()) s.offset = p.offset;
        s.length += n;
        s.pieces.emplace_back(done, n);
        done += n;
    }
    return parts;
}

void stack_interleave::b_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay) {
    ++accesses_;
    const std::uint64_t address = tx.get_address();
    const unsigned length = tx.get_data_length();
    unsigned char* const data = tx.get_data_ptr();
    const bool no_data = tx.get_extension<timing_only>() != nullptr;
    // What the stacks refuse, refused here as a whole (never half a write):
    // no bytes, byte enables, a streaming width below the length.
    const unsigned width = tx.get_streaming_width();
    if (length == 0) return tx.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    if (tx.get_byte_enable_ptr()) return tx.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    if (!no_data && width < length) return tx.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    const std::vector<part> parts = split(address, length);
    unsigned touched = 0;
    sc_core::sc_time done = delay;
    tlm::tlm_response_status status = tlm::TLM_OK_RESPONSE;
    // The same payload (its extensions too), once per stack it touches.
    for (unsigned s = 0; s < stacks_; ++s) {
        const part& p = parts[s];
        if (p.length == 0) continue;
        ++touched;
        unsigned char* at = data;
        // gather_ is the model's own: safe because no stack's b_transport
        // waits (they are loosely timed), so no other access runs meanwhile.
        if (!no_data && p.pieces.size() > 1) {  // gather this stack's bytes
            gather_.resize(p.length);
            std::uint64_t o = 0;
            for (const auto& [from, n] : p.pieces) {
                if (tx.is_write()) std::memcpy(gather_.data() + o, data + from, n);
                o += n;
            }
            at = gather_.data();
        } else if (!no_data) at = data + p.pieces.front().first;
        tx.set_address(TRN3_DEV_HBM_BASE(s) + p.offset);
        tx.set_data_ptr(at);
        tx.set_data_length(static_cast<unsigned>(p.length));
        tx.set_streaming_width(static_cast<unsigned>(p.length));
        tx.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        sc_core::sc_time d = delay;
        out->b_transport(tx, d);
        done = std::max(done, d);
        if (tx.get_response_status() != tlm::TLM_OK_RESPONSE && status == tlm::TLM_OK_RESPONSE)
            status = tx.get_response_status();
        if (!no_data && p.pieces.size() > 1 && tx.is_read()) {  // scatter back
            std::uint64_t o = 0;
            for (const auto& [to, n] : p.pieces) {
                std::memcpy(data + to, gather_.data() + o, n);
                o += n;
            }
        }
    }
    if (touched > 1) ++split_accesses_;
    tx.set_address(address);
    tx.set_data_ptr(data);
    tx.set_data_length(length);
    tx.set_streaming_width(width);
    tx.set_dmi_allowed(false);
    tx.set_response_status(status);
    delay = done;
}

unsigned stack_interleave::transport_dbg(tlm::tlm_generic_payload& tx) {
    // Piece by piece (granule runs), each at its stack's own address.
    const std::uint64_t address = tx.get_address();
    const unsigned length = tx.get_data_length();
    unsigned char* const data = tx.get_data_ptr();
    const std::uint64_t g = granule.get().bytes;
    unsigned moved = 0;
    for (std::uint64_t done = 0; done < length;) {
        const std::uint64_t x = address + done, n = std::min(g - x % g, length - done);
        const place p = locate(x);
        tx.set_address(TRN3_DEV_HBM_BASE(p.stack) + p.offset);
        tx.set_data_ptr(data + done);
        tx.set_data_length(static_cast<unsigned>(n));
        const unsigned got = out->transport_dbg(tx);
        moved += got;
        if (got < n) break;
        done += n;
    }
    tx.set_address(address);
    tx.set_data_ptr(data);
    tx.set_data_length(length);
    return moved;
}

}  // namespace trn3::hbm
