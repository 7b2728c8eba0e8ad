// collectives: nccl-tests on the UltraServer. Every host brings its chips up
// (as boot does), then the chips run a sweep of one collective over all of
// them: for each size, out of place and then in place, every chip's DMA
// engine runs its part of the schedule (sw/collectives) from a ring in its
// own HBM, with no host in the loop; the hosts start them together and time
// them, then check every element against a reference.
//
// The table is nccl-tests', column for column: size count type redop root,
// then time algbw busbw #wrong out of place and in place; size is the whole
// buffer (n chunks), algbw = size / time, busbw = algbw x 2(n-1)/n for
// all_reduce and (n-1)/n for reduce_scatter and all_gather. Time runs from
// the moment every host rings its chips' doorbells to the moment the last
// host sees its chips' queues done (hosts poll every `poll`).
//
// Inputs make every partial result exact in every type: element e gets a
// small integer from two ranks (e mod n and e + 1 mod n) and zero from the
// rest, so #wrong is 0 unless something is wrong.
//
// Rows above collectives.check_max_bytes are timed only: no inputs written,
// nothing checked (#wrong N/A, as nccl-tests without its check); the
// simulated times do not depend on the values the buffers hold.
//
// params: collectives.op, .dtype, .redop, .chips, .min_bytes, .max_bytes, .factor, .json,
//         .channels, .check_max_bytes, .poll, .timeout, .link_timeout, .boot_timeout
#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <systemc>

#include "bring_up.h"
#include "phase_track.h"
#include "trn3/apps/host_program.h"
#include "trn3/collectives/plan.h"
#include "trn3/core/error.h"
#include "trn3/core/param.h"
#include "trn3/core/user_file.h"
#include "trn3/numerics/float_format.h"
#include "trn3/numerics/reduce.h"
#include "trn3/spec/device.h"

