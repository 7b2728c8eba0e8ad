// Fuzz target: Chakra execution traces (sw/workload/chakra.h). The input is
// two ranks' files (split at its first byte's share of the length), parsed
// and validated: any bytes become a graph or a config_error, never another
// exception or a crash; a graph that parses validates to an order holding
// every node of every rank once.
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "trn3/core/error.h"
#include "trn3/workload/chakra.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::size_t cut = 1 + (size - 1) * data[0] / 256;
    std::vector<std::pair<std::string, std::vector<std::uint8_t>>> files{
        {"fuzz.0.et", std::vector<std::uint8_t>(data + 1, data + cut)},
        {"fuzz.1.et", std::vector<std::uint8_t>(data + cut, data + size)}};
    try {
        const trn3::workload::graph g = trn3::workload::parse_chakra(files);
        const auto order = trn3::workload::validate(g);
        TRN3_FUZZ_CHECK(order.size() == g.ranks.size());
        for (std::size_t r = 0; r < order.size(); ++r) TRN3_FUZZ_CHECK(order[r].size() == g.ranks[r].nodes.size());
    } catch (const trn3::config_error&) {}
    return 0;
}
