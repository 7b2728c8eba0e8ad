// Collective schedules for the chips' DMA engines (no SystemC): each rank's
// list of descriptors (spec/device.h) that its chip runs on its own from a
// device-memory ring: local copies, reducing writes into a peer's memory
// (the reduction happens where the data lands), plain writes, and waits on
// the chip's count of fabric bytes landed, which order the steps.
//
// Algorithms (plan_*): ring, direct, recursive halving-doubling, a chain,
// the double binary tree and hierarchical (level by level of the topology);
// check_supported() says which runs which op.
//
// The ring: ranks in `ring` order, the
// buffer in n chunks of whole elements (as even as the element count
// allows). Reduce-scatter: at step s = 0..n-2, rank p reduces its chunk
// (p - s - 1) mod n into its successor's same chunk, after waiting for the
// chunk its predecessor sent at step s - 1 (the one it forwards); rank p
// ends with chunk p reduced over all ranks. All-gather: at step s, rank p
// writes chunk (p - s) mod n to its successor, after the chunk of step s - 1
// has landed. All-reduce is the one, then the other. The reduction order is
// fixed by the ring, so results are the same run to run.
//
// Out of place, each rank first copies its input to the buffer it works in
// and then writes a 64-byte token to its predecessor: a reducing write must
// not land before the copy it reduces into (the predecessor waits for it).
// With operand_landing, nothing is copied: each reducing write takes its
// other operand from the input where it lands (work = input op incoming),
// and the first step sends the input itself.
// Tokens count on fabric channel 0, apart from the data (on the queue's
// channel), and a rank waits for its successors' tokens of every channel.
// Every rank's list has waited for every byte meant for it by its end, so
// a finished queue means a finished collective on that chip.
//
// Channels split every chunk in `channels` pieces; channel k moves the k-th
// piece of each chunk, on its own queue and ring, so the channels run at
// once over different links (or both directions of the same ones).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trn3/spec/device.h"

namespace trn3::collectives {

enum class op { all_reduce, reduce_scatter, all_gather, all_to_all, all_to_allv, broadcast, reduce, send_recv };
enum class algorithm { ring, direct, halving_doubling, chain, tree, hierarchical };

// Device addresses, the same on every rank.
struct buffers {
    std::uint64_t send = 0, recv = 0;
    std::uint64_t work = 0;  // reduce_scatter out of place: the whole buffer is reduced here
    std::uint64_t token = 0;  // 512 KiB: tokens sent and received, 64 bytes each, per channel and peer
    // Where peers' data lands to be reduced locally in a fixed order (direct,
    // halving_doubling): areas of scratch_stride bytes (at least the buffer),
    // as many as counters_needed().
    std::uint64_t scratch = 0, scratch_stride = 0;
    // avg: a buffer as long as the collective's, every element 1/n in its type.
    std::uint64_t constant = 0;
};

// Rings level by level: [level][group] -> fabric ids in ring order.
using rings_by_level = std::vector<std::vector<std::vector<unsigned>>>;

struct request {
    op what = op::all_reduce;
    std::vector<unsigned> ring;  // fabric ids in ring order (at least two, no repeats)
    // The communicator's ranks: chunk c of the buffer is rank c's (its
    // reduce_scatter result, its all_gather input); empty: the ring's order.
    std::vector<unsigned> ranks;
    std::uint64_t bytes = 0;  // the whole buffer (n chunks), as nccl-tests' "size"
    unsigned element_bytes = 4;
    unsigned reduce_op = TRN3_REDUCE_SUM, reduce_type = TRN3_REDUCE_FP32;  // spec codes
    // In place: all_reduce recv = send; reduce_scatter recv = send + p x chunk;
    // all_gather send = recv + p x chunk.
    bool in_place = false;
    buffers at;
    // Channels: the collective split in `channels` parts that run at once,
    // each on its own DMA queue of every chip (the chip counts each queue's
    // fabric bytes apart) and usually its own ring order; this plan is part
    // `channel`: the channel-th piece of every chunk.
    unsigned channels = 1, channel = 0;
    unsigned root = 0;  // broadcast: the rank whose input every rank gets; reduce: the one that gets the result
        // all_to_allv: n x n element counts, splits[i x n + j] from rank i to
    // rank j; i's input holds its pieces for j = 0..n-1 in order, j's output
    // the pieces from i = 0..n-1 in order (`bytes` is not used).
    std::vector<std::uint64_t> splits;
    // hierarchical: each rank's position (in `ranks` order) on each level of
    // the topology, innermost first (tray, rack, the racks; or a torus's x,
    // y, z), from 0; the ranks must fill the grid the levels span.
    std::vector<std::vector<unsigned>> coordinates;
    // hierarchical: this channel's ring through each group of ranks that
    // differ only on a level (search_level_rings); empty: each group by
    // position, odd channels the other way round.
    rings_by_level level_rings;
    // hierarchical: the order this channel takes the levels in (a
    // permutation of 0..L-1); empty: innermost first. Channels in different
    // orders keep every level's links busy at once (level_orders()).
    std::vector<unsigned> level_order;
    algorithm how = algorithm::ring;
    // Chains (broadcast, reduce) pipeline the buffer in segments of this many
    // bytes (at most 65,536 segments); 0: n segments. Trees pipeline each
    // half in segments of this many bytes; 0: each half whole.
    std::uint64_t segment_bytes = 0;
    // The fabric channels this channel's plan may name (direct,
    // halving_doubling, tree, chain reduce, hierarchical): [first_counter, first_counter +
    // counters). Ring and all_to_all data count on their queue's own
    // channel, their tokens on fabric channel 0.
    unsigned first_counter = 0, counters = 0;
    // hierarchical: its j-th counter is first_counter + j x counter_stride.
    // With channel k's first at k and the stride the channel count, one
    // level's flows of every channel are on consecutive fabric channels,
    // which the route tables (TRN3_ROUTE_PICK) spread over every equal path.
    unsigned counter_stride = 1;