namespace trn3::apps {
namespace {

// Where the collectives keep their buffers in each chip's HBM (stack 1).
constexpr std::uint64_t buffer_base = TRN3_DEV_HBM_BASE(1), gib = 1ull << 30;
constexpr collectives::buffers layout{buffer_base, buffer_base + 4 * gib, buffer_base + 8 * gib,
                                      buffer_base + 12 * gib};
// Channel k's schedule runs on DMA queue 1 + k from a ring at ring_at + k x ring_stride.
constexpr std::uint64_t ring_at = buffer_base + 12 * gib + (1 << 20), ring_stride = 16 << 20;

struct dtype_info {
    const char* param;  // our name
    const char* nccl;  // nccl-tests' name
    unsigned code;  // TRN3_REDUCE_*
    numerics::reduce_type type;
};
constexpr dtype_info dtypes[] = {
    {"fp32", "float", TRN3_REDUCE_FP32, numerics::reduce_type::fp32},
    {"bf16", "bfloat16", TRN3_REDUCE_BF16, numerics::reduce_type::bf16},
    {"fp16", "half", TRN3_REDUCE_FP16, numerics::reduce_type::fp16},
    {"e4m3", "f8e4m3", TRN3_REDUCE_E4M3, numerics::reduce_type::e4m3fn},
    {"e5m2", "f8e5m2", TRN3_REDUCE_E5M2, numerics::reduce_type::e5m2},
    {"int32", "int32", TRN3_REDUCE_INT32, numerics::reduce_type::int32},
};
const dtype_info& dtype_of(const std::string& name) {
    for (const auto& d : dtypes)
        if (name == d.param) return d;
    return dtypes[0];  // the param's choices are these names
}

// The code of a small integer in a type.
void put_value(std::uint8_t* at, int v, numerics::reduce_type t) {
    if (t == numerics::reduce_type::int32) {
        const std::int32_t i = v;
        std::memcpy(at, &i, 4);
        return;
    }
    const std::uint32_t code = numerics::encode(static_cast<float>(v), numerics::format_of(t));
    std::memcpy(at, &code, numerics::element_bytes(t));
}

class collectives_program final : public host_program {
public:
    param<std::string> op{
        nullptr, "collectives.op", "all_reduce", "the collective",
        one_of<std::string>{{"all_reduce", "reduce_scatter", "all_gather", "all_to_all", "broadcast"}}};
    param<std::uint64_t> root{nullptr, "collectives.root", 0, "broadcast: the root's rank in the communicator"};
    param<std::string> dtype{nullptr, "collectives.dtype", "fp32", "element type",
                             one_of<std::string>{{"fp32", "bf16", "fp16", "e4m3", "e5m2", "int32"}}};
    param<std::string> redop{nullptr, "collectives.redop", "sum", "reduction (all_reduce, reduce_scatter)",
                             one_of<std::string>{{"sum", "max", "min"}}};
    param<std::uint64_t> min_bytes{nullptr, "collectives.min_bytes", 8, "first size of the sweep (bytes)",
                                   range<std::uint64_t>{1, 1ull << 30}};
    param<std::uint64_t> max_bytes{nullptr, "collectives.max_bytes", 1 << 20, "last size of the sweep (bytes)",
                                   range<std::uint64_t>{1, 1ull << 30}};
    param<std::string> chips{nullptr, "collectives.chips", "all",
                             "the communicator: all, or fabric ids and ranges (0-3,8,12-15), rank order as written"};
    param<std::uint64_t> factor{nullptr, "collectives.factor", 2, "each size is the last times this",
                                range<std::uint64_t>{2, 1024}};
    param<std::uint64_t> channels{nullptr, "collectives.channels", 2,
                                  "rings run at once, each over a piece of every chunk on its own DMA queue and "
                                  "engine: channel 0 in fabric id order, 1 the reverse (the links' other direction), "
                                  "then strides coprime with the chip count",
                                  range<std::uint64_t>{1, TRN3_DMA_QUEUES - 1}};
    param<std::uint64_t> check_max_bytes{
        nullptr, "collectives.check_max_bytes", 1 << 20,
        "largest size whose data is written and checked; larger rows are timed only (#wrong N/A): the "
        "times do not depend on the values",
        range<std::uint64_t>{0, 1ull << 30}};
    param<std::string> json{nullptr, "collectives.json", "",
                            "also write the table as JSON to this file (rows with the same fields)"};
    param<sc_core::sc_time> poll{nullptr, "collectives.poll", sc_core::sc_time(100, sc_core::SC_NS),
                                 "how often a host looks whether its chips are done",
                                 range<sc_core::sc_time>{sc_core::sc_time(1, sc_core::SC_NS), {}}};
    param<sc_core::sc_time> timeout{nullptr, "collectives.timeout", sc_core::sc_time(100, sc_core::SC_MS),
                                    "longest one collective may take"};
    param<sc_core::sc_time> link_timeout{nullptr, "collectives.link_timeout", sc_core::sc_time(10, sc_core::SC_MS),
                                         "longest a host waits for each root port's link"};
    param<sc_core::sc_time> boot_timeout{nullptr, "collectives.boot_timeout", sc_core::sc_time(50, sc_core::SC_MS),
                                         "longest a host waits for a chip's firmware"};

    explicit collectives_program(host_system& s) : sys_(s), hosts_(s.hosts.size()) {
        for (std::size_t h = 0; h < s.hosts.size(); ++h)
            tracks_.emplace_back(s.name, fmt::format("host{} software", h));
        if (s.fabric_chips < 2)
            throw config_error("program collectives needs at least two chips on a NeuronLink fabric (" + s.name +
                               " has " + std::to_string(s.fabric_chips) + ")");
        members_ = parse_members(chips.get(), s.fabric_chips);
        for (unsigned r = 0; r < members_.size(); ++r) rank_of_id_[members_[r]] = r;
        if (min_bytes.get() > max_bytes.get())
            throw config_error(fmt::format("param collectives.min_bytes = {} is above collectives.max_bytes = {}",
                                           min_bytes.get(), max_bytes.get()));
        // Every size must be possible: whole elements, and n whole chunks where the op needs them.
        for (std::uint64_t b = min_bytes.get(); b <= max_bytes.get(); b *= factor.get()) {
            sizes_.push_back(b);
            try {
                collectives::plan(request(b, false));
            } catch (const std::invalid_argument& e) {
                throw config_error(std::string("collectives: ") + e.what());
            }
            if (b > max_bytes.get() / factor.get()) break;
        }
        rows_.resize(sizes_.size());
    }

