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
// In a cluster (several UltraServers, each running this program), the
// communicator is every chip of every UltraServer and the all_reduce is
// hierarchical across the network: a reduce-scatter over NeuronLink inside
// each UltraServer (by the schedules above), then each chip's chunk
// all-reduced over EFA with the same chip of every other UltraServer
// (efa_ring.h: libfabric RMA by the NICs that serve the chips, straight
// into their HBM; local reductions by the chips' DMA engines), then an
// all-gather over NeuronLink. In place both phases work in the input;
// out of place the chunk waits in a staging area between them (staging()).
// Sizes round down to whole chunks per chip (at least one), as nccl-tests'
// do for reduce_scatter. Every row starts at the same
// time in every UltraServer and ends when the last chip of the cluster is
// done; the table is the first UltraServer's, with every chip's #wrong.
//
// Rows above collectives.check_max_bytes are timed only: the schedules'
// descriptors are TRN3_DESC_TIMING_ONLY (every access and TLP takes its
// time, no data moves), no inputs are written and nothing is checked
// (#wrong N/A, as nccl-tests without its check). The times are the data
// mode's: a test compares them.
//
// params: collectives.op, .dtype, .redop, .chips, .min_bytes, .max_bytes, .factor, .json,
//         .channels, .channel_bytes, .rings, .level_orders, .out_of_place, .copy_queues, .copy_phases,
//         .completion, .buffers,
//         .check_max_bytes, .poll, .wait, .timeout,
//         .link_timeout, .boot_timeout
#include <algorithm>
#include <cstring>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <systemc>

#include "bring_up.h"
#include "channel_rings.h"
#include "cluster_exchange.h"
#include "collective_data.h"
#include "communicator.h"
#include "efa_ring.h"
#include "host_barrier.h"
#include "phase_track.h"
#include "trn3/apps/host_program.h"
#include "trn3/collectives/choose.h"
#include "trn3/collectives/plan.h"
#include "trn3/core/error.h"
#include "trn3/core/param.h"
#include "trn3/core/user_file.h"
#include "trn3/numerics/float_format.h"
#include "trn3/numerics/reduce.h"
#include "trn3/spec/device.h"

namespace trn3::apps {
namespace {

// Where the collectives keep their buffers (collectives.buffers): in HBM,
// from 4 GiB into the striped window (every stack from its byte 1 GiB on,
// clear of the descriptor rings; spec/device.h TRN3_DEV_HBM_STRIPED_BASE)
// or in stack 1; or in NeuronCore 0's SBUF (sizes to 1 MiB). Send, recv,
// work, tokens, then up to 9 scratch areas (halving-doubling's steps on 144
// chips, and its fold), then avg's constant (1/n); across UltraServers,
// then the EFA ring's landing area (landing()).
constexpr std::uint64_t gib = 1ull << 30, mib = 1 << 20, sbuf_max_bytes = mib;
constexpr collectives::buffers layout_at(std::uint64_t base) {
    return {base, base + 4 * gib, base + 8 * gib, base + 12 * gib, base + 16 * gib, gib, base + 26 * gib};
}
constexpr collectives::buffers sbuf_layout{TRN3_DEV_SBUF_BASE(0),           TRN3_DEV_SBUF_BASE(0) + 2 * mib,
                                           TRN3_DEV_SBUF_BASE(0) + 4 * mib, TRN3_DEV_SBUF_BASE(0) + 6 * mib,
                                           TRN3_DEV_SBUF_BASE(0) + 8 * mib, 2 * mib,
                                           TRN3_DEV_SBUF_BASE(0) + 26 * mib};
// Channel k's schedule runs on DMA queue 1 + k from a ring of its own
// (ring_of), in HBM stack 2 (with buffers=hbm1, away from them: a
// descriptor fetch behind a 15-channel all_reduce's data took 4-5 us, and
// busbw fell from 230.78 to 169.44 GB/s on 16 chips at 64 MiB; striped
// buffers share stack 2, and the engine reads 8 descriptors at a time).
// Each ring has ring_stride bytes; 63 fit below stack 2's striped part (its
// byte 1 GiB), channels 63 on take stack 3's first GiB the same way: up to
// 126 channels.
constexpr std::uint64_t ring_at = TRN3_DEV_HBM_BASE(2) + (1 << 20), ring_stride = 16 << 20;
constexpr std::uint64_t rings_per_stack = (gib - mib) / ring_stride;
constexpr std::uint64_t max_channels = std::min<std::uint64_t>(2 * rings_per_stack, TRN3_DMA_QUEUES_MAX - 1);
constexpr std::uint64_t ring_of(unsigned channel) {
    return channel < rings_per_stack ? ring_at + channel * ring_stride
                                     : TRN3_DEV_HBM_BASE(3) + mib + (channel - rings_per_stack) * ring_stride;
}

class collectives_program final : public host_program {
public:
    param<std::string> op{nullptr, "collectives.op", "all_reduce", "the collective",
                          one_of<std::string>{{"all_reduce", "reduce_scatter", "all_gather", "all_to_all",
                                               "all_to_allv", "broadcast", "reduce", "sendrecv"}}};

