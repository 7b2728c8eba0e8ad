// What the plans share (internal to sw/collectives): descriptor builders,
// the request's checks and the channel's piece of a chunk.
#pragma once

#include <algorithm>
#include <map>
#include <string>

#include "trn3/collectives/plan.h"

namespace trn3::collectives::detail {

constexpr std::uint64_t token_bytes = 64;
constexpr std::uint64_t token_area_bytes = 512 << 10;  // buffers::token
// A token: a 64-byte write from the token area (every plan sends them so).
inline bool is_token(const request& r, const trn3_dma_descriptor& d) {
    return !(d.flags & TRN3_DESC_WAIT_FABRIC) && d.length == token_bytes && d.src >= r.at.token &&
           d.src < r.at.token + token_area_bytes;
}

// The fabric channel the tokens of ring and in-place all_to_all plans count
// on, apart from their data (on the queues' channels, 1 and up). A count
// cannot tell senders apart, nor one channel's tokens from another's: on
// the data's channel, the predecessor's first piece could land before the
// successor's token and pass for it; and a channel's token says only that
// its own copy is done. So a rank waits for every token meant for it, from
// every channel's plan.
constexpr unsigned token_channel = 0;

inline trn3_dma_descriptor copy(std::uint64_t src, std::uint64_t dst, std::uint64_t bytes, std::uint32_t flags = 0) {
    return {src, dst, static_cast<std::uint32_t>(bytes), flags, 0};
}
// A wait on the queue's own channel.
inline trn3_dma_descriptor wait_for(std::uint64_t bytes) { return {bytes, 0, 0, TRN3_DESC_WAIT_FABRIC, 0}; }
// A wait on channel `counter`.
inline trn3_dma_descriptor wait_on(unsigned counter, std::uint64_t bytes) {
    return {bytes, 0, 0, TRN3_DESC_WAIT_FABRIC | TRN3_DESC_ON_CHANNEL(counter), 0};
}

// Adds byte range c to `ranges` (in order), merged with the last one when
// they touch; an empty range adds nothing.
inline void append_range(std::vector<chunk>& ranges, const chunk& c) {
    if (c.count == 0) return;
    if (!ranges.empty() && ranges.back().first + ranges.back().count == c.first) ranges.back().count += c.count;
    else ranges.push_back(c);
}

// This channel's piece of chunk c of the request's buffer (n chunks), in
// bytes: where it starts and how long it is.
chunk piece_of(const request& r, unsigned n, unsigned c);

inline unsigned mod(long long a, unsigned n) { return static_cast<unsigned>(((a % n) + n) % n); }

// The checks every plan makes; the communicator's ranks by fabric id.
std::map<unsigned, unsigned> check(const request& r);

// The communicator's ranks in order: `ranks`, or the ring's order.
inline const std::vector<unsigned>& ranks_of(const request& r) { return r.ranks.empty() ? r.ring : r.ranks; }

// The buffer a reduce_scatter, all_gather or all_reduce plan works in:
// all_gather's output; the input in place; else all_reduce's output or
// reduce_scatter's work buffer (the input is copied there first).
inline std::uint64_t work_buffer(const request& r) {
    return r.what == op::all_gather   ? r.at.recv
           : r.in_place               ? r.at.send
           : r.what == op::all_reduce ? r.at.recv
                                      : r.at.work;
}

// Leaf i of `leaves` in bytes, for direct and halving-doubling plans:
// all_reduce splits this channel's contiguous part of the buffer in
// `leaves`; reduce_scatter and all_gather (leaves = ranks) take this
// channel's piece of each chunk.
chunk leaf_of(const request& r, unsigned leaves, unsigned i);

// k with 2^k the largest power of two <= n (n >= 1).
inline unsigned floor_log2(unsigned n) {
    unsigned k = 0;
    while ((2u << k) <= n) ++k;
    return k;
}

// The segments a chain (the buffer) or a tree (each half, `bytes`)
// pipelines: n when segment_bytes is 0 (a chain n, a tree 1), else pieces of
// segment_bytes (at most 65,536).
inline unsigned segments_of(const request& r, unsigned n, std::uint64_t bytes) {
    if (r.segment_bytes == 0) return n;
    const std::uint64_t s = (bytes + r.segment_bytes - 1) / r.segment_bytes;
    return static_cast<unsigned>(std::min<std::uint64_t>(std::max<std::uint64_t>(s, 1), 1u << 16));
}
inline unsigned segments_of(const request& r, unsigned n) { return segments_of(r, n, r.bytes); }

// A plan's waits on its fabric channels [r.first_counter, + count): each
// counts what has landed on that channel so far, in order.
class counter_waits {
public:
    counter_waits(const request& r, unsigned count, std::vector<trn3_dma_descriptor>& d)
        : first_(r.first_counter), landed_(count, 0), d_(d) {}
    // `bytes` more on `counter`, then a wait for everything on it so far.
    void wait(unsigned counter, std::uint64_t bytes) {
        std::uint64_t& landed = landed_[counter - first_];
        landed += bytes;
        d_.push_back(wait_on(counter, landed));
    }
    std::uint64_t total() const {
        std::uint64_t t = 0;
        for (std::uint64_t b : landed_) t += b;
        return t;
    }

private:
    unsigned first_;
    std::vector<std::uint64_t> landed_;
    std::vector<trn3_dma_descriptor>& d_;
};

// The plan's j-th counter (request::counter_stride).
inline unsigned counter(const request& r, unsigned j) { return r.first_counter + j * r.counter_stride; }

// Throws unless the plan's counters 0..needed-1 exist and were given.
void check_counters(const request& r, unsigned needed, const char* algorithm_name);

}  // namespace trn3::collectives::detail