    // avg (reduce_op sum, a floating type): after the sum, each rank
    // multiplies what this channel finished there by `at.constant` (1/n
    // rounded to the type: TRN3_REDUCE_PROD), locally (plan() adds it).
    bool average = false;
    // Every descriptor timing only (TRN3_DESC_TIMING_ONLY): the times of the
    // data mode, no data moved (plan() sets the flag).
    bool timing_only = false;
    // Out of place, the ring's reduce-scatter (all_reduce, reduce_scatter):
    // with copy_phases > 0 the input goes to the buffer it is reduced in on
    // DMA queues of their own (plan_ring_copies), ahead of the steps, in
    // min(copy_phases, n - 1) phases of the reduce-scatter's n - 1 steps, instead of all
    // of it before the first step. A phase's tokens count on fabric channel
    // copy_counter + phase (one per channel from each successor), and a
    // rank waits for them before the phase's first step; the first step
    // sends the input itself (the one chunk no step reduces into here).
    unsigned copy_phases = 0, copy_counter = 0;
    // Out of place, the reduce-scatter of the ring or of hierarchical's
    // first level (all_reduce, reduce_scatter), without copies: each of its
    // reducing writes asks for an operand (TRN3_DESC_REDUCE_OPERAND) and the
    // landing chip takes it from the input, `at.send - work` bytes from where
    // the write lands (rank_plan's operand_offset): work = input op
    // incoming, no copy and no token. Not with copy_phases.
    bool operand_landing = false;
    // Traffic classes (TRN3_DESC_TRAFFIC_CLASS, 0-7) of the data and of the
    // 64-byte tokens (plan() sets them): with strict arbitration on the
    // fabric, a higher class goes first (a tensor-parallel communicator over
    // an expert-parallel one; tokens past the data they order).
    unsigned traffic_class = 0, token_class = 0;
};

struct rank_plan {
    unsigned fabric_id = 0;
    std::vector<trn3_dma_descriptor> descriptors;  // waits count from 0: add the chip's count at the start
    std::uint64_t rx_bytes = 0;  // fabric bytes that land on this rank
    // Reducing writes that land on this rank on fabric channel
    // operand_counter (empty: the plan's own, its queue's) ask for an
    // operand this many bytes (mod 2^64) from where they land: the chip's
    // FABRIC_OPERAND of that channel must say so before the collective
    // starts (request.operand_landing).
    std::optional<std::uint64_t> operand_offset;
    std::optional<unsigned> operand_counter;
};

// The chunk c of a buffer of `elements`: its first element and its length.
struct chunk {
    std::uint64_t first = 0, count = 0;
};
chunk chunk_of(std::uint64_t elements, unsigned n, unsigned c);

// One plan per rank, in ring order. Throws std::invalid_argument, one line,
// for a request that cannot be planned (one rank, repeats, a size that is
// not whole elements or, for reduce_scatter, all_gather and all_to_all, not
// n whole chunks). all_to_all has no ring form: plan() gives it the direct one.
std::vector<rank_plan> plan_ring(const request& r);

// The copy queues of a ring reduce-scatter out of place with copy_phases
// (request): queue j of `queues` serves channels j, j + queues, ...; phase
// by phase, each rank copies those channels' pieces that its predecessor
// will reduce into during the phase's steps, in step order, then sends each
// of those channels' predecessors a 64-byte token on copy_counter + phase.
// `requests[k]`: channel k's (its ring). Result [j]: plans by rank (the
// communicator's order). Descriptors carry the request's timing-only flag
// and traffic classes, as plan() gives the channels'.
std::vector<std::vector<rank_plan>> plan_ring_copies(const std::vector<request>& requests, unsigned queues);

// Direct. send_recv (nccl-tests' sendrecv): rank p writes its buffer to
// rank p + 1's output and receives rank p - 1's; in place, each rank first
// copies its buffer aside and tells its predecessor, and writes only once
// its successor has told it. Counters: data, then tokens.
// all_to_all (all_to_allv: pieces of any sizes, splits): rank i writes chunk j of its input straight into
// rank j's output at chunk i (for s = 1..n-1, j = i + s: every rank starts
// on a different peer), then waits for the n - 1 chunks meant for it; its
// own chunk is a local copy. In place, each rank first copies its buffer
// aside and tells every peer (a 64-byte token each, on fabric channel 0),
// and writes to peers only once every peer's tokens of every channel have
// come: nothing lands on a chunk not yet copied. The plans are in `ranks` order (the ring is not used).
std::vector<rank_plan> plan_direct(const request& r);

// broadcast, a pipelined chain: the ring rotated to start at the root; the
// buffer in n segments; the root writes each segment to the next rank, and
// every other rank forwards segment s to its successor once segment s has
// landed (the last rank only waits). Out of place the root also copies its
// input to its output; everyone else receives straight into its output.
// reduce, the chain the other way: the ring rotated to end at the root;
// every rank but the first copies its input to the buffer it works in (the
// root: its output; the others: `work`, so their inputs stay as they were)
// and tells its predecessor with a token; the first rank writes each
// segment reducing into the next rank's buffer, and every other rank but
// the root forwards segment s, reducing, once the segment has landed: the
// reduction order is the chain's. Counters: data, then tokens.
std::vector<rank_plan> plan_chain(const request& r);

// Direct reductions (one-shot over the switches), for reduce_scatter,
// all_gather and all_reduce: every rank writes chunk j of its buffer to
// rank j's scratch (slot: the sender), waits for the n - 1 chunks meant for
// it and reduces them into its own, locally, in rank order (the order does
// not depend on which landed first); then writes its chunk into every
// rank's buffer. all_reduce splits the channel's contiguous part of the
// buffer in n chunks. Counters: the scatter's, then the gather's.
//
// Recursive halving-doubling (Rabenseifner's reduce_scatter + all_gather):
// the p = 2^k ranks halve their part of the buffer each step with the peer
// at distance p/2, p/4, ..., 1: each gives the half it will not keep into
// the peer's scratch area of that step and reduces the peer's copy of the
// half it keeps, locally (so the order is fixed); then the doubling returns
// the pieces in reverse. 2 log2 p steps. Ranks beyond the power of two first
// give their input to rank r - p (which reduces it in before halving) and
// take the result back at the end. One counter per peer distance (its bytes
// in order on one path), one for that fold.
std::vector<rank_plan> plan_halving_doubling(const request& r);

// The double binary tree (all_reduce): two balanced binary trees over the
// ranks, tree 1 tree 0's positions shifted by one, so that a rank that is a
// leaf in one is inside the other; each carries half of the channel's part
// of the buffer, in segments (segment_bytes; 0: whole) that pipeline: up the
// tree, every rank reduces its children's segment (landed in a scratch slot
// per child) into its own, locally and in child order, and sends the sum to
// its parent; then the root's result comes down the same tree. 2 log2 n
// steps deep, each rank sending at most twice its part. Counters: per tree,
// one per child slot and one from the parent (6).
std::vector<rank_plan> plan_tree(const request& r);

// Hierarchical (all_reduce, reduce_scatter, all_gather), over the levels of
// the topology in `coordinates` (per-dimension rings on a torus): level by
// level in the channel's `level_order` (default: from the innermost), a ring
// reduce-scatter among the ranks that differ only on that level, over the
// part of the buffer the level before left the rank (all of it at the
// first); then ring all-gathers level by level back in the reverse order. On L levels of d_0..d_{L-1} ranks: 2 sum(d_i - 1) steps
// (the ring's 2(n - 1)), each rank sending 2(n - 1)/n of the buffer as the
// ring does, most of it on the first level's links. Level l's ring is the ranks by
// position (odd channels the other way round). Before each level's
// reduce-scatter but the first (and out of place, copying the input first,
// the first too; with operand_landing the first level lands input op
// incoming and nothing is copied), each rank tells its level-l
// predecessor with a token that its part is whole, so no sum is taken
// before the one the schedule puts first. A level's rings may be in any
// order (level_rings: searched over the fabric's links). A rank ends with the chunk of its
// rank (all_reduce: of its position read as a number, the first level in
// the order the most significant digit, so every level's part is
// contiguous), whatever the rings' order. Counters per channel: each level's
// data, then each level's tokens (2L).
std::vector<rank_plan> plan_hierarchical(const request& r);

// Throws std::invalid_argument, one line, unless algorithm a runs op o on n ranks.
void check_supported(algorithm a, op o, unsigned n);
// The fabric channels a plan of algorithm a needs per channel
// (request.counters); `levels`: the hierarchical plan's.
unsigned counters_needed(algorithm a, op o, unsigned n, unsigned levels = 1);

// The plan for the request, by its algorithm (`how`).
std::vector<rank_plan> plan(const request& r);

// Adds each channel's count when the collective starts (the chip's
// FABRIC_RX_CHANNEL(c)) to every wait on that channel; a wait without
// ON_CHANNEL waits on `queue`'s.
void offset_waits(std::vector<trn3_dma_descriptor>& descriptors, unsigned queue,
                  const std::array<std::uint64_t, TRN3_FABRIC_CHANNELS>& base);

const char* name(op o);
const char* name(algorithm a);
// The algorithm name(a) names; throws std::invalid_argument, one line, for another name.
algorithm algorithm_named(const std::string& text);

}  // namespace trn3::collectives
