// The scale-out step of a collective across UltraServers, as one host runs
// it over EFA: for each of its chips, a ring all_reduce of a part of that
// chip's buffer among the chips at the same place in every UltraServer of
// the cluster (the same host and root port in each: the UltraServers are
// alike), through libfabric and the host's NICs: each chip's traffic goes
// through the NIC that serves it (option 1: one per two chips), an
// endpoint per NIC (the provider's domain for it).
//
// The NIC reads and writes the chips' HBM itself, peer to peer through the
// host's root complex: each chip's buffer and a scratch area are registered
// as FI_HMEM_NEURON memory (no copy through host memory, as EFA's
// peer-direct path does). The ring over M UltraServers: the part in M
// pieces; reduce-scatter steps s = 0..M-2, where UltraServer m writes
// piece (m - s) mod M into its successor's scratch with fi_writedata and
// its predecessor's piece (m - s - 1) mod M is reduced into its own by the
// chip's DMA engine (a local reducing descriptor: the numerics of the
// fabric's reductions); then all-gather steps, where m writes its finished
// piece (m + 1 - s) mod M straight into its successor's buffer. Every
// UltraServer reduces each piece in the ring's order, so the results are
// the same bytes everywhere and run to run. Remote completion data
// (32 bits) names the step and the chip, so arrivals in any order are
// counted right (a piece goes in slices of at most slice_bytes, each
// with it). A step starts once the host's writes of the one before
// have completed and its arrivals have landed (and, reducing, been reduced).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "trn3/apps/host_program.h"
#include "trn3/apps/out_of_band.h"
#include "trn3/driver/trn3_device.h"

namespace trn3::apps {

class efa_ring {
public:
    // The store an MPI job or launcher would give (out_of_band), and how
    // this side waits on it.
    struct exchange {
        std::function<void(const std::string& key, const std::vector<std::uint8_t>& value)> publish;
        std::function<std::vector<std::uint8_t>(const std::string& key)> fetch;  // waits; empty on timeout
    };
    // The exchange through the launcher's store, host waiting on it (polls
    // every poll_ns, at most timeout_ns).
    static exchange through(out_of_band& store, driver::host_ops& host, std::uint64_t timeout_ns,
                            std::uint64_t poll_ns);
    struct settings {
        unsigned rank = 0, size = 2;  // this UltraServer's place in the ring, and the ring's length
        // The ring's name: the same at every member, unique among the
        // cluster's rings (its keys in the store: <name>/<rank>/<nic>).
        std::string name = "efa_ring";
        // Device memory every chip registers: the buffers pieces are written
        // to and read from, and the scratch the reduce-scatter lands in.
        std::vector<std::uint64_t> buffers;
        std::uint64_t buffer_bytes = 0;
        std::uint64_t scratch = 0;  // buffer_bytes long
        // For each chip, the NIC that serves it: its domain in fi_getinfo's
        // answer (empty: every chip on the first).
        std::vector<unsigned> nic_of_chip;
        // For each chip, its FI_HMEM_NEURON device index in the calling
        // context's binding (empty: the chips are devices 0..n-1 in order).
        std::vector<int> neuron_device_of_chip;
        // The chip's DMA queue and ring (device memory) for the local reductions.
        unsigned queue = 1;
        std::uint64_t ring = 0;
        std::uint64_t timeout_ns = 100'000'000, poll_ns = 100;
        // Checked while waiting: true ends the call (a failure elsewhere).
        std::function<bool()> abandon;
        // A piece is written in slices of at most this: the NIC writes a
        // message into HBM in one go, and a larger one would hold the NIC's
        // PCIe link past the 1 ms completion timeout of its reads behind it
        // (its receive ring, its completion queue).
        std::uint64_t slice_bytes = 4 << 20;
    };
    // A chip's part: [at, at + bytes) of one of the registered buffers.
    struct part {
        std::uint64_t at = 0, bytes = 0;
    };

    // Opens an endpoint on each NIC the chips use (the calling context is
    // bound to them: host_info::use_fabric), registers every chip's buffers
    // and scratch there, and swaps addresses and keys with the peers. Throws
    // std::runtime_error, one line, naming the call that failed.
    efa_ring(driver::host_ops& host, std::vector<driver::trn3_device*> chips, const settings& s, const exchange& x);
    ~efa_ring();
    efa_ring(const efa_ring&) = delete;
    efa_ring& operator=(const efa_ring&) = delete;

    // The all_reduce of each chip's part (parts[i]: chip i's, whole
    // elements) with `reduce_flags` (TRN3_DESC_REDUCE_WITH; plus
    // TRN3_DESC_TIMING_ONLY for the local reductions of a timed-only run).
    // Throws std::runtime_error, one line, on a failed call, an error
    // completion or the timeout.
    void all_reduce(const std::vector<part>& parts, unsigned element_bytes, std::uint32_t reduce_flags);

private:
    struct state;
    std::unique_ptr<state> s_;
};

}  // namespace trn3::apps
