#include "trn3/workload/graph.h"

#include <algorithm>
#include <queue>
#include <set>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "trn3/core/error.h"

namespace trn3::workload {

const char* name(collective_op op) {
    switch (op) {
    case collective_op::all_reduce: return "all_reduce";
    case collective_op::reduce: return "reduce";
    case collective_op::all_gather: return "all_gather";
    case collective_op::broadcast: return "broadcast";
    case collective_op::all_to_all: return "all_to_all";
    case collective_op::reduce_scatter: return "reduce_scatter";
    case collective_op::barrier: return "barrier";
    case collective_op::all_to_allv: return "all_to_allv";
    }
    return "?";
}

const char* name(node_kind k) {
    switch (k) {
    case node_kind::compute: return "compute";
    case node_kind::collective: return "collective";
    case node_kind::send: return "send";
    case node_kind::recv: return "recv";
    }
    return "?";
}

unsigned dtype_bits(const std::string& d) {
    if (d == "bf16" || d == "fp16") return 16;
    if (d == "fp32" || d == "int32") return 32;
    if (d == "fp8" || d == "e4m3" || d == "e5m2" || d == "mxfp8") return 8;
    if (d == "mxfp4") return 4;
    return 0;
}

std::vector<unsigned> graph::members(const std::string& group) const {
    if (group.empty()) {
        std::vector<unsigned> all(ranks.size());
        for (unsigned r = 0; r < all.size(); ++r) all[r] = r;
        return all;
    }
    const auto it = groups.find(group);
    return it == groups.end() ? std::vector<unsigned>{} : it->second;
}

std::uint64_t kernel_flops(const kernel_spec& k) {
    if (k.kind == "gemm") return 2 * k.batch * k.m * k.n * k.k;
    if (k.kind == "attention") return 4 * k.batch * k.m * k.n * k.k;  // Q K^T and P V
    return 0;  // the Vector and Scalar engines' work is not counted in MFU
}

std::uint64_t kernel_hbm_bytes(const kernel_spec& k) {
    const std::uint64_t bits = dtype_bits(k.dtype), act = 16;  // results are bf16 activations
    if (k.kind == "gemm") return k.batch * ((k.m * k.k + k.k * k.n) * bits + k.m * k.n * act) / 8;
    if (k.kind == "attention") return k.batch * (2 * k.m * k.k + 2 * k.n * k.k) * act / 8;  // Q, O; K, V
    if (k.kind == "mx_quantize")  // bf16 in; codes and one scale byte per 32 out
        return k.batch * (k.m * k.n * (act + bits) / 8 + k.m * ((k.n + 31) / 32));
    return 2 * k.batch * k.m * k.n * act / 8;  // read once, write once
}

namespace {

const std::set<std::string> kernel_kinds{"gemm", "attention", "softmax", "rmsnorm", "elementwise", "mx_quantize"};

std::string where(unsigned r, const node& n) { return fmt::format("rank {} node {} ('{}')", r, n.id, n.name); }

void check_kernel(unsigned r, const node& n) {
    const kernel_spec& k = n.kernel;
    if (!k.timed()) return;
    if (!kernel_kinds.count(k.kind))
        throw config_error(fmt::format("workload: {}: unknown kernel '{}' (gemm, attention, softmax, rmsnorm, "
                                       "elementwise, mx_quantize)",
                                       where(r, n), k.kind));
    if (dtype_bits(k.dtype) == 0 || k.dtype == "int32" || k.dtype == "fp32")
        throw config_error(
            fmt::format("workload: {}: kernel dtype '{}' (bf16, fp16, fp8, mxfp8, mxfp4)", where(r, n), k.dtype));
    if (k.kind == "mx_quantize" && k.dtype != "mxfp8" && k.dtype != "mxfp4")
        throw config_error(
            fmt::format("workload: {}: mx_quantize writes mxfp8 or mxfp4, not '{}'", where(r, n), k.dtype));
    const bool needs_k = k.kind == "gemm" || k.kind == "attention";
    if (k.m == 0 || k.n == 0 || (needs_k && k.k == 0) || k.batch == 0)
        throw config_error(fmt::format("workload: {}: {} needs a shape (m {}, n {}, k {}, batch {})", where(r, n),
                                       k.kind, k.m, k.n, k.k, k.batch));
    constexpr std::uint64_t most = 1ull << 24;  // 16 Mi rows, columns or depth: past any model
    if (k.m > most || k.n > most || k.k > most || k.batch > most)
        throw config_error(fmt::format("workload: {}: {} shape past {} (m {}, n {}, k {}, batch {})", where(r, n),
                                       k.kind, most, k.m, k.n, k.k, k.batch));
    // Its FLOPs and bytes must count without wrapping: 2^60 multiply-adds at most.
    const long double work = (long double)k.batch * k.m * k.n * std::max<std::uint64_t>(k.k, 1);
    if (work > 0x1p60L)
        throw config_error(fmt::format("workload: {}: {} of {} x {} x {} x {} is past 2^60 multiply-adds", where(r, n),
                                       k.kind, k.batch, k.m, k.n, k.k));
}

// Each rank runs its collectives, sends and receives one at a time in its
// order, and each (a collective, or a send with its receive) starts once
// all its members have come to it. Walked as a run would go: a rank left
// waiting would wait forever (two ranks meeting in opposite orders, a
// send that waits for its peer's send), an error before the run.
void check_no_deadlock(const graph& g, const std::vector<std::vector<std::size_t>>& order) {
    const unsigned ranks = static_cast<unsigned>(g.ranks.size());
    std::vector<std::vector<std::pair<std::string, std::size_t>>> steps(ranks);  // (meeting, node index)
    std::map<std::string, std::size_t> members;  // meeting -> how many take part
    for (unsigned r = 0; r < ranks; ++r) {
        std::map<std::string, std::size_t> seen;
        for (std::size_t i : order[r]) {
            const node& n = g.ranks[r].nodes[i];
            std::string key;
            if (n.kind == node_kind::collective) {
                key = "collective " + n.group;
                members[key + "#" + std::to_string(seen[key])] = g.members(n.group).size();
            } else if (n.kind != node_kind::compute) {
                const bool send = n.kind == node_kind::send;
                key = fmt::format("p2p {} {} {}", send ? r : n.peer, send ? n.peer : r, n.tag);
                members[key + "#" + std::to_string(seen[key])] = 2;
            } else {
                continue;
            }
            steps[r].emplace_back(key + "#" + std::to_string(seen[key]++), i);
        }
    }
    std::vector<std::size_t> head(ranks, 0);
    std::map<std::string, std::vector<unsigned>> waiting;  // meeting -> ranks at it
    std::vector<unsigned> ready(ranks);
    for (unsigned r = 0; r < ranks; ++r) ready[r] = r;
    while (!ready.empty()) {
        const unsigned r = ready.back();
        ready.pop_back();
        if (head[r] == steps[r].size()) continue;
        const std::string& key = steps[r][head[r]].first;
        auto& at = waiting[key];
        at.push_back(r);
        if (at.size() < members.at(key)) continue;
        for (unsigned q : at) {
            ++head[q];
            ready.push_back(q);
        }
        waiting.erase(key);
    }
    for (unsigned r = 0; r < ranks; ++r)
        if (head[r] < steps[r].size())
            throw config_error(fmt::format("workload: {}: waits forever: its partners meet in another order (a "
                                           "collective or send/receive each of them reaches only after one that "
                                           "needs this rank)",
                                           where(r, g.ranks[r].nodes[steps[r][head[r]].second])));
}

}  // namespace

std::vector<std::vector<std::size_t>> validate(const graph& g) {
    const unsigned ranks = static_cast<unsigned>(g.ranks.size());
    if (ranks == 0) throw config_error("workload: no ranks");
    for (const auto& [group, members] : g.groups) {
        std::set<unsigned> seen;
        if (members.empty()) throw config_error(fmt::format("workload: group '{}' has no ranks", group));
        for (unsigned m : members) {
            if (m >= ranks)
                throw config_error(fmt::format("workload: group '{}' names rank {} of {}", group, m, ranks));
            if (!seen.insert(m).second)
                throw config_error(fmt::format("workload: group '{}' names rank {} twice", group, m));
        }
    }

    std::vector<std::vector<std::size_t>> order(ranks);
    for (unsigned r = 0; r < ranks; ++r) {
        const auto& nodes = g.ranks[r].nodes;
        std::unordered_map<std::uint64_t, std::size_t> at;
        for (std::size_t i = 0; i < nodes.size(); ++i)
            if (!at.emplace(nodes[i].id, i).second)
                throw config_error(fmt::format("workload: {}: the id appears twice", where(r, nodes[i])));
        // Kahn's algorithm, the earliest ready node in the trace first.
        std::vector<unsigned> waiting(nodes.size(), 0);
        std::vector<std::vector<std::size_t>> after(nodes.size());
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            const node& n = nodes[i];
            check_kernel(r, n);
            constexpr std::uint64_t hour_ps = 3'600'000'000'000'000ull;
            if (n.duration_ps > hour_ps)
                throw config_error(
                    fmt::format("workload: {}: a duration of {} ps, over an hour", where(r, n), n.duration_ps));
            for (std::uint64_t split : n.splits)
                if (split >= (1ull << 32))
                    throw config_error(
                        fmt::format("workload: {}: a split of {} B (at most 4 GiB)", where(r, n), split));
            std::set<std::uint64_t> deps(n.deps.begin(), n.deps.end());  // a dep named twice counts once
            for (std::uint64_t d : deps) {
                const auto it = at.find(d);
                if (it == at.end())
                    throw config_error(fmt::format("workload: {}: depends on node {}, which rank {} does not have",
                                                   where(r, n), d, r));
                if (it->second == i) throw config_error(fmt::format("workload: {}: depends on itself", where(r, n)));
                after[it->second].push_back(i);
                ++waiting[i];
            }
            if (n.kind == node_kind::send || n.kind == node_kind::recv) {
                if (n.peer >= ranks || n.peer == r)
                    throw config_error(fmt::format("workload: {}: {} peer rank {} (ranks 0-{}, not itself)",
                                                   where(r, n), name(n.kind), n.peer, ranks - 1));
            }
            if (n.kind == node_kind::collective) {
                if (!n.group.empty() && !g.groups.count(n.group))
                    throw config_error(fmt::format("workload: {}: unknown group '{}'", where(r, n), n.group));
                const auto m = g.members(n.group);
                if (std::find(m.begin(), m.end(), r) == m.end())
                    throw config_error(
                        fmt::format("workload: {}: rank {} is not in group '{}'", where(r, n), r, n.group));
                if (m.size() < 2)
                    throw config_error(fmt::format("workload: {}: a collective of one rank", where(r, n)));
                if (n.op == collective_op::all_to_allv && n.splits.size() != m.size())
                    throw config_error(fmt::format("workload: {}: all_to_allv with {} splits for a group of {}",
                                                   where(r, n), n.splits.size(), m.size()));
                if ((n.op == collective_op::broadcast || n.op == collective_op::reduce) && n.root >= m.size())
                    throw config_error(fmt::format("workload: {}: {} root {} in a group of {}", where(r, n), name(n.op),
                                                   n.root, m.size()));
                if (dtype_bits(n.dtype) == 0 || n.dtype.rfind("mx", 0) == 0)
                    throw config_error(fmt::format("workload: {}: collective dtype '{}'", where(r, n), n.dtype));
            }
        }
        std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
        for (std::size_t i = 0; i < nodes.size(); ++i)
            if (waiting[i] == 0) ready.push(i);
        while (!ready.empty()) {
            const std::size_t i = ready.top();
            ready.pop();
            order[r].push_back(i);
            for (std::size_t j : after[i])
                if (--waiting[j] == 0) ready.push(j);
        }
        if (order[r].size() != nodes.size()) {
            for (std::size_t i = 0; i < nodes.size(); ++i)
                if (waiting[i] != 0)
                    throw config_error(fmt::format("workload: {}: its dependencies form a cycle", where(r, nodes[i])));
        }
    }

