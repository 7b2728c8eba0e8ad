// workload: a training step on the UltraServer. The step is a graph per
// rank (sw/workload: a Chakra execution trace, or the dense transformer or
// MoE layer generator); every rank is a chip. Each host brings its chips up
// (as boot does), the kernels are timed on the NeuronCores, and then every
// chip runs its graph: a compute stream (kernels) and a communication
// stream (collectives and sends/receives on the fabric, by the chips' DMA
// engines from schedules in their HBM, as the collectives program runs
// them), each in its graph's order, each node once its dependencies are
// done. Compute and communication of a chip overlap; what the
// communication stream does while the compute stream is idle is exposed.
//
// Kernels (workload.compute):
//   replay      every distinct kernel of the step is lowered onto a chip's
//               eight NeuronCores (workload/lowering.h) and run once, timed
//               only (the cores' timing_only param: every instruction
//               scheduled and timed, no element computed), on the first
//               chip, before the step; in the step each chip's compute
//               stream takes that time. Fast: the step's cost is the
//               fabric's.
//   every_chip  every chip runs its own kernels on its own cores in the
//               step (timed only), so kernels meet the collectives' HBM
//               traffic; a launch repeated n times runs once and takes n
//               times its time.
// A compute node without a kernel takes its recorded duration.
//
// Collectives meet as NCCL's do: the k-th collective of a group on every
// member (validate() checked that they agree). Each member, once its
// dependencies are done, loads its part of the schedule; the last to arrive
// releases them all at once. A send and its receive are a broadcast over
// the two chips, from the sender. Every collective is timed only
// (TRN3_DESC_TIMING_ONLY): the step's data is not modelled.
//
// On a cluster every UltraServer runs its own instance; the ranks go on
// from one UltraServer to the next (rank r on UltraServer r / c, c the
// chips workload.chips names). The instances meet through the launcher's
// store (cluster_exchange.h): one aligned start, and at the end every
// UltraServer's node times to every UltraServer, so the first one reports
// the cluster. An all_reduce across UltraServers (as many members on
// each) is hierarchical: a reduce-scatter here, each member's chunk over
// EFA with the members at its place on the others (an efa_ring per chip
// and group, opened before the step), an all-gather here. Nothing else
// crosses: refused before the run.
//
// The report: step time; per chip compute, communication and exposed
// communication; MFU (the step's matmul FLOPs against every chip's peak for
// each kernel's type for the step time); the critical path (from the last
// node to finish, back through whatever released each node last); a
// Perfetto track per chip for its kernels and its communication; JSON.
//
// params: workload.source, .trace, .write_trace, .compute, .channels, .algorithm, .json, .poll, .timeout,
//         .start_align, .link_timeout, .boot_timeout, .peak_tflops_bf16, .peak_tflops_mx, and the generators'
//         (workload.dense.*, workload.moe.*)
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <set>

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
#include "trn3/spec/device.h"
#include "trn3/workload/chakra.h"
#include "trn3/workload/energy.h"
#include "trn3/workload/generators.h"
#include "trn3/workload/lowering.h"

namespace trn3::apps {
namespace {

using workload::collective_op;
using workload::node_kind;

constexpr std::uint64_t gib = 1ull << 30;
// The collectives' buffers (as the collectives program's, striped over the
// HBM stacks from 4 GiB into the striped window), their descriptor rings
// (stack 2), and the kernels' operands (an arena of 2 GiB per core in stack
// 3, from its byte 16 GiB to 32 GiB of its 36; clear of the striped
// buffers, which reach each stack's byte 8.5 GiB).
constexpr std::uint64_t buffers_at = TRN3_DEV_HBM_STRIPED_BASE + 4 * gib;
constexpr collectives::buffers layout{
    buffers_at, buffers_at + 4 * gib, buffers_at + 8 * gib, buffers_at + 12 * gib, buffers_at + 16 * gib,
    gib,        buffers_at + 26 * gib};
constexpr std::uint64_t ring_at = TRN3_DEV_HBM_BASE(2) + (1 << 20), ring_stride = 16 << 20;
constexpr std::uint64_t arena_at = TRN3_DEV_HBM_BASE(3) + 16 * gib, arena_stride = 2 * gib;
constexpr unsigned chip_cores = TRN3_DEV_CORES;

class workload_program final : public host_program {
public:
    param<std::string> source{nullptr, "workload.source", "moe",
                              "the step: moe (the MoE layer generator), dense (the dense transformer generator) or "
                              "chakra (the trace workload.trace)",
                              one_of<std::string>{{"moe", "dense", "chakra"}}};
    param<std::string> trace{nullptr, "workload.trace", "",
                             "Chakra trace: the files' prefix (<prefix>.<rank>.et, plain or gzip-compressed)"};
    param<std::string> write_trace{nullptr, "workload.write_trace", "",
                                   "also write the step's graph as a Chakra trace with this prefix"};
    param<std::uint64_t> ranks{nullptr, "workload.ranks", 0,
                               "the generators' ranks (0: as many as workload.chips names)",
                               range<std::uint64_t>{0, 4096}};
    param<std::string> chips{nullptr, "workload.chips", "all",
                             "the chips the ranks run on: all (rank r on fabric chip r), or fabric ids and ranges "
                             "(0-3,8,12-15), rank order as written; at least as many as the ranks"};
    param<std::string> compute{nullptr, "workload.compute", "replay",
                               "kernels: replay (each distinct kernel timed once on the first chip's NeuronCores "
                               "before the step, each chip takes that time) or every_chip (every chip runs its own "
                               "kernels in the step)",
                               one_of<std::string>{{"replay", "every_chip"}}};
    param<std::uint64_t> channels{nullptr, "workload.channels", 2,
                                  "channels of each collective (its own DMA queue and fabric channel each)",
                                  range<std::uint64_t>{1, 8}};
    param<std::string> algorithm{
        nullptr, "workload.algorithm", "auto",
        "the collectives' schedules: auto (collectives::choose) or one of ring, direct, "
        "halving_doubling, chain, tree, hierarchical",
        one_of<std::string>{{"auto", "ring", "direct", "halving_doubling", "chain", "tree", "hierarchical"}}};
    param<std::string> json{nullptr, "workload.json", "", "also write the report as JSON to this file"};
    param<bool> json_nodes{nullptr, "workload.json_nodes", false,
                           "the JSON also lists every node's start and end (large for big steps)"};
    param<double> peak_tflops_bf16{nullptr, "workload.peak_tflops_bf16", 629.1456,
                                   "a chip's peak for bf16, fp16 and fp8 matmuls (TFLOP/s): 8 cores x 128 x 128 "
                                   "x 2 FLOP x 2.4 GHz (AWS quotes 671)",
                                   range<double>{1.0, 1e6}};
    param<double> peak_tflops_mx{nullptr, "workload.peak_tflops_mx", 2516.5824,
                                 "a chip's peak for MXFP8 and MXFP4 matmuls (TFLOP/s): 4 x the bf16 rate (AWS "
                                 "quotes 2,517)",
                                 range<double>{1.0, 1e6}};
    // Energy (workload/energy.h; each default's source in docs/workloads.md).
    param<double> e_flop_bf16{nullptr, "workload.energy.pj_per_flop_bf16", 0.5,
                              "energy of a bf16, fp16 or fp8 matmul FLOP (pJ)", range<double>{0.0, 100.0}};
    param<double> e_flop_mx{nullptr, "workload.energy.pj_per_flop_mx", 0.15,
                            "energy of an MXFP8 or MXFP4 matmul FLOP (pJ)", range<double>{0.0, 100.0}};
    param<double> e_hbm{nullptr, "workload.energy.pj_per_hbm_byte", 31.2,
                        "energy of an HBM3E byte read or written (pJ; 3.9 pJ/bit)", range<double>{0.0, 10000.0}};
    param<double> e_backplane{nullptr, "workload.energy.pj_per_bit_backplane", 5.0,
                              "SerDes energy of a bit over a backplane cable, both ends (pJ)",
                              range<double>{0.0, 1000.0}};
    param<double> e_cross_rack{nullptr, "workload.energy.pj_per_bit_cross_rack", 5.0,
                               "SerDes energy of a bit over a cross-rack cable, both ends (pJ)",
                               range<double>{0.0, 1000.0}};
    param<double> e_pcb{nullptr, "workload.energy.pj_per_bit_pcb", 2.0,
                        "SerDes energy of a bit over a PCB trace (chip to chip or to the tray switch), both ends "
                        "(pJ)",
                        range<double>{0.0, 1000.0}};
    param<double> e_torus{nullptr, "workload.energy.pj_per_bit_torus", 5.0,
                          "SerDes energy of a bit over a torus link, both ends (pJ)", range<double>{0.0, 1000.0}};
    param<double> e_host{nullptr, "workload.energy.pj_per_bit_host", 5.0,
                         "SerDes energy of a bit over a host or NIC PCIe link, both ends (pJ)",
                         range<double>{0.0, 1000.0}};
    param<double> e_efa{nullptr, "workload.energy.pj_per_bit_efa", 5.0,
                        "SerDes energy of a bit over a NIC's Ethernet link to its ToR (EFA), both ends (pJ)",
                        range<double>{0.0, 1000.0}};
    param<double> e_switch{nullptr, "workload.energy.pj_per_bit_switch", 3.0,
                           "a scale-up switch's core energy per bit it switches (pJ; SerDes with the link)",
                           range<double>{0.0, 1000.0}};
    param<double> e_retimer{nullptr, "workload.energy.pj_per_bit_retimer", 8.0, "energy per bit a retimer passes (pJ)",
                            range<double>{0.0, 1000.0}};
    param<double> idle_chip{nullptr, "workload.energy.idle_w_chip", 140.0, "a chip's idle power (W, HBM included)",
                            range<double>{0.0, 10000.0}};
    param<double> idle_switch{nullptr, "workload.energy.idle_w_switch", 60.0, "a scale-up switch's idle power (W)",
                              range<double>{0.0, 10000.0}};
    param<double> idle_retimer{nullptr, "workload.energy.idle_w_retimer", 2.0, "a retimer's idle power (W)",
                               range<double>{0.0, 10000.0}};
    param<double> idle_nic{nullptr, "workload.energy.idle_w_nic", 25.0, "a Nitro NIC's idle power (W)",
                           range<double>{0.0, 10000.0}};
    param<double> idle_host{nullptr, "workload.energy.idle_w_host", 150.0, "a host's idle power (W)",
                            range<double>{0.0, 100000.0}};
    param<double> hbm_peak_gbps{nullptr, "workload.energy.hbm_peak_gbps", 4915.2,
                                "a chip's HBM peak (GB/s) for the peak-power line: 4 stacks x 32 channels x 38.4 GB/s",
                                range<double>{1.0, 1e6}};
    param<double> tdp_w{nullptr, "workload.energy.tdp_w", 700.0,
                        "a chip's published power, set beside the model's peak (W; the facts sheet: about 700)",
                        range<double>{1.0, 1e5}};
    param<double> budget_kw_nl72x2{nullptr, "workload.energy.budget_kw_nl72x2", 163.0,
                                   "the published whole-system budget of a full NL72x2 (144 chips), set beside the "
                                   "model's peak (kW; the facts sheet: about 163)",
                                   range<double>{1.0, 1e6}};
    param<double> budget_kw_nl32x2{nullptr, "workload.energy.budget_kw_nl32x2", 67.0,
                                   "the published whole-system budget of a full NL32x2 (64 chips), set beside the "
                                   "model's peak (kW; the facts sheet: about 67)",
                                   range<double>{1.0, 1e6}};

