// The dense transformer step generator (generators.h).
#include <fmt/format.h>

#include "rank_builder.h"
#include "trn3/core/error.h"
#include "trn3/workload/generators.h"

namespace trn3::workload {

namespace {

void divides(std::uint64_t what, const char* param, std::uint64_t by, const char* by_name) {
    if (by == 0 || what % by != 0)
        throw config_error(
            fmt::format("param workload.dense.{} = {}: not a multiple of {} ({})", param, what, by_name, by));
}

}  // namespace

graph dense_step(const dense_config& c) {
    if (std::uint64_t(c.tp) * c.pp * c.dp != c.ranks)
        throw config_error(fmt::format("workload: the parallel degrees tp {} x pp {} x dp {} = {} are not the {} ranks",
                                       c.tp, c.pp, c.dp, std::uint64_t(c.tp) * c.pp * c.dp, c.ranks));
    if (c.ranks < 2) throw config_error("workload: a dense step needs at least two ranks");
    divides(c.layers, "layers", c.pp, "pp");
    divides(c.heads, "heads", c.tp, "tp");
    divides(c.kv_heads, "kv_heads", c.tp, "tp");
    divides(c.ffn, "ffn", c.tp, "tp");
    divides(c.hidden, "hidden", c.heads, "heads");
    if (c.sp) divides(c.seq * c.micro_batch, "seq", c.tp, "tp");
    if (c.layers == 0 || c.micro_batches == 0 || c.seq == 0 || c.micro_batch == 0)
        throw config_error("workload: layers, seq, micro_batch and micro_batches must be at least 1");

    graph g;
    g.name = fmt::format("dense_{}r_tp{}_pp{}_dp{}", c.ranks, c.tp, c.pp, c.dp);
    g.ranks.resize(c.ranks);
    const auto rank = [&](unsigned d, unsigned p, unsigned t) { return (d * c.pp + p) * c.tp + t; };
    for (unsigned d = 0; d < c.dp; ++d)
        for (unsigned p = 0; p < c.pp; ++p) {
            auto& m = g.groups[fmt::format("tp{}.{}", d, p)];
            for (unsigned t = 0; t < c.tp; ++t) m.push_back(rank(d, p, t));
        }
    if (c.dp > 1)
        for (unsigned p = 0; p < c.pp; ++p)
            for (unsigned t = 0; t < c.tp; ++t) {
                auto& m = g.groups[fmt::format("dp{}.{}", p, t)];
                for (unsigned d = 0; d < c.dp; ++d) m.push_back(rank(d, p, t));
            }

    const std::uint64_t h = c.hidden, hd = c.hidden / c.heads, tokens = c.seq * c.micro_batch;
    const std::uint64_t qkv = (c.heads + 2 * c.kv_heads) * hd / c.tp, ffn = c.ffn / c.tp;
    const std::uint64_t heads = c.heads / c.tp, layers = c.layers / c.pp;
    const std::uint64_t act_bytes = tokens * h * 2;  // a micro-batch's activations, bf16
    // A layer's weight gradients on one rank (bf16): QKV, output, up (gate and up) and down.
    const std::uint64_t grad_bytes = (h * qkv + h * h / c.tp + h * 2 * ffn + ffn * h) * 2;
    const std::string& w = c.dtype;
    using k = kernel_spec;
    for (unsigned d = 0; d < c.dp; ++d)
        for (unsigned p = 0; p < c.pp; ++p)
            for (unsigned t = 0; t < c.tp; ++t) {
                const unsigned r = rank(d, p, t);
                const std::string tp_group = fmt::format("tp{}.{}", d, p);
                rank_builder b(g.ranks[r]);
                // The tensor-parallel exchange after a block (and, with sp, the gather before the next).
                const auto exchange = [&](const std::string& what, std::uint64_t after) {
                    if (c.tp == 1) return after;
                    if (!c.sp)
                        return b.collective(what + ".all_reduce", collective_op::all_reduce, act_bytes, tp_group,
                                            {after});
                    return b.collective(what + ".reduce_scatter", collective_op::reduce_scatter, act_bytes, tp_group,
                                        {after});
                };
                const auto gather = [&](const std::string& what, std::uint64_t after) {
                    if (!c.sp || c.tp == 1) return after;
                    return b.collective(what + ".all_gather", collective_op::all_gather, act_bytes, tp_group, {after});
                };
                const std::uint64_t norm_rows = c.sp ? tokens / c.tp : tokens;
                std::uint64_t last = rank_builder::none;
                for (std::uint64_t mb = 0; mb < c.micro_batches; ++mb) {
                    const std::string m = fmt::format("mb{}", mb);
                    if (p > 0)
                        last =
                            b.point_to_point(m + ".recv_activations", false, rank(d, p - 1, t), act_bytes, mb, {last});
                    for (std::uint64_t l = 0; l < layers; ++l) {
                        const std::string n = fmt::format("{}.layer{}", m, p * layers + l);
                        const auto norm1 = b.kernel(n + ".rmsnorm1", k{"rmsnorm", norm_rows, h, 0, 1, "bf16"}, {last});
                        const auto in1 = gather(n + ".attn", norm1);
                        const auto qkv_mm = b.gemm(n + ".qkv", k{"gemm", tokens, qkv, h, 1, w}, {in1});
                        const auto attn =
                            b.kernel(n + ".attention", k{"attention", c.seq, c.seq, hd, c.micro_batch * heads, "bf16"},
                                     {qkv_mm});
                        const auto o = b.gemm(n + ".o", k{"gemm", tokens, h, h / c.tp, 1, w}, {attn});
                        const auto ex1 = exchange(n + ".attn", o);
                        const auto norm2 = b.kernel(n + ".rmsnorm2", k{"rmsnorm", norm_rows, h, 0, 1, "bf16"}, {ex1});
                        const auto in2 = gather(n + ".mlp", norm2);
                        const auto up = b.gemm(n + ".up", k{"gemm", tokens, 2 * ffn, h, 1, w}, {in2});
                        const auto act = b.kernel(n + ".swiglu", k{"elementwise", tokens, ffn, 0, 1, "bf16"}, {up});
                        const auto down = b.gemm(n + ".down", k{"gemm", tokens, h, ffn, 1, w}, {act});
                        last = exchange(n + ".mlp", down);
                    }
                    if (p + 1 < c.pp)
                        last =
                            b.point_to_point(m + ".send_activations", true, rank(d, p + 1, t), act_bytes, mb, {last});
                }
                if (!c.backward) continue;
                for (std::uint64_t mb = 0; mb < c.micro_batches; ++mb) {
                    const std::string m = fmt::format("mb{}", mb);
                    if (p + 1 < c.pp)
                        last = b.point_to_point(m + ".recv_gradients", false, rank(d, p + 1, t), act_bytes,
                                                c.micro_batches + mb, {last});
                    for (std::uint64_t l = layers; l-- > 0;) {
                        const std::string n = fmt::format("bwd.{}.layer{}", m, p * layers + l);
                        const auto in = gather(n + ".mlp", last);
                        const auto down_d = b.gemm(n + ".down.dgrad", k{"gemm", tokens, ffn, h, 1, w}, {in});
                        const auto down_w = b.gemm(n + ".down.wgrad", k{"gemm", ffn, h, tokens, 1, w}, {in}, true);
                        const auto act =
                            b.kernel(n + ".swiglu", k{"elementwise", tokens, 2 * ffn, 0, 1, "bf16"}, {down_d});
                        const auto up_d = b.gemm(n + ".up.dgrad", k{"gemm", tokens, h, 2 * ffn, 1, w}, {act});
                        const auto up_w = b.gemm(n + ".up.wgrad", k{"gemm", h, 2 * ffn, tokens, 1, w}, {act}, true);
                        const auto ex2 = exchange(n + ".mlp", up_d);
                        const auto norm2 = b.kernel(n + ".rmsnorm2", k{"rmsnorm", norm_rows, h, 0, 1, "bf16"}, {ex2});
                        const auto in1 = gather(n + ".attn", norm2);
                        const auto o_d = b.gemm(n + ".o.dgrad", k{"gemm", tokens, h / c.tp, h, 1, w}, {in1});
                        const auto o_w = b.gemm(n + ".o.wgrad", k{"gemm", h / c.tp, h, tokens, 1, w}, {in1}, true);
                        // Attention's backward: the scores again and three products (dV, dP, dQ and dK): twice
                        // the forward's work.
                        const auto attn =
                            b.kernel(n + ".attention",
                                     k{"attention", c.seq, c.seq, hd, 2 * c.micro_batch * heads, "bf16"}, {o_d});
                        const auto qkv_d = b.gemm(n + ".qkv.dgrad", k{"gemm", tokens, h, qkv, 1, w}, {attn});
                        const auto qkv_w = b.gemm(n + ".qkv.wgrad", k{"gemm", h, qkv, tokens, 1, w}, {attn}, true);
                        const auto ex1 = exchange(n + ".attn", qkv_d);
                        last = b.kernel(n + ".rmsnorm1", k{"rmsnorm", norm_rows, h, 0, 1, "bf16"}, {ex1});
                        if (c.dp > 1 && mb + 1 == c.micro_batches)
                            b.collective(n + ".grad_all_reduce", collective_op::all_reduce, grad_bytes,
                                         fmt::format("dp{}.{}", p, t), {down_w, up_w, o_w, qkv_w});
                    }
                    if (p > 0)
                        last = b.point_to_point(m + ".send_gradients", true, rank(d, p - 1, t), act_bytes,
                                                c.micro_batches + mb, {last});
                }
            }
    validate(g);
    return g;
}

}  // namespace trn3::workload
