// The requester side of non-posted transactions: tags, outstanding
// requests, completions collected into the request's buffer, completion
// timeout. Shared by the root complex and the endpoints.
//
// A thread opens a tag per request (waiting while all `tags` are
// outstanding), sends the request, then waits for it: the completions'
// data lands at their offsets (a completion's `address` is its first byte's
// offset in the request), a status other than success ends the request, and
// so does the completion timeout. An aggregate request uses one tag for the
// train it stands for.
#pragma once

#include <cstdint>
#include <vector>

#include <systemc>

#include "trn3/pcie/tlp.h"

namespace trn3::pcie {

class requester {
public:
    struct result {
        cpl_status status = cpl_status::success;
        bool poisoned = false;
        bool timed_out = false;
        std::vector<std::uint8_t> data;
        bool ok() const { return status == cpl_status::success && !poisoned && !timed_out; }
    };

    requester(unsigned tags, sc_core::sc_time timeout);

    // Thread context: a free tag for a request of `requester` expecting
    // `bytes` of data (timing only, no_data: counted, none kept); the
    // completion timeout runs from now.
    std::uint16_t open(std::uint64_t bytes, std::uint16_t requester_id, bool no_data = false);
    // Delivery context: a completion arrived (false: no open request has its
    // tag and requester id; a completion arriving after its request timed out
    // and the tag was reused is taken for the new request, as in hardware).
    bool complete(const tlp& cpl);
    // Thread context: waits until the request is answered or times out
    // (then until its last completion's tail has arrived), frees the tag.
    result wait(std::uint16_t tag);

    unsigned outstanding() const { return outstanding_; }

private:
    struct slot {
        bool busy = false;
        bool done = false;
        std::uint64_t expected = 0, received = 0;
        std::uint16_t requester_id = 0;
        sc_core::sc_time tail, deadline;
        result r;
        sc_core::sc_event answered;
    };
    std::vector<slot> slots_;
    sc_core::sc_time timeout_;
    unsigned outstanding_ = 0;
    unsigned next_ = 0;
    sc_core::sc_event freed_;
};

}  // namespace trn3::pcie
