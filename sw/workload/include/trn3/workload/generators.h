// Built-in workloads: the graph of one training step of a dense transformer
// (Llama-like) or of one MoE layer (DeepSeek-like), per rank, in the same
// form a Chakra trace gives (write_chakra() writes them out, so other
// simulators run the same workload).
//
// Dense: ranks = tp x pp x dp, tensor parallel innermost (rank = (d x pp +
// p) x tp + t, so a tensor-parallel group sits on neighbouring chips). Each
// layer's forward is RMSNorm, the QKV GEMM, attention, the output GEMM and a
// tensor-parallel all_reduce, RMSNorm, the MLP's up (gate and up together)
// and down GEMMs and another all_reduce; with sequence parallelism the
// all_reduces become a reduce_scatter after each block and an all_gather
// before the next. The backward has each GEMM twice (data and weight
// gradients), attention twice, the same collectives, and after each
// layer's last micro-batch a data-parallel all_reduce of its gradients
// (overlapping the layers below). Pipeline stages hold layers / pp layers
// and pass activations and gradients by send/recv, micro-batches in GPipe
// order (every forward, then every backward).
//
// MoE: every rank holds experts / ep experts and its own tokens; a layer is
// RMSNorm, the router GEMM, the dispatch (all_to_allv over the
// expert-parallel group: each token to its top_k experts' ranks), the
// experts' gate-and-up GEMM, the activation and the down GEMM over the
// tokens that arrived (the local experts' rows stacked: a grouped GEMM),
// the combine (the all_to_allv back) and the weighted sum; the backward
// reverses it, and with more ranks than ep the expert gradients are
// all_reduced over the ranks that hold the same experts. Routing is drawn
// from a seeded generator with a skew (expert e's weight 1 / (1 + e')^skew,
// e' a seeded permutation), so token counts are uneven as real routing is,
// and the same seed gives the same workload everywhere.
//
// A configuration whose degrees do not divide throws config_error naming
// the param.
#pragma once

#include <cstdint>
#include <string>

#include "trn3/workload/graph.h"

namespace trn3::workload {

struct dense_config {
    unsigned ranks = 8;
    std::uint64_t hidden = 8192, heads = 64, kv_heads = 8, ffn = 28672, layers = 4;
    std::uint64_t seq = 4096, micro_batch = 1, micro_batches = 1;
    unsigned tp = 8, pp = 1, dp = 1;
    bool sp = false;  // sequence parallel: reduce_scatter + all_gather instead of all_reduce
    std::string dtype = "bf16";  // GEMMs: bf16, fp8, mxfp8, mxfp4
    bool backward = true;
};

struct moe_config {
    unsigned ranks = 8;
    unsigned ep = 0;  // expert-parallel degree (0: every rank)
    std::uint64_t tokens = 4096;  // per rank (sequence x micro-batch)
    std::uint64_t hidden = 7168, expert_ffn = 2048, experts = 256, top_k = 8;
    std::string dtype = "bf16";  // the experts' GEMMs: bf16, fp8, mxfp8, mxfp4
    std::string dispatch_dtype = "bf16";  // the dispatch's tokens (DeepSeek-V3 sends fp8)
    double skew = 0.1;
    std::uint64_t seed = 1;
    bool backward = true;
};

graph dense_step(const dense_config& c);
graph moe_layer(const moe_config& c);

}  // namespace trn3::workload
