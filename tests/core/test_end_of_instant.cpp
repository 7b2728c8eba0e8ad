// end_of_instant: work waits until nothing else is due at its instant, then
// goes in name order, whatever order the kernel woke its requesters in; and
// heap_noise: unrelated events that change that order, never the run's end.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <systemc>

#include "trn3/core/end_of_instant.h"
#include "trn3/core/heap_noise.h"

using namespace trn3;
using sc_core::SC_NS;

TEST_CASE("end_of_instant: threads woken together go on after the instant's other work, in name order") {
    std::vector<std::string> went;
    bool chain_done = false;
    std::vector<bool> saw_chain;
    // A chain of delta cycles at 10 ns: the instant is not over until it ends.
    sc_core::sc_spawn(
        [&] {
            sc_core::wait(10, SC_NS);
            for (int i = 0; i < 5; ++i) sc_core::wait(sc_core::SC_ZERO_TIME);
            chain_done = true;
        },
        "chain");
    // Four threads at 10 ns, spawned out of name order; two of them again at 20 ns.
    for (const char* n : {"d", "c", "a", "b"})
        sc_core::sc_spawn(
            [&, n] {
                sc_core::wait(10, SC_NS);
                end_of_instant::wait();
                went.push_back(n);
                saw_chain.push_back(chain_done);
                if (std::string(n) == "d" || std::string(n) == "a") {
                    sc_core::wait(10, SC_NS);
                    end_of_instant::wait();
                    went.push_back(std::string(n) + "2");
                }
            },
            n);
    // A requester's work: runs once however often it is asked in an instant.
    int work_runs = 0;
    end_of_instant::requester counter("work", [&] { ++work_runs; });
    sc_core::sc_spawn(
        [&] {
            sc_core::wait(10, SC_NS);
            counter.request();
            counter.request();
        },
        "asker");
    sc_core::sc_start();
    CHECK(went == std::vector<std::string>{"a", "b", "c", "d", "a2", "d2"});
    CHECK(saw_chain == std::vector<bool>{true, true, true, true});
    CHECK(work_runs == 1);
    CHECK(sc_core::sc_time_stamp() == sc_core::sc_time(20, SC_NS));  // no time spent waiting
    CHECK(end_of_instant::overruns() == 0);
}

TEST_CASE("heap_noise: its events come and go while the model runs and end with it") {
    heap_noise noise("noise", 5);
    std::uint64_t ticks = 0;
    sc_core::sc_spawn(
        [&] {
            for (int i = 0; i < 100; ++i) {
                sc_core::wait(1, SC_NS);
                ++ticks;
                // Always more pending than this thread's own next wake-up while it runs.
                if (i == 50) CHECK(sc_core::sc_pending_activity_at_future_time());
            }
        },
        "model");
    sc_core::sc_start();
    CHECK(ticks == 100);
    // Stopped with the model (nothing pending makes the kernel stop): at most
    // one round of noise after its last event, never a time of its own.
    CHECK(sc_core::sc_time_stamp() >= sc_core::sc_time(100, SC_NS));
    CHECK(sc_core::sc_time_stamp() < sc_core::sc_time(100, SC_NS) + sc_core::sc_time(1, sc_core::SC_US));
    CHECK_FALSE(sc_core::sc_pending_activity());
}