    param<std::uint64_t> root{nullptr, "collectives.root", 0,
                              "broadcast and reduce: the root's rank in the communicator"};
    param<byte_count> segment_bytes{nullptr, "collectives.segment_bytes", byte_count{0},
                                    "chains (broadcast, reduce) pipeline the buffer in segments of this size (0: as "
                                    "many segments as ranks), trees each half (0: whole)",
                                    range<byte_count>{byte_count{0}, byte_count{1ull << 30}}};
    param<std::string> algorithm{
        nullptr, "collectives.algorithm", "auto",
        "the schedule: auto (collectives::choose, by op, ranks, size and the topology's levels), ring, direct, halving_doubling, chain, tree "
        "(double binary tree), hierarchical (rings level by level of the topology: tray, rack, racks; a torus's "
        "dimensions)",
        one_of<std::string>{{"auto", "ring", "direct", "halving_doubling", "chain", "tree", "hierarchical"}}};
    param<std::string> dtype{nullptr, "collectives.dtype", "fp32", "element type",
                             one_of<std::string>{{"fp32", "bf16", "fp16", "e4m3", "e5m2", "int32"}}};
    param<std::string> redop{
        nullptr, "collectives.redop", "sum",
        "reduction (all_reduce, reduce_scatter, reduce); avg: the sum times 1/n rounded to the type "
        "(floating types)",
        one_of<std::string>{{"sum", "max", "min", "prod", "avg"}}};
    param<byte_count> min_bytes{nullptr, "collectives.min_bytes", byte_count{8},
                                "first size of the sweep (K, M, G: binary, as nccl-tests' -b)",
                                range<byte_count>{byte_count{1}, byte_count{1ull << 30}}};
    param<byte_count> max_bytes{nullptr, "collectives.max_bytes", byte_count{1 << 20},
                                "last size of the sweep (as nccl-tests' -e)",
                                range<byte_count>{byte_count{1}, byte_count{1ull << 30}}};
    param<std::string> chips{nullptr, "collectives.chips", "all",
                             "the communicator: all, or fabric ids and ranges (0-3,8,12-15), rank order as written"};
    param<std::uint64_t> factor{nullptr, "collectives.factor", 2, "each size is the last times this",
                                range<std::uint64_t>{2, 1024}};
    param<std::uint64_t> channels{nullptr, "collectives.channels", 2,
                                  "parts of the collective that run at once, each over a piece of every chunk on its "
                                  "own DMA queue and fabric channel (its own ring: collectives.rings); past 15 the "
                                  "chips need more DMA queues than their default 16 (dma0.queues)",
                                  range<std::uint64_t>{1, max_channels}};
    param<byte_count> channel_bytes{
        nullptr, "collectives.channel_bytes", byte_count{256 << 10},
        "bytes a size needs for each channel it uses: a size runs on ceil(size / channel_bytes) channels, at most "
        "collectives.channels (0: every size on collectives.channels)",
        range<byte_count>{byte_count{0}, byte_count{1ull << 30}}};
    param<std::string> rings{
        nullptr, "collectives.rings", "topology",
        "the ring algorithm's rings: topology (searched over the fabric's links and routes, one per channel, "
        "so that no link carries more than it must: greedily, then by a local search), greedy (the greedy "
        "search alone), grid (laid by construction on a switched grid, so that every link carries its share: "
        "patterns of one order on as many channels as a level has ways, docs/collectives.md; needs channels a "
        "multiple of the ways), or stride (channel 0 in rank order, 1 the reverse, then strides coprime with the "
        "rank count)",
        one_of<std::string>{{"topology", "greedy", "grid", "stride"}}};
    param<std::string> out_of_place{
        nullptr, "collectives.out_of_place", "copy",
        "how the reduce-scatter of the ring and of hierarchical's first level (all_reduce, reduce_scatter) "
        "reduces out of place: copy (the input copied to the buffer it is reduced in, first or on "
        "collectives.copy_queues, then reduced into as data lands) or operand (no copy: each reducing write takes "
        "its other operand from the input where it lands, TRN3_DESC_REDUCE_OPERAND with the chips' FABRIC_OPERAND "
        "registers)",
        one_of<std::string>{{"copy", "operand"}}};
    param<std::uint64_t> copy_queues{
        nullptr, "collectives.copy_queues", 0,
        "out of place, the ring's reduce-scatter (all_reduce, reduce_scatter): DMA queues of their own (after the "
        "channels' queues) that copy the input to the buffer it is reduced in, phase by phase ahead of the steps, "
        "so the rings start at once; 0: each channel copies all of it first",
        range<std::uint64_t>{0, 32}};
    param<std::uint64_t> copy_phases{nullptr, "collectives.copy_phases", 8,
                                     "with copy_queues: phases of the reduce-scatter's steps, each copied (and "
                                     "told by a token on a fabric channel of its own) before its first step",
                                     range<std::uint64_t>{1, 32}};
    param<std::string> completion{
        nullptr, "collectives.completion", "queues",
        "how a host sees its chips' channels done: queues (each queue's HEAD against its TAIL, one queue after "
        "another) or pending (the chip's DMA_PENDING words, one read for 32 queues, then ERR_STATUS)",
        one_of<std::string>{{"queues", "pending"}}};
    param<std::string> level_orders{
        nullptr, "collectives.level_orders", "innermost",
        "the order each channel of the hierarchical algorithm takes the levels in: innermost (every channel the "
        "innermost level first) or balanced (wider levels first, chosen channel by channel so that every level's "
        "links carry the same time, by the bandwidth the fabric's routes give each level)",
        one_of<std::string>{{"balanced", "innermost"}}};

    param<std::uint64_t> traffic_class{nullptr, "collectives.traffic_class", 0,
                                       "the traffic class (TC) of the collective's data on the fabric; with "
                                       "strict arbitration (platform fabric_arbitration) a higher class goes first",
                                       range<std::uint64_t>{0, 7}};
    param<std::uint64_t> token_class{nullptr, "collectives.token_class", 0,
                                     "the traffic class of the 64-byte tokens that order a schedule's steps",
                                     range<std::uint64_t>{0, 7}};

    param<std::string> buffers{nullptr, "collectives.buffers", "striped",
                               "where each chip keeps the collective's buffers: striped (over its HBM stacks, "
                               "hbm_stripe.granule at a time), hbm1 (all in stack 1) or sbuf (NeuronCore 0's SBUF: "
                               "sizes to 1 MiB)",
                               one_of<std::string>{{"striped", "hbm1", "sbuf"}}};
    param<byte_count> check_max_bytes{
        nullptr, "collectives.check_max_bytes", byte_count{1 << 20},
        "largest size whose data is written and checked; larger rows are timed only (#wrong N/A): the "
        "times do not depend on the values",
        range<byte_count>{byte_count{0}, byte_count{1ull << 30}}};
    param<std::string> json{nullptr, "collectives.json", "",
                            "also write the table as JSON to this file (rows with the same fields)"};
    param<sc_core::sc_time> poll{nullptr, "collectives.poll", sc_core::sc_time(100, sc_core::SC_NS),
                                 "how often a host looks whether its chips are done",
                                 range<sc_core::sc_time>{sc_core::sc_time(1, sc_core::SC_NS), {}}};
    param<std::string> wait{nullptr, "collectives.wait", "poll",
                            "how a host learns that its chips' queues are done: poll (reads each queue's STATUS "
                            "and HEAD over PCIe, collectives.poll apart) or interrupt (each queue's last "
                            "descriptor raises its MSI-X vector; the host reads when one comes, and every 100 x "
                            "collectives.poll for a queue stopped by an error)",
                            one_of<std::string>{{"poll", "interrupt"}}};
    param<sc_core::sc_time> start_align{
        nullptr, "collectives.start_align", sc_core::sc_time(39, sc_core::SC_US),
        "collectives start at a multiple of this, at least this long after the hosts are ready: a multiple of the "
        "HBM's tREFI (3.9 us), so each starts from the same memory state whatever ran before",
        range<sc_core::sc_time>{sc_core::sc_time(1, sc_core::SC_US), sc_core::sc_time(1, sc_core::SC_MS)}};
    param<sc_core::sc_time> timeout{nullptr, "collectives.timeout", sc_core::sc_time(100, sc_core::SC_MS),
                                    "longest one collective may take"};
    param<sc_core::sc_time> link_timeout{nullptr, "collectives.link_timeout", sc_core::sc_time(10, sc_core::SC_MS),
                                         "longest a host waits for each root port's link"};
    param<sc_core::sc_time> boot_timeout{nullptr, "collectives.boot_timeout", sc_core::sc_time(50, sc_core::SC_MS),
                                         "longest a host waits for a chip's firmware"};

