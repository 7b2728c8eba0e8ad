// The MoE layer generator (generators.h).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include <fmt/format.h>

#include "rank_builder.h"
#include "trn3/core/error.h"
#include "trn3/workload/generators.h"

namespace trn3::workload {

namespace {

// Each rank's tokens routed: counts[r][j] = the (token, choice) pairs of
// rank r whose expert lives on member j of r's expert-parallel group.
std::vector<std::vector<std::uint64_t>> route(const moe_config& c, unsigned ep) {
    std::mt19937_64 rng(c.seed);
    // Expert weights 1 / (1 + e')^skew over a seeded permutation e' of the experts.
    std::vector<std::uint64_t> place(c.experts);
    std::iota(place.begin(), place.end(), 0);
    for (std::size_t i = place.size(); i > 1; --i) std::swap(place[i - 1], place[rng() % i]);
    std::vector<double> cumulative(c.experts);
    double sum = 0;
    for (std::uint64_t e = 0; e < c.experts; ++e) {
        sum += 1.0 / std::pow(1.0 + double(place[e]), c.skew);
        cumulative[e] = sum;
    }
    const std::uint64_t per_rank = c.experts / ep;
    std::vector<std::vector<std::uint64_t>> counts(c.ranks, std::vector<std::uint64_t>(ep, 0));
    for (unsigned r = 0; r < c.ranks; ++r)
        for (std::uint64_t t = 0; t < c.tokens * c.top_k; ++t) {
            const double u = double(rng() >> 11) * 0x1.0p-53 * sum;  // mt19937_64's bits: the same everywhere
            const auto e =
                std::uint64_t(std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin());
            ++counts[r][std::min(e, c.experts - 1) / per_rank];
        }
    return counts;
}

}  // namespace

graph moe_layer(const moe_config& c) {
    const unsigned ep = c.ep ? c.ep : c.ranks;
    if (c.ranks < 2) throw config_error("workload: an MoE layer needs at least two ranks");
    if (ep < 2 || c.ranks % ep != 0)
        throw config_error(fmt::format(
            "param workload.moe.ep = {}: the expert-parallel degree must be at least 2 and divide the {} ranks", ep,
            c.ranks));
    if (c.experts % ep != 0)
        throw config_error(fmt::format(
            "param workload.moe.experts = {}: not a multiple of the expert-parallel degree {}", c.experts, ep));
    if (c.top_k == 0 || c.top_k > c.experts)
        throw config_error(fmt::format("param workload.moe.top_k = {}: from 1 to the {} experts", c.top_k, c.experts));
    if (dtype_bits(c.dispatch_dtype) == 0 || c.dispatch_dtype.rfind("mx", 0) == 0)
        throw config_error(fmt::format("param workload.moe.dispatch_dtype = {}: bf16, fp16, fp8", c.dispatch_dtype));

    graph g;
    g.name = fmt::format("moe_{}r_ep{}", c.ranks, ep);
    g.ranks.resize(c.ranks);
    const unsigned replicas = c.ranks / ep;
    for (unsigned d = 0; d < replicas; ++d) {
        auto& m = g.groups[fmt::format("ep{}", d)];
        for (unsigned j = 0; j < ep; ++j) m.push_back(d * ep + j);
    }
    if (replicas > 1)
        for (unsigned j = 0; j < ep; ++j) {
            auto& m = g.groups[fmt::format("edp{}", j)];
            for (unsigned d = 0; d < replicas; ++d) m.push_back(d * ep + j);
        }

    const auto counts = route(c, ep);
    const std::uint64_t h = c.hidden, f = c.expert_ffn, t = c.tokens;
    const std::uint64_t token_in = h * dtype_bits(c.dispatch_dtype) / 8, token_out = h * 2;  // combine: bf16
    using k = kernel_spec;
    for (unsigned r = 0; r < c.ranks; ++r) {
        const unsigned d = r / ep, me = r % ep;
        const std::string group = fmt::format("ep{}", d);
        // Tokens that come to this rank's experts, from each member of the group.
        std::vector<std::uint64_t> arriving(ep);
        for (unsigned j = 0; j < ep; ++j) arriving[j] = counts[d * ep + j][me];
        const std::uint64_t rows = std::accumulate(arriving.begin(), arriving.end(), std::uint64_t(0));
        const auto splits = [&](const std::vector<std::uint64_t>& tokens, std::uint64_t bytes) {
            std::vector<std::uint64_t> s;
            for (std::uint64_t n : tokens) s.push_back(n * bytes);
            return s;
        };
        rank_builder b(g.ranks[r]);
        const auto norm = b.kernel("rmsnorm", k{"rmsnorm", t, h, 0, 1, "bf16"}, {});
        const auto router = b.gemm("router", k{"gemm", t, c.experts, h, 1, "bf16"}, {norm});
        const auto dispatch = b.all_to_allv("dispatch", splits(counts[r], token_in), group, {router});
        const auto up =
            b.gemm("experts.gate_up", k{"gemm", std::max<std::uint64_t>(rows, 1), 2 * f, h, 1, c.dtype}, {dispatch});
        const auto act =
            b.kernel("experts.swiglu", k{"elementwise", std::max<std::uint64_t>(rows, 1), f, 0, 1, "bf16"}, {up});
        const auto down = b.gemm("experts.down", k{"gemm", std::max<std::uint64_t>(rows, 1), h, f, 1, c.dtype}, {act});
        const auto combine = b.all_to_allv("combine", splits(arriving, token_out), group, {down});
        const auto sum = b.kernel("combine.weighted_sum", k{"elementwise", t, h, 0, 1, "bf16"}, {combine});
        if (!c.backward) continue;
        const auto sum_grad = b.kernel("bwd.weighted_sum", k{"elementwise", t, h, 0, 1, "bf16"}, {sum});
        const auto combine_grad = b.all_to_allv("bwd.combine", splits(counts[r], token_out), group, {sum_grad});
        const std::uint64_t rr = std::max<std::uint64_t>(rows, 1);
        const auto down_dgrad = b.gemm("bwd.experts.down.dgrad", k{"gemm", rr, f, h, 1, c.dtype}, {combine_grad});
        const auto down_wgrad = b.gemm("bwd.experts.down.wgrad", k{"gemm", f, h, rr, 1, c.dtype}, {combine_grad}, true);
        const auto act_grad = b.kernel("bwd.experts.swiglu", k{"elementwise", rr, 2 * f, 0, 1, "bf16"}, {down_dgrad});
        const auto up_dgrad = b.gemm("bwd.experts.gate_up.dgrad", k{"gemm", rr, h, 2 * f, 1, c.dtype}, {act_grad});
        const auto up_wgrad =
            b.gemm("bwd.experts.gate_up.wgrad", k{"gemm", h, 2 * f, rr, 1, c.dtype}, {act_grad}, true);
        const auto dispatch_grad = b.all_to_allv("bwd.dispatch", splits(arriving, token_out), group, {up_dgrad});
        const auto router_dgrad = b.gemm("bwd.router.dgrad", k{"gemm", t, h, c.experts, 1, "bf16"}, {dispatch_grad});
        b.gemm("bwd.router.wgrad", k{"gemm", h, c.experts, t, 1, "bf16"}, {dispatch_grad}, true);
        b.kernel("bwd.rmsnorm", k{"rmsnorm", t, h, 0, 1, "bf16"}, {router_dgrad});
        if (replicas > 1)  // this rank's experts' weights: gate, up and down, bf16 gradients
            b.collective("bwd.experts.grad_all_reduce", collective_op::all_reduce, (c.experts / ep) * 3 * h * f * 2,
                         fmt::format("edp{}", me), {down_wgrad, up_wgrad});
    }
    validate(g);
    return g;
}

}  // namespace trn3::workload
