// A ping-pong and bandwidth test written against libfabric's API only, as
// fabtests' fi_rdm_pingpong and fi_rdm_bw are: it runs unchanged on any
// provider that offers a reliable-datagram endpoint with tagged messages
// (on the simulated NIC, the trn3vp provider, sw/fabric).
//
// Two processes run it, one as the initiator; they swap endpoint addresses
// out of band (`exchange`), as an MPI job or a launcher would. The data of
// every message is a pattern of its size and iteration, checked on arrival.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace trn3::apps::fabric_perf {

struct exchange {
    std::function<void(const std::vector<std::uint8_t>&)> publish;  // this side's address
    std::function<std::vector<std::uint8_t>()> fetch;  // the peer's (waits for it)
    // Returns once the peer has called it too: neither side closes its
    // endpoint while the other still waits for something from it (a closed
    // queue pair's NIC stops retransmitting what the peer has not yet
    // acknowledged, as a launcher's barrier before finalize prevents).
    std::function<void()> barrier;
};

struct options {
    bool initiator = false;
    std::string provider = "trn3vp";
    std::vector<std::size_t> sizes = {8, 64, 1024, 8192, 65536, 1 << 20};
    unsigned iterations = 20;  // ping-pongs per size
    unsigned window = 32;  // bandwidth: messages in flight
    unsigned windows = 4;  // bandwidth: windows per size
    std::function<double()> now_us;  // the host's clock
};

struct point {
    std::size_t bytes = 0;
    double latency_us = 0;  // half a round trip
    double gbit_per_s = 0;  // one way, windowed
    unsigned messages = 0, exact = 0;  // received, and received with the expected bytes
};

struct result {
    std::string error;  // empty: it ran
    std::vector<point> points;
};

result run(const options& o, const exchange& x);

}  // namespace trn3::apps::fabric_perf