    void run(unsigned h) override { software(h); }

    bool passed() const override {
        if (hosts_done_ != sys_.hosts.size() || !finished_) return false;
        for (const auto& r : rows_)
            if (r.wrong[0] + r.wrong[1] != 0) return false;
        for (const auto& h : hosts_)
            if (!h.failures.empty()) return false;
        return true;
    }

    void report(std::ostream& os) const override {
        const dtype_info& t = dtype_of(dtype.get());
        const unsigned n = size();
        os << fmt::format("# {}: {} ranks ({}), {} {} {}, {} algorithm, {} channel{}\n", sys_.name, n,
                          chips.get() == "all" ? "every chip on the fabric" : "chips " + chips.get(), op.get(), t.nccl,
                          reduces() ? redop.get() : "none", algorithm(), channels.get(),
                          channels.get() == 1 ? "" : "s");
        os << "#\n";
        os << fmt::format("# {:>10} {:>12} {:>8} {:>6} {:>6}  {:>9} {:>7} {:>7} {:>6}  {:>9} {:>7} {:>7} {:>6}\n", "",
                          "", "", "", "", "out-of-place", "", "", "", "in-place", "", "", "");
        os << fmt::format("# {:>10} {:>12} {:>8} {:>6} {:>6}  {:>9} {:>7} {:>7} {:>6}  {:>9} {:>7} {:>7} {:>6}\n",
                          "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
                          "busbw", "#wrong");
        os << fmt::format("# {:>10} {:>12} {:>8} {:>6} {:>6}  {:>9} {:>7} {:>7} {:>6}  {:>9} {:>7} {:>7} {:>6}\n",
                          "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)",
                          "");
        double busbw_sum = 0;
        unsigned measured = 0;
        std::uint64_t wrong = 0;
        for (std::size_t i = 0; i < sizes_.size(); ++i) {
            const row& r = rows_[i];
            if (!r.done) break;
            std::string line = fmt::format("  {:>10} {:>12} {:>8} {:>6} {:>6}", sizes_[i], sizes_[i] / element_bytes(),
                                           t.nccl, reduces() ? redop.get() : "none", root_column());
            for (unsigned k = 0; k < 2; ++k) {
                const double us = r.seconds[k] * 1e6, algbw = sizes_[i] / r.seconds[k] / 1e9;
                line += fmt::format("  {:>9.2f} {:>7.2f} {:>7.2f} {:>6}", us, algbw, algbw * bus_factor(),
                                    checked(sizes_[i]) ? std::to_string(r.wrong[k]) : "N/A");
                busbw_sum += algbw * bus_factor();
                ++measured;
                wrong += r.wrong[k];
            }
            os << line << "\n";
        }
        if (!json.get().empty()) write_json(busbw_sum, measured, wrong);
        if (!finished_) os << "# Out of bounds values : the sweep did not finish (see the FAILED lines)\n";
        else os << fmt::format("# Out of bounds values : {} {}\n", wrong, wrong == 0 ? "OK" : "FAILED");
        os << fmt::format("# Avg bus bandwidth    : {:.3f}\n", measured ? busbw_sum / measured : 0.0);
    }

    // The table as JSON: one object per row, out of place and in place.
    void write_json(double busbw_sum, unsigned measured, std::uint64_t wrong) const {
        const dtype_info& t = dtype_of(dtype.get());
        nlohmann::json j;
        j["platform"] = sys_.name;
        j["op"] = op.get();
        j["algorithm"] = algorithm();
        j["type"] = t.nccl;
        j["redop"] = reduces() ? redop.get() : "none";
        j["ranks"] = members_;
        j["channels"] = channels.get();
        j["rows"] = nlohmann::json::array();
        for (std::size_t i = 0; i < sizes_.size() && rows_[i].done; ++i) {
            nlohmann::json row{{"size", sizes_[i]}, {"count", sizes_[i] / element_bytes()}, {"root", root_column()}};
            for (unsigned k = 0; k < 2; ++k) {
                const double algbw = sizes_[i] / rows_[i].seconds[k] / 1e9;
                row[k == 0 ? "out_of_place" : "in_place"] = {
                    {"time_us", rows_[i].seconds[k] * 1e6},
                    {"alg_bw", algbw},
                    {"bus_bw", algbw * bus_factor()},
                    {"nwrong", checked(sizes_[i]) ? nlohmann::json(rows_[i].wrong[k]) : nlohmann::json(nullptr)}};
            }
            j["rows"].push_back(row);
        }
        j["finished"] = finished_;
        j["out_of_bounds"] = wrong;
        j["avg_bus_bw"] = measured ? busbw_sum / measured : 0.0;
        write_user_file(json.get(), "collectives JSON file", j.dump(2) + "\n");
    }