    param<sc_core::sc_time> poll{nullptr, "workload.poll", sc_core::sc_time(100, sc_core::SC_NS),
                                 "how often a chip's stream looks whether its DMA queues or cores are done",
                                 range<sc_core::sc_time>{sc_core::sc_time(1, sc_core::SC_NS), {}}};
    param<sc_core::sc_time> timeout{nullptr, "workload.timeout", sc_core::sc_time(10, sc_core::SC_SEC),
                                    "longest the step (and the kernels' timing before it) may take"};
    param<sc_core::sc_time> start_align{
        nullptr, "workload.start_align", sc_core::sc_time(39, sc_core::SC_US),
        "the step starts at a multiple of this after the hosts are ready (a multiple of the HBM's tREFI)",
        range<sc_core::sc_time>{sc_core::sc_time(1, sc_core::SC_US), sc_core::sc_time(1, sc_core::SC_MS)}};
    param<sc_core::sc_time> link_timeout{nullptr, "workload.link_timeout", sc_core::sc_time(10, sc_core::SC_MS),
                                         "longest a host waits for each root port's link"};
    param<sc_core::sc_time> boot_timeout{nullptr, "workload.boot_timeout", sc_core::sc_time(50, sc_core::SC_MS),
                                         "longest a host waits for a chip's firmware"};

    // The dense transformer generator (workload/generators.h).
    param<std::uint64_t> d_hidden{nullptr, "workload.dense.hidden", 8192, "hidden size",
                                  range<std::uint64_t>{64, 65536}};
    param<std::uint64_t> d_heads{nullptr, "workload.dense.heads", 64, "attention heads", range<std::uint64_t>{1, 1024}};
    param<std::uint64_t> d_kv_heads{nullptr, "workload.dense.kv_heads", 8, "key/value heads (grouped-query attention)",
                                    range<std::uint64_t>{1, 1024}};
    param<std::uint64_t> d_ffn{nullptr, "workload.dense.ffn", 28672, "MLP inner size",
                               range<std::uint64_t>{64, 1 << 20}};
    param<std::uint64_t> d_layers{nullptr, "workload.dense.layers", 4, "layers", range<std::uint64_t>{1, 1024}};
    param<std::uint64_t> d_seq{nullptr, "workload.dense.seq", 4096, "sequence length",
                               range<std::uint64_t>{128, 1 << 20}};
    param<std::uint64_t> d_micro_batch{nullptr, "workload.dense.micro_batch", 1, "sequences per micro-batch",
                                       range<std::uint64_t>{1, 1024}};
    param<std::uint64_t> d_micro_batches{nullptr, "workload.dense.micro_batches", 1, "micro-batches per step",
                                         range<std::uint64_t>{1, 1024}};
    param<std::uint64_t> d_tp{nullptr, "workload.dense.tp", 8, "tensor-parallel degree", range<std::uint64_t>{1, 4096}};
    param<std::uint64_t> d_pp{nullptr, "workload.dense.pp", 1, "pipeline-parallel degree",
                              range<std::uint64_t>{1, 4096}};
    param<std::uint64_t> d_dp{nullptr, "workload.dense.dp", 0, "data-parallel degree (0: ranks / (tp x pp))",
                              range<std::uint64_t>{0, 4096}};
    param<bool> d_sp{nullptr, "workload.dense.sp", false, "sequence parallel (reduce_scatter + all_gather)"};
    param<std::string> d_dtype{nullptr, "workload.dense.dtype", "bf16", "the GEMMs' type",
                               one_of<std::string>{{"bf16", "fp8", "mxfp8", "mxfp4"}}};
    param<bool> d_backward{nullptr, "workload.dense.backward", true, "the backward pass too"};

    // The MoE layer generator.
    param<std::uint64_t> m_tokens{nullptr, "workload.moe.tokens", 4096, "tokens per rank",
                                  range<std::uint64_t>{128, 1 << 20}};
    param<std::uint64_t> m_hidden{nullptr, "workload.moe.hidden", 7168, "hidden size", range<std::uint64_t>{64, 65536}};
    param<std::uint64_t> m_expert_ffn{nullptr, "workload.moe.expert_ffn", 2048, "an expert's inner size",
                                      range<std::uint64_t>{64, 65536}};
    param<std::uint64_t> m_experts{nullptr, "workload.moe.experts", 288,
                                   "routed experts (DeepSeek-V3 has 256; 288 = 2 per chip of 144)",
                                   range<std::uint64_t>{2, 65536}};
    param<std::uint64_t> m_top_k{nullptr, "workload.moe.top_k", 8, "experts per token", range<std::uint64_t>{1, 64}};
    param<std::uint64_t> m_ep{nullptr, "workload.moe.ep", 0, "expert-parallel degree (0: every rank)",
                              range<std::uint64_t>{0, 4096}};
    param<std::string> m_dtype{nullptr, "workload.moe.dtype", "bf16", "the experts' GEMMs' type",
                               one_of<std::string>{{"bf16", "fp8", "mxfp8", "mxfp4"}}};
    param<std::string> m_dispatch_dtype{nullptr, "workload.moe.dispatch_dtype", "bf16",
                                        "the dispatched tokens' type (DeepSeek-V3 sends fp8)",
                                        one_of<std::string>{{"bf16", "fp8"}}};
    param<double> m_skew{nullptr, "workload.moe.skew", 0.1,
                         "routing skew: expert e' weighs 1 / (1 + e')^skew (0.1: the busiest of 288 experts 1.76 "
                         "times the idlest)",
                         range<double>{0.0, 4.0}};
    param<std::uint64_t> m_seed{nullptr, "workload.moe.seed", 1, "routing seed"};
    param<bool> m_backward{nullptr, "workload.moe.backward", true, "the backward pass too"};

    explicit workload_program(host_system& s) : sys_(s), hosts_(s.hosts.size()) {
        if (s.fabric_chips < 2)
            throw config_error("program workload needs at least two chips on a NeuronLink fabric (" + s.name + " has " +
                               std::to_string(s.fabric_chips) + ")");
        chip_list_ = parse_members(chips.get(), s.fabric_chips, "workload.chips");
        for (unsigned k = 0; k < chip_list_.size(); ++k) place_of_chip_[chip_list_[k]] = k;
        const std::size_t all_chips = chip_list_.size() * s.cluster_size;
        graph_ = make_graph(static_cast<unsigned>(all_chips));
        if (graph_.ranks.size() > all_chips)
            throw config_error(fmt::format("workload: {} ranks, more than the {} chips of {}{}", graph_.ranks.size(),
                                           all_chips,
                                           s.cluster_size > 1 ? fmt::format("{} UltraServers", s.cluster_size) : s.name,
                                           chips.get() == "all" ? "" : " workload.chips names"));
        first_rank_ = std::min<std::size_t>(graph_.ranks.size(), std::size_t(s.cluster_rank) * chip_list_.size());
        end_rank_ = std::min<std::size_t>(graph_.ranks.size(), first_rank_ + chip_list_.size());
        order_ = workload::validate(graph_);
        // (On a cluster every UltraServer has the graph: the first writes it.)
        if (!write_trace.get().empty() && s.cluster_rank == 0) workload::write_chakra(graph_, write_trace.get());
        if (!json.get().empty()) check_writable(json.get(), "workload JSON file");
        for (std::size_t h = 0; h < s.hosts.size(); ++h)
            tracks_.emplace_back(s.name, fmt::format("host{} software", h));
        nodes_.resize(graph_.ranks.size());
        for (std::size_t r = 0; r < graph_.ranks.size(); ++r)
            nodes_[r] = std::vector<node_state>(graph_.ranks[r].nodes.size());
        dep_index_.resize(graph_.ranks.size());
        for (std::size_t r = 0; r < graph_.ranks.size(); ++r) {
            std::map<std::uint64_t, std::size_t> at;
            const auto& nodes = graph_.ranks[r].nodes;
            for (std::size_t i = 0; i < nodes.size(); ++i) at[nodes[i].id] = i;
            dep_index_[r].resize(nodes.size());
            for (std::size_t i = 0; i < nodes.size(); ++i)
                for (std::uint64_t d : nodes[i].deps) dep_index_[r][i].push_back(at.at(d));  // validate() checked
        }
        make_meetings();
        // Every collective checked now (sizes, the algorithm, fabric channels,
        // what runs across UltraServers), on every UltraServer it spans (they
        // are alike): the user's error, before the run.
        for (meeting& m : meetings_) {
            const auto& [r, i] = m.members[0];
            const auto& n = graph_.ranks[r].nodes[i];
            const std::string where = fmt::format("workload: rank {} node {} ('{}')", r, n.id, n.name);
            try {
                check_across(m);
                std::set<unsigned> servers;
                for (const auto& member : m.members) servers.insert(server_of(member.first));
                for (const unsigned server : servers) {
                    member_levels levels;
                    if (m.servers.empty()) static_cast<void>(request_for(m, server, levels));
                    else if (m.here > 1)  // the reduce-scatter before the EFA ring, the all-gather after
                        for (const auto o : {collectives::op::reduce_scatter, collectives::op::all_gather})
                            static_cast<void>(request_for(m, server, levels, o));
                    else static_cast<void>(sizing_of(m, 1));
                }
            } catch (const std::invalid_argument& e) {
                throw config_error(fmt::format("{}: {}", where, e.what()));
            }
        }
        // Every kernel lowered now: a shape the library cannot run is the user's error, before the run.
        // Shapes that pad to the same programs share an entry.
        for (const auto& rank : graph_.ranks)
            for (const auto& n : rank.nodes)
                if (n.kernel.timed() && !lowered_as_.count(key(n.kernel))) {
                    auto lowered = workload::lower(n.kernel, chip_cores, arena_at, arena_stride);
                    const std::string as = lowered.key;
                    lowered_as_[key(n.kernel)] = as;
                    if (!kernels_.count(as)) kernels_.emplace(as, kernel_entry{std::move(lowered), {}, false});
                }
        for (std::size_t r = first_rank_; r < end_rank_; ++r)
            for (const char* stream : {"kernels", "communication"})
                chip_tracks_.push_back(timeline::instance().make_track(s.name, fmt::format("rank {} {}", r, stream)));
    }

    // An EFA endpoint still open here (the run ended before its host
    // finished: a time limit) is left as it is: closing it talks to the NIC,
    // which takes simulated time, and the simulation is over.
    ~workload_program() override {
        if (!sc_core::sc_get_current_process_handle().valid())
            for (auto& rings : efa_)
                for (auto& [key, ring] : rings) static_cast<void>(ring.release());
    }

    void run(unsigned h) override { software(h); }

