// Workload graphs: Chakra traces read (one built here message by message
// with the schema's classes, plain and gzip-compressed) and written back,
// the generators' graphs, and every defect a one-line error.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <optional>

#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/delimited_message_util.h>

#include "schema/chakra_et.pb.h"
#include "trn3/core/error.h"
#include "trn3/workload/chakra.h"
#include "trn3/workload/generators.h"
#include "trn3/workload/lowering.h"

using namespace trn3;
using namespace trn3::workload;
namespace pb = trn3::chakra;

namespace {

std::string temp_prefix(const std::string& name) {
    const auto dir = std::filesystem::temp_directory_path() / "trn3_test_workload";
    std::filesystem::create_directories(dir);
    return (dir / name).string();
}

pb::Attribute* attr(pb::Node& n, const std::string& name) {
    pb::Attribute* a = n.add_attr();
    a->set_name(name);
    return a;
}

// Messages as a Chakra file holds them: each preceded by its varint length.
void write_messages(const std::string& path, const std::vector<const google::protobuf::Message*>& messages,
                    bool gzip = false, std::size_t cut_bytes = 0) {
    std::string out;
    {
        google::protobuf::io::StringOutputStream raw(&out);
        std::optional<google::protobuf::io::GzipOutputStream> zipped;
        if (gzip) zipped.emplace(&raw);
        google::protobuf::io::ZeroCopyOutputStream* to = gzip ? static_cast<decltype(to)>(&*zipped) : &raw;
        for (const auto* m : messages) REQUIRE(google::protobuf::util::SerializeDelimitedToZeroCopyStream(*m, to));
        if (gzip) REQUIRE(zipped->Close());
    }
    out.resize(out.size() - cut_bytes);
    std::ofstream(path, std::ios::binary) << out;
}

// Two ranks by hand: rank 0 computes (a GEMM), sends to rank 1 and takes
// part in an all_reduce; rank 1 receives, then runs a recorded-duration node
// that the trace lists before the node it depends on.
void hand_trace(const std::string& prefix, bool gzip) {
    pb::GlobalMetadata meta;
    meta.set_version("0.0.4");
    pb::Attribute* g = meta.add_attr();
    g->set_name("pg:world");
    g->mutable_int64_list()->add_values(0);
    g->mutable_int64_list()->add_values(1);

    pb::Node gemm, send, ar0;
    gemm.set_id(10);
    gemm.set_name("fc1");
    gemm.set_type(pb::COMP_NODE);
    attr(gemm, "kernel")->set_string_val("gemm");
    attr(gemm, "m")->set_int64_val(256);
    attr(gemm, "n")->set_int64_val(1024);
    attr(gemm, "k")->set_uint32_val(512);
    attr(gemm, "dtype")->set_string_val("bf16");
    send.set_id(11);
    send.set_name("to1");
    send.set_type(pb::COMM_SEND_NODE);
    send.add_data_deps(10);
    attr(send, "comm_dst")->set_int32_val(1);
    attr(send, "comm_size")->set_int64_val(65536);
    attr(send, "comm_tag")->set_int64_val(7);
    ar0.set_id(12);
    ar0.set_name("grads");
    ar0.set_type(pb::COMM_COLL_NODE);
    ar0.add_ctrl_deps(11);
    attr(ar0, "comm_type")->set_int64_val(pb::ALL_REDUCE);
    attr(ar0, "comm_size")->set_int64_val(1 << 20);
    attr(ar0, "pg_name")->set_string_val("world");
    write_messages(chakra_file(prefix, 0), {&meta, &gemm, &send, &ar0}, gzip);

    pb::Node late, recv, ar1;
    late.set_id(3);
    late.set_name("optimizer");
    late.set_type(pb::COMP_NODE);
    late.set_duration_micros(25);
    late.add_data_deps(2);
    recv.set_id(2);
    recv.set_name("from0");
    recv.set_type(pb::COMM_RECV_NODE);
    attr(recv, "comm_src")->set_int64_val(0);
    attr(recv, "comm_size")->set_int64_val(65536);
    attr(recv, "comm_tag")->set_int64_val(7);
    ar1 = ar0;
    ar1.set_id(4);
    ar1.clear_ctrl_deps();
    ar1.add_ctrl_deps(3);
    write_messages(chakra_file(prefix, 1), {&meta, &late, &recv, &ar1}, gzip);
}

void error_mentions(const std::function<void()>& f, const std::string& words) {
    try {
        f();
        FAIL("no error");
    } catch (const config_error& e) {
        const std::string what = e.what();
        INFO(what);
        CHECK(what.find(words) != std::string::npos);
        CHECK(what.find('\n') == std::string::npos);
    }
}

}  // namespace