    void report_failures(std::ostream& os) const override {
        for (std::size_t h = 0; h < hosts_.size(); ++h)
            for (const auto& f : hosts_[h].failures) os << "  FAILED: host " << h << ": " << f << "\n";
    }

private:
    struct host_state {
        brought_up chips;
        std::vector<std::string> failures;
    };
    struct row {
        bool done = false;
        double seconds[2] = {0, 0};  // out of place, in place
        std::uint64_t wrong[2] = {0, 0};
    };

    int root_column() const { return what() == collectives::op::broadcast ? static_cast<int>(root.get()) : -1; }
    const char* algorithm() const {
        return what() == collectives::op::all_to_all  ? "direct"
               : what() == collectives::op::broadcast ? "chain"
                                                      : "ring";
    }
    bool checked(std::uint64_t bytes) const { return bytes <= check_max_bytes.get(); }
    bool reduces() const { return op.get() == "all_reduce" || op.get() == "reduce_scatter"; }
    unsigned element_bytes() const { return numerics::element_bytes(dtype_of(dtype.get()).type); }
    double bus_factor() const {
        const double n = size();
        return op.get() == "all_reduce" ? 2 * (n - 1) / n : op.get() == "broadcast" ? 1.0 : (n - 1) / n;
    }
    collectives::op what() const {
        return op.get() == "all_reduce"       ? collectives::op::all_reduce
               : op.get() == "reduce_scatter" ? collectives::op::reduce_scatter
               : op.get() == "all_gather"     ? collectives::op::all_gather
               : op.get() == "broadcast"      ? collectives::op::broadcast
                                              : collectives::op::all_to_all;
    }
    unsigned redop_code() const {
        return redop.get() == "sum" ? TRN3_REDUCE_SUM : redop.get() == "max" ? TRN3_REDUCE_MAX : TRN3_REDUCE_MIN;
    }
    // Channel k's ring over ranks 0..n-1 (rank = fabric id): stride 1, then
    // n - 1 (the reverse), then 3, n - 3, 5... whichever are coprime with n.
    std::vector<unsigned> ring_of(unsigned channel) const {
        const unsigned n = size();
        std::vector<unsigned> strides;
        for (unsigned s = 1; s < n && strides.size() <= channel; s += 2)
            for (unsigned t : {s, n - s})
                if (std::gcd(t, n) == 1 && std::find(strides.begin(), strides.end(), t) == strides.end())
                    strides.push_back(t);
        const unsigned stride = strides.empty() ? 1 : strides[channel % strides.size()];
        std::vector<unsigned> ring;
        for (unsigned i = 0; i < n; ++i) ring.push_back(members_[(std::uint64_t(i) * stride) % n]);
        return ring;
    }
    collectives::request request(std::uint64_t bytes, bool in_place, unsigned channel = 0) const {
        collectives::request r;
        r.what = what();
        r.ring = ring_of(channel);
        r.ranks = members_;
        r.channels = static_cast<unsigned>(channels.get());
        r.channel = channel;
        r.root = static_cast<unsigned>(root.get());
        r.bytes = bytes;
        r.element_bytes = element_bytes();
        r.reduce_op = redop_code();
        r.reduce_type = dtype_of(dtype.get()).code;
        r.in_place = in_place;
        r.at = layout;
        return r;
    }
    unsigned size() const { return static_cast<unsigned>(members_.size()); }
    // A chip's rank in the communicator, -1 when it is not in it.
    int rank_of_chip(int fabric_id) const {
        const auto it = rank_of_id_.find(static_cast<unsigned>(fabric_id));
        return fabric_id < 0 || it == rank_of_id_.end() ? -1 : static_cast<int>(it->second);
    }
    // "all", or fabric ids and ranges: the communicator's chips in rank order.
    static std::vector<unsigned> parse_members(const std::string& text, unsigned fabric_chips) {
        std::vector<unsigned> v;
        if (text == "all") {
            for (unsigned c = 0; c < fabric_chips; ++c) v.push_back(c);
        } else {
            std::size_t at = 0;
            while (at <= text.size()) {
                const std::size_t comma = std::min(text.find(',', at), text.size());
                const std::string item = text.substr(at, comma - at);
                const std::size_t dash = item.find('-');
                unsigned long first = 0, last = 0;
                try {
                    std::size_t used = 0;
                    first = std::stoul(item.substr(0, dash), &used);
                    if (used != item.substr(0, dash).size()) throw std::invalid_argument(item);
                    last = first;
                    if (dash != std::string::npos) {
                        last = std::stoul(item.substr(dash + 1), &used);
                        if (used != item.size() - dash - 1) throw std::invalid_argument(item);
                    }
                } catch (const std::exception&) {
                    throw config_error("param collectives.chips = '" + text + "': '" + item +
                                       "' is not a fabric id or a range a-b");
                }
                if (last < first || last >= fabric_chips)
                    throw config_error(fmt::format("param collectives.chips = '{}': {} is not on the fabric (ids 0-{})",
                                                   text, item, fabric_chips - 1));
                for (unsigned long c = first; c <= last; ++c) {
                    if (std::find(v.begin(), v.end(), c) != v.end())
                        throw config_error(
                            fmt::format("param collectives.chips = '{}': chip {} appears twice", text, c));
                    v.push_back(static_cast<unsigned>(c));
                }
                at = comma + 1;
            }
        }
        if (v.size() < 2)
            throw config_error("param collectives.chips = '" + text + "': a communicator needs at least two chips");
        return v;
    }
    static std::uint64_t ns(const sc_core::sc_time& t) { return static_cast<std::uint64_t>(t.to_seconds() * 1e9); }

