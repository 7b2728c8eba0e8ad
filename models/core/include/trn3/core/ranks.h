// The processes of a distributed run (architecture decision 10): who this
// one is among them, and the three collective operations the window
// protocol (window_sync.h) and the end of a run need. A run outside mpirun
// has one rank (the default); trn3vp installs the MPI one (models/dist,
// Open MPI) when it is launched by mpirun.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace trn3 {

using byte_buffer = std::vector<std::uint8_t>;

class ranks {
public:
    virtual ~ranks() = default;
    virtual unsigned rank() const = 0;
    virtual unsigned size() const = 0;
    // Each rank gives one buffer per rank (to[r] for rank r, to[rank()]
    // ignored); returns what each rank gave this one (from[r]; empty from itself).
    virtual std::vector<byte_buffer> exchange(std::vector<byte_buffer> to) = 0;
    // Every rank's buffer, in rank order, on every rank.
    virtual std::vector<byte_buffer> all_gather(const byte_buffer& mine) = 0;
    // Ends every process of the job with `code` (after this one has said why).
    [[noreturn]] virtual void abort_job(int code) = 0;

    bool single() const { return size() == 1; }
    bool leader() const { return rank() == 0; }
};

// This process's ranks: one, unless set_ranks installed others (null: one again).
ranks& process_ranks();
void set_ranks(std::unique_ptr<ranks> r);

// Helpers over all_gather (every rank must call them, in the same order).
bool all_of(ranks& r, bool mine);
std::uint64_t min_of(ranks& r, std::uint64_t mine);
std::uint64_t sum_of(ranks& r, std::uint64_t mine);
std::vector<std::string> gather_text(ranks& r, const std::string& mine);

// Runs `step` (elaboration) on every rank; if it throws on any, it throws on
// every one, before any of them reaches a later collective call: the rank
// that failed with its own error, the others with "rank k: <its message>"
// (a config_error where it was one, so that every rank exits 2).
void on_every_rank(ranks& r, const std::function<void()>& step);

}  // namespace trn3