TEST_CASE("a Chakra trace built message by message reads as its graph, plain and gzip-compressed") {
    for (const bool gzip : {false, true}) {
        const std::string prefix = temp_prefix(gzip ? "hand_gz" : "hand");
        hand_trace(prefix, gzip);
        const graph g = read_chakra(prefix);
        REQUIRE(g.ranks.size() == 2);
        REQUIRE(g.groups.at("world") == std::vector<unsigned>{0, 1});
        const node& gemm = g.ranks[0].nodes[0];
        CHECK(gemm.kind == node_kind::compute);
        CHECK(gemm.kernel.kind == "gemm");
        CHECK(gemm.kernel.k == 512);
        CHECK(gemm.flops == 2ull * 256 * 1024 * 512);
        CHECK(gemm.hbm_bytes == (256ull * 512 + 512 * 1024) * 2 + 256ull * 1024 * 2);
        const node& send = g.ranks[0].nodes[1];
        CHECK(send.kind == node_kind::send);
        CHECK(send.peer == 1);
        CHECK(send.tag == 7);
        CHECK(send.deps == std::vector<std::uint64_t>{10});
        CHECK(g.ranks[0].nodes[2].op == collective_op::all_reduce);
        CHECK(g.ranks[0].nodes[2].bytes == 1 << 20);
        CHECK(g.ranks[1].nodes[0].duration_ps == 25'000'000);
        CHECK(!g.ranks[1].nodes[0].kernel.timed());

        // The order honours the dependencies: rank 1's optimizer (listed
        // first) runs after the receive it depends on.
        const auto order = validate(g);
        CHECK(order[0] == std::vector<std::size_t>{0, 1, 2});
        CHECK(order[1] == std::vector<std::size_t>{1, 0, 2});
    }
}

TEST_CASE("a generated workload written as Chakra files reads back node for node") {
    moe_config c;
    c.ranks = 4;
    c.tokens = 256;
    c.hidden = 512;
    c.expert_ffn = 256;
    c.experts = 16;
    c.top_k = 2;
    c.ep = 2;
    for (const bool gzip : {false, true}) {
        const graph a = moe_layer(c);
        const std::string prefix = temp_prefix(gzip ? "moe_gz" : "moe");
        write_chakra(a, prefix, gzip);
        std::ifstream f(chakra_file(prefix, 0), std::ios::binary);
        CHECK((f.get() == 0x1f) == gzip);  // gzip's magic
        const graph b = read_chakra(prefix);
        REQUIRE(b.ranks.size() == a.ranks.size());
        CHECK(b.groups == a.groups);
        for (std::size_t r = 0; r < a.ranks.size(); ++r) {
            REQUIRE(b.ranks[r].nodes.size() == a.ranks[r].nodes.size());
            for (std::size_t i = 0; i < a.ranks[r].nodes.size(); ++i) {
                const node &x = a.ranks[r].nodes[i], &y = b.ranks[r].nodes[i];
                CHECK(x.id == y.id);
                CHECK(x.name == y.name);
                CHECK(x.kind == y.kind);
                CHECK(x.deps == y.deps);
                CHECK(x.kernel.kind == y.kernel.kind);
                CHECK(x.kernel.m == y.kernel.m);
                CHECK(x.kernel.n == y.kernel.n);
                CHECK(x.kernel.k == y.kernel.k);
                CHECK(x.kernel.dtype == y.kernel.dtype);
                CHECK(x.flops == y.flops);
                CHECK(x.op == y.op);
                CHECK(x.bytes == y.bytes);
                CHECK(x.splits == y.splits);
                CHECK(x.group == y.group);
            }
        }
        // Only the files that exist are read: a stale rank 4 would be taken.
        CHECK_FALSE(std::filesystem::exists(chakra_file(prefix, 4)));
    }
}

