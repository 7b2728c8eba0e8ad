// A workload: what each rank of a distributed training or inference step
// does, as a graph of nodes per rank (the shape of a Chakra execution
// trace): kernels, collectives, point-to-point sends and receives, and the
// dependencies between them. The same graph comes from a Chakra trace
// (chakra.h) or a generator (generators.h), and the workload host program
// (sw/apps/src/workload.cpp) runs it on an UltraServer's chips.
//
// Matching across ranks is by order, as NCCL's is: the k-th collective a
// rank issues on a group is the k-th of every other member of that group;
// the k-th send from rank a to rank b with a tag meets the k-th receive on
// b from a with that tag. validate() checks that every match exists and
// agrees (op, bytes), so a run cannot wait forever on a partner that never
// comes.
//
// No SystemC here: a host library, tested alone.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace trn3::workload {

enum class node_kind { compute, collective, send, recv };

// Chakra's CollectiveCommType values, and all_to_allv (ALL_TO_ALL with
// per-peer sizes, the attribute comm_splits).
enum class collective_op {
    all_reduce = 0,
    reduce = 1,
    all_gather = 2,
    broadcast = 5,
    all_to_all = 6,
    reduce_scatter = 7,
    barrier = 9,
    all_to_allv = 100,
};
const char* name(collective_op op);
const char* name(node_kind k);

// The kernel a compute node runs on the chip's NeuronCores, where the
// trace says (attribute "kernel" and its shape); kind empty: none, the
// node takes its recorded duration.
//   gemm         C[m][n] = A[m][k] B[k][n] (2 m n k FLOPs)
//   attention    flash-style, batch x heads, m queries, n keys, k head dim (4 b m n k FLOPs)
//   softmax      m rows of n
//   rmsnorm      m rows of n
//   elementwise  m x n elements (a gated MLP's activation: silu(g) x u)
//   mx_quantize  m rows of n values into dtype's MX format (mxfp8, mxfp4),
//                blocks of 32 along n: an MX GEMM's operand computed at run
//                time (activations, gradients)
struct kernel_spec {
    std::string kind;
    std::uint64_t m = 0, n = 0, k = 0, batch = 1;
    std::string dtype = "bf16";  // bf16, fp8, mxfp8, mxfp4
    bool timed() const { return !kind.empty(); }
};

struct node {
    std::uint64_t id = 0;
    std::string name;
    node_kind kind = node_kind::compute;
    std::vector<std::uint64_t> deps;  // control and data: ids on the same rank
    std::uint64_t duration_ps = 0;  // what the trace recorded (compute without a kernel: its time)

    // compute
    kernel_spec kernel;
    std::uint64_t flops = 0;  // the model's FLOPs (not the padding a tiled kernel adds)
    std::uint64_t hbm_bytes = 0;  // operands read and results written

    // collective, send, recv
    collective_op op = collective_op::all_reduce;
    std::uint64_t bytes = 0;  // collective: the whole buffer (nccl-tests' size); send/recv: the message
    std::string group;  // the process group ("" : every rank)
    std::uint64_t root = 0;  // broadcast, reduce: the root's rank in the group
    std::vector<std::uint64_t> splits;  // all_to_allv: bytes this rank sends to each member, in group order
    unsigned peer = 0;  // send: the destination rank; recv: the source
    std::uint64_t tag = 0;
    std::string dtype = "bf16";  // the collective's element type
};

struct rank_graph {
    std::vector<node> nodes;
};

struct graph {
    std::string name;
    std::vector<rank_graph> ranks;
    // Process groups by name: their ranks, in group order.
    std::map<std::string, std::vector<unsigned>> groups;

    // The members of `group` ("" : every rank).
    std::vector<unsigned> members(const std::string& group) const;
};

// Checks the graph and returns each rank's nodes in an order that honours
// every dependency (by position in `nodes`; ties keep the trace's order).
// Throws config_error, one line naming the rank and node, for: a duplicate
// id, a dependency on an id the rank does not have, a cycle, an unknown
// group or a rank outside it, a send or receive to itself or with no
// partner, collectives that do not match across a group (count, op, bytes,
// root, splits of the group's size), a kernel of an unknown kind or shape.
std::vector<std::vector<std::size_t>> validate(const graph& g);

// FLOPs and HBM bytes of a kernel (the model's, not the padding).
std::uint64_t kernel_flops(const kernel_spec& k);
std::uint64_t kernel_hbm_bytes(const kernel_spec& k);
// Bits per element: bf16, fp16 16; fp32, int32 32; fp8 (e4m3, e5m2), mxfp8 8; mxfp4 4 (MX scales aside);
// 0 for a name it does not know.
unsigned dtype_bits(const std::string& dtype);

}  // namespace trn3::workload
