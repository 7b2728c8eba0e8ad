// Fuzz target: SRD packets as the NIC receives them (models/nic
// srd_packet.h, spec/srd.h). Any bytes decode or are refused; a packet that
// decodes has its payload inside the frame and its message, and encodes
// back to the very same bytes.
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
    if (p->has_payload)
        TRN3_FUZZ_CHECK(p->payload == frame.data.data() + TRN3_SRD_HEADER_BYTES &&
                        size == TRN3_SRD_HEADER_BYTES + std::size_t{p->payload_bytes});
    else TRN3_FUZZ_CHECK(size == TRN3_SRD_HEADER_BYTES);
    const message again = nic::encode(*p, p->has_payload ? p->payload : nullptr);
    TRN3_FUZZ_CHECK(again.data == frame.data);
    return 0;
}