namespace {
// 8 ranks of 512 tokens, hidden 1,024, 32 experts, top-4.
moe_config small_moe() {
    moe_config c;
    c.ranks = 8;
    c.tokens = 512;
    c.hidden = 1024;
    c.experts = 32;
    c.top_k = 4;
    return c;
}
}  // namespace

TEST_CASE("the MoE generator routes every token to top_k experts, unevenly and the same for the same seed") {
    moe_config c = small_moe();
    const graph g = moe_layer(c);
    std::uint64_t smallest = ~0ull, largest = 0, arrived = 0;
    for (unsigned r = 0; r < 8; ++r) {
        const node& dispatch = g.ranks[r].nodes[2];
        REQUIRE(dispatch.name == "dispatch");
        REQUIRE(dispatch.op == collective_op::all_to_allv);
        // Every (token, choice) leaves once: tokens x top_k x hidden x 2 bytes.
        CHECK(std::accumulate(dispatch.splits.begin(), dispatch.splits.end(), std::uint64_t(0)) ==
              512ull * 4 * 1024 * 2);
        const node& up = g.ranks[r].nodes[3];
        smallest = std::min(smallest, up.kernel.m);
        largest = std::max(largest, up.kernel.m);
        arrived += up.kernel.m;
        CHECK(up.flops == 2 * up.kernel.m * 2 * c.expert_ffn * c.hidden);
        // The combine sends back exactly what arrived, in bf16.
        const node& combine = g.ranks[r].nodes[6];
        CHECK(std::accumulate(combine.splits.begin(), combine.splits.end(), std::uint64_t(0)) ==
              up.kernel.m * 1024 * 2);
    }
    CHECK(arrived == 8ull * 512 * 4);
    CHECK(largest > smallest + 100);  // skewed routing: uneven loads
    const graph again = moe_layer(c);
    CHECK(again.ranks[3].nodes[2].splits == g.ranks[3].nodes[2].splits);
    c.seed = 2;
    CHECK(moe_layer(c).ranks[3].nodes[2].splits != g.ranks[3].nodes[2].splits);
    // Forward 8 nodes, backward 11 (one rank set: no expert gradient all_reduce).
    CHECK(g.ranks[0].nodes.size() == 19);
}

TEST_CASE("the dense generator lays out tp x pp x dp and counts the model's FLOPs") {
    dense_config c;
    c.ranks = 8;
    c.tp = 2;
    c.pp = 2;
    c.dp = 2;
    c.hidden = 1024;
    c.heads = 8;
    c.kv_heads = 8;
    c.ffn = 4096;
    c.layers = 4;
    c.seq = 512;
    c.micro_batches = 2;
    const graph g = dense_step(c);
    CHECK(g.groups.size() == 4 + 4);  // tp groups per (d, p), dp groups per (p, t)
    CHECK(g.groups.at("tp1.0") == std::vector<unsigned>{4, 5});
    CHECK(g.groups.at("dp1.0") == std::vector<unsigned>{2, 6});
    // Matmul FLOPs per rank: per layer and micro-batch, forward 2 x tokens x
    // (QKV + O + up + down weights / tp) + attention 4 x seq^2 x hidden / tp;
    // backward twice both; 2 layers per stage, 2 micro-batches.
    const std::uint64_t t = 512, h = 1024, f = 4096;
    const std::uint64_t weights = (h * 3 * h + h * h + h * 2 * f + f * h) / 2;
    const std::uint64_t forward = 2 * t * weights + 4 * t * t * h / 2;
    std::uint64_t flops = 0;
    unsigned sends = 0, recvs = 0;
    for (const node& n : g.ranks[2].nodes) {  // stage 1 of replica 0
        flops += n.flops;
        sends += n.kind == node_kind::send;
        recvs += n.kind == node_kind::recv;
    }
    CHECK(flops == 3 * forward * 2 * 2);
    CHECK(recvs == 2);  // activations of each micro-batch
    CHECK(sends == 2);  // their gradients back
}

