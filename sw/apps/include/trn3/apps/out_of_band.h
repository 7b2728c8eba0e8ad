// out_of_band: what a launcher (PMIx, an MPI job) gives the programs of a
// cluster's systems: a key-value store they all share, to swap endpoint
// addresses and meet at barriers.
//
// A value is visible `latency` after it is put (the launcher's own
// network), on every system alike. That is what lets a distributed run
// (window_sync.h) give the same results as one process: the values other
// processes put arrive at the next window boundary, which is never later
// than `latency` after they were put (the platform keeps its window within
// it), so each becomes visible at the same simulated time everywhere.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <systemc>

#include "trn3/core/ranks.h"

namespace trn3::apps {

class out_of_band {
public:
    explicit out_of_band(const sc_core::sc_time& latency) : latency_(latency) {}
    const sc_core::sc_time& latency() const { return latency_; }

    // Puts `key` now (a key put again: the last value, once it is visible).
    void put(const std::string& key, std::vector<std::uint8_t> value);
    // Whether `key` is visible now, and its value (null when it is not).
    bool has(const std::string& key) const { return find(key) != nullptr; }
    const std::vector<std::uint8_t>* find(const std::string& key) const;

    // The window protocol's side channel: what was put here since the last
    // call, and what another process put.
    byte_buffer take_new();
    void add_remote(const byte_buffer& bytes);

private:
    struct entry {
        std::vector<std::uint8_t> value;
        sc_core::sc_time visible;
    };
    void store(const std::string& key, std::vector<std::uint8_t> value, const sc_core::sc_time& visible);

    sc_core::sc_time latency_;
    // Per key, its values by the time each becomes visible.
    std::map<std::string, std::map<sc_core::sc_time, std::vector<std::uint8_t>>> values_;
    byte_buffer fresh_;
};

}  // namespace trn3::apps