    explicit collectives_program(host_system& s) : sys_(s), hosts_(s.hosts.size()) {
        for (std::size_t h = 0; h < s.hosts.size(); ++h)
            tracks_.emplace_back(s.instance_name(), fmt::format("host{} software", s.first_host + h));
        if (s.fabric_chips < 2)
            throw config_error("program collectives needs at least two chips on a NeuronLink fabric (" + s.name +
                               " has " + std::to_string(s.fabric_chips) + ")");
        across_ = s.cluster_size > 1;
        if (across_ && (op.get() != "all_reduce" || chips.get() != "all" || redop.get() == "avg"))
            throw config_error(fmt::format(
                "collectives across {} UltraServers: all_reduce (sum, max, min, prod) over every chip (collectives.op = "
                "{}, collectives.chips = {}, collectives.redop = {})",
                s.cluster_size, op.get(), chips.get(), redop.get()));
        efa_.resize(s.hosts.size());
        members_ = parse_members(chips.get(), s.fabric_chips);
        levels_ = levels_of(members_, s.level_names, s.fabric_levels);
        rings_ = std::make_unique<channel_rings>(s.fabric, members_, levels_, unsigned(channels.get()), rings.get(),
                                                 level_orders.get() == "balanced");
        for (unsigned r = 0; r < members_.size(); ++r) rank_of_id_[members_[r]] = r;
        if (copy_queues.get() > 0 && out_of_place.get() == "operand")
            throw config_error(fmt::format("param collectives.copy_queues = {} copies the input: it needs "
                                           "collectives.out_of_place = copy, not operand",
                                           copy_queues.get()));
        if (min_bytes.get().bytes > max_bytes.get().bytes)
            throw config_error(fmt::format("param collectives.min_bytes = {} is above collectives.max_bytes = {}",
                                           min_bytes.get().bytes, max_bytes.get().bytes));
        // Every size must be possible: whole elements, n whole chunks where the
        // op needs them, an algorithm that runs the op, fabric channels enough.
        for (std::uint64_t asked = min_bytes.get().bytes; asked <= max_bytes.get().bytes; asked *= factor.get()) {
            // Across UltraServers, whole chunks per chip (nccl-tests' rounding for reduce_scatter).
            const std::uint64_t whole = std::uint64_t(size()) * element_bytes();
            const std::uint64_t b = across_ ? std::max(asked / whole, std::uint64_t(1)) * whole : asked;
            if (!sizes_.empty() && sizes_.back() == b) continue;
            sizes_.push_back(b);
            std::uint64_t out = 0;  // the largest output (all_to_allv's are uneven)
            for (unsigned p = 0; p < size() && buffers.get() == "sbuf"; ++p)
                out = std::max(out, reference().output_bytes(b, p));
            if (buffers.get() == "sbuf" && (b > sbuf_max_bytes || out > 2 * mib))
                throw config_error(fmt::format("param collectives.buffers = sbuf holds sizes up to 1 MiB and outputs "
                                               "up to 2 MiB (a 32 MiB SBUF): size {} B, largest output {} B",
                                               b, out));
            try {
                for (const collectives::op o : phase_ops()) {
                    collectives::check_supported(algorithm_for(b, o), o, size());
                    const unsigned needed = counters_for(algorithm_for(b, o), o);
                    const std::uint64_t phases = std::min<std::uint64_t>(copy_phases.get(), size() - 1);
                    if (copying(b, false, o) && 1 + channels_for(b) + phases > TRN3_FABRIC_CHANNELS)
                        throw std::invalid_argument(fmt::format(
                            "{} channels and {} copy phases count on {} of {} fabric channels (collectives.copy_phases)",
                            channels_for(b), phases, 1 + channels_for(b) + phases, TRN3_FABRIC_CHANNELS));
                    if (copying(b, false, o) && channels_for(b) + copy_queues.get() > max_channels)
                        throw std::invalid_argument(fmt::format(
                            "{} channels and {} copy queues: at most {} queues' rings (collectives.copy_queues)",
                            channels_for(b), copy_queues.get(), max_channels));
                    if (needed * channels_for(b) > TRN3_FABRIC_CHANNELS)
                        throw std::invalid_argument(fmt::format(
                            "{} {} on {} ranks counts on {} fabric channels per channel: {} channels need {} of {} "
                            "(collectives.channels)",
                            collectives::name(algorithm_for(b, o)), collectives::name(o), size(), needed,
                            channels_for(b), needed * channels_for(b), TRN3_FABRIC_CHANNELS));
                    // Each channel's descriptors and completion records must fit
                    // in its ring area (ring_stride), a power of two of entries.
                    for (const bool in_place : {false, true}) {  // across, the two differ (staging())
                        if (!across_ && in_place) break;
                        for (const auto& rank : collectives::plan(request(b, in_place, 0, o)))
                            if (driver::trn3_device::device_queue_bytes(rank.descriptors.size()) > ring_stride)
                                throw std::invalid_argument(fmt::format(
                                    "{} B needs {} descriptors on a channel of rank {}: more than its {} MiB ring "
                                    "holds (a larger collectives.segment_bytes)",
                                    b, rank.descriptors.size(), rank_of_id_.at(rank.fabric_id), ring_stride >> 20));
                    }
                }
            } catch (const std::invalid_argument& e) {
                throw config_error(std::string("collectives: ") + e.what());
            }
            if (asked > max_bytes.get().bytes / factor.get()) break;
        }
        rows_.resize(sizes_.size());
    }