TEST_CASE("bad traces and configurations are one-line errors naming the file, node or param") {
    const std::string prefix = temp_prefix("bad");
    pb::GlobalMetadata meta;
    pb::Node a, b;
    a.set_id(1);
    a.set_name("a");
    a.set_type(pb::COMP_NODE);
    b = a;
    b.set_id(2);
    b.set_name("b");
    b.add_data_deps(1);

    std::ofstream(chakra_file(prefix, 0), std::ios::binary).flush();  // empty
    error_mentions([&] { read_chakra(prefix, 1); }, "bad.0.et: empty");

    write_messages(chakra_file(prefix, 0), {&meta, &a, &b}, false, 3);
    error_mentions([&] { read_chakra(prefix, 1); }, "node message 2 is truncated or malformed");

    std::ofstream(chakra_file(prefix, 0), std::ios::binary) << std::string("\x05garbage-and-more", 17);
    error_mentions([&] { read_chakra(prefix, 1); }, "bad.0.et: malformed global metadata");

    pb::Node odd = b;
    odd.set_type(pb::NodeType(42));
    write_messages(chakra_file(prefix, 0), {&meta, &a, &odd});
    error_mentions([&] { read_chakra(prefix, 1); }, "node 2 ('b'): unknown node type 42");

    pb::Node loop = a;
    loop.add_ctrl_deps(2);
    write_messages(chakra_file(prefix, 0), {&meta, &loop, &b});
    error_mentions([&] { read_chakra(prefix, 1); }, "rank 0 node 1 ('a'): its dependencies form a cycle");

    pb::Node orphan = b;
    orphan.add_data_deps(99);
    write_messages(chakra_file(prefix, 0), {&meta, &a, &orphan});
    error_mentions([&] { read_chakra(prefix, 1); }, "depends on node 99");

    pb::Node gather = a;
    gather.set_type(pb::COMM_COLL_NODE);
    attr(gather, "comm_type")->set_int64_val(pb::GATHER);
    write_messages(chakra_file(prefix, 0), {&meta, &gather});
    error_mentions([&] { read_chakra(prefix, 1); }, "comm_type 3 is not supported");

    pb::Node bad_kernel = a;
    attr(bad_kernel, "kernel")->set_string_val("conv2d");
    write_messages(chakra_file(prefix, 0), {&meta, &bad_kernel});
    error_mentions([&] { read_chakra(prefix, 1); }, "unknown kernel 'conv2d'");

    pb::Node lonely = a;
    lonely.set_type(pb::COMM_SEND_NODE);
    attr(lonely, "comm_dst")->set_int64_val(1);
    write_messages(chakra_file(prefix, 0), {&meta, &lonely});
    write_messages(chakra_file(prefix, 1), {&meta});
    error_mentions([&] { read_chakra(prefix, 2); }, "send to rank 1 (tag 0) has no matching receive");

    pb::Node negative = a;
    attr(negative, "num_ops")->set_int64_val(-5);
    write_messages(chakra_file(prefix, 0), {&meta, &negative});
    error_mentions([&] { read_chakra(prefix, 1); }, "attribute num_ops is not a whole number");

    error_mentions([&] { read_chakra(temp_prefix("missing")); }, "no Chakra trace");

    // Collectives that do not match across the group.
    graph g;
    g.ranks.resize(2);
    for (unsigned r = 0; r < 2; ++r) {
        node n;
        n.kind = node_kind::collective;
        n.bytes = 1024 * (r + 1);
        g.ranks[r].nodes.push_back(n);
    }
    error_mentions([&] { validate(g); }, "collective 0 differs");

    dense_config d;
    d.ranks = 8;
    d.tp = 3;
    error_mentions([&] { dense_step(d); }, "tp 3 x pp 1 x dp 1 = 3 are not the 8 ranks");
    d.tp = 8;
    d.heads = 12;
    error_mentions([&] { dense_step(d); }, "param workload.dense.heads = 12: not a multiple of tp");
    moe_config m;
    m.ranks = 8;
    m.experts = 20;
    error_mentions([&] { moe_layer(m); }, "param workload.moe.experts = 20");
    m.experts = 16;
    m.ep = 3;
    error_mentions([&] { moe_layer(m); }, "param workload.moe.ep = 3");
}

