#include "trn3/ethernet/frame.h"

namespace trn3::ethernet {

std::optional<frame_address> address_of(const message& frame) {
    if (frame.data.size() < TRN3_ETH_HEADER_BYTES) return std::nullopt;
    frame_address a;
    a.dst = get_field<std::uint64_t>(frame.data, TRN3_ETH_DST) & TRN3_ETH_NODE_MASK;
    a.src = get_field<std::uint64_t>(frame.data, TRN3_ETH_SRC) & TRN3_ETH_NODE_MASK;
    a.entropy = get_field<std::uint16_t>(frame.data, TRN3_ETH_ENTROPY);
    return a;
}

std::uint64_t flow_hash(const frame_address& a, std::uint64_t salt) {
    // A 64-bit mix (splitmix64's finaliser) of the three fields and the salt.
    auto mix = [](std::uint64_t z) {
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    };
    return mix(mix(mix(salt ^ a.dst) ^ a.src) ^ a.entropy);
}

}  // namespace trn3::ethernet
