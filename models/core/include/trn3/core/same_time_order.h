// same_time_order: processes that reach one point at the same simulated
// time go on in the order of their names, not in the kernel's.
//
// The kernel runs processes woken at one time in an order that depends on
// every other event in it: its timed queue does not keep the order of ties.
// Where those processes then take a first-come resource (a PCIe link's
// wire, a NIC's queue), a distributed run, whose kernels hold other events
// than one process's, would give other results. A caller of take() waits
// one delta cycle for the others of its time and delta, then all go on in
// name order (each released by its own delta notification, which the
// kernel runs in order). Until a second process has come, the first goes
// straight through: a single software context costs nothing.
#pragma once

#include <deque>
#include <set>
#include <vector>

#include <systemc>

namespace trn3 {

class same_time_order {
public:
    // `name`: the method that releases the waiting processes (unique in its module).
    explicit same_time_order(const char* name);

    // From a thread process.
    void take();

private:
    void release();

    struct waiting {
        const char* process;  // its name (the kernel keeps it)
        sc_core::sc_event* go;
    };
    std::set<const sc_core::sc_process_b*> seen_;  // (counted up to two)
    std::vector<waiting> waiting_;
    // Events to wait on, made once and reused: none is made per access.
    std::deque<sc_core::sc_event> events_;
    std::vector<sc_core::sc_event*> free_;
    sc_core::sc_event due_;
};

}  // namespace trn3