TEST_CASE("a step whose ranks meet in opposite orders is refused before it runs, not left to hang") {
    // Each rank sends before it receives: both sends wait for a receive that never comes first.
    graph g;
    g.ranks.resize(2);
    for (unsigned r = 0; r < 2; ++r) {
        node send, recv;
        send.id = 1;
        send.name = "send";
        send.kind = node_kind::send;
        send.peer = 1 - r;
        send.bytes = 64;
        recv.id = 2;
        recv.name = "recv";
        recv.kind = node_kind::recv;
        recv.peer = 1 - r;
        recv.bytes = 64;
        recv.deps = {1};
        g.ranks[r].nodes = {send, recv};
    }
    error_mentions([&] { validate(g); }, "node 1 ('send'): waits forever");
    // Rank 1 receiving first makes it run.
    std::swap(g.ranks[1].nodes[0].kind, g.ranks[1].nodes[1].kind);
    std::swap(g.ranks[1].nodes[0].name, g.ranks[1].nodes[1].name);
    CHECK_NOTHROW(validate(g));

    // Two groups met in opposite orders.
    graph h;
    h.ranks.resize(2);
    h.groups = {{"a", {0, 1}}, {"b", {0, 1}}};
    for (unsigned r = 0; r < 2; ++r)
        for (unsigned k = 0; k < 2; ++k) {
            node c;
            c.id = k;
            c.name = std::string("ar") + char('0' + k);
            c.kind = node_kind::collective;
            c.bytes = 1024;
            c.group = (k == r) ? "a" : "b";
            if (k == 1) c.deps = {0};
            h.ranks[r].nodes.push_back(c);
        }
    error_mentions([&] { validate(h); }, "waits forever");
}

TEST_CASE("kernels lower onto the cores at the generators' default sizes, and shapes past any model are refused") {
    // The MoE default's experts' GEMM (4,096 tokens x top-8 arriving) and a dense up projection at tp 1.
    for (const kernel_spec& k :
         {kernel_spec{"gemm", 32768, 4096, 7168, 1, "bf16"}, kernel_spec{"gemm", 4096, 57344, 8192, 1, "bf16"},
          kernel_spec{"gemm", 7168, 4096, 32768, 1, "mxfp8"}, kernel_spec{"attention", 4096, 4096, 128, 64, "bf16"},
          kernel_spec{"rmsnorm", 32768, 7168, 0, 1, "bf16"}}) {
        INFO(k.kind << " " << k.m << "x" << k.n << "x" << k.k);
        const lowered_kernel l = lower(k, 8, 0x3400000000ull, 2ull << 30);
        CHECK(!l.launches.empty());
        CHECK(l.launches[0].cores.size() == 8);
    }
    graph g;
    g.ranks.resize(1);
    node n;
    n.kernel = {"attention", 1 << 24, 1 << 24, 1 << 15, 1 << 24, "bf16"};
    g.ranks[0].nodes = {n};
    error_mentions([&] { validate(g); }, "past 2^60 multiply-adds");
    n.kernel = {};
    n.duration_ps = ~0ull;
    g.ranks[0].nodes = {n};
    error_mentions([&] { validate(g); }, "over an hour");
}

TEST_CASE("attention lowers to one flash-style block per head and 128 queries, over all the keys") {
    // 64 heads x 4,096 queries x 4,096 keys, head dimension 128: 64 x 32 blocks of 128 x 4,096 keys.
    const lowered_kernel l =
        lower(kernel_spec{"attention", 4096, 4096, 128, 64, "bf16"}, 8, 0x3400000000ull, 2ull << 30);
    REQUIRE(l.launches.size() == 1);
    CHECK(l.launches[0].cores.size() == 8);
    CHECK(l.launches[0].repeat == 64 * 32 / 8);
    CHECK(l.key == "attention 4096x128 x2048 blocks on 8 cores");
    CHECK(l.text.find("flash, blocks of 512 keys") != std::string::npos);
    // Each core's program is the flash kernel: 8 scores matmuls and 32 P V matmuls.
    unsigned matmuls = 0;
    for (const auto& i : l.launches[0].cores[0].on(isa::engine::tensor).code())
        matmuls += i.op == static_cast<std::uint8_t>(isa::opcode::matmul);
    CHECK(matmuls == 8 + 32);
    // Up to 512 keys, the one-pass kernel; head dimensions past 128 in parts.
    const lowered_kernel short_keys = lower(kernel_spec{"attention", 128, 300, 256, 2, "bf16"}, 8, 0, 2ull << 30);
    CHECK(short_keys.key == "attention 384x128 x4 blocks on 4 cores");
    CHECK(short_keys.text.find("flash") == std::string::npos);
}

