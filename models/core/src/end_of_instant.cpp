#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "trn3/core/end_of_instant.h"

#include <algorithm>
#include <stdexcept>
#include <string_view>

#include "trn3/core/log.h"

namespace trn3 {
namespace {
// Deltas an instant may take after a request before its end is forced.
constexpr std::uint64_t max_deltas = 100000;
}  // namespace

end_of_instant::requester::requester(std::string name, std::function<void()> work)
    : name_(std::move(name)), work_(std::move(work)) {
    end_of_instant::instance();  // the process exists before the simulation starts
}

end_of_instant::requester::~requester() {
    if (requested_) instance().forget(*this);
}

void end_of_instant::requester::request() {
    if (requested_) return;
    requested_ = true;
    instance().request(*this);
}

end_of_instant& end_of_instant::instance() {
    // Never destroyed: its event must not outlive the kernel's context.
    static end_of_instant* one = new end_of_instant;
    return *one;
}

// A thread's requester and the event it waits on, made at its first wait.
struct end_of_instant::waiting_thread {
    sc_core::sc_event done;
    requester end;
    explicit waiting_thread(const char* name) : end(name, [this] { done.notify(); }) {}
};

void end_of_instant::wait() {
    end_of_instant& me = instance();
    const sc_core::sc_process_b* current = sc_core::sc_get_current_process_b();
    if (!current || current->proc_kind() != sc_core::SC_THREAD_PROC_)
        throw std::logic_error("end_of_instant::wait() outside a thread process");
    const char* process = current->name();
    auto it = me.threads_.find(std::string_view(process));
    if (it == me.threads_.end()) it = me.threads_.emplace(process, std::make_unique<waiting_thread>(process)).first;
    const auto& slot = it->second;
    slot->end.request();
    sc_core::wait(slot->done);
}

std::uint64_t end_of_instant::overruns() { return instance().overruns_; }

end_of_instant::end_of_instant() {
    sc_core::sc_spawn_options o;
    o.spawn_method();
    o.set_sensitivity(&look_);
    o.dont_initialize();
    sc_core::sc_spawn([this] { end(); }, "end_of_instant", &o);
}

void end_of_instant::request(requester& r) {
    if (requested_.empty()) {
        deltas_ = 0;
        look_.notify(sc_core::SC_ZERO_TIME);
    }
    requested_.push_back(&r);
}

void end_of_instant::forget(requester& r) {
    requested_.erase(std::remove(requested_.begin(), requested_.end(), &r), requested_.end());
}

void end_of_instant::end() {
    if (sc_core::sc_pending_activity_at_current_time()) {
        if (++deltas_ < max_deltas) return look_.notify(sc_core::SC_ZERO_TIME);
        if (overruns_++ == 0)
            make_logger("end_of_instant", "")
                ->warn("activity at this instant went on for {} delta cycles (a model spinning in zero time?): "
                       "its end was forced, its work went in the kernel's order",
                       max_deltas);
    }
    std::vector<requester*> due;
    due.swap(requested_);
    std::sort(due.begin(), due.end(), [](const requester* a, const requester* b) { return a->name_ < b->name_; });
    // Two requesters of one name would go in the kernel's order.
    for (std::size_t i = 1; i < due.size(); ++i)
        if (due[i]->name_ == due[i - 1]->name_)
            throw std::logic_error("end_of_instant: two requesters named " + due[i]->name_);
    for (requester* r : due) {
        r->requested_ = false;
        r->work_();
    }
}

}  // namespace trn3
