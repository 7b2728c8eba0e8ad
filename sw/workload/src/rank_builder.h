// Appends nodes to one rank's graph, each with a fresh id, for the
// generators: kernels (their FLOPs and bytes counted), collectives, sends
// and receives.
#pragma once

#include <utility>

#include "trn3/workload/graph.h"

namespace trn3::workload {

class rank_builder {
public:
    explicit rank_builder(rank_graph& g) : g_(g) {}

    std::uint64_t kernel(std::string name, kernel_spec k, std::vector<std::uint64_t> deps) {
        node& n = add(std::move(name), node_kind::compute, std::move(deps));
        n.flops = kernel_flops(k);
        n.hbm_bytes = kernel_hbm_bytes(k);
        n.kernel = std::move(k);
        return n.id;
    }
    // A GEMM whose MX operands computed at run time are quantized just
    // before it (weights are held quantized): A always, B too when it is an
    // activation (a weight gradient's). Other types: the GEMM alone.
    std::uint64_t gemm(const std::string& name, const kernel_spec& k, std::vector<std::uint64_t> deps,
                       bool b_is_activation = false) {
        if (k.dtype == "mxfp8" || k.dtype == "mxfp4") {
            std::vector<std::uint64_t> quantized{
                kernel(name + ".quantize_a", {"mx_quantize", k.m, k.k, 0, k.batch, k.dtype}, deps)};
            if (b_is_activation)
                quantized.push_back(kernel(name + ".quantize_b", {"mx_quantize", k.n, k.k, 0, k.batch, k.dtype}, deps));
            deps = std::move(quantized);
        }
        return kernel(name, k, std::move(deps));
    }
    std::uint64_t collective(std::string name, collective_op op, std::uint64_t bytes, std::string group,
                             std::vector<std::uint64_t> deps, std::string dtype = "bf16") {
        node& n = add(std::move(name), node_kind::collective, std::move(deps));
        n.op = op;
        n.bytes = bytes;
        n.group = std::move(group);
        n.dtype = std::move(dtype);
        return n.id;
    }
    std::uint64_t all_to_allv(std::string name, std::vector<std::uint64_t> splits, std::string group,
                              std::vector<std::uint64_t> deps) {
        std::uint64_t total = 0;
        for (std::uint64_t s : splits) total += s;
        const std::uint64_t id =
            collective(std::move(name), collective_op::all_to_allv, total, std::move(group), std::move(deps));
        g_.nodes.back().splits = std::move(splits);
        return id;
    }
    std::uint64_t point_to_point(std::string name, bool send, unsigned peer, std::uint64_t bytes, std::uint64_t tag,
                                 std::vector<std::uint64_t> deps) {
        node& n = add(std::move(name), send ? node_kind::send : node_kind::recv, std::move(deps));
        n.peer = peer;
        n.bytes = bytes;
        n.tag = tag;
        return n.id;
    }

private:
    node& add(std::string name, node_kind kind, std::vector<std::uint64_t> deps) {
        node& n = g_.nodes.emplace_back();
        n.id = g_.nodes.size() - 1;
        n.name = std::move(name);
        n.kind = kind;
        for (std::uint64_t d : deps)
            if (d != none) n.deps.push_back(d);
        return n;
    }

    rank_graph& g_;

public:
    static constexpr std::uint64_t none = ~0ull;  // "no dependency" in a deps list
};

}  // namespace trn3::workload