    // Rank p's contribution to element e of the whole buffer (reducing ops),
    // or its own part's element e (all_gather).
    int value(unsigned p, std::uint64_t e) const {
        const unsigned n = size();
        if (!reduces()) return static_cast<int>((p * 5 + e * 3) % 7) - 3;
        if (p == e % n) return 1 + static_cast<int>((e / n) % 2);
        if (p == (e + 1) % n) return static_cast<int>((e / n) % 3) - 1;
        return 0;
    }
    // The expected buffer every rank (or rank p, reduce_scatter) ends with.
    std::vector<std::uint8_t> expected(std::uint64_t bytes, unsigned p) const {
        const unsigned n = size(), es = element_bytes();
        const auto t = dtype_of(dtype.get()).type;
        const std::uint64_t elements = bytes / es;
        std::vector<std::uint8_t> out(bytes);
        for (std::uint64_t e = 0; e < elements; ++e) {
            if (what() == collectives::op::broadcast) {  // the root's input
                put_value(out.data() + e * es, value(static_cast<unsigned>(root.get()), e), t);
                continue;
            }
            if (what() == collectives::op::all_to_all) {  // chunk i: rank i's chunk p
                const std::uint64_t chunk = elements / n;
                put_value(out.data() + e * es, value(static_cast<unsigned>(e / chunk), p * chunk + e % chunk), t);
                continue;
            }
            if (!reduces()) {
                const unsigned owner = static_cast<unsigned>(e / (elements / n));
                put_value(out.data() + e * es, value(owner, e % (elements / n)), t);
                continue;
            }
            // Two ranks give something, the others zero: every order gives this exactly.
            const numerics::reduction r{static_cast<numerics::reduce_op>(redop_code()), t};
            std::uint8_t next[4];
            put_value(out.data() + e * es, value(unsigned(e % n), e), t);
            put_value(next, value(unsigned((e + 1) % n), e), t);
            numerics::reduce_into(r, out.data() + e * es, next, es);
            if (n > 2) {
                put_value(next, 0, t);
                numerics::reduce_into(r, out.data() + e * es, next, es);
            }
        }
        if (what() == collectives::op::reduce_scatter) {
            const std::uint64_t chunk = bytes / n;
            return {out.begin() + static_cast<std::ptrdiff_t>(p * chunk),
                    out.begin() + static_cast<std::ptrdiff_t>((p + 1) * chunk)};
        }
        return out;
    }
    std::vector<std::uint8_t> input(std::uint64_t bytes, unsigned p) const {
        const unsigned n = size(), es = element_bytes();
        const auto t = dtype_of(dtype.get()).type;
        const std::uint64_t elements = what() == collectives::op::all_gather ? bytes / es / n : bytes / es;
        std::vector<std::uint8_t> in(elements * es);
        for (std::uint64_t e = 0; e < elements; ++e) put_value(in.data() + e * es, value(p, e), t);
        return in;
    }