    bool passed() const override {
        if (hosts_done_ != sys_.hosts.size() || !finished_) return false;
        for (const auto& h : hosts_)
            if (!h.failures.empty()) return false;
        return true;
    }

    void report(std::ostream& os) const override;
    void report_failures(std::ostream& os) const override {
        for (std::size_t h = 0; h < hosts_.size(); ++h)
            for (const auto& f : hosts_[h].failures) os << "  FAILED: host " << h << ": " << f << "\n";
    }

private:
    struct node_state {
        bool done = false;
        sc_core::sc_event finished;
        sc_core::sc_time start, end;
        // What released the node last (the critical path): a node of this
        // rank or, for communication, the last member to arrive.
        int by_rank = -1;
        std::size_t by_node = 0;
        sc_core::sc_time arrived;  // communication: when it came to its meeting
    };
    // A collective on one UltraServer's fabric among the meeting's members
    // there: each loads its part of the schedule, the last to arrive
    // releases them all.
    struct gathering {
        unsigned arrived = 0;
        bool go = false;
        sc_core::sc_event all_here;
        // The last to arrive (ties: the later in group order, whatever order
        // the simulation ran them in), and when.
        std::pair<unsigned, std::size_t> last{0, 0};
        sc_core::sc_time last_at;
        std::size_t last_place = 0;
        std::vector<std::map<unsigned, std::vector<trn3_dma_descriptor>>> plans;  // per channel, by fabric id
        unsigned channels = 1;
    };
    // The k-th collective of a group (or the k-th send/recv of a pair): its
    // members' (rank, node) pairs, in group order, on every UltraServer.
    // Within one UltraServer it is one gathering. An all_reduce across
    // UltraServers (as many members on each) is hierarchical: a
    // reduce-scatter among the members on each UltraServer (gathering 0),
    // each member's chunk all-reduced over EFA with the members at its place
    // on the other UltraServers (efa_ring.h), an all-gather (gathering 1).
    struct meeting {
        std::vector<std::pair<unsigned, std::size_t>> members;
        std::vector<unsigned> servers;  // across: the UltraServers it spans, in order (empty: one)
        unsigned here = 0;  // members on each UltraServer it spans
        std::array<gathering, 2> local;
    };
    // A collective's element type and its bytes, rounded to whole elements
    // (and to `chunks` whole chunks).
    struct sizing {
        std::uint32_t type_code = 0;
        unsigned element = 0;
        std::uint64_t bytes = 0;
    };
    struct kernel_entry {
        workload::lowered_kernel lowered;
        sc_core::sc_time time;  // replay: measured on the first chip
        bool timed = false;
        std::uint64_t hbm_bytes = 0;  // replay: what the first chip's HBM stacks moved running it (repeats counted)
    };
    struct host_state {
        brought_up chips;
        std::vector<std::string> failures;
    };

    workload::graph make_graph(unsigned chips) const {
        const unsigned n = ranks.get() ? static_cast<unsigned>(ranks.get()) : chips;
        if (source.get() == "chakra") {
            if (trace.get().empty()) throw config_error("param workload.trace: a Chakra trace's prefix is needed");
            return workload::read_chakra(trace.get());
        }
        if (source.get() == "dense") {
            workload::dense_config c;
            c.ranks = n;
            c.hidden = d_hidden.get();
            c.heads = d_heads.get();
            c.kv_heads = d_kv_heads.get();
            c.ffn = d_ffn.get();
            c.layers = d_layers.get();
            c.seq = d_seq.get();
            c.micro_batch = d_micro_batch.get();
            c.micro_batches = d_micro_batches.get();
            c.tp = static_cast<unsigned>(d_tp.get());
            c.pp = static_cast<unsigned>(d_pp.get());
            c.dp = d_dp.get() ? static_cast<unsigned>(d_dp.get())
                              : static_cast<unsigned>(std::max<std::uint64_t>(1, n / (d_tp.get() * d_pp.get())));
            c.sp = d_sp.get();
            c.dtype = d_dtype.get();
            c.backward = d_backward.get();
            return workload::dense_step(c);
        }
        workload::moe_config c;
        c.ranks = n;
        // Experts within the scale-up domain: on a cluster, by default, an UltraServer's chips.
        c.ep = static_cast<unsigned>(m_ep.get()              ? m_ep.get()
                                     : sys_.cluster_size > 1 ? std::min<std::uint64_t>(n, chip_list_.size())
                                                             : 0);
        c.tokens = m_tokens.get();
        c.hidden = m_hidden.get();
        c.expert_ffn = m_expert_ffn.get();
        c.experts = m_experts.get();
        c.top_k = m_top_k.get();
        c.dtype = m_dtype.get();
        c.dispatch_dtype = m_dispatch_dtype.get();
        c.skew = m_skew.get();
        c.seed = m_seed.get();
        c.backward = m_backward.get();
        return workload::moe_layer(c);
    }

    static std::string key(const workload::kernel_spec& k) {
        return fmt::format("{} {}x{}x{} b{} {}", k.kind, k.m, k.n, k.k, k.batch, k.dtype);
    }

    // Meetings in each rank's order: collectives by (group, k), sends and
    // receives by (source, destination, tag, k).
    void make_meetings() {
        std::map<std::pair<std::string, std::size_t>, std::size_t> by_group;
        std::map<std::tuple<unsigned, unsigned, std::uint64_t, std::size_t>, std::size_t> by_pair;
        std::map<std::string, std::size_t> group_count;
        std::map<std::tuple<unsigned, unsigned, std::uint64_t, bool>, std::size_t> pair_count;
        meeting_of_.resize(graph_.ranks.size());
        for (unsigned r = 0; r < graph_.ranks.size(); ++r) {
            meeting_of_[r].assign(graph_.ranks[r].nodes.size(), ~std::size_t(0));
            for (std::size_t i : order_[r]) {
                const auto& n = graph_.ranks[r].nodes[i];
                std::size_t* slot = nullptr;
                if (n.kind == node_kind::collective) {
                    const std::size_t k = group_count[n.group + "#" + std::to_string(r)]++;
                    const auto [it, fresh] = by_group.emplace(std::make_pair(n.group, k), meetings_.size());
                    if (fresh) meetings_.emplace_back();
                    slot = &it->second;
                } else if (n.kind != node_kind::compute) {
                    const bool send = n.kind == node_kind::send;
                    const unsigned src = send ? r : n.peer, dst = send ? n.peer : r;
                    const std::size_t k = pair_count[{src, dst, n.tag, send}]++;
                    const auto [it, fresh] = by_pair.emplace(std::make_tuple(src, dst, n.tag, k), meetings_.size());
                    if (fresh) meetings_.emplace_back();
                    slot = &it->second;
                }
                if (!slot) continue;
                meeting_of_[r][i] = *slot;
                meetings_[*slot].members.emplace_back(r, i);
            }
        }
        // In group order (collectives) and sender first (point to point).
        for (meeting& m : meetings_) {
            const auto& first = graph_.ranks[m.members[0].first].nodes[m.members[0].second];
            if (first.kind == node_kind::collective) {
                const auto order = graph_.members(first.group);
                std::sort(m.members.begin(), m.members.end(), [&](const auto& a, const auto& b) {
                    return std::find(order.begin(), order.end(), a.first) <
                           std::find(order.begin(), order.end(), b.first);
                });
            } else if (first.kind == node_kind::recv) {
                std::swap(m.members[0], m.members[1]);
            }
        }
    }

    void software(unsigned h);
    bool barrier(unsigned h);
    void calibrate(unsigned h);
    // The HBM bytes host h's first chip has moved (0 without the platform's counters).
    std::uint64_t hbm_of_first_chip(unsigned h) const {
        const int id = sys_.hosts[h].chips.empty() ? -1 : sys_.hosts[h].chips[0].fabric_id;
        if (!sys_.activity_now || id < 0) return 0;
        return sys_.activity_now().hbm_bytes.at(std::size_t(id));
    }
    void report_energy(std::ostream& os, nlohmann::json& j, double step, double flops_bf16, double flops_mx,
                       double kernel_hbm) const;
    void load_chips_kernels(unsigned h);
    struct loaded_kernel;
    std::string load_kernel(driver::trn3_device& d, const workload::lowered_kernel& k, loaded_kernel& out);
    // hbm_now (when given) reads the chip's HBM byte count: `moved` is then
    // what each launch moved times its repeats.
    std::string run_kernel(driver::trn3_device& d, const loaded_kernel& k, sc_core::sc_time& took,
                           const std::function<std::uint64_t()>& hbm_now = {}, std::uint64_t* moved = nullptr);
    void unload_kernel(driver::trn3_device& d, loaded_kernel& k);
    // Times a kernel on d's cores: loaded, run, unloaded (with hbm_now, what it moved in HBM).
    std::string time_kernel(driver::trn3_device& d, const workload::lowered_kernel& k, sc_core::sc_time& took,
                            const std::function<std::uint64_t()>& hbm_now = {}, std::uint64_t* moved = nullptr);
    void stream(unsigned h, unsigned r, bool communication, const std::function<std::string(std::size_t)>& body);
    std::string compute_node(unsigned h, std::size_t c, unsigned r, std::size_t i);
    bool wait_deps(unsigned r, std::size_t i, sc_core::sc_time& latest);
    void mark_done(unsigned r, std::size_t i, const sc_core::sc_time& start);
    std::string meet(unsigned h, std::size_t c, unsigned r, std::size_t i);
    std::string gather(unsigned h, std::size_t c, unsigned r, std::size_t i, meeting& m, unsigned phase,
                       std::optional<collectives::op> as);
    std::string efa_step(unsigned h, unsigned r, std::size_t i, const meeting& m);
    // The meeting's members on UltraServer `server`, in group order.
    std::vector<std::pair<unsigned, std::size_t>> members_on(const meeting& m, unsigned server) const {
        std::vector<std::pair<unsigned, std::size_t>> v;
        for (const auto& member : m.members)
            if (server_of(member.first) == server) v.push_back(member);
        return v;
    }
    void check_across(meeting& m) const;
    sizing sizing_of(const meeting& m, unsigned chunks) const;
    // The meeting's collective on UltraServer `server`'s fabric as a request
    // (all but its rings), every check made: throws std::invalid_argument,
    // one line, for one that cannot run. `as`: the op of an across
    // meeting's reduce-scatter or all-gather.
    collectives::request request_for(const meeting& m, unsigned server, member_levels& levels,
                                     std::optional<collectives::op> as = {}) const;
    void plan_gathering(const meeting& m, gathering& g, std::optional<collectives::op> as);
    void open_efa(unsigned h);
    bool everywhere(unsigned h, const std::function<std::vector<std::uint64_t>()>& values) {
        std::string why;
        if (exchange_.everywhere(
                h, [&] { return barrier(h); }, values, ns(timeout.get()), ns(poll.get()), why))
            return true;
        if (!why.empty()) fail(h, why);  // (a failed barrier has said why)
        return false;
    }
    std::vector<std::uint64_t> local_node_times() const;
    void take_node_times();
    // After an everywhere() whose values start with each UltraServer's
    // aborted word: false (and this host fails) when another has failed.
    bool others_fine(unsigned h) {
        const auto& all = exchange_.gathered();
        for (unsigned server = 0; server < all.size(); ++server)
            if (server != sys_.cluster_rank && all[server].at(0)) {
                if (h == 0) fail(h, fmt::format("UltraServer {} failed (its report says why)", server));
                aborted_ = true;
                return false;
            }
        return true;
    }
    void fail(unsigned h, const std::string& why) {
        hosts_[h].failures.push_back(why);
        aborted_ = true;
        aborted_event_.notify(sc_core::SC_ZERO_TIME);  // wakes every stream and host that waits
    }
    void finish(unsigned h) {
        // Closed in the host's own context once no stream uses them; a
        // stream still in one (the step failed elsewhere) keeps it, open,
        // until the process ends.
        for (auto& [key, ring] : efa_[h])
            if (streams_done_ < streams_) static_cast<void>(ring.release());
        efa_[h].clear();
        if (++hosts_done_ == sys_.hosts.size()) sys_.stop();
    }
    static std::uint64_t ns(const sc_core::sc_time& t) { return static_cast<std::uint64_t>(t.to_seconds() * 1e9); }
    // Rank r runs on UltraServer r / c, on fabric chip workload.chips[r % c]
    // there (c: the chips workload.chips names).
    unsigned server_of(unsigned r) const { return static_cast<unsigned>(r / chip_list_.size()); }
    unsigned fabric_id(unsigned r) const { return chip_list_[r % chip_list_.size()]; }
    // The rank this UltraServer's fabric chip `id` runs, -1 for none.
    int rank_on(int id) const {
        const auto it = place_of_chip_.find(static_cast<unsigned>(id));
        if (id < 0 || it == place_of_chip_.end()) return -1;
        const std::size_t r = std::size_t(sys_.cluster_rank) * chip_list_.size() + it->second;
        return r < graph_.ranks.size() ? static_cast<int>(r) : -1;
    }
    bool local(unsigned r) const { return r >= first_rank_ && r < end_rank_; }