    // An EFA endpoint still open here (the run ended before its host
    // finished: a time limit) is left as it is: closing it talks to the NIC,
    // which takes simulated time, and the simulation is over.
    ~collectives_program() override {
        if (!sc_core::sc_get_current_process_handle().valid())
            for (auto& e : efa_) static_cast<void>(e.release());
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
        const unsigned n = ranks_total();
        if (across_ && sys_.cluster_rank > 0) {  // one table for the cluster: the first UltraServer's
            os << fmt::format("# {}: {} of the cluster's {} ranks; the table is the first UltraServer's\n", sys_.name,
                              size(), n);
            return;
        }
        const std::string who = across_
                                    ? fmt::format("every chip of {} UltraServers, {} each", sys_.cluster_size, size())
                                : chips.get() == "all" ? "every chip on the fabric"
                                                       : "chips " + chips.get();
        const std::string how =
            across_ ? fmt::format("hierarchical across UltraServers (inside each, reduce_scatter and all_gather by the "
                                  "{}; between them, a ring of {} over EFA through libfabric)",
                                  algorithm_text(), sys_.cluster_size)
                    : algorithm_text();
        os << fmt::format("# {}: {} ranks ({}), {} {} {}, {}, {}{} channel{}\n", sys_.name, n, who, op.get(), t.nccl,
                          reduces() ? redop.get() : "none", how, channel_bytes.get().bytes ? "up to " : "",
                          channels.get(), channels.get() == 1 ? "" : "s");
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
        j["algorithm"] = algorithm.get();
        j["type"] = t.nccl;
        j["redop"] = reduces() ? redop.get() : "none";
        j["ranks"] = members_;  // in each UltraServer, across them
        if (across_) j["ultraservers"] = sys_.cluster_size;
        j["channels"] = channels.get();
        j["out_of_place"] = out_of_place.get();
        j["copy_queues"] = copy_queues.get();
        if (!rings_->searched().empty())
            j["rings"] = rings_->searched();  // the ring algorithm's, by channel (fabric ids)
        const bool hierarchical = std::any_of(sizes_.begin(), sizes_.end(), [this](std::uint64_t b) {
            return algorithm_for(b) == collectives::algorithm::hierarchical;
        });
        if (hierarchical) {
            // The levels, each channel's order of them and its rings on each
            // (fabric ids; [channel][level][group]), for collectives.channels
            // channels (a size on fewer, by channel_bytes, searches its own).
            nlohmann::json levels{{"names", levels_.names}, {"places", levels_.places}};
            std::vector<double> gbps;
            for (double b : rings_->level_bandwidth()) gbps.push_back(b / 1e9);
            levels["bandwidth_GBps"] = gbps;
            for (unsigned k = 0; k < channels.get(); ++k) {
                levels["orders"].push_back(rings_->level_order(k));
                levels["rings"].push_back(rings_->level_rings(k, unsigned(channels.get())));
            }
            j["levels"] = levels;
        }

        j["rows"] = nlohmann::json::array();
        for (std::size_t i = 0; i < sizes_.size() && rows_[i].done; ++i) {
            nlohmann::json row{{"size", sizes_[i]},
                               {"count", sizes_[i] / element_bytes()},
                               {"root", root_column()},
                               {"algorithm", collectives::name(algorithm_for(sizes_[i]))},
                               {"channels", channels_for(sizes_[i])}};
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
            for (const auto& f : hosts_[h].failures)
                os << "  FAILED: host " << sys_.first_host + h << ": " << f << "\n";
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

    bool rooted() const { return what() == collectives::op::broadcast || what() == collectives::op::reduce; }
    int root_column() const { return rooted() ? static_cast<int>(root.get()) : -1; }
    // The channels a size runs on: collectives.channels, or fewer for a
    // size below channel_bytes per channel (each channel's descriptors cost
    // the same whatever its share of the bytes).
    unsigned channels_for(std::uint64_t bytes) const {
        const std::uint64_t most = channels.get(), per = channel_bytes.get().bytes;
        if (per == 0) return static_cast<unsigned>(most);
        return static_cast<unsigned>(std::clamp<std::uint64_t>((bytes + per - 1) / per, 1, most));
    }
    // The schedule of op o for a size: the param's, or collectives::choose's.
    collectives::algorithm algorithm_for(std::uint64_t bytes, collectives::op o) const {
        const std::string& a = algorithm.get();
        if (a == "auto") return collectives::choose(o, size(), bytes, channels_for(bytes), levels_.places);
        return collectives::algorithm_named(a);
    }
    collectives::algorithm algorithm_for(std::uint64_t bytes) const {
        return algorithm_for(bytes, across_ ? collectives::op::reduce_scatter : what());
    }
    unsigned counters_for(collectives::algorithm a, collectives::op o) const {
        return collectives::counters_needed(a, o, size(), static_cast<unsigned>(levels_.names.size()));
    }
    // The schedules each collective runs over NeuronLink: its own, or across
    // UltraServers a reduce-scatter and then an all-gather (EFA between them).
    std::vector<collectives::op> phase_ops() const {
        if (across_) return {collectives::op::reduce_scatter, collectives::op::all_gather};
        return {what()};
    }
    // Ranks in the whole communicator, and chip rank p's among them.
    unsigned ranks_total() const { return size() * (across_ ? sys_.cluster_size : 1); }
    unsigned global_rank(unsigned p) const { return across_ ? sys_.cluster_rank * size() + p : p; }
    // The channels' level orders, alike ones counted: "tray-rack-racks x6, rack-tray-racks x4".
    std::string orders_text() const {
        std::vector<std::pair<std::string, unsigned>> counted;
        for (unsigned k = 0; k < channels.get(); ++k) {
            std::string text;
            for (unsigned l : rings_->level_order(k)) text += (text.empty() ? "" : "-") + levels_.names[l];
            auto it = std::find_if(counted.begin(), counted.end(), [&](const auto& c) { return c.first == text; });
            if (it == counted.end()) counted.emplace_back(text, 1);
            else ++it->second;
        }
        std::string out;
        for (const auto& [text, count] : counted) out += fmt::format("{}{} x{}", out.empty() ? "" : ", ", text, count);
        return out;
    }
    // For the header: the algorithm, or what auto chose for each size.
    std::string algorithm_text() const {
        if (algorithm.get() == "hierarchical") {
            std::string grid;
            for (std::size_t l = 0; l < levels_.names.size(); ++l)
                grid += fmt::format("{}{} {}", l ? " x " : "", levels_.names[l], levels_.places[l]);
            return "hierarchical algorithm (" + grid + "; " + orders_text() + ")";
        }
        if (algorithm.get() == "ring" && !rings_->grid_text().empty())
            return "ring algorithm (grid rings: " + rings_->grid_text() + ")";
        if (algorithm.get() != "auto") return algorithm.get() + " algorithm";
        std::string chosen;
        for (std::uint64_t b : sizes_) {
            const char* a = collectives::name(algorithm_for(b));
            if (chosen.find(a) == std::string::npos) chosen += std::string(chosen.empty() ? "" : ", ") + a;
        }
        return "auto algorithm (" + chosen + ")";
    }
    bool checked(std::uint64_t bytes) const { return bytes <= check_max_bytes.get().bytes; }
    bool reduces() const { return op.get() == "all_reduce" || op.get() == "reduce_scatter" || op.get() == "reduce"; }
    unsigned element_bytes() const { return numerics::element_bytes(dtype_of(dtype.get()).type); }
    double bus_factor() const {
        const double n = ranks_total();
        // nccl-tests' factors: broadcast, reduce and sendrecv move the whole buffer once.
        return op.get() == "all_reduce" ? 2 * (n - 1) / n : rooted() || op.get() == "sendrecv" ? 1.0 : (n - 1) / n;
    }
    collectives::op what() const {
        return op.get() == "all_reduce"       ? collectives::op::all_reduce
               : op.get() == "reduce_scatter" ? collectives::op::reduce_scatter
               : op.get() == "all_gather"     ? collectives::op::all_gather
               : op.get() == "broadcast"      ? collectives::op::broadcast
               : op.get() == "reduce"         ? collectives::op::reduce
               : op.get() == "sendrecv"       ? collectives::op::send_recv
               : op.get() == "all_to_allv"    ? collectives::op::all_to_allv
                                              : collectives::op::all_to_all;
    }
    unsigned redop_code() const {
        return redop.get() == "max"    ? TRN3_REDUCE_MAX
               : redop.get() == "min"  ? TRN3_REDUCE_MIN
               : redop.get() == "prod" ? TRN3_REDUCE_PROD
                                       : TRN3_REDUCE_SUM;  // sum, avg
    }
    collectives::buffers layout() const {
        if (buffers.get() == "sbuf") return sbuf_layout;
        return layout_at(buffers.get() == "striped" ? TRN3_DEV_HBM_STRIPED_BASE + 4 * gib : TRN3_DEV_HBM_BASE(1));
    }
    collectives::request request(std::uint64_t bytes, bool in_place, unsigned channel = 0) const {
        return request(bytes, in_place, channel, what());
    }
    collectives::request request(std::uint64_t bytes, bool in_place, unsigned channel, collectives::op o) const {
        collectives::request r;
        r.what = o;
        r.how = algorithm_for(bytes, o);
        // Hierarchical runs on its level rings (no use searching a ring of every chip).
        r.ring = r.how == collectives::algorithm::hierarchical ? members_ : rings_->ring(channel);
        r.ranks = members_;
        r.channels = channels_for(bytes);
        r.channel = channel;
        r.root = static_cast<unsigned>(root.get());
        r.bytes = bytes;
        r.element_bytes = element_bytes();
        r.reduce_op = redop_code();
        r.reduce_type = dtype_of(dtype.get()).code;
        r.in_place = in_place;
        r.at = layout();
        if (across_) {
            // In place both phases work in `send`; out of place the chunk
            // waits in staging() between them.
            if (o == collectives::op::all_gather && in_place) r.at.recv = r.at.send;
            else if (o == collectives::op::all_gather) r.at.send = staging();
            else if (!in_place) r.at.recv = staging();
        }
        r.counters = counters_for(r.how, o);
        if (r.how == collectives::algorithm::hierarchical) {
            r.coordinates = levels_.position;
            r.level_rings = rings_->level_rings(channel, r.channels);
            r.level_order = rings_->level_order(channel);
            // Channels interleave their counters, so one level's flows spread over every equal path.
            r.first_counter = channel;
            r.counter_stride = r.channels;
        } else {
            r.first_counter = channel * r.counters;
        }

        if (copying(bytes, in_place, o)) {
            r.copy_phases = static_cast<unsigned>(copy_phases.get());
            r.copy_counter = 1 + r.channels;  // after the channels' own
        }
        r.operand_landing = out_of_place.get() == "operand" && !in_place &&
                            (r.how == collectives::algorithm::ring || r.how == collectives::algorithm::hierarchical) &&
                            (o == collectives::op::all_reduce || o == collectives::op::reduce_scatter);
        r.timing_only = !checked(bytes);
        r.traffic_class = static_cast<unsigned>(traffic_class.get());
        r.token_class = static_cast<unsigned>(token_class.get());
        r.segment_bytes = segment_bytes.get().bytes;

        r.average = reduces() && redop.get() == "avg";
        if (r.what == collectives::op::all_to_allv) r.splits = reference().splits(bytes / element_bytes());
        return r;
    }
    unsigned size() const { return static_cast<unsigned>(members_.size()); }
    // Whether a row of op o copies its input on copy queues (copy_queues):
    // out of place, the ring's reduce-scatter (copy_queues_for: at most one
    // per channel).
    bool copying(std::uint64_t bytes, bool in_place, collectives::op o) const {
        return copy_queues.get() > 0 && !in_place && algorithm_for(bytes, o) == collectives::algorithm::ring &&
               (o == collectives::op::all_reduce || o == collectives::op::reduce_scatter) && size() > 1;
    }
    unsigned copy_queues_for(std::uint64_t bytes, bool in_place, collectives::op o) const {
        return copying(bytes, in_place, o)
                   ? static_cast<unsigned>(std::min<std::uint64_t>(copy_queues.get(), channels_for(bytes)))
                   : 0;
    }
    collective_reference reference() const {
        return {what(),
                ranks_total(),
                dtype_of(dtype.get()).type,
                redop_code(),
                static_cast<unsigned>(root.get()),
                reduces() && redop.get() == "avg"};
    }
    // A chip's rank in the communicator, -1 when it is not in it.
    int rank_of_chip(int fabric_id) const {
        const auto it = rank_of_id_.find(static_cast<unsigned>(fabric_id));
        return fabric_id < 0 || it == rank_of_id_.end() ? -1 : static_cast<int>(it->second);
    }
    static std::uint64_t ns(const sc_core::sc_time& t) { return static_cast<std::uint64_t>(t.to_seconds() * 1e9); }

    // Every host arrives; the last one releases the others (each sees it at
    // its next poll) and records when.
    bool barrier(unsigned h) {
        if (barrier_.arrive(h, ns(timeout.get()), ns(poll.get()))) return true;
        hosts_[h].failures.push_back(sys_.parts > 1 ? "the rack's other hosts did not reach a barrier in time"
                                                    : "the UltraServer's other hosts did not reach a barrier in time");
        aborted_ = true;
        return false;
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
        if (me.failures.empty() && channels.get() + copy_queues.get() >= TRN3_DMA_QUEUES) enough_queues(h);
        if (!barrier(h) || aborted_) return finish(h, "a host could not bring its chips up");
        tracks_[h].mark("every host up");
        if (across_) {
            open_efa(h);
            if (!barrier(h) || aborted_) return finish(h, "a host could not open its EFA endpoint");
            tracks_[h].mark("EFA endpoints open");
        }
        for (std::size_t i = 0; i < sizes_.size(); ++i) {
            for (unsigned k = 0; k < 2; ++k)
                if (!(across_ ? one_across(h, i, k == 1) : one(h, i, k == 1))) return finish(h, "");
            if (h == 0) rows_[i].done = true;
        }
        if (h == 0) finished_ = true;
        // Nothing is closed while a peer may still wait on this host's NIC.
        if (across_ && !everywhere(h, [] { return std::vector<std::uint64_t>{}; })) return finish(h, "");
        finish(h, "");
    }

    // Channel k runs on DMA queue 1 + k: past the default count, every chip must have them.
    void enough_queues(unsigned h) {
        host_state& me = hosts_[h];
        for (std::size_t c = 0; c < sys_.hosts[h].chips.size(); ++c) {
            if (rank_of_chip(sys_.hosts[h].chips[c].fabric_id) < 0) continue;  // not in the communicator
            unsigned n = 0;
            const bool copies = copy_queues.get() > 0 &&
                                (what() == collectives::op::all_reduce || what() == collectives::op::reduce_scatter);
            const std::uint64_t needed =
                channels.get() + (copies ? std::min(copy_queues.get(), channels.get()) : 0) + 1;
            if (me.chips.devices[c]->dma_queues(n) != driver::status::ok || n < needed) {
                me.failures.push_back(fmt::format(
                    "chip {} has {} DMA queues: collectives.channels = {}{} needs {} (its dma0.queues param)",
                    sys_.hosts[h].chips[c].fabric_id, n, channels.get(),
                    copy_queues.get() ? fmt::format(" and copy_queues = {}", copy_queues.get()) : "", needed));
                aborted_ = true;
            }
        }
    }

    // One collective of sizes_[i], out of place or in place: inputs, plans,
    // a start together, the wait, the check.
    bool one(unsigned h, std::size_t i, bool in_place) {
        prepare(h, i, in_place, what(), true);
        if (!everywhere(h, [this] { return std::vector<std::uint64_t>{barrier_.released_at().value()}; }) || aborted_)
            return false;
        const sc_core::sc_time start = start_after(h);
        run_loaded(h, i, in_place);
        if (!finish_row(h, i, in_place, start)) return false;
        check(h, i, in_place);
        if (sys_.parts > 1 && !count_wrong(h, i, in_place)) return false;
        return barrier(h) && !aborted_;
    }

    // Every instance checked its own chips (across UltraServers, or in a
    // system cut into parts): the row's wrong elements are everyone's.
    bool count_wrong(unsigned h, std::size_t i, bool in_place) {
        if (!everywhere(h, [this, i, in_place] { return std::vector<std::uint64_t>{rows_[i].wrong[in_place]}; }))
            return false;
        if (h == 0) {
            rows_[i].wrong[in_place] = 0;
            for (const auto& v : gathered()) rows_[i].wrong[in_place] += v.at(0);
        }
        return true;
    }

    // Across UltraServers: the reduce-scatter over NeuronLink, each chip's
    // chunk over EFA, the all-gather over NeuronLink. The all-gather's
    // schedules are loaded once the reduce-scatter is done everywhere in the
    // UltraServer (its waits count from the bytes landed by then).
    bool one_across(unsigned h, std::size_t i, bool in_place) {
        const host_info& hi = sys_.hosts[h];
        host_state& me = hosts_[h];
        const std::uint64_t bytes = sizes_[i], chunk = bytes / size();
        prepare(h, i, in_place, collectives::op::reduce_scatter, true);
        if (!everywhere(h, [this] { return std::vector<std::uint64_t>{barrier_.released_at().value()}; }) || aborted_)
            return false;
        const sc_core::sc_time start = start_after(h);
        run_loaded(h, i, in_place);
        if (!aborted_ && efa_[h]) {
            std::vector<efa_ring::part> parts;
            for (std::size_t c = 0; c < hi.chips.size(); ++c) {
                const unsigned p = unsigned(rank_of_chip(hi.chips[c].fabric_id));  // every chip is a rank
                parts.push_back({in_place ? layout().send + p * chunk : staging(), chunk});
            }
            std::uint32_t flags = TRN3_DESC_REDUCE_WITH(redop_code(), dtype_of(dtype.get()).code);
            if (!checked(bytes)) flags |= TRN3_DESC_TIMING_ONLY;
            try {
                efa_[h]->all_reduce(parts, element_bytes(), flags);
            } catch (const std::exception& e) {
                me.failures.push_back(
                    fmt::format("{} B {}: {}", bytes, in_place ? "in place" : "out of place", e.what()));
                aborted_ = true;
            }
        }
        if (!barrier(h) || aborted_) return false;
        prepare(h, i, in_place, collectives::op::all_gather, false);
        if (!barrier(h) || aborted_) return false;
        run_loaded(h, i, in_place);
        if (!finish_row(h, i, in_place, start)) return false;
        check(h, i, in_place);
        if (!count_wrong(h, i, in_place)) return false;
        return barrier(h) && !aborted_;
    }

    void fail(unsigned h, std::size_t i, bool in_place, const std::string& what) {
        hosts_[h].failures.push_back(
            fmt::format("{} B {}: {}", sizes_[i], in_place ? "in place" : "out of place", what));
        aborted_ = true;
    }

    // Chip by chip: its input (with `inputs`, rows that are checked; the
    // output buffer filled with a pattern no result has; rows timed only
    // write nothing: their schedules move no data), then op o's schedules
    // for sizes_[i] into its queues, their waits counted from each fabric
    // channel's bytes so far.
    void prepare(unsigned h, std::size_t i, bool in_place, collectives::op o, bool inputs) {
        const host_info& hi = sys_.hosts[h];
        const std::uint64_t bytes = sizes_[i];
        const auto& plans = plans_for(i, in_place, o);
        loaded_queues_ = static_cast<unsigned>(plans.size());
        const bool gather_only = what() == collectives::op::all_gather;
        const std::uint64_t part = gather_only ? bytes / size() : bytes;
        for (std::size_t c = 0; c < hi.chips.size(); ++c) {
            const int p = rank_of_chip(hi.chips[c].fabric_id);  // its rank
            if (p < 0) continue;
            driver::trn3_device& d = *hosts_[h].chips.devices[c];
            if (inputs && checked(bytes)) {
                const unsigned g = global_rank(unsigned(p));
                const auto in = reference().input(bytes, g);
                const std::uint64_t in_at =
                    in_place && gather_only ? layout().recv + part * unsigned(p) : layout().send;
                const std::vector<std::uint8_t> stale(reference().output_bytes(bytes, g), 0xA5);
                if ((!in_place && d.write(layout().recv, stale.data(), stale.size()) != driver::status::ok) ||
                    d.write(in_at, in.data(), in.size()) != driver::status::ok)
                    fail(h, i, in_place, "writing the inputs");
                if (reference().average) {  // 1/n, element after element
                    const auto one = reference().one_over_n();
                    std::vector<std::uint8_t> constant(bytes);
                    for (std::size_t at = 0; at + one.size() <= bytes; at += one.size())
                        std::memcpy(constant.data() + at, one.data(), one.size());
                    if (d.write(layout().constant, constant.data(), constant.size()) != driver::status::ok)
                        fail(h, i, in_place, "writing avg's constant");
                }
            }
            std::array<std::uint64_t, TRN3_FABRIC_CHANNELS> base{};
            std::array<bool, TRN3_FABRIC_CHANNELS> read{};
            for (unsigned k = 0; k < plans.size(); ++k)
                for (const auto& desc : plans[k].at(unsigned(hi.chips[c].fabric_id)).descriptors) {
                    const unsigned ch = TRN3_DESC_CHANNEL_OF(desc.flags, 1 + k) % TRN3_FABRIC_CHANNELS;
                    if (!(desc.flags & TRN3_DESC_WAIT_FABRIC) || read[ch]) continue;
                    read[ch] = true;
                    if (d.fabric_channel_bytes(ch, base[ch]) != driver::status::ok)
                        fail(h, i, in_place, "reading the fabric counters");
                }
            for (unsigned k = 0; k < plans.size(); ++k) {  // the channels', then the copy queues
                const collectives::rank_plan& mine = plans[k].at(unsigned(hi.chips[c].fabric_id));
                // Where this chip's input lies from the chunks that land to be reduced with it.
                if (mine.operand_offset && d.set_fabric_operand(mine.operand_counter.value_or(1 + k),
                                                                *mine.operand_offset) != driver::status::ok)
                    fail(h, i, in_place, "setting the fabric operands");
                auto descriptors = mine.descriptors;
                collectives::offset_waits(descriptors, 1 + k, base);
                if (wait.get() == "interrupt" && !descriptors.empty()) descriptors.back().flags |= TRN3_DESC_INTERRUPT;
                if (d.load_device_queue(1 + k, ring_of(k), descriptors) != driver::status::ok)
                    fail(h, i, in_place, "loading the schedule");
            }
        }
    }

    // The start: the first multiple of start_align at least start_align
    // after the release (the last host's, in every UltraServer), the same
    // for every host. What came before (the inputs written or not, the last
    // row's check) cannot reach the timed window: every HBM row is closed by
    // a refresh, every queue drained, and the refreshes meet the collective
    // at the same phase. Waits until then.
    sc_core::sc_time start_after(unsigned) const {
        std::uint64_t released = 0;
        for (const auto& v : gathered()) released = std::max(released, v.at(0));
        const std::uint64_t align = ns(start_align.get());
        const std::uint64_t start_ns = (ns(sc_core::sc_time::from_value(released)) / align + 2) * align;
        const sc_core::sc_time start(static_cast<double>(start_ns), sc_core::SC_NS);
        if (sc_core::sc_time_stamp() < start) sc_core::wait(start - sc_core::sc_time_stamp());  // to the picosecond
        return start;
    }

    // Rings the host's chips' doorbells and waits for their queues.
    void run_loaded(unsigned h, std::size_t i, bool in_place) {
        const host_info& hi = sys_.hosts[h];
        const unsigned k_channels = loaded_queues_;  // the channels' queues, then the copy queues
        auto& devices = hosts_[h].chips.devices;
        for (std::size_t c = 0; c < hi.chips.size(); ++c)
            if (rank_of_chip(hi.chips[c].fabric_id) >= 0)
                for (unsigned k = 0; k < k_channels; ++k) devices[c]->start_device_queue(1 + k);
        // With interrupts, a host looks when an MSI-X comes, and every 100
        // polls besides: a queue that stops on an error never reaches its
        // last descriptor, so its interrupt never comes.
        const std::uint64_t every_ns = ns(poll.get()) * (wait.get() == "interrupt" ? 100 : 1);
        for (std::size_t c = 0; c < hi.chips.size(); ++c) {
            if (rank_of_chip(hi.chips[c].fabric_id) < 0) continue;
            if (completion.get() == "pending") {
                const driver::status st = devices[c]->queues_finished(1, k_channels, ns(timeout.get()), every_ns);
                if (st != driver::status::ok)
                    fail(h, i, in_place,
                         fmt::format("chip {} queues 1-{} (its channels' and copy queues): {}", hi.chips[c].name,
                                     k_channels, driver::status_name(st)));
                continue;
            }
            for (unsigned k = 0; k < k_channels; ++k) {
                const driver::status st = devices[c]->queue_finished(1 + k, ns(timeout.get()), every_ns);
                const unsigned channels_here = channels_for(sizes_[i]);
                if (st != driver::status::ok)
                    fail(h, i, in_place,
                         k < channels_here
                             ? fmt::format("chip {} channel {}: {}", hi.chips[c].name, k, driver::status_name(st))
                             : fmt::format("chip {} copy queue {}: {}", hi.chips[c].name, k - channels_here,
                                           driver::status_name(st)));
            }
        }
    }

    // The row's time: from the start to the last chip done in the cluster.
    bool finish_row(unsigned h, std::size_t i, bool in_place, const sc_core::sc_time& start) {
        finished_at_ = std::max(finished_at_, sc_core::sc_time_stamp());
        if (!everywhere(h, [this] { return std::vector<std::uint64_t>{finished_at_.value()}; }) || aborted_)
            return false;
        if (h == 0) {
            std::uint64_t last = 0;
            for (const auto& v : gathered()) last = std::max(last, v.at(0));
            rows_[i].seconds[in_place ? 1 : 0] = (sc_core::sc_time::from_value(last) - start).to_seconds();
            finished_at_ = sc_core::SC_ZERO_TIME;
        }
        return true;
    }

    // The check: every element of every rank's output.
    void check(unsigned h, std::size_t i, bool in_place) {
        const host_info& hi = sys_.hosts[h];
        const std::uint64_t bytes = sizes_[i];
        for (std::size_t c = 0; c < hi.chips.size(); ++c) {
            const int p = rank_of_chip(hi.chips[c].fabric_id);  // its rank
            if (p < 0 || !checked(bytes)) continue;
            if (what() == collectives::op::reduce && unsigned(p) != root.get()) continue;  // only the root has a result
            const unsigned g = global_rank(unsigned(p));
            const std::uint64_t out_bytes = reference().output_bytes(bytes, g);
            std::uint64_t out_at = layout().recv;
            if (in_place && what() != collectives::op::reduce_scatter && what() != collectives::op::all_gather)
                out_at = layout().send;
            if (in_place && what() == collectives::op::reduce_scatter) out_at = layout().send + out_bytes * unsigned(p);
            std::vector<std::uint8_t> got(out_bytes);
            if (hosts_[h].chips.devices[c]->read(got.data(), out_at, got.size()) != driver::status::ok) {
                fail(h, i, in_place, "reading the result");
                continue;
            }
            const collective_reference ref = reference();
            const std::uint8_t* want = expected_buffer(bytes, g).data() + ref.expected_at(bytes, g);
            const unsigned es = element_bytes();
            for (std::size_t e = 0; e < got.size(); e += es)
                if (std::memcmp(got.data() + e, want + e, es) != 0) ++rows_[i].wrong[in_place ? 1 : 0];
        }
    }

    // Rank g's expected buffer (collective_reference::expected_buffer), built
    // once for every rank of a row where it is one buffer for all.
    const std::vector<std::uint8_t>& expected_buffer(std::uint64_t bytes, unsigned g) {
        const collective_reference ref = reference();
        const unsigned rank = ref.one_expected_buffer() ? 0 : g;
        if (!expected_.valid || expected_.bytes != bytes || expected_.rank != rank) {
            expected_.data = ref.expected_buffer(bytes, g);
            expected_.valid = true;
            expected_.bytes = bytes;
            expected_.rank = rank;
        }
        return expected_.data;
    }

    // A barrier of every host of every UltraServer (and of every rack of one
    // cut by rack) that swaps `values()` (cluster_exchange.h); gathered()
    // holds them by participant.
    bool everywhere(unsigned h, const std::function<std::vector<std::uint64_t>()>& values) {
        std::string why;
        if (exchange_.everywhere(
                h, [&] { return barrier(h); }, values, ns(timeout.get()), ns(poll.get()), why))
            return true;
        if (!why.empty()) hosts_[h].failures.push_back(why);
        aborted_ = true;
        return false;
    }
    const std::vector<std::vector<std::uint64_t>>& gathered() const { return exchange_.gathered(); }

    // Out of place across UltraServers: where each chip's chunk waits for the
    // EFA step between the reduce-scatter and the all-gather (past the
    // reduce-scatter's whole-buffer work area).
    std::uint64_t staging() const { return layout().work + (layout().token - layout().work) / 2; }

    // Where the EFA ring's reduce-scatter lands (an area of its own past
    // avg's constant: a faster UltraServer's pieces may arrive while this
    // one's reduce-scatter still uses its scratch areas).
    std::uint64_t landing() const { return layout().constant + layout().scratch_stride; }

    // This host's end of the EFA rings: an endpoint on each NIC that serves
    // its chips (nic_of_chip), every chip's buffers open to its NIC.
    void open_efa(unsigned h) {
        const host_info& hi = sys_.hosts[h];
        host_state& me = hosts_[h];
        if (me.chips.nic_functions.empty() || !hi.use_fabric || !sys_.oob) {
            me.failures.push_back("collectives across UltraServers: no NIC on the host, or no network");
            aborted_ = true;
            return;
        }
        std::vector<std::uint64_t> bar2;
        std::vector<driver::trn3_device*> chips;
        for (auto& d : me.chips.devices) {
            bar2.push_back(d->bar2());
            chips.push_back(d.get());
        }
        hi.use_fabric(me.chips.nic_functions, bar2);
        efa_ring::settings set;
        set.rank = sys_.cluster_rank;
        set.size = sys_.cluster_size;
        set.name = fmt::format("efa_ring/{}", h);
        set.nic_of_chip = hi.nic_of_chip;
        set.buffers = {layout().send, staging()};
        set.buffer_bytes = (max_bytes.get().bytes + 4095) / 4096 * 4096;
        set.scratch = landing();
        set.queue = 1;
        set.ring = ring_at;
        set.timeout_ns = ns(timeout.get());
        set.poll_ns = ns(poll.get());
        try {
            efa_[h] = std::make_unique<efa_ring>(
                *hi.ops, chips, set, efa_ring::through(*sys_.oob, *hi.ops, ns(timeout.get()), ns(poll.get())));
        } catch (const std::exception& e) {
            me.failures.push_back(std::string("collectives across UltraServers: ") + e.what());
            aborted_ = true;
        }
    }

    // Every channel's plans of op o for sizes_[i] (by fabric id), made once for all hosts.
    using channel_plans = std::vector<std::map<unsigned, collectives::rank_plan>>;
    const channel_plans& plans_for(std::size_t i, bool in_place, collectives::op o) {
        if (plans_key_ != std::make_tuple(i, in_place, o)) {
            plans_key_ = {i, in_place, o};
            const unsigned k_channels = channels_for(sizes_[i]), copiers = copy_queues_for(sizes_[i], in_place, o);
            plans_.assign(k_channels + copiers, {});
            std::vector<collectives::request> requests;
            for (unsigned k = 0; k < k_channels; ++k) {
                requests.push_back(request(sizes_[i], in_place, k, o));
                for (auto& rank : collectives::plan(requests.back())) plans_[k][rank.fabric_id] = std::move(rank);
            }
            // The copy queues (collectives.copy_queues) after the channels'.
            auto copies = collectives::plan_ring_copies(requests, copiers);
            for (unsigned j = 0; j < copiers; ++j)
                for (auto& rank : copies[j]) plans_[k_channels + j][rank.fabric_id] = std::move(rank);
        }
        return plans_;
    }

    void finish(unsigned h, const std::string& why) {
        if (!why.empty() && hosts_[h].failures.empty()) hosts_[h].failures.push_back(why);
        if (across_) efa_[h].reset();  // closed in the host's own context
        if (++hosts_done_ == sys_.hosts.size()) sys_.stop();
    }

    host_system& sys_;
    std::vector<host_state> hosts_;
    std::vector<phase_track> tracks_;
    std::vector<std::uint64_t> sizes_;
    std::vector<unsigned> members_;  // the communicator's fabric ids, in rank order
    member_levels levels_;  // their positions on the topology's levels
    std::unique_ptr<channel_rings> rings_;
    unsigned loaded_queues_ = 0;  // the row's DMA queues from 1 on: its channels', then its copy queues
    std::map<unsigned, unsigned> rank_of_id_;
    std::vector<row> rows_;
    struct {
        bool valid = false;
        std::uint64_t bytes = 0;
        unsigned rank = 0;
        std::vector<std::uint8_t> data;
    } expected_;  // expected_buffer()'s last answer
    std::size_t hosts_done_ = 0;
    host_barrier barrier_{sys_};
    sc_core::sc_time finished_at_;
    bool aborted_ = false, finished_ = false;
    std::tuple<std::size_t, bool, collectives::op> plans_key_{~std::size_t(0), false, collectives::op::all_reduce};
    bool across_ = false;  // a cluster: the communicator spans every UltraServer (EFA between them)
    std::vector<std::unique_ptr<efa_ring>> efa_;  // per host, across UltraServers
    cluster_exchange exchange_{sys_, "collectives"};
    channel_plans plans_;
};

const program_registration registration{
    "collectives", "nccl-tests over every chip on the fabric: one collective, a sweep of sizes, out of and in place",
    [](host_system& s) { return std::make_unique<collectives_program>(s); }, /*runs_in_parts=*/true};

}  // namespace
}  // namespace trn3::apps
