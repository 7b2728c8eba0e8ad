// Fuzz target: a PCIe function's configuration space as config requests
// reach it (models/pcie config_space.h), built as an endpoint's is (type 0
// header, three 64-bit BARs, PCIe, MSI-X and AER capabilities). The input
// is a sequence of 8-byte requests: kind (bit 0: write), size in bytes,
// register offset (16 bits), value (32 bits), of any size and offset.
// Ill-formed requests (not 1, 2 or 4 bytes naturally aligned inside the
// 4 KiB) read all ones and change nothing; a write changes only the bytes
// it names, writing the same value twice is the same as once, the IDs,
// class and capability chain never change, and every BAR holds an address
// aligned to its size.
#include <array>
#include <cstdint>
#include <cstring>

#include "fuzz_check.h"
#include "trn3/pcie/config_space.h"

namespace {

using snapshot = std::array<std::uint8_t, TRN3_PCI_CONFIG_SIZE>;

snapshot take(const trn3::pcie::config_space& c) { return c.bytes(); }

trn3::pcie::config_space endpoint_like() {
    trn3::pcie::config_space c;
    c.init_type0(TRN3_PCI_VENDOR_AMAZON, 0x7364, 0x120000, 1);
    c.init_bar64(0, 16u << 20, false);
    c.init_bar64(2, 1ull << 39, true);
    c.init_bar64(4, 64u << 10, false);
    c.init_pcie_cap(TRN3_PCIE_TYPE_ENDPOINT, TRN3_PCIE_SPEED_GEN6, 16);
    c.add_capability(TRN3_PCI_CAP_ID_MSIX, TRN3_PCI_MSIX_CAP);
    c.init(TRN3_PCI_MSIX_CAP + TRN3_MSIX_CONTROL, 2, 63, TRN3_MSIX_ENABLE | TRN3_MSIX_FUNCTION_MASK);
    c.init_aer();
    return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    trn3::pcie::config_space c = endpoint_like();
    const snapshot first = take(c);
    // What no request may change: the IDs, class and header type, and the capability pointers.
    const auto fixed = [&](const snapshot& s) {
        return std::memcmp(s.data(), first.data(), 4) == 0 && std::memcmp(s.data() + 8, first.data() + 8, 4) == 0 &&
               s[TRN3_PCI_HEADER_TYPE] == first[TRN3_PCI_HEADER_TYPE] && s[TRN3_PCI_CAP_PTR] == first[TRN3_PCI_CAP_PTR];
    };
    for (std::size_t at = 0; at + 8 <= size; at += 8) {
        const bool write = data[at] & 1;
        const unsigned bytes = data[at + 1];
        std::uint16_t offset = 0;
        std::uint32_t value = 0;
        std::memcpy(&offset, data + at + 2, 2);
        std::memcpy(&value, data + at + 4, 4);
        const bool ok = trn3::pcie::config_space::well_formed(offset, bytes);
        const snapshot before = take(c);
        if (!write) {
            const std::uint32_t v = c.read(offset, bytes);
            if (!ok) TRN3_FUZZ_CHECK(v == 0xFFFFFFFFu);
            else if (bytes < 4) TRN3_FUZZ_CHECK(v >> (8 * bytes) == 0);
            TRN3_FUZZ_CHECK(take(c) == before);  // this function has no read hook
            continue;
        }
        c.write(offset, bytes, value);
        const snapshot after = take(c);
        for (unsigned i = 0; i < after.size(); ++i)
            if (!ok || i < offset || i >= offset + bytes) TRN3_FUZZ_CHECK(after[i] == before[i]);
        c.write(offset, bytes, value);
        TRN3_FUZZ_CHECK(take(c) == after);
        TRN3_FUZZ_CHECK(fixed(after));
        for (unsigned b : {0u, 2u, 4u}) TRN3_FUZZ_CHECK(c.bar_address(b) % c.bar_size(b) == 0);
    }
    return 0;
}
