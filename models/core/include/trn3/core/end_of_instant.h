// end_of_instant: work deferred to the end of the current simulated
// instant, once nothing else is runnable or notified at it, done in the
// order of the requesters' names.
//
// The kernel runs processes woken at one simulated time in an order that
// depends on every event it holds (its timed queue does not keep the order
// of ties; sim.heap_noise shows it). Work that must see everything done at
// an instant, or that would otherwise be first come among processes woken
// together, asks for the end of the instant: a link's deliveries (a
// register read sees every write of its instant, whoever ran first), a DMA
// engine's choice of queues (engines freed together). One process serves
// every requester, so an instant has one end for all of them: each waits
// for the others' work too, and none waits for itself.
//
// The end is found by looking: the process runs again a delta cycle later
// while anything else is pending at the instant (up to a bound, past which
// it goes on and counts it: a model spinning in zero time).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

namespace trn3 {

class end_of_instant {
public:
    // One requester: `name` orders it among those of an instant (a module's
    // hierarchical name: the same in every partition of a distributed run);
    // `work` runs from a method process (it must not wait; it may notify).
    class requester {
    public:
        requester(std::string name, std::function<void()> work);
        ~requester();
        requester(const requester&) = delete;
        requester& operator=(const requester&) = delete;
        // Runs the work at the end of this instant (once, however often asked).
        void request();

    private:
        friend class end_of_instant;
        std::string name_;
        std::function<void()> work_;
        bool requested_ = false;
    };

    // From a thread process: returns at the end of this instant, in the
    // order of the process's name among the requesters (a poll that meets a
    // change made at its instant sees it, whichever ran first).
    static void wait();

    // Instants whose end was forced at the bound (0 in a healthy model; the
    // first is logged as a warning: its work went in the kernel's order).
    static std::uint64_t overruns();

private:
    end_of_instant();
    static end_of_instant& instance();
    void request(requester& r);
    void forget(requester& r);
    void end();

    struct waiting_thread;
    std::map<std::string, std::unique_ptr<waiting_thread>, std::less<>> threads_;  // by process name
    std::vector<requester*> requested_;
    sc_core::sc_event look_;
    std::uint64_t deltas_ = 0;  // looked in this instant
    std::uint64_t overruns_ = 0;
};

}  // namespace trn3