TEST_CASE("an MX step quantizes every operand computed at run time just before its GEMM") {
    moe_config c = small_moe();
    c.dtype = "mxfp8";
    const graph g = moe_layer(c);
    const rank_graph& r = g.ranks[0];
    std::map<std::string, const node*> by_name;
    for (const node& n : r.nodes) by_name[n.name] = &n;
    // Forward: the dispatched tokens and the SwiGLU output; backward: each
    // dgrad's gradient (A), each wgrad's activation and gradient (A and B).
    // The router stays bf16.
    std::vector<std::string> quantized;
    for (const node& n : r.nodes)
        if (n.kernel.kind == "mx_quantize") quantized.push_back(n.name);
    CHECK(quantized ==
          std::vector<std::string>{"experts.gate_up.quantize_a", "experts.down.quantize_a",
                                   "bwd.experts.down.dgrad.quantize_a", "bwd.experts.down.wgrad.quantize_a",
                                   "bwd.experts.down.wgrad.quantize_b", "bwd.experts.gate_up.dgrad.quantize_a",
                                   "bwd.experts.gate_up.wgrad.quantize_a", "bwd.experts.gate_up.wgrad.quantize_b"});
    const node& up = *by_name.at("experts.gate_up");
    const node& q = *by_name.at("experts.gate_up.quantize_a");
    CHECK(up.deps == std::vector<std::uint64_t>{q.id});
    CHECK(q.deps == std::vector<std::uint64_t>{by_name.at("dispatch")->id});
    // Tokens x hidden values in blocks of 32 along hidden: bf16 in, a byte and 1/32 of a scale byte out.
    CHECK(q.kernel.m == up.kernel.m);
    CHECK(q.kernel.n == 1024);
    CHECK(q.hbm_bytes == up.kernel.m * 1024 * 3 + up.kernel.m * 32);
    CHECK(q.flops == 0);
    // A weight gradient's B operand (the gradient, [rows][hidden]) is blocked along the rows too.
    const node& wb = *by_name.at("bwd.experts.down.wgrad.quantize_b");
    CHECK(wb.kernel.m == by_name.at("bwd.experts.down.wgrad")->kernel.n);
    CHECK(wb.kernel.n == by_name.at("bwd.experts.down.wgrad")->kernel.k);
    // bf16: no quantize nodes.
    c.dtype = "bf16";
    const graph plain = moe_layer(c);
    for (const node& n : plain.ranks[0].nodes) CHECK(n.kernel.kind != "mx_quantize");
    // The quantize kernel lowers onto the cores: 1,024 values (2 K tiles of 512) x the rows over 8 cores.
    const lowered_kernel l =
        lower(kernel_spec{"mx_quantize", 4096, 1000, 0, 1, "mxfp4"}, 8, 0x3400000000ull, 2ull << 30);
    REQUIRE(l.launches.size() == 1);
    CHECK(l.launches[0].cores.size() == 8);
    CHECK(l.key == "mx_quantize mxfp4 1024x4096 x1 on 8 cores");
    // A type the quantize kernel does not write is refused.
    graph bad;
    bad.ranks.resize(1);
    node n;
    n.kernel = {"mx_quantize", 128, 512, 0, 1, "bf16"};
    bad.ranks[0].nodes = {n};
    error_mentions([&] { validate(bad); }, "mx_quantize writes mxfp8 or mxfp4, not 'bf16'");
}
