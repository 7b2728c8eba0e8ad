// A communicator's chips as the collectives program's `chips` param gives
// them: "all", or fabric ids and ranges ("0-3,8,12-15"), in rank order; and
// their positions on the topology's levels.
// A malformed list, a chip off the fabric, a repeat or fewer than two
// chips is a config_error (one line, exit 2).
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "trn3/core/error.h"

namespace trn3::apps {

// "all", or fabric ids and ranges: the communicator's chips in rank order.
inline std::vector<unsigned> parse_members(const std::string& text, unsigned fabric_chips,
                                           const std::string& param = "collectives.chips") {
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
                throw config_error("param " + param + " = '" + text + "': '" + item +
                                   "' is not a fabric id or a range a-b");
            }
            if (last < first || last >= fabric_chips)
                throw config_error(fmt::format("param {} = '{}': {} is not on the fabric (ids 0-{})", param, text, item,
                                               fabric_chips - 1));
            for (unsigned long c = first; c <= last; ++c) {
                if (std::find(v.begin(), v.end(), c) != v.end())
                    throw config_error(fmt::format("param {} = '{}': chip {} appears twice", param, text, c));
                v.push_back(static_cast<unsigned>(c));
            }
            at = comma + 1;
        }
    }
    if (v.size() < 2)
        throw config_error("param " + param + " = '" + text + "': a communicator needs at least two chips");
    return v;
}

// The communicator on the topology's levels (host_system::fabric_levels):
// the levels on which its members sit at more than one place, with how
// many places each, and every member's position on them, renumbered from 0
// in the order of the topology's positions: the hierarchical plan's grid.
struct member_levels {
    std::vector<std::string> names;
    std::vector<unsigned> places;
    std::vector<std::vector<unsigned>> position;  // per member, in rank order
};

inline member_levels levels_of(const std::vector<unsigned>& members, const std::vector<std::string>& names,
                               const std::vector<std::vector<unsigned>>& fabric_levels) {
    member_levels out;
    if (fabric_levels.empty()) return out;
    out.position.resize(members.size());
    for (std::size_t l = 0; l < names.size(); ++l) {
        std::map<unsigned, unsigned> renumbered;
        for (unsigned m : members) renumbered[fabric_levels.at(m).at(l)] = 0;
        if (renumbered.size() < 2) continue;
        unsigned next = 0;
        for (auto& [place, index] : renumbered) index = next++;
        out.names.push_back(names[l]);
        out.places.push_back(next);
        for (std::size_t r = 0; r < members.size(); ++r)
            out.position[r].push_back(renumbered.at(fabric_levels.at(members[r]).at(l)));
    }
    return out;
}

}  // namespace trn3::apps
