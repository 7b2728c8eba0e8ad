// same_time_order: processes woken at one time go on in name order, not in
// the order the kernel runs them; a process alone goes straight through.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <systemc>

#include "trn3/core/same_time_order.h"

using namespace trn3;
using sc_core::SC_NS;

TEST_CASE("same_time_order: a lone process goes straight, then same-time ones go in name order") {
    same_time_order order("order");
    std::vector<std::string> went;
    std::uint64_t lone_deltas = 99;
    // Alone at 5 ns: no delta cycle spent.
    sc_core::sc_spawn(
        [&] {
            sc_core::wait(5, SC_NS);
            const std::uint64_t before = sc_core::sc_delta_count();
            order.take();
            lone_deltas = sc_core::sc_delta_count() - before;
        },
        "lone");
    // Four at 10 ns, spawned out of name order; then two of them again at 20 ns.
    for (const char* n : {"d", "c", "a", "b"})
        sc_core::sc_spawn(
            [&, n] {
                sc_core::wait(10, SC_NS);
                order.take();
                went.push_back(n);
                if (std::string(n) == "d" || std::string(n) == "a") {
                    sc_core::wait(10, SC_NS);
                    order.take();
                    went.push_back(std::string(n) + "2");
                }
            },
            n);
    sc_core::sc_start();
    CHECK(lone_deltas == 0);
    CHECK(went == std::vector<std::string>{"a", "b", "c", "d", "a2", "d2"});
    CHECK(sc_core::sc_time_stamp() == sc_core::sc_time(20, SC_NS));  // no time spent ordering
}