    // Every host arrives; the last one releases the others (each sees it at
    // its next poll) and records when.
    bool barrier(unsigned h) {
        const std::uint64_t generation = barrier_generation_;
        if (++barrier_arrived_ == sys_.hosts.size()) {
            barrier_arrived_ = 0;
            released_at_ = sc_core::sc_time_stamp();
            ++barrier_generation_;
            return true;
        }
        return sys_.hosts[h].ops->wait_until([&] { return barrier_generation_ != generation; }, ns(timeout.get()),
                                             ns(poll.get()));
    }

    void software(unsigned h) {
        const host_info& hi = sys_.hosts[h];
        host_state& me = hosts_[h];
        static const char* const phases[] = {"host links up", "enumerated",
                                             "chips probed, firmware running, routes programmed"};
        if (!bring_up(hi, {link_timeout.get(), boot_timeout.get()}, me.chips,
                      [&](unsigned phase) { tracks_[h].mark(phases[phase]); }) ||
            !me.chips.failures.empty()) {
            me.failures = me.chips.failures;
            aborted_ = true;
        }
        if (!barrier(h) || aborted_) return finish(h, "a host could not bring its chips up");
        tracks_[h].mark("every host up");
        for (std::size_t i = 0; i < sizes_.size(); ++i) {
            for (unsigned k = 0; k < 2; ++k)
                if (!one(h, i, k == 1)) return finish(h, "");
            if (h == 0) rows_[i].done = true;
        }
        if (h == 0) finished_ = true;
        finish(h, "");
    }

