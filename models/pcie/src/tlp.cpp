#include "trn3/pcie/tlp.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "trn3/spec/pci.h"

namespace trn3::pcie {

unsigned header_bytes(const tlp& t) {
    if (t.is_memory()) return t.address > 0xFFFFFFFFull ? 16 : 12;
    if (t.type == tlp_type::message) return 16;
    return 12;
}

unsigned tlp_wire_bytes(const tlp& t) { return header_bytes(t) + (t.has_data() ? t.length : 0); }

tlp completion_for(const tlp& request, cpl_status status, std::uint16_t completer) {
    tlp c;
    c.type = tlp_type::completion;
    c.requester = request.requester;
    c.completer = completer;
    c.tag = request.tag;
    c.traffic_class = request.traffic_class;
    c.channel = request.channel;  // a flow's completions keep its path choice
    c.status = status;
    return c;
}

std::vector<tlp_piece> split_access(std::uint64_t address, std::uint64_t bytes, unsigned unit, bool aggregate) {
    std::vector<tlp_piece> out;
    std::uint64_t offset = 0;
    while (offset < bytes) {
        const std::uint64_t a = address + offset;
        const std::uint64_t len = std::min<std::uint64_t>(unit - (a % unit), bytes - offset);
        tlp_piece p{a, offset, static_cast<std::uint32_t>(len), 1};
        if (len == unit && aggregate)
            p.count = static_cast<std::uint32_t>(std::min<std::uint64_t>((bytes - offset) / unit, 1u << 20));
        offset += std::uint64_t(p.length) * p.count;
        out.push_back(p);
    }
    return out;
}

std::vector<tlp> data_completions(const tlp& request, const std::uint8_t* data, std::uint64_t bytes,
                                  unsigned max_payload, std::uint16_t completer) {
    std::vector<tlp> out;
    const std::uint64_t total = bytes;
    std::uint64_t offset = 0;
    while (offset < total) {
        tlp c = completion_for(request, cpl_status::success, completer);
        c.type = tlp_type::completion_data;
        const std::uint64_t left = total - offset;
        c.length = static_cast<std::uint32_t>(left >= max_payload ? max_payload : left);
        c.count = static_cast<std::uint32_t>(left >= max_payload ? left / max_payload : 1);
        c.address = offset;
        c.byte_count = static_cast<std::uint32_t>(left);
        c.no_data = data == nullptr;
        if (data) c.data.assign(data + offset, data + offset + c.total_bytes());
        offset += c.total_bytes();
        out.push_back(std::move(c));
    }
    return out;
}

namespace {

// Envelope: the data, then fixed fields, little-endian.
constexpr std::size_t envelope_bytes = 40;

template <typename T>
void put(std::uint8_t*& p, T v) {
    std::memcpy(p, &v, sizeof v);
    p += sizeof v;
}
template <typename T>
T get(const std::uint8_t*& p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    p += sizeof v;
    return v;
}

}  // namespace

std::vector<std::uint8_t> encode(tlp t) {
    std::vector<std::uint8_t> out = std::move(t.data);
    const std::size_t n = out.size();
    if (out.capacity() < n + envelope_bytes) out.reserve(n + envelope_bytes + 64);
    out.resize(n + envelope_bytes);
    std::uint8_t* p = out.data() + n;
    put<std::uint8_t>(p, static_cast<std::uint8_t>(t.type));
    put<std::uint8_t>(p, static_cast<std::uint8_t>((t.poisoned ? 1 : 0) | (t.no_data ? 2 : 0)));
    put<std::uint8_t>(p, static_cast<std::uint8_t>(t.status));
    put<std::uint8_t>(p, t.traffic_class);
    put<std::uint16_t>(p, t.requester);
    put<std::uint16_t>(p, t.completer);
    put<std::uint16_t>(p, t.tag);
    put<std::uint8_t>(p, t.reduce);
    put<std::uint8_t>(p, t.channel);
    put<std::uint32_t>(p, t.length);
    put<std::uint32_t>(p, t.count);
    put<std::uint32_t>(p, t.byte_count);
    put<std::uint64_t>(p, t.address);
    put<std::uint64_t>(p, t.train_span.value());  // in the kernel's time resolution
    return out;
}

tlp decode(std::vector<std::uint8_t> bytes) {
    tlp t;
    if (bytes.size() < envelope_bytes) return t;  // cannot happen: links carry what encode() made
    const std::size_t n = bytes.size() - envelope_bytes;
    const std::uint8_t* p = bytes.data() + n;
    t.type = static_cast<tlp_type>(get<std::uint8_t>(p));
    const auto flags = get<std::uint8_t>(p);
    t.poisoned = (flags & 1) != 0;
    t.no_data = (flags & 2) != 0;
    t.status = static_cast<cpl_status>(get<std::uint8_t>(p));
    t.traffic_class = get<std::uint8_t>(p);
    t.requester = get<std::uint16_t>(p);
    t.completer = get<std::uint16_t>(p);
    t.tag = get<std::uint16_t>(p);
    t.reduce = get<std::uint8_t>(p);
    t.channel = get<std::uint8_t>(p);
    t.length = get<std::uint32_t>(p);
    t.count = get<std::uint32_t>(p);
    t.byte_count = get<std::uint32_t>(p);
    t.address = get<std::uint64_t>(p);
    t.train_span = sc_core::sc_time::from_value(get<std::uint64_t>(p));
    bytes.resize(n);  // keeps the capacity: the next hop's envelope fits
    t.data = std::move(bytes);
    return t;
}

const char* type_name(tlp_type t) {
    switch (t) {
    case tlp_type::mem_read: return "MRd";
    case tlp_type::mem_write: return "MWr";
    case tlp_type::cfg_read0: return "CfgRd0";
    case tlp_type::cfg_write0: return "CfgWr0";
    case tlp_type::cfg_read1: return "CfgRd1";
    case tlp_type::cfg_write1: return "CfgWr1";
    case tlp_type::completion: return "Cpl";
    case tlp_type::completion_data: return "CplD";
    case tlp_type::message: return "Msg";
    }
    return "?";
}

std::string bdf_text(std::uint16_t bdf) {
    return fmt::format("{:02x}:{:02x}.{}", TRN3_PCI_BDF_BUS(bdf), TRN3_PCI_BDF_DEV(bdf), TRN3_PCI_BDF_FN(bdf));
}

std::string describe(const tlp& t) {
    std::string s = fmt::format("{} 0x{:x} len {}", type_name(t.type), t.address, t.length);
    if (t.count > 1) s += fmt::format(" x{}", t.count);
    s += fmt::format(" req {} tag {}", bdf_text(t.requester), t.tag);
    if (t.is_config() || !t.is_request()) s += fmt::format(" cpl/target {}", bdf_text(t.completer));
    if (!t.is_request()) s += fmt::format(" status {}", static_cast<int>(t.status));
    if (t.poisoned) s += " EP";
    return s;
}

}  // namespace trn3::pcie
