// Fuzz target: SRD packets as the NIC receives them (models/nic
// srd_packet.h, spec/srd.h). Any bytes decode or are refused; a packet that
// decodes has its payload (all of it, or, timing only, a leading part in a
// message's first packet, or none) inside the frame and its message, and
// encodes back to the very same bytes.
#include <cstdint>
#include <vector>

#include "fuzz_check.h"
#include "trn3/nic/srd_packet.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace trn3;
    message frame;
    frame.data.assign(data, data + size);
    const std::optional<nic::srd_packet> p = nic::decode(frame);
    if (!p) return 0;
    TRN3_FUZZ_CHECK(p->payload_bytes <= TRN3_SRD_MAX_PAYLOAD);
    TRN3_FUZZ_CHECK(p->msg_offset <= p->msg_bytes && p->payload_bytes <= p->msg_bytes - p->msg_offset);
    TRN3_FUZZ_CHECK(size == TRN3_SRD_HEADER_BYTES + std::size_t{p->carried});
    TRN3_FUZZ_CHECK(p->carried <= p->payload_bytes);
    if (p->type == TRN3_SRD_DATA) TRN3_FUZZ_CHECK(p->has_payload == (p->carried == p->payload_bytes));
    if (p->carried) TRN3_FUZZ_CHECK(p->payload == frame.data.data() + TRN3_SRD_HEADER_BYTES);
    if (!p->has_payload && p->carried) TRN3_FUZZ_CHECK(p->msg_offset == 0);
    const message again = nic::encode(*p, p->payload, p->carried);
    TRN3_FUZZ_CHECK(again.data == frame.data);
    return 0;
}
