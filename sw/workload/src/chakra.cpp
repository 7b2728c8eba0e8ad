#include "trn3/workload/chakra.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/delimited_message_util.h>

#include "schema/chakra_et.pb.h"
#include "trn3/core/error.h"
#include "trn3/core/user_file.h"

namespace trn3::workload {

namespace pb = trn3::chakra;
using google::protobuf::io::ArrayInputStream;
using google::protobuf::io::GzipInputStream;
using google::protobuf::io::GzipOutputStream;
using google::protobuf::io::StringOutputStream;
using google::protobuf::io::ZeroCopyInputStream;

std::string chakra_file(const std::string& prefix, unsigned r) { return fmt::format("{}.{}.et", prefix, r); }

namespace {

constexpr std::uint64_t max_trace_bytes = 1ull << 30;
constexpr const char* group_prefix = "pg:";

// An attribute's whole-number value, from any of the integer forms.
bool whole(const pb::Attribute& a, std::uint64_t& out) {
    switch (a.value_case()) {
    case pb::Attribute::kInt32Val: out = std::uint64_t(a.int32_val()); return a.int32_val() >= 0;
    case pb::Attribute::kInt64Val: out = std::uint64_t(a.int64_val()); return a.int64_val() >= 0;
    case pb::Attribute::kUint32Val: out = a.uint32_val(); return true;
    case pb::Attribute::kUint64Val: out = a.uint64_val(); return true;
    case pb::Attribute::kSint32Val: out = std::uint64_t(a.sint32_val()); return a.sint32_val() >= 0;
    case pb::Attribute::kSint64Val: out = std::uint64_t(a.sint64_val()); return a.sint64_val() >= 0;
    case pb::Attribute::kFixed32Val: out = a.fixed32_val(); return true;
    case pb::Attribute::kFixed64Val: out = a.fixed64_val(); return true;
    case pb::Attribute::kSfixed32Val: out = std::uint64_t(a.sfixed32_val()); return a.sfixed32_val() >= 0;
    case pb::Attribute::kSfixed64Val: out = std::uint64_t(a.sfixed64_val()); return a.sfixed64_val() >= 0;
    case pb::Attribute::kBoolVal: out = a.bool_val() ? 1 : 0; return true;
    default: return false;
    }
}

bool whole_list(const pb::Attribute& a, std::vector<std::uint64_t>& out) {
    out.clear();
    switch (a.value_case()) {
    case pb::Attribute::kInt64List:
        for (auto v : a.int64_list().values()) {
            if (v < 0) return false;
            out.push_back(std::uint64_t(v));
        }
        return true;
    case pb::Attribute::kInt32List:
        for (auto v : a.int32_list().values()) {
            if (v < 0) return false;
            out.push_back(std::uint64_t(v));
        }
        return true;
    case pb::Attribute::kUint64List:
        out.assign(a.uint64_list().values().begin(), a.uint64_list().values().end());
        return true;
    case pb::Attribute::kUint32List:
        out.assign(a.uint32_list().values().begin(), a.uint32_list().values().end());
        return true;
    default: return false;
    }
}

// The attributes of one node, looked up by name, with errors that name it.
class attributes {
public:
    attributes(const google::protobuf::RepeatedPtrField<pb::Attribute>& attrs, std::string where)
        : where_(std::move(where)) {
        for (const auto& a : attrs) by_name_[a.name()] = &a;
    }
    bool has(const std::string& name) const { return by_name_.count(name) != 0; }
    std::uint64_t number(const std::string& name, std::uint64_t otherwise) const {
        const auto it = by_name_.find(name);
        if (it == by_name_.end()) return otherwise;
        std::uint64_t v = 0;
        if (!whole(*it->second, v))
            throw config_error(fmt::format("workload: {}: attribute {} is not a whole number >= 0", where_, name));
        return v;
    }
    std::string text(const std::string& name, const std::string& otherwise) const {
        const auto it = by_name_.find(name);
        if (it == by_name_.end()) return otherwise;
        if (it->second->value_case() != pb::Attribute::kStringVal)
            throw config_error(fmt::format("workload: {}: attribute {} is not a string", where_, name));
        return it->second->string_val();
    }
    std::vector<std::uint64_t> numbers(const std::string& name) const {
        const auto it = by_name_.find(name);
        std::vector<std::uint64_t> v;
        if (it != by_name_.end() && !whole_list(*it->second, v))
            throw config_error(
                fmt::format("workload: {}: attribute {} is not a list of whole numbers >= 0", where_, name));
        return v;
    }

private:
    std::string where_;
    std::map<std::string, const pb::Attribute*> by_name_;
};

collective_op op_of(std::uint64_t comm_type, bool uneven, const std::string& where) {
    switch (comm_type) {
    case pb::ALL_REDUCE: return collective_op::all_reduce;
    case pb::REDUCE: return collective_op::reduce;
    case pb::ALL_GATHER: return collective_op::all_gather;
    case pb::BROADCAST: return collective_op::broadcast;
    case pb::ALL_TO_ALL: return uneven ? collective_op::all_to_allv : collective_op::all_to_all;
    case pb::REDUCE_SCATTER:
    case pb::REDUCE_SCATTER_BLOCK: return collective_op::reduce_scatter;
    case pb::BARRIER: return collective_op::barrier;
    default:
        throw config_error(fmt::format("workload: {}: comm_type {} is not supported (ALL_REDUCE, REDUCE, ALL_GATHER, "
                                       "BROADCAST, ALL_TO_ALL, REDUCE_SCATTER, BARRIER)",
                                       where, comm_type));
    }
}

node node_from(const pb::Node& p, const std::string& file) {
    node n;
    n.id = p.id();
    n.name = p.name();
    const std::string where = fmt::format("{}: node {} ('{}')", file, p.id(), p.name());
    const attributes a(p.attr(), where);
    n.deps.assign(p.data_deps().begin(), p.data_deps().end());
    n.deps.insert(n.deps.end(), p.ctrl_deps().begin(), p.ctrl_deps().end());
    constexpr std::uint64_t most_us = std::numeric_limits<std::uint64_t>::max() / 1'000'000;
    if (p.duration_micros() > most_us)
        throw config_error(fmt::format("workload: {}: duration_micros {} is too long", where, p.duration_micros()));
    n.duration_ps = a.number("duration_ps", p.duration_micros() * 1'000'000);
    switch (p.type()) {
    case pb::COMP_NODE:
    case pb::MEM_LOAD_NODE:
    case pb::MEM_STORE_NODE:
    case pb::METADATA_NODE:
        n.kind = node_kind::compute;
        if (p.type() == pb::COMP_NODE && a.has("kernel")) {
            n.kernel.kind = a.text("kernel", "");
            n.kernel.m = a.number("m", 0);
            n.kernel.n = a.number("n", 0);
            n.kernel.k = a.number("k", 0);
            n.kernel.batch = a.number("batch", 1);
            n.kernel.dtype = a.text("dtype", "bf16");
            n.flops = kernel_flops(n.kernel);
            n.hbm_bytes = kernel_hbm_bytes(n.kernel);
        } else {
            n.flops = a.number("num_ops", 0);
            n.hbm_bytes = a.number("tensor_size", 0);
        }
        break;
    case pb::COMM_COLL_NODE: {
        n.kind = node_kind::collective;
        n.splits = a.numbers("comm_splits");
        n.op = op_of(a.number("comm_type", std::numeric_limits<std::uint64_t>::max()), !n.splits.empty(), where);
        n.bytes = a.number("comm_size", 0);
        n.group = a.text("pg_name", "");
        n.root = a.number("comm_root", 0);
        n.dtype = a.text("comm_dtype", "bf16");
        if (n.op == collective_op::all_to_allv) {
            n.bytes = 0;
            for (std::uint64_t s : n.splits) n.bytes += s;
        }
        break;
    }
    case pb::COMM_SEND_NODE:
    case pb::COMM_RECV_NODE: {
        const bool send = p.type() == pb::COMM_SEND_NODE;
        n.kind = send ? node_kind::send : node_kind::recv;
        const char* peer = send ? "comm_dst" : "comm_src";
        if (!a.has(peer)) throw config_error(fmt::format("workload: {}: a {} without {}", where, name(n.kind), peer));
        const std::uint64_t r = a.number(peer, 0);
        if (r > std::numeric_limits<unsigned>::max())
            throw config_error(fmt::format("workload: {}: {} {} is not a rank", where, peer, r));
        n.peer = static_cast<unsigned>(r);
        n.bytes = a.number("comm_size", 0);
        n.tag = a.number("comm_tag", 0);
        n.dtype = a.text("comm_dtype", "bf16");
        break;
    }
    default: throw config_error(fmt::format("workload: {}: unknown node type {}", where, int(p.type())));
    }
    return n;
}

// One file's bytes: its metadata's groups into g, its nodes into rank r.
void read_one(const std::string& path, const std::vector<std::uint8_t>& bytes, graph& g, unsigned r) {
    if (bytes.empty()) throw config_error(fmt::format("workload: {}: empty (no global metadata)", path));
    if (bytes.size() > max_trace_bytes) throw config_error(fmt::format("workload: {}: over 1 GiB", path));
    ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
    const bool gz = bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
    GzipInputStream unzipped(&raw, GzipInputStream::GZIP);
    google::protobuf::io::CodedInputStream in(gz ? static_cast<ZeroCopyInputStream*>(&unzipped) : &raw);
    bool clean_eof = false;
    pb::GlobalMetadata meta;
    if (!google::protobuf::util::ParseDelimitedFromCodedStream(&meta, &in, &clean_eof))
        throw config_error(fmt::format("workload: {}: malformed global metadata", path));
    for (const auto& a : meta.attr()) {
        if (a.name().rfind(group_prefix, 0) != 0) continue;
        const std::string group = a.name().substr(3);
        std::vector<std::uint64_t> v;
        if (!whole_list(a, v))
            throw config_error(
                fmt::format("workload: {}: group attribute '{}' is not a list of ranks", path, a.name()));
        std::vector<unsigned> members;
        for (std::uint64_t m : v) {
            if (m > std::numeric_limits<unsigned>::max())
                throw config_error(fmt::format("workload: {}: group '{}' names rank {}", path, group, m));
            members.push_back(static_cast<unsigned>(m));
        }
        const auto [it, fresh] = g.groups.emplace(group, members);
        if (!fresh && it->second != members)
            throw config_error(fmt::format("workload: {}: group '{}' differs from the earlier files'", path, group));
    }
    if (g.ranks.size() <= r) g.ranks.resize(r + 1);
    for (std::size_t count = 0;; ++count) {
        pb::Node p;
        if (!google::protobuf::util::ParseDelimitedFromCodedStream(&p, &in, &clean_eof)) {
            if (clean_eof) break;
            throw config_error(fmt::format("workload: {}: node message {} is truncated or malformed", path, count + 1));
        }
        g.ranks[r].nodes.push_back(node_from(p, path));
    }
}

pb::Attribute& add(google::protobuf::RepeatedPtrField<pb::Attribute>* attrs, const std::string& name) {
    pb::Attribute* a = attrs->Add();
    a->set_name(name);
    return *a;
}

}  // namespace

graph read_chakra(const std::string& prefix, unsigned ranks) {
    graph g;
    g.name = std::filesystem::path(prefix).filename().string();
    for (unsigned r = 0; ranks == 0 || r < ranks; ++r) {
        const std::string path = chakra_file(prefix, r);
        if (ranks == 0 && !std::filesystem::exists(path)) {
            if (r == 0) throw config_error(fmt::format("workload: no Chakra trace {} (rank 0's file)", path));
            break;
        }
        read_one(path, read_user_file(path, "Chakra trace", max_trace_bytes), g, r);
    }
    validate(g);
    return g;
}

graph parse_chakra(const std::vector<std::pair<std::string, std::vector<std::uint8_t>>>& files) {
    graph g;
    for (unsigned r = 0; r < files.size(); ++r) read_one(files[r].first, files[r].second, g, r);
    g.ranks.resize(files.size());
    validate(g);
    return g;
}

void write_chakra(const graph& g, const std::string& prefix, bool gzip) {
    for (unsigned r = 0; r < g.ranks.size(); ++r) {
        std::string out;
        {
            StringOutputStream raw(&out);
            std::optional<GzipOutputStream> zipped;  // made only when asked: its destructor writes a gzip trailer
            if (gzip) zipped.emplace(&raw);
            google::protobuf::io::ZeroCopyOutputStream* to =
                gzip ? static_cast<google::protobuf::io::ZeroCopyOutputStream*>(&*zipped) : &raw;
            pb::GlobalMetadata meta;
            meta.set_version("0.0.4");
            for (const auto& [group, members] : g.groups) {
                pb::Attribute& a = add(meta.mutable_attr(), group_prefix + group);
                for (unsigned m : members) a.mutable_int64_list()->add_values(m);
            }
            bool ok = google::protobuf::util::SerializeDelimitedToZeroCopyStream(meta, to);
            for (const node& n : g.ranks[r].nodes) {
                pb::Node p;
                p.set_id(n.id);
                p.set_name(n.name);
                for (std::uint64_t d : n.deps) p.add_data_deps(d);
                p.set_duration_micros(n.duration_ps / 1'000'000);
                if (n.duration_ps) add(p.mutable_attr(), "duration_ps").set_uint64_val(n.duration_ps);
                switch (n.kind) {
                case node_kind::compute:
                    p.set_type(pb::COMP_NODE);
                    add(p.mutable_attr(), "is_cpu_op").set_bool_val(false);
                    if (n.kernel.timed()) {
                        add(p.mutable_attr(), "kernel").set_string_val(n.kernel.kind);
                        add(p.mutable_attr(), "m").set_uint64_val(n.kernel.m);
                        add(p.mutable_attr(), "n").set_uint64_val(n.kernel.n);
                        add(p.mutable_attr(), "k").set_uint64_val(n.kernel.k);
                        add(p.mutable_attr(), "batch").set_uint64_val(n.kernel.batch);
                        add(p.mutable_attr(), "dtype").set_string_val(n.kernel.dtype);
                    }
                    add(p.mutable_attr(), "num_ops").set_uint64_val(n.flops);
                    add(p.mutable_attr(), "tensor_size").set_uint64_val(n.hbm_bytes);
                    break;
                case node_kind::collective:
                    p.set_type(pb::COMM_COLL_NODE);
                    add(p.mutable_attr(), "comm_type")
                        .set_int64_val(n.op == collective_op::all_to_allv ? pb::ALL_TO_ALL : int(n.op));
                    add(p.mutable_attr(), "comm_size").set_uint64_val(n.bytes);
                    if (!n.group.empty()) add(p.mutable_attr(), "pg_name").set_string_val(n.group);
                    if (n.op == collective_op::broadcast || n.op == collective_op::reduce)
                        add(p.mutable_attr(), "comm_root").set_uint64_val(n.root);
                    add(p.mutable_attr(), "comm_dtype").set_string_val(n.dtype);
                    if (n.op == collective_op::all_to_allv) {
                        auto* list = add(p.mutable_attr(), "comm_splits").mutable_uint64_list();
                        for (std::uint64_t s : n.splits) list->add_values(s);
                    }
                    break;
                case node_kind::send:
                case node_kind::recv: {
                    const bool send = n.kind == node_kind::send;
                    p.set_type(send ? pb::COMM_SEND_NODE : pb::COMM_RECV_NODE);
                    add(p.mutable_attr(), send ? "comm_dst" : "comm_src").set_uint64_val(n.peer);
                    add(p.mutable_attr(), "comm_size").set_uint64_val(n.bytes);
                    add(p.mutable_attr(), "comm_tag").set_uint64_val(n.tag);
                    add(p.mutable_attr(), "comm_dtype").set_string_val(n.dtype);
                    break;
                }
                }
                ok = ok && google::protobuf::util::SerializeDelimitedToZeroCopyStream(p, to);
            }
            if (gzip) ok = ok && zipped->Close();
            if (!ok) throw config_error(fmt::format("workload: could not encode {}", chakra_file(prefix, r)));
        }
        write_user_file(chakra_file(prefix, r), "Chakra trace", out);
    }
}

}  // namespace trn3::workload
