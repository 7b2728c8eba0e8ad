#include "trn3/pcie/phy.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "trn3/core/error.h"
#include "trn3/spec/pci.h"

namespace trn3::pcie {

const phy_spec& spec_of(generation g) {
    static const phy_spec gen5{"Gen5", 32e9 * 128.0 / 130.0 / 8.0, false, 0, 0, 8, TRN3_PCIE_SPEED_GEN5, 32};
    static const phy_spec gen6{"Gen6", 64e9 / 8.0, true, 256, 236, 0, TRN3_PCIE_SPEED_GEN6, 64};
    static const phy_spec ualink{"UALink", 200e9 / 8.0, true, 640, 616, 0, TRN3_PCIE_SPEED_UALINK, 200};
    switch (g) {
    case generation::gen5: return gen5;
    case generation::gen6: return gen6;
    case generation::ualink: return ualink;
    }
    return gen6;
}

generation parse_generation(const std::string& text, const std::string& what) {
    if (text == "gen5") return generation::gen5;
    if (text == "gen6") return generation::gen6;
    if (text == "ualink") return generation::ualink;
    throw config_error(fmt::format("{}: unknown link generation '{}' (gen5, gen6, ualink)", what, text));
}

const char* generation_text(generation g) {
    return g == generation::gen5 ? "gen5" : g == generation::gen6 ? "gen6" : "ualink";
}

one_of<std::string> generation_choices() { return {{"gen5", "gen6", "ualink"}}; }

std::set<unsigned> parse_lanes(const std::string& text, unsigned lane_count, const std::string& what) {
    std::set<unsigned> lanes;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find(',', pos);
        if (end == std::string::npos) end = text.size();
        const std::string item = text.substr(pos, end - pos);
        pos = end + 1;
        if (item.empty()) continue;
        // Read as 64-bit and compared before narrowing: 4294967297 is lane
        // 4294967297 (refused), not lane 1.
        unsigned long long first = 0, last = 0;
        try {
            const std::size_t dash = item.find('-');
            std::size_t used = 0;
            first = std::stoull(item.substr(0, dash), &used);
            if (used != (dash == std::string::npos ? item.size() : dash)) throw std::invalid_argument(item);
            last = first;
            if (dash != std::string::npos) {
                const std::string tail = item.substr(dash + 1);
                last = std::stoull(tail, &used);
                if (used != tail.size()) throw std::invalid_argument(item);
            }
        } catch (const std::logic_error&) {
            throw config_error(
                fmt::format("{}: '{}' is not a lane number or range (e.g. 3,17,40-55)", what, quoted_excerpt(item)));
        }
        if (last < first || last >= lane_count)
            throw config_error(fmt::format("{}: lanes '{}' are outside 0-{}", what, item, lane_count - 1));
        for (auto l = static_cast<unsigned>(first); l <= last; ++l) lanes.insert(l);
    }
    return lanes;
}

width_choice choose_width(unsigned lanes, unsigned spare_lanes, const std::set<unsigned>& failed) {
    std::vector<unsigned> widths{1, 2, 4, 8, 16, 32};
    for (unsigned w = 8; w <= lanes; w += 8) widths.push_back(w);
    widths.push_back(lanes);
    std::sort(widths.begin(), widths.end(), std::greater<>());
    const unsigned physical = lanes + spare_lanes;
    unsigned bad = 0;
    for (unsigned l : failed)
        if (l < physical) ++bad;
    if (spare_lanes > 0) {
        const unsigned healthy = physical - bad;
        if (healthy >= lanes) return {lanes, bad};
        for (unsigned w : widths)
            if (w <= healthy) return {w, 0};
        return {0, 0};
    }
    auto healthy_run = [&](unsigned first, unsigned n) {
        for (unsigned l = first; l < first + n; ++l)
            if (failed.count(l)) return false;
        return true;
    };
    for (unsigned w : widths)
        if (w <= lanes && (healthy_run(0, w) || healthy_run(lanes - w, w))) return {w, 0};
    return {0, 0};
}

}  // namespace trn3::pcie