    // Sends meet receives, k-th with k-th, per (source, destination, tag).
    std::map<std::tuple<unsigned, unsigned, std::uint64_t>, std::vector<const node*>> sends, recvs;
    for (unsigned r = 0; r < ranks; ++r)
        for (std::size_t i : order[r]) {
            const node& n = g.ranks[r].nodes[i];
            if (n.kind == node_kind::send) sends[{r, n.peer, n.tag}].push_back(&n);
            if (n.kind == node_kind::recv) recvs[{n.peer, r, n.tag}].push_back(&n);
        }
    for (const auto& [key, s] : sends) {
        const auto& [src, dst, tag] = key;
        const auto it = recvs.find(key);
        const std::size_t got = it == recvs.end() ? 0 : it->second.size();
        if (got < s.size())
            throw config_error(fmt::format("workload: {}: send to rank {} (tag {}) has no matching receive",
                                           where(src, *s[got]), dst, tag));
        for (std::size_t k = 0; k < s.size(); ++k)
            if (s[k]->bytes != it->second[k]->bytes)
                throw config_error(fmt::format("workload: {}: sends {} B, {} on rank {} receives {} B",
                                               where(src, *s[k]), s[k]->bytes, it->second[k]->id, dst,
                                               it->second[k]->bytes));
    }
    for (const auto& [key, rv] : recvs) {
        const auto it = sends.find(key);
        const std::size_t got = it == sends.end() ? 0 : it->second.size();
        if (got < rv.size())
            throw config_error(fmt::format("workload: {}: receive from rank {} (tag {}) has no matching send",
                                           where(std::get<1>(key), *rv[got]), std::get<0>(key), std::get<2>(key)));
    }

