#include "trn3/core/timeline.h"

#include <cstdio>
#include <fstream>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "trn3/core/error.h"

namespace trn3 {

timeline& timeline::instance() {
    static timeline t;
    return t;
}

timeline::~timeline() { close(); }

void timeline::open(const std::string& path) {
    close();
    out_ = std::fopen(path.c_str(), "w");
    if (!out_) throw config_error("cannot write timeline file '" + path + "'");
    std::fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", out_);
    events_ = 0;
    // Tracks made before the file opened are declared now.
    for (const auto& [name, pid] : processes_) {
        begin_event();
        std::fprintf(out_, R"({"ph":"M","name":"process_name","pid":%u,"args":{"name":"%s"}})", pid,
                     escape(name).c_str());
    }
    for (const auto& [key, tid] : threads_) {
        begin_event();
        std::fprintf(out_, R"({"ph":"M","name":"thread_name","pid":%u,"tid":%u,"args":{"name":"%s"}})", key.first, tid,
                     escape(key.second).c_str());
    }
}

std::uint64_t timeline::on_close(closer c) {
    closers_.emplace(next_closer_, std::move(c));
    return next_closer_++;
}

bool timeline::close() {
    if (!out_) return true;
    for (auto& [id, c] : closers_) c();
    std::fputs("\n]}\n", out_);
    const bool ok = std::fflush(out_) == 0 && !std::ferror(out_);
    const bool closed = std::fclose(out_) == 0;
    out_ = nullptr;
    return ok && closed;
}

// Each part is one event per line. A process (or a thread of a process)
// that several parts declare by one name, as the modules a rack cut
// elaborates on both sides do, becomes one; the others keep their ids,
// moved up by the part's rank << 20 so that the parts' ids never meet.
bool timeline::merge(const std::vector<std::string>& parts, const std::string& path) {
    std::ofstream out(path);
    if (!out) return false;
    out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
    std::map<std::string, std::uint64_t> pid_of_name;  // merged
    std::map<std::pair<std::uint64_t, std::string>, std::uint64_t> tid_of_name;  // (merged pid, name) -> merged tid
    bool first = true, ok = true;
    for (std::size_t r = 0; r < parts.size(); ++r) {
        std::ifstream in(parts[r]);
        if (!in) {
            ok = false;
            continue;
        }
        const std::uint64_t moved = std::uint64_t{r} << 20;
        std::map<std::uint64_t, std::uint64_t> pids, tids;  // this part's -> merged
        const auto merged = [&](std::map<std::uint64_t, std::uint64_t>& ids, std::uint64_t id) {
            const auto it = ids.find(id);
            return it != ids.end() ? it->second : id + moved;
        };
        std::string line;
        std::getline(in, line);  // the header
        while (std::getline(in, line)) {
            if (line.empty() || line == "]}") continue;
            if (line.back() == ',') line.pop_back();
            nlohmann::json e = nlohmann::json::parse(line, nullptr, false);
            if (e.is_discarded() || !e.is_object()) {
                ok = false;
                continue;
            }
            if (e.contains("pid")) {
                const std::uint64_t pid = e["pid"].get<std::uint64_t>();
                if (e.value("name", "") == "process_name") {
                    const std::string name = e["args"].value("name", "");
                    const auto [it, is_new] = pid_of_name.emplace(name, pid + moved);
                    pids[pid] = it->second;
                    if (!is_new) continue;  // declared by an earlier part
                }
                e["pid"] = merged(pids, pid);
            }
            if (e.contains("tid")) {
                const std::uint64_t tid = e["tid"].get<std::uint64_t>();
                if (e.value("name", "") == "thread_name") {
                    const auto key = std::make_pair(e["pid"].get<std::uint64_t>(), e["args"].value("name", ""));
                    const auto [it, is_new] = tid_of_name.emplace(key, tid + moved);
                    tids[tid] = it->second;
                    if (!is_new) continue;
                }
                e["tid"] = merged(tids, tid);
            }
            out << (first ? "" : ",\n") << e.dump();
            first = false;
        }
        std::remove(parts[r].c_str());
    }
    out << "\n]}\n";
    out.flush();
    return ok && static_cast<bool>(out);
}

void timeline::begin_event() {
    if (events_++) std::fputs(",\n", out_);
}

std::string timeline::escape(const std::string& s) {
    std::string r;
    for (char c : s) {
        if (c == '"' || c == '\\') r += '\\';
        if (static_cast<unsigned char>(c) >= 0x20) r += c;
    }
    return r;
}

timeline::track timeline::make_track(const std::string& process, const std::string& thread) {
    auto [pit, new_process] = processes_.emplace(process, static_cast<std::uint32_t>(processes_.size() + 1));
    const std::uint32_t pid = pit->second;
    auto [tit, new_thread] =
        threads_.emplace(std::make_pair(pid, thread), static_cast<std::uint32_t>(threads_.size() + 1));
    if (out_ && new_process) {
        begin_event();
        std::fprintf(out_, R"({"ph":"M","name":"process_name","pid":%u,"args":{"name":"%s"}})", pid,
                     escape(process).c_str());
    }
    if (out_ && new_thread) {
        begin_event();
        std::fprintf(out_, R"({"ph":"M","name":"thread_name","pid":%u,"tid":%u,"args":{"name":"%s"}})", pid,
                     tit->second, escape(thread).c_str());
    }
    return {pid, tit->second};
}

std::string timeline::process_of(const sc_core::sc_object& block) {
    const std::string name = block.name();
    const auto dot = name.rfind('.');
    return dot == std::string::npos ? name : name.substr(0, dot);
}

timeline::track timeline::track_of(const sc_core::sc_object& block, const std::string& suffix) {
    return make_track(process_of(block), block.basename() + suffix);
}

namespace {
double us(const sc_core::sc_time& t) { return static_cast<double>(t.value()) / 1e6; }  // resolution: 1 ps
}  // namespace

void timeline::slice(const track& t, const std::string& name, const sc_core::sc_time& start,
                     const sc_core::sc_time& end) {
    if (!out_) return;
    begin_event();
    std::fprintf(out_, R"({"ph":"X","name":"%s","pid":%u,"tid":%u,"ts":%.6f,"dur":%.6f})", escape(name).c_str(), t.pid,
                 t.tid, us(start), us(end) - us(start));
}

void timeline::counter(const track& t, const std::string& name, const sc_core::sc_time& at, double value) {
    if (!out_) return;
    begin_event();
    std::fprintf(out_, R"({"ph":"C","name":"%s","pid":%u,"ts":%.6f,"args":{"value":%.6g}})", escape(name).c_str(),
                 t.pid, us(at), value);
}

void timeline::instant(const track& t, const std::string& name, const sc_core::sc_time& at) {
    if (!out_) return;
    begin_event();
    std::fprintf(out_, R"({"ph":"i","s":"t","name":"%s","pid":%u,"tid":%u,"ts":%.6f})", escape(name).c_str(), t.pid,
                 t.tid, us(at));
}

rate_counter::rate_counter(const std::string& process, const std::string& name, sc_core::sc_time window)
    : track_(timeline::instance().make_track(process, name)), name_(name + " GB/s"), window_(window),
      closer_id_(timeline::instance().on_close([this] { flush_last(); })) {}

rate_counter::~rate_counter() { timeline::instance().forget_closer(closer_id_); }

void rate_counter::flush_last() {
    if (!active_) return;
    timeline::instance().counter(track_, name_, window_start_,
                                 static_cast<double>(bytes_) / window_.to_seconds() / 1e9);
    timeline::instance().counter(track_, name_, window_start_ + window_, 0.0);
    active_ = false;
}

void rate_counter::flush_until(const sc_core::sc_time& at) {
    timeline& tl = timeline::instance();
    while (window_start_ + window_ <= at) {
        tl.counter(track_, name_, window_start_, static_cast<double>(bytes_) / window_.to_seconds() / 1e9);
        bytes_ = 0;
        window_start_ += window_;
        // Skip idle windows in one step, with a zero at the first of them.
        if (window_start_ + window_ <= at) {
            tl.counter(track_, name_, window_start_, 0.0);
            const std::uint64_t skip = (at - window_start_).value() / window_.value();
            window_start_ += window_ * static_cast<double>(skip);
        }
    }
}

void rate_counter::add(const sc_core::sc_time& at, std::uint64_t bytes) {
    if (!timeline::instance().enabled()) return;
    if (!active_) {
        active_ = true;
        window_start_ = sc_core::sc_time::from_value(at.value() - at.value() % window_.value());
    }
    if (at >= window_start_ + window_) flush_until(at);
    bytes_ += bytes;
}

}  // namespace trn3
