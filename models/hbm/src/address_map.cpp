#include "trn3/hbm/address_map.h"

#include <map>
#include <sstream>

#include <fmt/format.h>

#include "trn3/core/error.h"

namespace trn3::hbm {
namespace {
unsigned log2_exact(std::uint64_t v, const std::string& what, const std::string& param_name) {
    if (v == 0 || (v & (v - 1)) != 0)
        throw config_error(fmt::format("{}: {} = {} must be a power of two", param_name, what, v));
    unsigned n = 0;
    while ((1ull << n) < v) ++n;
    return n;
}
}  // namespace

address_map::address_map(const std::string& text, const geometry& g, const std::string& param_name) {
    std::map<std::string, unsigned> expected = {
        {"channel", log2_exact(g.channels, "channels", param_name)},
        {"bank_group", log2_exact(g.bank_groups, "bank groups", param_name)},
        {"bank", log2_exact(g.banks_per_group, "banks per group", param_name)},
    };
    std::map<std::string, std::pair<unsigned, unsigned>> fields;  // name -> shift, width
    unsigned shift = 0;
    std::stringstream ss(text);
    std::string item;
    bool row_seen = false;
    while (std::getline(ss, item, ',')) {
        if (row_seen) throw config_error(param_name + ": 'row' must be the last field (it takes the remaining bits)");
        auto colon = item.find(':');
        std::string name = item.substr(0, colon);
        if (name == "row") {
            if (colon != std::string::npos) throw config_error(param_name + ": 'row' takes no width");
            row_seen = true;
            row_shift_ = shift;
            continue;
        }
        if (colon == std::string::npos)
            throw config_error(param_name + ": field '" + name + "' needs a width (name:bits)");
        unsigned width = 0;
        try {
            width = static_cast<unsigned>(std::stoul(item.substr(colon + 1)));
        } catch (const std::exception&) {
            throw config_error(param_name + ": width of field '" + name + "' is not a number");
        }
        if (name != "offset" && name != "channel" && name != "bank_group" && name != "bank" && name != "column")
            throw config_error(param_name + ": unknown field '" + name +
                               "' (fields: offset, channel, column, bank_group, bank, row)");
        if (!fields.emplace(name, std::make_pair(shift, width)).second)
            throw config_error(param_name + ": field '" + name + "' appears twice");
        shift += width;
    }
    if (!row_seen) throw config_error(param_name + ": the last field must be 'row'");
    for (const char* required : {"offset", "channel", "bank_group", "bank", "column"})
        if (!fields.count(required))
            throw config_error(param_name + ": field '" + std::string(required) + "' is missing");
    for (const auto& [name, bits] : expected)
        if (fields[name].second != bits)
            throw config_error(fmt::format("{}: field '{}' has {} bits but the geometry needs {}", param_name, name,
                                           fields[name].second, bits));
    offset_bits_ = fields["offset"].second;
    unsigned column_bits = log2_exact(g.row_bytes >> offset_bits_, "row size / interleave granule", param_name);
    if ((1ull << offset_bits_) > g.row_bytes || fields["column"].second != column_bits)
        throw config_error(fmt::format("{}: field 'column' has {} bits but a {}-byte row holds {} granules of {} bytes",
                                       param_name, fields["column"].second, g.row_bytes, g.row_bytes >> offset_bits_,
                                       1ull << offset_bits_));
    auto make = [&](const std::string& name) {
        field f;
        f.shift = fields[name].first;
        f.mask = (1ull << fields[name].second) - 1;
        return f;
    };
    channel_ = make("channel");
    bank_group_ = make("bank_group");
    bank_ = make("bank");
    column_ = make("column");
}

}  // namespace trn3::hbm
