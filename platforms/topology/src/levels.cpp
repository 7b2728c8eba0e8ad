// The levels of the topology a hierarchical collective steps through
// (topology.h, chip_levels).
#include <algorithm>

#include "trn3/topology/topology.h"

namespace trn3::topology {

chip_levels topology::levels() const {
    chip_levels l;
    const bool torus = params.sku == "nl16-torus2d" || params.sku == "nl32x2-torus3d";
    if (torus) {
        // build_torus: a chip's tray is y x 4 + x, its slot z.
        l.names = {"x", "y"};
        if (params.sku == "nl32x2-torus3d") l.names.push_back("z");
    } else {
        l.names = {"tray", "rack", "racks"};
    }
    for (int c : chips()) {
        const node& n = nodes[std::size_t(c)];
        if (torus) {
            std::vector<unsigned> at{unsigned(n.tray % 4), unsigned(n.tray / 4)};
            if (l.names.size() == 3) at.push_back(unsigned(n.slot));
            l.position.push_back(at);
        } else {
            l.position.push_back({unsigned(n.slot), unsigned(n.tray), unsigned(n.rack)});
        }
    }
    return l;
}

}  // namespace trn3::topology