    host_system& sys_;
    std::vector<host_state> hosts_;
    std::vector<phase_track> tracks_;
    workload::graph graph_;
    std::vector<std::vector<std::size_t>> order_;
    std::vector<std::vector<node_state>> nodes_;
    std::vector<std::vector<std::size_t>> meeting_of_;
    std::vector<std::vector<std::vector<std::size_t>>> dep_index_;  // [rank][node]: its dependencies' indices
    std::vector<unsigned> chip_list_;  // workload.chips: fabric ids, each UltraServer's ranks on them in order
    std::map<unsigned, unsigned> place_of_chip_;  // a fabric id's place in chip_list_
    std::size_t first_rank_ = 0, end_rank_ = 0;  // this UltraServer's ranks
    std::vector<std::map<std::pair<unsigned, std::string>, std::unique_ptr<efa_ring>>> efa_{
        sys_.hosts.size()};  // per host: by (rank, group), across UltraServers
    cluster_exchange exchange_{sys_, "workload"};
    std::deque<meeting> meetings_;  // a meeting holds an event: it never moves
    std::map<std::string, kernel_entry> kernels_;  // by lowered_kernel::key
    std::map<std::string, std::string> lowered_as_;  // a node's kernel -> its lowering's key
    std::map<unsigned, std::map<std::string, loaded_kernel>> chip_code_;  // every_chip: by rank, by key
    std::map<std::string, std::unique_ptr<channel_rings>> rings_;  // by group
    std::size_t hosts_done_ = 0, streams_done_ = 0, streams_ = 0;
    host_barrier barrier_{sys_};
    sc_core::sc_event streams_finished_, aborted_event_;
    sc_core::sc_time start_;
    bool aborted_ = false, finished_ = false;
    double calibration_wall_s_ = 0;
    activity at_start_, at_end_;  // the platform's counters when the step started and ended
    sc_core::sc_time calibration_sim_;
    std::vector<timeline::track> chip_tracks_;  // per rank here: compute, then communication
};

bool workload_program::barrier(unsigned h) {
    if (barrier_.arrive(h, ns(timeout.get()), ns(poll.get()))) return true;
    fail(h, "the UltraServer's other hosts did not reach a barrier in time");
    return false;
}

void workload_program::software(unsigned h) {
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
    if (!barrier(h) || aborted_) return finish(h);
    tracks_[h].mark("every host up");
    if (sys_.cluster_size > 1) {
        open_efa(h);
        if (!barrier(h) || aborted_) return finish(h);
        tracks_[h].mark("EFA rings open");
    }
    // replay: the first UltraServer's host 0 times the kernels (the
    // UltraServers are alike), and gives every UltraServer the times.
    const bool replay = compute.get() == "replay";
    if (h == 0 && replay && sys_.cluster_rank == 0) calibrate(h);
    if (compute.get() == "every_chip") load_chips_kernels(h);
    // Every host of every UltraServer starts the step at the same aligned
    // time, after the last of them is ready.
    const auto ready_and_times = [this, replay] {
        std::vector<std::uint64_t> v{aborted_ ? 1u : 0u, barrier_.released_at().value()};
        if (replay && sys_.cluster_rank == 0)
            for (const auto& [name, k] : kernels_) v.insert(v.end(), {k.time.value(), k.hbm_bytes});
        return v;
    };
    if (!everywhere(h, ready_and_times) || aborted_ || !others_fine(h)) return finish(h);
    if (h == 0 && replay && sys_.cluster_rank > 0) {
        std::size_t at = 2;
        for (auto& [name, k] : kernels_) {
            k.time = sc_core::sc_time::from_value(exchange_.gathered()[0].at(at));
            k.hbm_bytes = exchange_.gathered()[0].at(at + 1);
            k.timed = true;
            at += 2;
        }
    }
    tracks_[h].mark(replay ? "kernels timed" : "ready");
    std::uint64_t ready = 0;
    for (const auto& v : exchange_.gathered()) ready = std::max(ready, v.at(1));
    const std::uint64_t align = ns(start_align.get());
    const sc_core::sc_time start(double((ns(sc_core::sc_time::from_value(ready)) / align + 2) * align), sc_core::SC_NS);
    if (h == 0) start_ = start;
    if (sc_core::sc_time_stamp() < start) sc_core::wait(start - sc_core::sc_time_stamp());
    if (h == 0 && sys_.activity_now) at_start_ = sys_.activity_now();
    for (std::size_t c = 0; c < hi.chips.size(); ++c) {
        const int rank = rank_on(hi.chips[c].fabric_id);
        if (rank < 0) continue;
        const unsigned r = static_cast<unsigned>(rank);
        streams_ += 2;
        sc_core::sc_spawn(
            [this, h, c, r] { stream(h, r, false, [=](std::size_t i) { return compute_node(h, c, r, i); }); },
            fmt::format("rank{}_compute", r).c_str());
        sc_core::sc_spawn([this, h, c, r] { stream(h, r, true, [=](std::size_t i) { return meet(h, c, r, i); }); },
                          fmt::format("rank{}_comm", r).c_str());
    }
    if (!barrier(h)) return finish(h);  // every host's streams spawned: streams_ is whole
    const sc_core::sc_time deadline = start + timeout.get();
    while (streams_done_ < streams_ && !aborted_ && sc_core::sc_time_stamp() < deadline)
        sc_core::wait(deadline - sc_core::sc_time_stamp(), streams_finished_ | aborted_event_);
    if (streams_done_ < streams_ && h == 0 && !aborted_) {
        // Name what still waits: the first unfinished node of each stuck rank, a few.
        std::string stuck;
        unsigned named = 0;
        for (unsigned r = 0; r < graph_.ranks.size() && named < 4; ++r)
            for (std::size_t i : order_[r])
                if (!nodes_[r][i].done) {
                    stuck += fmt::format("{}rank {} '{}'", named ? ", " : "", r, graph_.ranks[r].nodes[i].name);
                    ++named;
                    break;
                }
        fail(h, fmt::format("the step did not finish within workload.timeout ({}); waiting: {}",
                            timeout.get().to_string(), stuck));
    }
    if (h == 0 && sys_.activity_now) at_end_ = sys_.activity_now();
    // Every UltraServer's nodes' times, to every UltraServer (the report's
    // figures are the cluster's); alone, a barrier. No EFA ring is closed
    // before every UltraServer is done with it.
    if (!everywhere(h, [this] { return local_node_times(); }) || aborted_ || !others_fine(h)) return finish(h);
    if (h == 0) {
        take_node_times();
        finished_ = true;
    }
    if (sys_.cluster_size > 1) {
        // Every host closes its rings and ends at one aligned time after the
        // last UltraServer's hosts met: when each left the store's wait
        // (polls) does not move the end of the run.
        std::uint64_t met = 0;
        for (const auto& v : exchange_.gathered()) met = std::max(met, v.at(1));
        const sc_core::sc_time end_at(double((ns(sc_core::sc_time::from_value(met)) / align + 2) * align),
                                      sc_core::SC_NS);
        if (sc_core::sc_time_stamp() < end_at) sc_core::wait(end_at - sc_core::sc_time_stamp());
    }
    finish(h);
}

// Whether this UltraServer failed, when its hosts met, then its ranks'
// nodes, in rank and node order: start, end, what released it (rank + 1,
// 0 for none; node), and its arrival.
std::vector<std::uint64_t> workload_program::local_node_times() const {
    std::vector<std::uint64_t> v{aborted_ ? 1u : 0u, barrier_.released_at().value()};
    if (sys_.cluster_size == 1) return v;
    for (std::size_t r = first_rank_; r < end_rank_; ++r)
        for (const node_state& s : nodes_[r])
            v.insert(v.end(),
                     {s.start.value(), s.end.value(), std::uint64_t(s.by_rank + 1), s.by_node, s.arrived.value()});
    return v;
}

// The other UltraServers' nodes (local_node_times()), and what released each
// member of a collective across UltraServers: the last member to arrive
// anywhere (the last in group order of those that arrived last, as on one
// UltraServer).
void workload_program::take_node_times() {
    if (sys_.cluster_size == 1) return;
    const auto& all = exchange_.gathered();
    for (unsigned server = 0; server < sys_.cluster_size; ++server) {
        if (server == sys_.cluster_rank) continue;
        const std::size_t first = std::min(graph_.ranks.size(), std::size_t(server) * chip_list_.size());
        const std::size_t end = std::min(graph_.ranks.size(), first + chip_list_.size());
        std::size_t at = 2;  // (after the aborted word and the hosts' meeting)
        for (std::size_t r = first; r < end; ++r)
            for (node_state& s : nodes_[r]) {
                const std::vector<std::uint64_t>& x = all[server];
                s.start = sc_core::sc_time::from_value(x.at(at));
                s.end = sc_core::sc_time::from_value(x.at(at + 1));
                s.by_rank = int(x.at(at + 2)) - 1;
                s.by_node = x.at(at + 3);
                s.arrived = sc_core::sc_time::from_value(x.at(at + 4));
                s.done = true;
                at += 5;
            }
    }
    for (const meeting& m : meetings_) {
        if (m.servers.empty()) continue;
        std::pair<unsigned, std::size_t> last = m.members[0];
        for (const auto& [r, i] : m.members)
            if (nodes_[r][i].arrived >= nodes_[last.first][last.second].arrived) last = {r, i};
        for (const auto& [r, i] : m.members)
            if (std::make_pair(r, i) != last) {
                nodes_[r][i].by_rank = int(last.first);
                nodes_[r][i].by_node = last.second;
            }
    }
}

// every_chip: each of the host's chips gets the programs of its own kernels
// before the step (no program is written during it).
void workload_program::load_chips_kernels(unsigned h) {
    const host_info& hi = sys_.hosts[h];
    for (std::size_t c = 0; c < hi.chips.size(); ++c) {
        const int rank = rank_on(hi.chips[c].fabric_id);
        if (rank < 0) continue;
        const unsigned r = static_cast<unsigned>(rank);
        for (const auto& n : graph_.ranks[r].nodes) {
            if (!n.kernel.timed()) continue;
            const std::string& as = lowered_as_.at(key(n.kernel));
            if (chip_code_[r].count(as)) continue;
            if (const std::string e =
                    load_kernel(*hosts_[h].chips.devices[c], kernels_.at(as).lowered, chip_code_[r][as]);
                !e.empty())
                return fail(h, fmt::format("rank {}: loading kernel {}: {}", r, as, e));
        }
    }
}

// Host 0 times every distinct kernel on its first chip's cores.
void workload_program::calibrate(unsigned h) {
    if (kernels_.empty()) return;
    const auto wall0 = std::chrono::steady_clock::now();
    const sc_core::sc_time sim0 = sc_core::sc_time_stamp();
    if (hosts_[h].chips.devices.empty()) return fail(h, "no chip to time the kernels on");
    driver::trn3_device& d = *hosts_[h].chips.devices[0];
    const std::uint64_t align = ns(start_align.get());
    // A first launch on a core after boot takes longer (measured: 16.0 us
    // against 6.0 for the same element-wise kernel): the kernel that uses
    // the most cores runs once first, untimed, so every core is warm.
    const auto widest = std::max_element(kernels_.begin(), kernels_.end(), [](const auto& a, const auto& b) {
        return a.second.lowered.launches[0].cores.size() < b.second.lowered.launches[0].cores.size();
    });
    sc_core::sc_time ignored;
    if (const std::string e = time_kernel(d, widest->second.lowered, ignored); !e.empty())
        return fail(h, "warming the cores with " + widest->first + ": " + e);
    for (auto& [name, k] : kernels_) {
        // Each from the same phase of the HBM's refresh, as the step starts.
        const sc_core::sc_time at(double((ns(sc_core::sc_time_stamp()) / align + 1) * align), sc_core::SC_NS);
        sc_core::wait(at - sc_core::sc_time_stamp());
        if (const std::string e = time_kernel(
                d, k.lowered, k.time, [this, h] { return hbm_of_first_chip(h); }, &k.hbm_bytes);
            !e.empty())
            return fail(h, "timing kernel " + name + ": " + e);
        k.timed = true;
    }
    calibration_wall_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    calibration_sim_ = sc_core::sc_time_stamp() - sim0;
}

// A kernel's programs in a chip's memory: per launch, each core's engine
// start addresses.
struct workload_program::loaded_kernel {
    struct one_launch {
        std::vector<std::array<std::uint64_t, isa::engine_count>> pcs;  // per core
        std::vector<unsigned> masks;  // per core: engines with a stream
        std::uint64_t repeat = 1;
    };
    std::vector<one_launch> launches;
    std::vector<std::uint64_t> allocations;
};

std::string workload_program::load_kernel(driver::trn3_device& d, const workload::lowered_kernel& k,
                                          loaded_kernel& out) {
    for (const auto& l : k.launches) {
        loaded_kernel::one_launch one;
        one.repeat = l.repeat;
        for (const auto& p : l.cores) {
            std::uint64_t at = 0;
            // program::load puts each engine's stream at a 4 KiB boundary.
            if (d.alloc(p.instructions() * isa::instruction_bytes + isa::engine_count * 4096, at) != driver::status::ok)
                return "no device memory for its programs";
            out.allocations.push_back(at);
            bool written = true;
            const auto pcs =
                p.load([&](std::uint64_t a, const void* data,
                           std::size_t bytes) { written = written && d.write(a, data, bytes) == driver::status::ok; },
                       at);
            if (!written) return "writing its programs";
            unsigned mask = 0;
            for (unsigned e = 0; e < isa::engine_count; ++e)  // (an engine's stream may start at device address 0)
                if (!p.on(static_cast<isa::engine>(e)).code().empty()) mask |= 1u << e;
            one.pcs.push_back(pcs);
            one.masks.push_back(mask);
        }
        out.launches.push_back(std::move(one));
    }
    return "";
}

// Runs each launch once (its programs on cores 0.. at once); `took` is the
// sum of each launch's time times its repeats.
std::string workload_program::run_kernel(driver::trn3_device& d, const loaded_kernel& k, sc_core::sc_time& took,
                                         const std::function<std::uint64_t()>& hbm_now, std::uint64_t* moved) {
    took = sc_core::SC_ZERO_TIME;
    if (moved) *moved = 0;
    for (const auto& l : k.launches) {
        // A kernel's semaphores count from 0: the cores are reset first (a
        // launch keeps what the last kernel left).
        for (unsigned c = 0; c < l.pcs.size(); ++c)
            if (d.reset_core(c) != driver::status::ok) return fmt::format("resetting core {}", c);
        const sc_core::sc_time t0 = sc_core::sc_time_stamp();
        const std::uint64_t hbm0 = hbm_now ? hbm_now() : 0;
        for (unsigned c = 0; c < l.pcs.size(); ++c) {
            std::array<std::uint64_t, 5> pcs{};
            std::copy(l.pcs[c].begin(), l.pcs[c].end(), pcs.begin());
            if (d.launch(c, pcs, l.masks[c]) != driver::status::ok) return fmt::format("launch on core {}", c);
        }
        for (unsigned c = 0; c < l.pcs.size(); ++c) {
            driver::core_result result;
            const driver::status st = d.wait_core(c, ns(timeout.get()), result);
            if (st != driver::status::ok || result.status != 0)
                return fmt::format("core {}: {} (error {})", c, driver::status_name(st), result.error);
        }
        took += (sc_core::sc_time_stamp() - t0) * double(l.repeat);
        if (moved && hbm_now) *moved += (hbm_now() - hbm0) * l.repeat;
    }
    return "";
}

void workload_program::unload_kernel(driver::trn3_device& d, loaded_kernel& k) {
    for (std::uint64_t a : k.allocations) d.free(a);
    k = {};
}

std::string workload_program::time_kernel(driver::trn3_device& d, const workload::lowered_kernel& k,
                                          sc_core::sc_time& took, const std::function<std::uint64_t()>& hbm_now,
                                          std::uint64_t* moved) {
    loaded_kernel code;
    std::string e = load_kernel(d, k, code);
    if (e.empty()) e = run_kernel(d, code, took, hbm_now, moved);
    unload_kernel(d, code);
    return e;
}

// Waits until node i's dependencies are done; `latest` is the latest of
// their ends (and the node that ended then becomes its releaser).
bool workload_program::wait_deps(unsigned r, std::size_t i, sc_core::sc_time& latest) {
    for (std::size_t j : dep_index_[r][i]) {
        while (!nodes_[r][j].done) {
            if (aborted_) return false;
            sc_core::wait(nodes_[r][j].finished | aborted_event_);
        }
        if (nodes_[r][j].end >= latest) {
            latest = nodes_[r][j].end;
            nodes_[r][i].by_rank = int(r);
            nodes_[r][i].by_node = j;
        }
    }
    return !aborted_;
}

void workload_program::mark_done(unsigned r, std::size_t i, const sc_core::sc_time& start) {
    node_state& s = nodes_[r][i];
    s.start = start;
    s.end = sc_core::sc_time_stamp();
    s.done = true;
    s.finished.notify(sc_core::SC_ZERO_TIME);
    const bool comm = graph_.ranks[r].nodes[i].kind != node_kind::compute;
    timeline::instance().slice(chip_tracks_.at(2 * (r - first_rank_) + (comm ? 1 : 0)), graph_.ranks[r].nodes[i].name,
                               s.start, s.end);
}

// One of rank r's streams (its compute nodes, or its communication nodes),
// in the graph's order, each node once its dependencies and the stream's
// previous node are done; `body` runs a node and says why it failed.
void workload_program::stream(unsigned h, unsigned r, bool communication,
                              const std::function<std::string(std::size_t)>& body) {
    std::size_t previous = ~std::size_t(0);
    sc_core::sc_time previous_end;
    for (std::size_t i : order_[r]) {
        const auto& n = graph_.ranks[r].nodes[i];
        if ((n.kind != node_kind::compute) != communication) continue;
        sc_core::sc_time latest = previous_end;
        if (previous != ~std::size_t(0)) {
            nodes_[r][i].by_rank = int(r);
            nodes_[r][i].by_node = previous;
        }
        if (!wait_deps(r, i, latest)) break;
        const sc_core::sc_time start = sc_core::sc_time_stamp();
        if (const std::string why = body(i); !why.empty()) {
            fail(h, fmt::format("rank {} '{}': {}", r, n.name, why));
            break;
        }
        mark_done(r, i, start);
        previous_end = nodes_[r][i].end;
        previous = i;
    }
    if (++streams_done_ == streams_) streams_finished_.notify(sc_core::SC_ZERO_TIME);
}

// A compute node: its kernel's time (replay), its kernel run on the chip's
// cores (every_chip), or its recorded duration.
std::string workload_program::compute_node(unsigned h, std::size_t c, unsigned r, std::size_t i) {
    const auto& n = graph_.ranks[r].nodes[i];
    if (!n.kernel.timed()) {
        sc_core::wait(sc_core::sc_time::from_value(n.duration_ps));
        return "";
    }
    const std::string& as = lowered_as_.at(key(n.kernel));
    if (compute.get() == "replay") {
        sc_core::wait(kernels_.at(as).time);
        return "";
    }
    const sc_core::sc_time start = sc_core::sc_time_stamp();
    sc_core::sc_time took;
    if (std::string e = run_kernel(*hosts_[h].chips.devices[c], chip_code_.at(r).at(as), took); !e.empty()) return e;
    // The launches ran once each; their repeats are waited.
    const sc_core::sc_time ran = sc_core::sc_time_stamp() - start;
    if (took > ran) sc_core::wait(took - ran);
    kernel_entry& entry = kernels_.at(as);
    if (!entry.timed) {  // the report's table: the first chip's first run of it
        entry.time = took;
        entry.timed = true;
    }
    return "";
}

// An across meeting's checks (config errors, before the run): an all_reduce
// (or a barrier) with as many members on every UltraServer it spans; within
// one UltraServer, nothing to check here.
void workload_program::check_across(meeting& m) const {
    std::map<unsigned, unsigned> count;  // members by UltraServer
    for (const auto& member : m.members) ++count[server_of(member.first)];
    if (count.size() == 1) return;
    const auto& first = graph_.ranks[m.members[0].first].nodes[m.members[0].second];
    if (first.kind != node_kind::collective)
        throw std::invalid_argument(fmt::format("a {} between ranks on different UltraServers: only all_reduce runs "
                                                "across UltraServers (over EFA); keep pipeline stages within one",
                                                workload::name(first.kind)));
    if (first.op != collective_op::all_reduce && first.op != collective_op::barrier)
        throw std::invalid_argument(
            fmt::format("{} of group '{}' spans {} UltraServers: only all_reduce runs across UltraServers (over EFA); "
                        "keep the group within an UltraServer{}",
                        workload::name(first.op), first.group, count.size(),
                        first.op == collective_op::all_to_allv ? " (workload.moe.ep)" : ""));
    for (const auto& [server, k] : count)
        if (k != count.begin()->second)
            throw std::invalid_argument(fmt::format(
                "group '{}' has {} members on UltraServer {} and {} on UltraServer {}: an all_reduce across "
                "UltraServers needs as many on each",
                first.group, count.begin()->second, count.begin()->first, k, server));
    for (const auto& [server, k] : count) m.servers.push_back(server);
    m.here = count.begin()->second;
}

// The element type and the bytes: a size that is not whole elements is
// rounded up (the trace's bytes may count a tensor's padding differently);
// a barrier is one element per member; n-chunk ops to `chunks` chunks.
workload_program::sizing workload_program::sizing_of(const meeting& m, unsigned chunks) const {
    const auto& first = graph_.ranks[m.members[0].first].nodes[m.members[0].second];
    const dtype_info& t = dtype_of(first.dtype == "fp8" ? "e4m3" : first.dtype);
    sizing z;
    z.type_code = t.code;
    z.element = numerics::element_bytes(t.type);
    const bool collective = first.kind == node_kind::collective;
    std::uint64_t bytes = first.bytes;
    if (collective && first.op == collective_op::barrier) bytes = std::uint64_t(m.members.size()) * z.element;
    const bool chunked =
        collective && (first.op == collective_op::all_gather || first.op == collective_op::reduce_scatter ||
                       first.op == collective_op::all_to_all || first.op == collective_op::all_reduce ||
                       first.op == collective_op::barrier);
    const std::uint64_t whole = chunked ? std::uint64_t(chunks) * z.element : z.element;
    z.bytes = std::max(whole, (bytes + whole - 1) / whole * whole);
    if (z.bytes > layout.scratch_stride)
        throw std::invalid_argument(fmt::format("{} B is over the 1 GiB buffers", z.bytes));
    return z;
}

collectives::request workload_program::request_for(const meeting& m, unsigned server, member_levels& levels,
                                                   std::optional<collectives::op> as) const {
    const auto& first = graph_.ranks[m.members[0].first].nodes[m.members[0].second];
    const auto members = members_on(m, server);
    const unsigned n = static_cast<unsigned>(members.size());
    std::vector<unsigned> ids;
    for (const auto& member : members) ids.push_back(fabric_id(member.first));
    const sizing z = sizing_of(m, n);
    collectives::request q;
    switch (first.kind == node_kind::collective ? first.op : collective_op::broadcast) {
    case collective_op::all_reduce: q.what = collectives::op::all_reduce; break;
    case collective_op::barrier: q.what = collectives::op::all_reduce; break;  // an all_reduce of one element per rank
    case collective_op::reduce: q.what = collectives::op::reduce; break;
    case collective_op::all_gather: q.what = collectives::op::all_gather; break;
    case collective_op::broadcast: q.what = collectives::op::broadcast; break;
    case collective_op::all_to_all: q.what = collectives::op::all_to_all; break;
    case collective_op::all_to_allv: q.what = collectives::op::all_to_allv; break;
    case collective_op::reduce_scatter: q.what = collectives::op::reduce_scatter; break;
    }
    if (as) q.what = *as;
    if (q.what == collectives::op::all_to_allv) {
        // Every rank's input (its row) and output (its column) within the buffers.
        q.splits.assign(std::size_t(n) * n, 0);
        std::vector<std::uint64_t> column(n, 0);
        for (unsigned a = 0; a < n; ++a) {
            const auto& node = graph_.ranks[members[a].first].nodes[members[a].second];
            std::uint64_t row = 0;
            for (unsigned b = 0; b < n; ++b) {
                q.splits[a * n + b] = (node.splits[b] + z.element - 1) / z.element;
                row += q.splits[a * n + b] * z.element;
                column[b] += q.splits[a * n + b] * z.element;
            }
            if (row > layout.scratch_stride)
                throw std::invalid_argument(fmt::format("rank {} sends {} B, over the 1 GiB buffers", a, row));
        }
        for (unsigned b = 0; b < n; ++b)
            if (column[b] > layout.scratch_stride)
                throw std::invalid_argument(fmt::format("rank {} receives {} B, over the 1 GiB buffers", b, column[b]));
    }
    levels = levels_of(ids, sys_.level_names, sys_.fabric_levels);
    const unsigned k_channels = static_cast<unsigned>(channels.get());
    q.how = algorithm.get() == "auto" ? collectives::choose(q.what, n, z.bytes, k_channels, levels.places)
                                      : collectives::algorithm_named(algorithm.get());
    if (first.kind != node_kind::collective) q.how = collectives::algorithm::chain;  // send: a broadcast of two
    collectives::check_supported(q.how, q.what, n);
    q.counters = collectives::counters_needed(q.how, q.what, n, static_cast<unsigned>(levels.names.size()));
    if (q.counters * k_channels > TRN3_FABRIC_CHANNELS)
        throw std::invalid_argument(fmt::format("{} {} needs {} fabric channels per channel", collectives::name(q.how),
                                                collectives::name(q.what), q.counters));
    q.ranks = ids;
    q.bytes = z.bytes;
    q.element_bytes = z.element;
    q.reduce_op = TRN3_REDUCE_SUM;
    q.reduce_type = z.type_code;
    q.in_place = true;
    q.at = layout;
    // Across UltraServers both phases work in place in `send` (the
    // reduce-scatter's chunks, reduced over EFA, are the all-gather's input).
    if (as == collectives::op::all_gather) q.at.recv = q.at.send;
    q.root = static_cast<unsigned>(first.root);
    q.channels = k_channels;
    q.timing_only = true;
    q.segment_bytes = 0;
    return q;
}

void workload_program::plan_gathering(const meeting& m, gathering& g, std::optional<collectives::op> as) {
    member_levels levels;
    collectives::request q = request_for(m, sys_.cluster_rank, levels, as);
    const std::vector<unsigned>& ids = q.ranks;
    const unsigned k_channels = q.channels;
    const auto& first = graph_.ranks[m.members[0].first].nodes[m.members[0].second];
    const std::string group =
        first.kind == node_kind::collective ? first.group : fmt::format("p2p {}", fmt::join(ids, "-"));
    auto& rings = rings_[group];
    if (!rings) rings = std::make_unique<channel_rings>(sys_.fabric, ids, levels, k_channels, "topology");
    g.channels = k_channels;
    g.plans.assign(k_channels, {});
    for (unsigned k = 0; k < k_channels; ++k) {
        q.channel = k;
        q.ring = q.how == collectives::algorithm::hierarchical ? ids : rings->ring(k);
        if (q.how == collectives::algorithm::hierarchical) {
            q.coordinates = levels.position;
            q.level_rings = rings->level_rings(k, k_channels);
            q.level_order = rings->level_order(k);
            q.first_counter = k;
            q.counter_stride = k_channels;
        } else {
            q.first_counter = k * q.counters;
        }
        for (auto& rank : collectives::plan(q)) {
            if (driver::trn3_device::device_queue_bytes(rank.descriptors.size()) > ring_stride)
                throw std::invalid_argument(
                    fmt::format("{} descriptors on a channel: more than a ring holds", rank.descriptors.size()));
            g.plans[k][rank.fabric_id] = std::move(rank.descriptors);
        }
    }
}

// Node i of rank r meets its partners: on this UltraServer's fabric, or
// (across UltraServers) a reduce-scatter here, the EFA ring, an all-gather
// here; returns why it failed.
std::string workload_program::meet(unsigned h, std::size_t c, unsigned r, std::size_t i) {
    meeting& m = meetings_[meeting_of_[r][i]];
    nodes_[r][i].arrived = sc_core::sc_time_stamp();
    if (m.servers.empty()) return gather(h, c, r, i, m, 0, {});
    if (m.here > 1)
        if (std::string e = gather(h, c, r, i, m, 0, collectives::op::reduce_scatter); !e.empty()) return e;
    if (std::string e = efa_step(h, r, i, m); !e.empty()) return e;
    return m.here > 1 ? gather(h, c, r, i, m, 1, collectives::op::all_gather) : "";
}

// One gathering of the meeting on this UltraServer's fabric: node i's part
// of the schedule loaded, then started with everyone's once the last here
// has come.
std::string workload_program::gather(unsigned h, std::size_t c, unsigned r, std::size_t i, meeting& m, unsigned phase,
                                     std::optional<collectives::op> as) {
    gathering& g = m.local[phase];
    if (g.plans.empty()) {
        try {
            plan_gathering(m, g, as);
        } catch (const std::invalid_argument& e) {
            return e.what();
        }
    }
    driver::trn3_device& d = *hosts_[h].chips.devices[c];
    const unsigned id = fabric_id(r);
    std::array<std::uint64_t, TRN3_FABRIC_CHANNELS> base{};
    std::array<bool, TRN3_FABRIC_CHANNELS> read{};
    for (unsigned k = 0; k < g.channels; ++k)
        for (const auto& desc : g.plans[k].at(id)) {
            const unsigned ch = TRN3_DESC_CHANNEL_OF(desc.flags, 1 + k) % TRN3_FABRIC_CHANNELS;
            if (!(desc.flags & TRN3_DESC_WAIT_FABRIC) || read[ch]) continue;
            read[ch] = true;
            if (d.fabric_channel_bytes(ch, base[ch]) != driver::status::ok) return "reading the fabric counters";
        }
    for (unsigned k = 0; k < g.channels; ++k) {
        auto descriptors = g.plans[k].at(id);
        collectives::offset_waits(descriptors, 1 + k, base);
        if (d.load_device_queue(1 + k, ring_at + k * ring_stride, descriptors) != driver::status::ok)
            return "loading the schedule";
    }
    const std::size_t place = static_cast<std::size_t>(
        std::find(m.members.begin(), m.members.end(), std::make_pair(r, i)) - m.members.begin());
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    if (g.arrived == 0 || now > g.last_at || (now == g.last_at && place > g.last_place)) {
        g.last = {r, i};
        g.last_at = now;
        g.last_place = place;
    }
    const std::size_t here = m.servers.empty() ? m.members.size() : m.here;
    if (++g.arrived == here) {
        g.go = true;
        g.all_here.notify(sc_core::SC_ZERO_TIME);
        g.plans = {};  // every member has loaded its part
    }
    while (!g.go) {
        if (aborted_) return "another chip failed";
        sc_core::wait(g.all_here | aborted_event_);
    }
    // Released by the last to arrive (across UltraServers: the last
    // anywhere, once every UltraServer's times are in, take_node_times()).
    if (m.servers.empty() && (g.last.first != r || g.last.second != i)) {
        nodes_[r][i].by_rank = int(g.last.first);
        nodes_[r][i].by_node = g.last.second;
    }
    for (unsigned k = 0; k < g.channels; ++k) d.start_device_queue(1 + k);
    // A failure elsewhere (which may leave this queue waiting for bytes that
    // never come) ends the wait.
    for (unsigned k = 0; k < g.channels; ++k) {
        const driver::status st =
            d.queue_finished(1 + k, ns(timeout.get()), ns(poll.get()), [this] { return aborted_; });
        if (st != driver::status::ok)
            return aborted_ ? "another chip failed" : fmt::format("channel {}: {}", k, driver::status_name(st));
    }
    return "";
}

// Across UltraServers: rank r's chunk (after the reduce-scatter here, chunk
// p of the buffer for the p-th member here; the whole buffer when it is the
// only one) all-reduced over EFA with the members at its place on the other
// UltraServers, timed only.
std::string workload_program::efa_step(unsigned h, unsigned r, std::size_t i, const meeting& m) {
    const auto& n = graph_.ranks[r].nodes[i];
    const auto it = efa_[h].find({r, n.group});
    if (it == efa_[h].end()) return "no EFA ring";
    const auto here = members_on(m, sys_.cluster_rank);
    const std::size_t p =
        static_cast<std::size_t>(std::find(here.begin(), here.end(), std::make_pair(r, i)) - here.begin());
    try {
        const sizing z = sizing_of(m, m.here);
        const std::uint64_t chunk = z.bytes / m.here;
        it->second->all_reduce({{layout.send + p * chunk, chunk}}, z.element,
                               TRN3_DESC_REDUCE_WITH(TRN3_REDUCE_SUM, z.type_code) | TRN3_DESC_TIMING_ONLY);
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

// The EFA rings of this host's chips: one per chip and group it meets
// across UltraServers, with the members at its place on the others (every
// UltraServer opens them in the meetings' order, so no two wait on each
// other). The chip's NIC carries it; its buffers, and an area past the
// collectives' for the ring's reduce-scatter to land in, open to the NIC.
void workload_program::open_efa(unsigned h) {
    const host_info& hi = sys_.hosts[h];
    host_state& me = hosts_[h];
    std::map<unsigned, std::size_t> chip_of_id;  // fabric id -> the host's chip
    for (std::size_t c = 0; c < hi.chips.size(); ++c) chip_of_id[unsigned(hi.chips[c].fabric_id)] = c;
    bool bound = false;
    for (const meeting& m : meetings_) {
        if (m.servers.empty()) continue;
        const auto here = members_on(m, sys_.cluster_rank);
        for (std::size_t p = 0; p < here.size(); ++p) {
            const auto [r, i] = here[p];
            const std::string& group = graph_.ranks[r].nodes[i].group;
            const auto chip = chip_of_id.find(fabric_id(r));
            if (chip == chip_of_id.end() || efa_[h].count({r, group})) continue;
            const std::size_t c = chip->second;
            if (!bound) {
                if (me.chips.nic_functions.empty() || !hi.use_fabric || !sys_.oob)
                    return fail(h, "workload across UltraServers: no NIC on the host, or no network");
                std::vector<std::uint64_t> bar2;
                for (auto& d : me.chips.devices) bar2.push_back(d->bar2());
                hi.use_fabric(me.chips.nic_functions, bar2);
                bound = true;
            }
            efa_ring::settings set;
            set.rank = static_cast<unsigned>(std::find(m.servers.begin(), m.servers.end(), sys_.cluster_rank) -
                                             m.servers.begin());
            set.size = static_cast<unsigned>(m.servers.size());
            set.name = fmt::format("workload/efa/{}/{}", group, p);
            set.nic_of_chip = {hi.nic_of_chip.empty() ? 0u : hi.nic_of_chip.at(c)};
            set.neuron_device_of_chip = {static_cast<int>(c)};
            set.buffers = {layout.send};
            set.buffer_bytes = layout.scratch_stride;
            set.scratch = layout.constant + layout.scratch_stride;
            set.queue = 1;
            set.ring = ring_at;
            set.timeout_ns = ns(timeout.get());
            set.poll_ns = ns(poll.get());
            set.abandon = [this] { return aborted_; };
            try {
                efa_[h][{r, group}] =
                    std::make_unique<efa_ring>(*hi.ops, std::vector<driver::trn3_device*>{me.chips.devices[c].get()},
                                               set, efa_ring::through(*sys_.oob, *hi.ops, set.timeout_ns, set.poll_ns));
            } catch (const std::exception& e) {
                return fail(h, fmt::format("rank {}: opening its EFA ring of group '{}': {}", r, group, e.what()));
            }
        }
    }
}

namespace {
// Time rank r's communication did not overlap its compute: its comm
// intervals less their overlap with the compute intervals (each stream's
// intervals are in order and disjoint).
double exposed_seconds(const std::vector<std::pair<double, double>>& comm,
                       const std::vector<std::pair<double, double>>& compute) {
    double exposed = 0;
    std::size_t j = 0;
    for (const auto& [a, b] : comm) {
        double covered = 0;
        while (j < compute.size() && compute[j].second <= a) ++j;
        for (std::size_t k = j; k < compute.size() && compute[k].first < b; ++k)
            covered += std::min(b, compute[k].second) - std::max(a, compute[k].first);
        exposed += (b - a) - covered;
    }
    return exposed;
}

struct spread {
    double low = 0, mean = 0, high = 0;
};
spread spread_of(const std::vector<double>& v) {
    spread s{v.empty() ? 0 : v[0], 0, 0};
    for (double x : v) {
        s.low = std::min(s.low, x);
        s.high = std::max(s.high, x);
        s.mean += x / double(v.size());
    }
    return s;
}
}  // namespace

void workload_program::report(std::ostream& os) const {
    const unsigned n_ranks = static_cast<unsigned>(graph_.ranks.size());
    std::size_t kernels = 0, collectives = 0, p2p = 0, nodes = 0;
    for (const auto& r : graph_.ranks)
        for (const auto& n : r.nodes) {
            ++nodes;
            kernels += n.kind == node_kind::compute;
            collectives += n.kind == node_kind::collective;
            p2p += n.kind == node_kind::send || n.kind == node_kind::recv;
        }
    const bool across = sys_.cluster_size > 1;
    os << fmt::format("# workload {} on {}{}: {} ranks, {} nodes: {} compute ({} distinct kernels, {}), {} "
                      "collectives, {} sends and receives\n",
                      graph_.name, sys_.name,
                      !across ? ""
                      : end_rank_ > first_rank_
                          ? fmt::format(" (UltraServer {} of {}: ranks {} to {})", sys_.cluster_rank, sys_.cluster_size,
                                        first_rank_, end_rank_ - 1)
                          : fmt::format(" (UltraServer {} of {}: no ranks)", sys_.cluster_rank, sys_.cluster_size),
                      n_ranks, nodes, kernels, kernels_.size(), compute.get(), collectives, p2p);
    if (!finished_) {
        os << "# the step did not finish (see the FAILED lines)\n";
        return;
    }
    if (across && sys_.cluster_rank > 0) {  // one report for the cluster: the first UltraServer's
        os << "# the step's figures, the cluster's, are in the first UltraServer's report\n";
        return;
    }
    if (compute.get() == "replay" && !kernels_.empty())
        os << fmt::format("# kernels timed on the first chip before the step: {}, {:.3f} ms simulated, in {:.1f} s of "
                          "wall time\n",
                          kernels_.size(), calibration_sim_.to_seconds() * 1e3, calibration_wall_s_);
    os << fmt::format("# {:<44} {:>12}  {}\n", "kernel", "time (us)", "on the NeuronCores");
    for (const auto& [name, k] : kernels_)
        os << fmt::format("#  {:<43} {:>12.3f}  {}\n", name, k.time.to_seconds() * 1e6, k.lowered.text);

    // Per rank: busy compute and communication, exposed communication.
    sc_core::sc_time end = start_;
    std::vector<double> busy_compute(n_ranks), busy_comm(n_ranks), exposed(n_ranks);
    double ideal = 0, flops = 0, hbm = 0, measured_kernel_hbm = 0;
    double flops_bf16 = 0, flops_mx = 0;  // this UltraServer's ranks' (its energy)
    for (unsigned r = 0; r < n_ranks; ++r) {
        std::vector<std::pair<double, double>> comp, comm;
        for (std::size_t i : order_[r]) {
            const auto& n = graph_.ranks[r].nodes[i];
            const auto& s = nodes_[r][i];
            end = std::max(end, s.end);
            const std::pair<double, double> span{s.start.to_seconds(), s.end.to_seconds()};
            (n.kind == node_kind::compute ? comp : comm).push_back(span);
            (n.kind == node_kind::compute ? busy_compute : busy_comm)[r] += span.second - span.first;
            flops += double(n.flops);
            hbm += double(n.hbm_bytes);
            const bool mx = n.kernel.dtype == "mxfp8" || n.kernel.dtype == "mxfp4";
            if (local(r)) (mx ? flops_mx : flops_bf16) += double(n.flops);
            if (n.kernel.timed() && compute.get() == "replay" && local(r))
                measured_kernel_hbm += double(kernels_.at(lowered_as_.at(key(n.kernel))).hbm_bytes);
            ideal += double(n.flops) / ((mx ? peak_tflops_mx.get() : peak_tflops_bf16.get()) * 1e12);
        }
        exposed[r] = exposed_seconds(comm, comp);
    }
    const double step = (end - start_).to_seconds();
    const double mfu = step > 0 ? ideal / (step * n_ranks) : 0;
    const auto line = [&](const char* what, const std::vector<double>& v) {
        const spread s = spread_of(v);
        os << fmt::format("  {:<24} {:>12.3f} {:>12.3f} {:>12.3f}\n", what, s.low * 1e6, s.mean * 1e6, s.high * 1e6);
    };
    os << fmt::format("step time                  {:.3f} us\n", step * 1e6);
    os << fmt::format("per chip (us)              {:>12} {:>12} {:>12}\n", "min", "mean", "max");
    line("compute", busy_compute);
    line("communication", busy_comm);
    line("exposed communication", exposed);
    os << fmt::format("model FLOPs                {:.4e} (matmuls: {:.3f} TFLOP per chip)\n", flops,
                      flops / n_ranks / 1e12);
    os << fmt::format("MFU                        {:.2f}% (each kernel against a chip's peak for its type: bf16/fp8 "
                      "{:.1f}, MX {:.1f} TFLOP/s)\n",
                      mfu * 100, peak_tflops_bf16.get(), peak_tflops_mx.get());
    const spread comp = spread_of(busy_compute);
    os << fmt::format("kernel HBM traffic         {:.3f} GB per chip, {:.3f} TB/s per chip while computing\n",
                      hbm / n_ranks / 1e9, comp.mean > 0 ? hbm / n_ranks / comp.mean / 1e12 : 0.0);

    nlohmann::json out;
    report_energy(os, out, step, flops_bf16, flops_mx, measured_kernel_hbm);

    // The critical path: from the last node to end, back through what released each.
    std::vector<std::pair<unsigned, std::size_t>> path;
    int r = -1;
    std::size_t i = 0;
    for (unsigned q = 0; q < n_ranks; ++q)
        for (std::size_t j : order_[q])
            if (r < 0 || nodes_[q][j].end > nodes_[unsigned(r)][i].end) {
                r = int(q);
                i = j;
            }
    while (r >= 0 && path.size() <= nodes) {
        path.emplace_back(unsigned(r), i);
        const node_state& s = nodes_[unsigned(r)][i];
        const int next = s.by_rank;
        i = s.by_node;
        r = next;
    }
    std::reverse(path.begin(), path.end());
    // Each node of the path counts from where the path had got to (members
    // of one collective overlap): the rest of the step is waiting.
    double on_compute = 0, on_comm = 0, reached = start_.to_seconds();
    for (const auto& [q, j] : path) {
        const double from = std::max(reached, nodes_[q][j].start.to_seconds()), to = nodes_[q][j].end.to_seconds();
        if (to <= from) continue;
        (graph_.ranks[q].nodes[j].kind == node_kind::compute ? on_compute : on_comm) += to - from;
        reached = to;
    }
    os << fmt::format("critical path              {} nodes: {:.3f} us compute, {:.3f} us communication, {:.3f} us "
                      "waiting\n",
                      path.size(), on_compute * 1e6, on_comm * 1e6, std::max(0.0, step - on_compute - on_comm) * 1e6);
    const std::size_t shown = std::min<std::size_t>(path.size(), 24);
    for (std::size_t k = path.size() - shown; k < path.size(); ++k) {
        const auto& [q, j] = path[k];
        const auto& n = graph_.ranks[q].nodes[j];
        os << fmt::format("  rank {:>4} {:<10} {:<36} {:>12.3f} {:>12.3f} us\n", q, workload::name(n.kind), n.name,
                          (nodes_[q][j].start - start_).to_seconds() * 1e6,
                          (nodes_[q][j].end - start_).to_seconds() * 1e6);
    }
    if (shown < path.size()) os << fmt::format("  (the first {} nodes of the path left out)\n", path.size() - shown);

    if (json.get().empty()) return;
    out["workload"] = graph_.name;
    out["platform"] = sys_.name;
    out["ranks"] = n_ranks;
    if (across) out["ultraservers"] = sys_.cluster_size;
    out["compute"] = compute.get();
    out["step_time_us"] = step * 1e6;
    out["mfu"] = mfu;
    out["model_flops"] = flops;
    out["kernel_hbm_bytes"] = hbm;
    for (unsigned q = 0; q < n_ranks; ++q) {
        out["per_rank"].push_back({{"rank", q},
                                   {"chip", fabric_id(q)},
                                   {"compute_us", busy_compute[q] * 1e6},
                                   {"communication_us", busy_comm[q] * 1e6},
                                   {"exposed_communication_us", exposed[q] * 1e6}});
        if (across) out["per_rank"].back()["ultraserver"] = server_of(q);
    }
    for (const auto& [name, k] : kernels_)
        out["kernels"].push_back(
            {{"kernel", name}, {"time_us", k.time.to_seconds() * 1e6}, {"lowered", k.lowered.text}});
    for (const auto& [q, jj] : path) {
        const auto& n = graph_.ranks[q].nodes[jj];
        out["critical_path"].push_back({{"rank", q},
                                        {"node", n.name},
                                        {"kind", workload::name(n.kind)},
                                        {"start_us", (nodes_[q][jj].start - start_).to_seconds() * 1e6},
                                        {"end_us", (nodes_[q][jj].end - start_).to_seconds() * 1e6}});
    }
    if (json_nodes.get())
        for (unsigned q = 0; q < n_ranks; ++q)
            for (std::size_t jj : order_[q]) {
                const auto& n = graph_.ranks[q].nodes[jj];
                out["nodes"].push_back({{"rank", q},
                                        {"id", n.id},
                                        {"node", n.name},
                                        {"kind", workload::name(n.kind)},
                                        {"deps", n.deps},
                                        {"start_us", (nodes_[q][jj].start - start_).to_seconds() * 1e6},
                                        {"end_us", (nodes_[q][jj].end - start_).to_seconds() * 1e6}});
            }
    write_user_file(json.get(), "workload JSON file", out.dump(2) + "\n");
}

// Link utilisation per medium, energy by component, power, and the model's
// peak power beside the published figures.
void workload_program::report_energy(std::ostream& os, nlohmann::json& j, double step, double flops_bf16,
                                     double flops_mx, double kernel_hbm) const {
    if (!sys_.activity_now || step <= 0) return;
    workload::energy_activity a;
    a.seconds = step;
    a.flops_bf16 = flops_bf16;
    a.flops_mx = flops_mx;
    for (std::size_t c = 0; c < at_end_.hbm_bytes.size(); ++c)
        a.hbm_bytes += double(at_end_.hbm_bytes[c] - at_start_.hbm_bytes.at(c));
    a.hbm_bytes += kernel_hbm;  // replay: the kernels' own, measured when they were timed
    std::string util;
    for (const auto& [name, m] : at_end_.media) {
        const auto& before = at_start_.media.at(name);
        workload::energy_activity::medium& out = a.media[name];
        out.bytes = double(m.bytes - before.bytes);
        out.retimer_bytes = m.links ? out.bytes * m.retimers / m.links : 0;
        out.switched = m.switched;
        const double used = m.capacity > 0 ? out.bytes / (m.capacity * step) : 0;
        util += fmt::format("{}{} {:.2f}% ({:.3f} GB)", util.empty() ? "" : ", ", name, used * 100, out.bytes / 1e9);
        j["links"][name] = {{"bytes", out.bytes}, {"utilisation", used}, {"links", m.links}};
    }
    a.chips = at_end_.chips;
    a.switches = at_end_.switches;
    a.retimers = at_end_.retimers;
    a.nics = at_end_.nics;
    a.hosts = at_end_.hosts;
    workload::energy_params p;
    p.pj_per_flop_bf16 = e_flop_bf16.get();
    p.pj_per_flop_mx = e_flop_mx.get();
    p.pj_per_hbm_byte = e_hbm.get();
    p.pj_per_bit_medium = {{"backplane", e_backplane.get()},
                           {"cross-rack", e_cross_rack.get()},
                           {"pcb", e_pcb.get()},
                           {"pcb (tray switch)", e_pcb.get()},
                           {"torus", e_torus.get()},
                           {"host", e_host.get()},
                           {"nic", e_host.get()},
                           {"efa", e_efa.get()}};
    p.pj_per_bit_switch = e_switch.get();
    p.pj_per_bit_retimer = e_retimer.get();
    p.idle_w_chip = idle_chip.get();
    p.idle_w_switch = idle_switch.get();
    p.idle_w_retimer = idle_retimer.get();
    p.idle_w_nic = idle_nic.get();
    p.idle_w_host = idle_host.get();
    const workload::energy_breakdown e = workload::step_energy(p, a);
    const double total = e.total();
    std::string parts;
    for (const auto& [what, joules] : e.joules) {
        if (joules <= 0) continue;
        parts += fmt::format("{}{} {:.4f}", parts.empty() ? "" : ", ", what, joules);
        j["energy_j"][what] = joules;
    }
    const double rank_chips = std::max<double>(1, double(end_rank_ - first_rank_));  // the ranks' chips here
    // A rank's chip: its share of the compute and HBM energy, and its idle power.
    double chip_j = p.idle_w_chip * step * rank_chips;
    for (const auto& [what, joules] : e.joules)
        if (what == "compute" || what == "HBM") chip_j += joules;
    if (sys_.cluster_size > 1)
        os << fmt::format("# links, HBM, energy and power: this UltraServer's ({} ranks; its NICs' EFA links, not "
                          "the network's switches)\n",
                          end_rank_ - first_rank_);
    os << fmt::format("link utilisation           {}\n", util);
    os << fmt::format("HBM traffic                {:.3f} GB per chip (kernels and collectives)\n",
                      a.hbm_bytes / rank_chips / 1e9);
    os << fmt::format("energy per step            {:.4f} J: {}\n", total, parts);
    os << fmt::format("average power              {:.2f} kW for the system, {:.1f} W per chip (its compute, HBM and "
                      "idle); {:.3f} TFLOP/s per kW\n",
                      total / step / 1e3, chip_j / rank_chips / step, (flops_bf16 + flops_mx) / total / 1e12 * 1e3);
    // The model's peak: a chip at its bf16 peak with its HBM and links at theirs, everything else at its peak too.
    double links_w = 0, switch_w = 0, retimer_w = 0;
    for (const auto& [name, m] : at_end_.media) {
        const auto it = p.pj_per_bit_medium.find(name);
        const double bits = m.capacity * 8;
        links_w += bits * (it == p.pj_per_bit_medium.end() ? p.pj_per_bit_default : it->second) * 1e-12;
        if (m.switched) switch_w += bits * p.pj_per_bit_switch * 1e-12;
        retimer_w += (m.links ? bits * m.retimers / m.links : 0) * p.pj_per_bit_retimer * 1e-12;
    }
    const double chip_peak = peak_tflops_bf16.get() * 1e12 * p.pj_per_flop_bf16 * 1e-12 +
                             hbm_peak_gbps.get() * 1e9 * p.pj_per_hbm_byte * 1e-12 + p.idle_w_chip +
                             links_w / std::max(1u, a.chips);
    const double system_peak = chip_peak * a.chips + switch_w + retimer_w + a.switches * p.idle_w_switch +
                               a.retimers * p.idle_w_retimer + a.nics * p.idle_w_nic + a.hosts * p.idle_w_host;
    // The published whole-system budgets, for the full SKUs only.
    const double budget_kw = sys_.name == "nl72x2" && a.chips == 144  ? budget_kw_nl72x2.get()
                             : sys_.name == "nl32x2" && a.chips == 64 ? budget_kw_nl32x2.get()
                                                                      : 0;
    os << fmt::format("peak power (the model)     {:.1f} W per chip at its bf16 peak with HBM and links at theirs "
                      "(published: about {:.0f} W); {:.2f} kW for the system{}\n",
                      chip_peak, tdp_w.get(), system_peak / 1e3,
                      budget_kw > 0 ? fmt::format(" (published budget about {:.0f} kW)", budget_kw) : "");
    j["energy_total_j"] = total;
    j["power_system_w"] = total / step;
    j["power_chip_w"] = chip_j / rank_chips / step;
    j["peak_power_chip_w"] = chip_peak;
    j["peak_power_system_w"] = system_peak;
}

const program_registration registration{
    "workload",
    "a training step (a Chakra trace, or a dense transformer or MoE layer): kernels on every chip's "
    "NeuronCores and collectives on the fabric; step time, MFU, exposed communication, critical path",
    [](host_system& s) { return std::make_unique<workload_program>(s); }};

}  // namespace
}  // namespace trn3::apps