    // Collectives meet, k-th with k-th, per group.
    std::map<std::string, std::vector<std::vector<const node*>>> issued;  // group -> member index -> nodes
    for (unsigned r = 0; r < ranks; ++r)
        for (std::size_t i : order[r]) {
            const node& n = g.ranks[r].nodes[i];
            if (n.kind != node_kind::collective) continue;
            const auto m = g.members(n.group);
            auto& by_member = issued[n.group];
            by_member.resize(m.size());
            by_member[std::size_t(std::find(m.begin(), m.end(), r) - m.begin())].push_back(&n);
        }
    for (const auto& [group, by_member] : issued) {
        const auto m = g.members(group);
        for (std::size_t p = 1; p < m.size(); ++p) {
            const auto& a = by_member[0];
            const auto& b = by_member[p];
            if (a.size() != b.size())
                throw config_error(fmt::format("workload: group '{}': rank {} issues {} collectives, rank {} issues {}",
                                               group, m[0], a.size(), m[p], b.size()));
            for (std::size_t k = 0; k < a.size(); ++k) {
                const bool rooted = a[k]->op == collective_op::broadcast || a[k]->op == collective_op::reduce;
                const bool same = a[k]->op == b[k]->op && (!rooted || a[k]->root == b[k]->root) &&
                                  a[k]->dtype == b[k]->dtype &&
                                  (a[k]->op == collective_op::all_to_allv || a[k]->bytes == b[k]->bytes);
                if (!same)
                    throw config_error(fmt::format(
                        "workload: group '{}': collective {} differs: {} is {} of {} B {}, {} is {} of {} B {}", group,
                        k, where(m[0], *a[k]), name(a[k]->op), a[k]->bytes, a[k]->dtype, where(m[p], *b[k]),
                        name(b[k]->op), b[k]->bytes, b[k]->dtype));
            }
        }
    }
    check_no_deadlock(g, order);
    return order;
}

}  // namespace trn3::workload