    // One collective of sizes_[i], out of place or in place: inputs, plans,
    // a start together, the wait, the check.
    bool one(unsigned h, std::size_t i, bool in_place) {
        const host_info& hi = sys_.hosts[h];
        host_state& me = hosts_[h];
        const std::uint64_t bytes = sizes_[i];
        const auto k_channels = static_cast<unsigned>(channels.get());
        std::vector<std::map<unsigned, std::vector<trn3_dma_descriptor>>> plans(k_channels);  // by fabric id
        for (unsigned k = 0; k < k_channels; ++k)
            for (auto& rank : collectives::plan(request(bytes, in_place, k)))
                plans[k][rank.fabric_id] = std::move(rank.descriptors);
        const unsigned n = size();
        const bool gather_only = what() == collectives::op::all_gather;
        const std::uint64_t part = gather_only ? bytes / n : bytes;
        auto fail = [&](const std::string& what) {
            me.failures.push_back(fmt::format("{} B {}: {}", bytes, in_place ? "in place" : "out of place", what));
            aborted_ = true;
        };
        for (std::size_t c = 0; c < hi.chips.size(); ++c) {
            const int p = rank_of_chip(hi.chips[c].fabric_id);  // its rank
            if (p < 0) continue;
            driver::trn3_device& d = *me.chips.devices[c];
            // Inputs; the output buffer filled with a pattern no result has
            // (rows timed only write zeros the same way: the same accesses, the same times).
            {
                const auto in = checked(bytes) ? input(bytes, unsigned(p))
                                               : std::vector<std::uint8_t>(gather_only ? bytes / n : bytes);
                const std::uint64_t in_at = in_place && gather_only ? layout.recv + part * unsigned(p) : layout.send;
                const std::vector<std::uint8_t> stale(
                    reduces() && what() == collectives::op::reduce_scatter ? bytes / n : bytes, 0xA5);
                if ((!in_place && d.write(layout.recv, stale.data(), stale.size()) != driver::status::ok) ||
                    d.write(in_at, in.data(), in.size()) != driver::status::ok)
                    fail("writing the inputs");
            }
            for (unsigned k = 0; k < k_channels; ++k) {
                std::uint64_t rx = 0;
                auto descriptors = plans[k].at(unsigned(hi.chips[c].fabric_id));
                if (d.fabric_channel_bytes(1 + k, rx) != driver::status::ok) fail("reading the fabric counters");
                collectives::offset_waits(descriptors, rx);
                if (d.load_device_queue(1 + k, ring_at + k * ring_stride, descriptors) != driver::status::ok)
                    fail("loading the schedule");
            }
        }
        if (!barrier(h) || aborted_) return false;
        const sc_core::sc_time start = released_at_;
        for (std::size_t c = 0; c < hi.chips.size(); ++c)
            if (rank_of_chip(hi.chips[c].fabric_id) >= 0)
                for (unsigned k = 0; k < k_channels; ++k) me.chips.devices[c]->start_device_queue(1 + k);
        for (std::size_t c = 0; c < hi.chips.size(); ++c)
            if (rank_of_chip(hi.chips[c].fabric_id) >= 0)
                for (unsigned k = 0; k < k_channels; ++k) {
                    const driver::status s =
                        me.chips.devices[c]->queue_finished(1 + k, ns(timeout.get()), ns(poll.get()));
                    if (s != driver::status::ok)
                        fail(fmt::format("chip {} channel {}: {}", hi.chips[c].name, k, driver::status_name(s)));
                }
        finished_at_ = std::max(finished_at_, sc_core::sc_time_stamp());
        if (!barrier(h) || aborted_) return false;
        if (h == 0) {
            rows_[i].seconds[in_place ? 1 : 0] = (finished_at_ - start).to_seconds();
            finished_at_ = sc_core::SC_ZERO_TIME;
        }
        // The check: every element of every rank's output.
        for (std::size_t c = 0; c < hi.chips.size(); ++c) {
            const int p = rank_of_chip(hi.chips[c].fabric_id);  // its rank
            if (p < 0) continue;
            const std::uint64_t out_bytes = what() == collectives::op::reduce_scatter ? bytes / n : bytes;
            std::uint64_t out_at = layout.recv;
            if (in_place && (what() == collectives::op::all_reduce || what() == collectives::op::all_to_all ||
                             what() == collectives::op::broadcast))
                out_at = layout.send;
            if (in_place && what() == collectives::op::reduce_scatter) out_at = layout.send + out_bytes * unsigned(p);
            std::vector<std::uint8_t> got(out_bytes);
            if (me.chips.devices[c]->read(got.data(), out_at, got.size()) != driver::status::ok) {
                fail("reading the result");
                continue;
            }
            if (!checked(bytes)) continue;  // read all the same: the same accesses whether checked or not
            const auto want = expected(bytes, unsigned(p));
            const unsigned es = element_bytes();
            for (std::size_t e = 0; e < got.size(); e += es)
                if (std::memcmp(got.data() + e, want.data() + e, es) != 0) ++rows_[i].wrong[in_place ? 1 : 0];
        }
        return barrier(h) && !aborted_;
    }

    void finish(unsigned h, const std::string& why) {
        if (!why.empty() && hosts_[h].failures.empty()) hosts_[h].failures.push_back(why);
        if (++hosts_done_ == sys_.hosts.size()) sys_.stop();
    }

    host_system& sys_;
    std::vector<host_state> hosts_;
    std::vector<phase_track> tracks_;
    std::vector<std::uint64_t> sizes_;
    std::vector<unsigned> members_;  // the communicator's fabric ids, in rank order
    std::map<unsigned, unsigned> rank_of_id_;
    std::vector<row> rows_;
    std::size_t hosts_done_ = 0, barrier_arrived_ = 0;
    std::uint64_t barrier_generation_ = 0;
    sc_core::sc_time released_at_, finished_at_;
    bool aborted_ = false, finished_ = false;
};

const program_registration registration{
    "collectives", "nccl-tests over every chip on the fabric: one collective, a sweep of sizes, out of and in place",
    [](host_system& s) { return std::make_unique<collectives_program>(s); }};

}  // namespace
}  // namespace trn3::apps
