// timeline: simulated-time traces for Perfetto (ui.perfetto.dev) and
// chrome://tracing, in the Chrome trace-event JSON format.
//
// Off unless a file is opened (the CLI's --timeline FILE): every call is then
// a single branch. Events stream to the file as they happen, so memory does
// not grow with the run. Timestamps are simulated time in microseconds.
//
//   static timeline::track t = timeline::instance().track("chip0", "dma.q3");
//   timeline::instance().slice(t, "copy 4KiB", start, end);
//   timeline::instance().counter(t, "GB/s", now, 612.5);
//
// Tracks are grouped by process (a chip, a host) and named by thread (an
// engine, a queue, a link); their ids are given in creation order, which is
// the platform's construction order and so the same in every run.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <systemc>

namespace trn3 {

class timeline {
public:
    struct track {
        std::uint32_t pid = 0, tid = 0;
    };

    static timeline& instance();

    // Starts writing to `path` (throws config_error if it cannot be created).
    void open(const std::string& path);
    // Finishes the file (also done at exit).
    // Ends the file; false when any of it failed to reach the disk (a full
    // disk, /dev/full): the caller reports it.
    bool close();
    bool enabled() const { return out_ != nullptr; }
    // Joins the closed files of a distributed run's ranks (`parts`, in rank
    // order) into one at `path`: rank r's process and thread ids move up by
    // r << 20, so each rank's stay their own, except that a process (or a
    // process's thread) several ranks declare by one name becomes one (a
    // rack cut elaborates the UltraServer's module, and its cut links, on
    // both sides); the parts are removed. False when a part cannot be read,
    // a line is not JSON, or the file not written.
    static bool merge(const std::vector<std::string>& parts, const std::string& path);

    track make_track(const std::string& process, const std::string& thread);
    // The track of a block: its parent's hierarchical name is the process,
    // its own name (plus `suffix`) the thread.
    track track_of(const sc_core::sc_object& block, const std::string& suffix = "");
    static std::string process_of(const sc_core::sc_object& block);
    // An activity from start to end on a track.
    void slice(const track& t, const std::string& name, const sc_core::sc_time& start, const sc_core::sc_time& end);
    // A value over time; each name is its own counter track within the process.
    void counter(const track& t, const std::string& name, const sc_core::sc_time& at, double value);
    // A moment (an interrupt, an error).
    void instant(const track& t, const std::string& name, const sc_core::sc_time& at);

    std::uint64_t events() const { return events_; }
    // Work to do before the file closes (rate counters write their last window).
    using closer = std::function<void()>;
    std::uint64_t on_close(closer c);
    void forget_closer(std::uint64_t id) { closers_.erase(id); }
    ~timeline();

private:
    timeline() = default;
    void begin_event();
    static std::string escape(const std::string& s);

    std::FILE* out_ = nullptr;
    std::uint64_t events_ = 0;
    std::map<std::string, std::uint32_t> processes_;
    std::map<std::pair<std::uint32_t, std::string>, std::uint32_t> threads_;
    std::map<std::uint64_t, closer> closers_;
    std::uint64_t next_closer_ = 0;
};

// Bytes moved per window of simulated time, written as a GB/s counter when a
// window closes. For bandwidth tracks of memories and links.
class rate_counter {
public:
    rate_counter(const std::string& process, const std::string& name, sc_core::sc_time window);
    ~rate_counter();
    rate_counter(const rate_counter&) = delete;
    rate_counter& operator=(const rate_counter&) = delete;
    void add(const sc_core::sc_time& at, std::uint64_t bytes);

private:
    void flush_until(const sc_core::sc_time& at);
    void flush_last();
    timeline::track track_;
    std::string name_;
    sc_core::sc_time window_;
    sc_core::sc_time window_start_;
    std::uint64_t bytes_ = 0;
    bool active_ = false;
    std::uint64_t closer_id_;
};

}  // namespace trn3
