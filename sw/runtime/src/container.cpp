#include "trn3/runtime/container.h"

#include <cstring>

#include <fmt/format.h>

namespace trn3::runtime {

namespace {
constexpr std::size_t header_bytes(std::uint32_t cores) { return 16 + std::size_t(cores) * 5 * 8; }
template <typename T>
void put(std::vector<std::uint8_t>& v, std::size_t at, T x) {
    std::memcpy(v.data() + at, &x, sizeof x);
}
template <typename T>
T get(const std::uint8_t* p, std::size_t at) {
    T x;
    std::memcpy(&x, p + at, sizeof x);
    return x;
}
}  // namespace

std::vector<std::uint8_t> pack(const std::vector<const kernels::program*>& per_core) {
    const std::uint32_t cores = static_cast<std::uint32_t>(per_core.size());
    std::vector<std::uint8_t> out(header_bytes(cores), 0);
    std::memcpy(out.data(), container_magic, 8);
    put<std::uint32_t>(out, 8, container_version);
    put<std::uint32_t>(out, 12, cores);
    for (std::uint32_t c = 0; c < cores; ++c)
        for (unsigned e = 0; e < isa::engine_count; ++e) {
            const auto& code = per_core[c]->on(static_cast<isa::engine>(e)).code();
            if (code.empty()) continue;
            out.resize((out.size() + 63) / 64 * 64, 0);
            const std::size_t at = out.size();
            put<std::uint32_t>(out, 16 + (c * 5 + e) * 8, static_cast<std::uint32_t>(at));
            put<std::uint32_t>(out, 16 + (c * 5 + e) * 8 + 4, static_cast<std::uint32_t>(code.size()));
            out.resize(at + code.size() * sizeof(isa::instruction));
            std::memcpy(out.data() + at, code.data(), code.size() * sizeof(isa::instruction));
        }
    return out;
}

std::string parse(const std::uint8_t* data, std::size_t bytes, container_view& out) {
    if (!data || bytes < 16) return "shorter than a container header";
    if (std::memcmp(data, container_magic, 8) != 0) return "not a trn3 program container (bad magic)";
    if (get<std::uint32_t>(data, 8) != container_version)
        return fmt::format("container version {} (this runtime reads {})", get<std::uint32_t>(data, 8),
                           container_version);
    const std::uint32_t cores = get<std::uint32_t>(data, 12);
    if (cores != 1 && cores != 2) return fmt::format("{} programs: a logical core has 1 or 2", cores);
    if (bytes < header_bytes(cores)) return "truncated header";
    out.cores = cores;
    out.streams.assign(cores, {});
    bool any = false;
    for (std::uint32_t c = 0; c < cores; ++c)
        for (unsigned e = 0; e < 5; ++e) {
            stream_ref r{get<std::uint32_t>(data, 16 + (c * 5 + e) * 8),
                         get<std::uint32_t>(data, 16 + (c * 5 + e) * 8 + 4)};
            if (r.instructions == 0) continue;
            if (r.offset < header_bytes(cores) || r.offset % 64 != 0 ||
                std::uint64_t(r.offset) + std::uint64_t(r.instructions) * 192 > bytes)
                return fmt::format("core {} engine {}: stream outside the container", c, e);
            out.streams[c][e] = r;
            any = true;
        }
    if (!any) return "no instruction streams";
    return "";
}

kernels::program unpack(const std::uint8_t* data, const container_view& view, unsigned core) {
    kernels::program p;
    for (unsigned e = 0; e < isa::engine_count; ++e) {
        const stream_ref r = view.streams.at(core)[e];
        kernels::stream& s = p.on(static_cast<isa::engine>(e));
        for (std::uint32_t k = 0; k < r.instructions; ++k) {
            isa::instruction i;
            std::memcpy(&i, data + r.offset + std::size_t(k) * sizeof i, sizeof i);
            s.raw(i);
        }
    }
    return p;
}

}  // namespace trn3::runtime
