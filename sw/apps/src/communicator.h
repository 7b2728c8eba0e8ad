// A communicator's chips as the collectives program's `chips` param gives
// them: "all", or fabric ids and ranges ("0-3,8,12-15"), in rank order.
// A malformed list, a chip off the fabric, a repeat or fewer than two
// chips is a config_error (one line, exit 2).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "trn3/core/error.h"

namespace trn3::apps {

// "all", or fabric ids and ranges: the communicator's chips in rank order.
inline std::vector<unsigned> parse_members(const std::string& text, unsigned fabric_chips) {
    std::vector<unsigned> v;
    if (text == "all") {
        for (unsigned c = 0; c < fabric_chips; ++c) v.push_back(c);
    } else {
        std::size_t at = 0;
        while (at <= text.size()) {
            const std::size_t comma = std::min(text.find(',', at), text.size());
            const std::string item = text.substr(at, comma - at);
            const std::size_t dash = item.find('-');
            unsigned long first = 0, last = 0;
            try {
                std::size_t used = 0;
                first = std::stoul(item.substr(0, dash), &used);
                if (used != item.substr(0, dash).size()) throw std::invalid_argument(item);
                last = first;
                if (dash != std::string::npos) {
                    last = std::stoul(item.substr(dash + 1), &used);
                    if (used != item.size() - dash - 1) throw std::invalid_argument(item);
                }
            } catch (const std::exception&) {
                throw config_error("param collectives.chips = '" + text + "': '" + item +
                                   "' is not a fabric id or a range a-b");
            }
            if (last < first || last >= fabric_chips)
                throw config_error(fmt::format("param collectives.chips = '{}': {} is not on the fabric (ids 0-{})",
                                               text, item, fabric_chips - 1));
            for (unsigned long c = first; c <= last; ++c) {
                if (std::find(v.begin(), v.end(), c) != v.end())
                    throw config_error(fmt::format("param collectives.chips = '{}': chip {} appears twice", text, c));
                v.push_back(static_cast<unsigned>(c));
            }
            at = comma + 1;
        }
    }
    if (v.size() < 2)
        throw config_error("param collectives.chips = '" + text + "': a communicator needs at least two chips");
    return v;
}

}  // namespace trn3::apps
