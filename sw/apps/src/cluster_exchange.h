// A barrier of every host of every UltraServer of a cluster that also swaps
// a few numbers: the UltraServer's hosts meet (the program's own barrier),
// then its host 0 puts `values()` (taken then) in the launcher's store
// (out_of_band) and waits for every other UltraServer's; the other hosts
// wait for host 0. gathered() then holds the values by UltraServer, the
// same on every host of every UltraServer, until the next call. A system
// alone takes its own values. The programs that run one step across
// UltraServers (collectives, workload) meet with it.
//
// The participants are the program instances: one per UltraServer, or, in
// an UltraServer cut by rack (host_system::parts), one per rack; gathered()
// is by participant (UltraServer by UltraServer, each by its parts).
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "trn3/apps/host_program.h"
#include "trn3/apps/out_of_band.h"

namespace trn3::apps {

class cluster_exchange {
public:
    // `prefix` names the program's keys in the store.
    cluster_exchange(const host_system& s, std::string prefix) : sys_(s), prefix_(std::move(prefix)) {}

    // Host h: `meet_hosts` is the UltraServer's barrier (false: it failed,
    // and so does this). False with `why` when another UltraServer did not
    // come within timeout_ns.
    bool everywhere(unsigned h, const std::function<bool()>& meet_hosts,
                    const std::function<std::vector<std::uint64_t>()>& values, std::uint64_t timeout_ns,
                    std::uint64_t poll_ns, std::string& why) {
        // Read before the barrier: once it releases, host 0 may finish the swap before this host runs again.
        const std::uint64_t generation = generation_;
        if (!meet_hosts()) return false;
        const unsigned n = participants(), me = sys_.cluster_rank * sys_.parts + sys_.part;
        if (n == 1) {  // every host takes the values itself, as they stand at the release
            gathered_ = {values()};
            return true;
        }
        if (h != 0) {
            // Longer than host 0's own wait on the store, so host 0 is the one that reports a timeout.
            if (sys_.hosts[h].ops->wait_until([&] { return generation_ != generation; }, 2 * timeout_ns, poll_ns))
                return true;
            why = "the cluster's barrier did not release in time";
            return false;
        }
        const std::vector<std::uint64_t> mine = values();
        out_of_band& store = *sys_.oob;
        const auto key = [&](unsigned r) { return fmt::format("{}/{}/{}", prefix_, generation, r); };
        std::vector<std::uint8_t> bytes(mine.size() * 8);
        if (!bytes.empty()) std::memcpy(bytes.data(), mine.data(), bytes.size());
        store.put(key(me), bytes);
        const bool ok = sys_.hosts[h].ops->wait_until(
            [&] {
                for (unsigned r = 0; r < n; ++r)
                    if (!store.has(key(r))) return false;
                return true;
            },
            timeout_ns, poll_ns);
        if (!ok) {
            why = sys_.parts > 1 ? "another rack's hosts did not reach the system's barrier"
                                 : "another UltraServer did not reach the cluster's barrier";
            return false;
        }
        std::vector<std::vector<std::uint64_t>> all(n);
        for (unsigned r = 0; r < n; ++r) {
            const auto& v = *store.find(key(r));
            all[r].resize(v.size() / 8);
            if (!all[r].empty()) std::memcpy(all[r].data(), v.data(), all[r].size() * 8);
        }
        gathered_ = std::move(all);
        ++generation_;
        return true;
    }

    // The last call's values, by participant.
    const std::vector<std::vector<std::uint64_t>>& gathered() const { return gathered_; }
    unsigned participants() const { return sys_.cluster_size * sys_.parts; }

private:
    const host_system& sys_;
    std::string prefix_;
    std::uint64_t generation_ = 0;
    std::vector<std::vector<std::uint64_t>> gathered_;
};

}  // namespace trn3::apps
