#include "trn3/spec/isa.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace trn3::isa {

unsigned dtype_bytes(dtype t) {
    switch (t) {
    case dtype::fp32:
    case dtype::int32: return 4;
    case dtype::bf16:
    case dtype::fp16: return 2;
    case dtype::e4m3fn:
    case dtype::e5m2:
    case dtype::e2m1: return 1;
    }
    return 0;
}

std::uint64_t free_elements(const access_pattern& ap) {
    std::uint64_t n = 1;
    for (unsigned d = 0; d < ap.dims && d < max_free_dims; ++d) n *= ap.num[d];
    return n;
}

namespace {
const char* opcode_names[] = {"nop", "halt", "set_reg", "add_reg", "branch_lt", "sem_increment"};
const char* data_names[] = {"memset",        "tensor_copy", "iota",        "tensor_tensor", "tensor_scalar",
                            "tensor_reduce", "activation",  "quantize_mx", "affine_select"};
const char* engine_names[] = {"tensor", "vector", "scalar", "gpsimd", "sync"};
const char* space_names[] = {"sbuf", "psum", "hbm"};
const char* dtype_names[] = {"fp32", "bf16", "fp16", "e4m3fn", "e5m2", "int32", "e2m1"};
const char* alu_names[] = {"add", "subtract", "multiply", "max", "min", "bypass"};
const char* function_names[] = {"copy", "exp",     "relu",   "gelu",  "silu",
                                "tanh", "sigmoid", "square", "rsqrt", "reciprocal"};
const char* sparsity_names[] = {"dense", "4:8", "4:16"};

template <std::size_t N>
int index_of(const char* (&table)[N], const std::string& s) {
    for (std::size_t i = 0; i < N; ++i)
        if (s == table[i]) return static_cast<int>(i);
    return -1;
}
}  // namespace

const char* name(opcode o) {
    const auto v = static_cast<unsigned>(o);
    if (v <= 0x05) return opcode_names[v];
    if (v >= 0x10 && v <= 0x18) return data_names[v - 0x10];
    if (o == opcode::matmul) return "matmul";
    if (o == opcode::transpose) return "transpose";
    if (o == opcode::dma) return "dma";
    return "?";
}
const char* name(engine e) { return static_cast<unsigned>(e) < 5 ? engine_names[static_cast<unsigned>(e)] : "?"; }
const char* name(space s) { return static_cast<unsigned>(s) < 3 ? space_names[static_cast<unsigned>(s)] : "?"; }
const char* name(dtype t) { return static_cast<unsigned>(t) < 7 ? dtype_names[static_cast<unsigned>(t)] : "?"; }
const char* name(alu a) { return static_cast<unsigned>(a) < 6 ? alu_names[static_cast<unsigned>(a)] : "?"; }
const char* name(function f) { return static_cast<unsigned>(f) < 10 ? function_names[static_cast<unsigned>(f)] : "?"; }
const char* name(sparsity s) { return static_cast<unsigned>(s) < 3 ? sparsity_names[static_cast<unsigned>(s)] : "?"; }

unsigned sparsity_group(sparsity s) {
    switch (s) {
    case sparsity::s4_8: return 8;
    case sparsity::s4_16: return 16;
    default: return 0;
    }
}

namespace {

bool unused(const access_pattern& ap) {
    access_pattern zero{};
    return std::memcmp(&ap, &zero, sizeof ap) == 0;
}

std::string float_text(float v) { return fmt::format("{:.9g}", v); }

// Printed unless its bits are all zero (so -0.0 is printed and kept).
bool float_bits_nonzero(float v) {
    std::uint32_t u;
    std::memcpy(&u, &v, 4);
    return u != 0;
}

// sbuf:bf16:p0x128@0x400+r3{1x512,64x4}/s4096
std::string ap_text(const access_pattern& ap) {
    std::string s = fmt::format("{}:{}:p{}x{}@0x{:x}", name(static_cast<space>(ap.space)),
                                name(static_cast<dtype>(ap.dtype)), ap.start_partition, ap.partitions, ap.address);
    if (ap.base_reg != no_reg) s += fmt::format("+r{}", ap.base_reg);
    s += "{";
    for (unsigned d = 0; d < ap.dims && d < max_free_dims; ++d)
        s += fmt::format("{}{}x{}", d ? "," : "", ap.step[d], ap.num[d]);
    s += "}";
    if (ap.partition_stride) s += fmt::format("/s{}", ap.partition_stride);
    return s;
}

[[noreturn]] void bad(const std::string& what, const std::string& text) {
    throw std::invalid_argument(what + " in '" + text + "'");
}

// A whole number, decimal or 0x hex. strtoull alone would take "-1" as
// 2^64 - 1 (fields never hold spaces: they are split on them).
std::uint64_t number(const std::string& s, const std::string& context) {
    if (s.empty()) bad("missing number", context);
    if (!std::isdigit(static_cast<unsigned char>(s[0]))) bad("bad number '" + s + "'", context);
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(s.c_str(), &end, 0);
    if (*end != '\0' || errno) bad("bad number '" + s + "'", context);
    return v;
}

// A number for an encoding field of type T: refused if it does not fit,
// never wrapped (s767 would have been s255, the encoding's "none").
template <typename T>
T field_value(const std::string& s, const char* what, const std::string& context) {
    const std::uint64_t v = number(s, context);
    if (v > std::numeric_limits<T>::max())
        bad(fmt::format("{} {} does not fit its {}-bit field", what, v, 8 * sizeof(T)), context);
    return static_cast<T>(v);
}

// A register or semaphore index: 0xff in the encoding means none, so it
// cannot be written as a number.
std::uint8_t index_field(const std::string& s, const char* what, const std::string& context) {
    static_assert(no_reg == 0xff && no_semaphore == 0xff, "one 'none' for both");
    const auto v = field_value<std::uint8_t>(s, what, context);
    if (v == 0xff) bad(fmt::format("{} 255 is the encoding's 'none'", what), context);
    return v;
}

// A signed step: decimal or 0x hex, within 32 bits.
std::int32_t step_field(const std::string& s, const std::string& context) {
    const bool negative = !s.empty() && s[0] == '-';
    const std::uint64_t magnitude = number(negative ? s.substr(1) : s, context);
    const std::uint64_t limit = negative ? std::uint64_t{1} << 31 : (std::uint64_t{1} << 31) - 1;
    if (magnitude > limit) bad("step " + s + " does not fit its 32-bit field", context);
    return static_cast<std::int32_t>(negative ? -static_cast<std::int64_t>(magnitude)
                                              : static_cast<std::int64_t>(magnitude));
}

// A float as the disassembler writes it (or any strtof form), nothing after.
float float_field(const std::string& s, const std::string& context) {
    if (s.empty()) bad("missing number", context);
    char* end = nullptr;
    const float v = std::strtof(s.c_str(), &end);
    if (*end != '\0') bad("bad number '" + s + "'", context);
    return v;
}

access_pattern parse_ap(const std::string& text) {
    access_pattern ap{};
    ap.base_reg = no_reg;
    std::string t = text;
    auto take = [&](char sep) {
        auto at = t.find(sep);
        if (at == std::string::npos) bad(std::string("expected '") + sep + "'", text);
        std::string head = t.substr(0, at);
        t = t.substr(at + 1);
        return head;
    };
    int sp = index_of(space_names, take(':'));
    int dt = index_of(dtype_names, take(':'));
    if (sp < 0) bad("unknown space", text);
    if (dt < 0) bad("unknown dtype", text);
    ap.space = static_cast<std::uint8_t>(sp);
    ap.dtype = static_cast<std::uint8_t>(dt);
    if (t.empty() || t[0] != 'p') bad("expected p<start>x<partitions>", text);
    t = t.substr(1);
    ap.start_partition = field_value<std::uint8_t>(take('x'), "start partition", text);
    ap.partitions = field_value<std::uint8_t>(take('@'), "partitions", text);
    std::string addr = take('{');
    auto plus = addr.find("+r");
    if (plus != std::string::npos) {
        ap.base_reg = index_field(addr.substr(plus + 2), "register", text);
        addr = addr.substr(0, plus);
    }
    ap.address = number(addr, text);
    std::string dims = take('}');
    std::stringstream ds(dims);
    std::string d;
    while (std::getline(ds, d, ',')) {
        if (ap.dims == max_free_dims) bad("more than four free dimensions", text);
        auto x = d.find('x');
        if (x == std::string::npos) bad("expected step x num", text);
        ap.step[ap.dims] = step_field(d.substr(0, x), text);
        ap.num[ap.dims] = field_value<std::uint16_t>(d.substr(x + 1), "count", text);
        ++ap.dims;
    }
    if (!t.empty()) {
        if (t.rfind("/s", 0) != 0) bad("unexpected '" + t + "'", text);
        ap.partition_stride = field_value<std::uint32_t>(t.substr(2), "partition stride", text);
    }
    return ap;
}

}  // namespace

std::string disassemble(const instruction& i) {
    std::string s = fmt::format("{} {}", name(static_cast<opcode>(i.op)), name(static_cast<engine>(i.engine)));
    if (i.flags) s += fmt::format(" flags=0x{:x}", i.flags);
    if (i.alu) s += fmt::format(" alu={}", name(static_cast<alu>(i.alu)));
    if (i.function) s += fmt::format(" func={}", name(static_cast<function>(i.function)));
    if (i.reg_a != no_reg) s += fmt::format(" reg=r{}", i.reg_a);
    if (i.wait_sem != no_semaphore) s += fmt::format(" wait=s{}>={}", i.wait_sem, i.wait_value);
    if (i.signal_sem != no_semaphore) s += fmt::format(" signal=s{}+{}", i.signal_sem, i.signal_add);
    if (!unused(i.dst)) s += " dst=" + ap_text(i.dst);
    if (!unused(i.src0)) s += " src0=" + ap_text(i.src0);
    if (!unused(i.src1)) s += " src1=" + ap_text(i.src1);
    if (float_bits_nonzero(i.scalar)) s += " scalar=" + float_text(i.scalar);
    if (float_bits_nonzero(i.scalar2)) s += " scalar2=" + float_text(i.scalar2);
    if (i.imm) s += fmt::format(" imm={}", i.imm);
    if (i.target) s += fmt::format(" target={}", i.target);
    if (i.sparsity) s += fmt::format(" sparse={}", name(static_cast<sparsity>(i.sparsity)));
    if (i.meta) s += fmt::format(" meta={}", i.meta);
    return s;
}

instruction assemble(const std::string& line) {
    instruction i{};
    i.reg_a = no_reg;
    i.wait_sem = no_semaphore;
    i.signal_sem = no_semaphore;
    std::stringstream ss(line);
    std::string op, eng, field;
    ss >> op >> eng;
    bool found = false;
    for (unsigned v = 0; v < 256 && !found; ++v)
        if (op == name(static_cast<opcode>(v)) && op != "?") {
            i.op = static_cast<std::uint8_t>(v);
            found = true;
        }
    if (!found) bad("unknown opcode '" + op + "'", line);
    const int e = index_of(engine_names, eng);
    if (e < 0) bad("unknown engine '" + eng + "'", line);
    i.engine = static_cast<std::uint8_t>(e);
    while (ss >> field) {
        auto eq = field.find('=');
        if (eq == std::string::npos) bad("expected key=value, got '" + field + "'", line);
        const std::string key = field.substr(0, eq), value = field.substr(eq + 1);
        if (key == "flags") i.flags = field_value<std::uint8_t>(value, "flags", line);
        else if (key == "alu") {
            const int a = index_of(alu_names, value);
            if (a < 0) bad("unknown alu '" + value + "'", line);
            i.alu = static_cast<std::uint8_t>(a);
        } else if (key == "func") {
            const int f = index_of(function_names, value);
            if (f < 0) bad("unknown function '" + value + "'", line);
            i.function = static_cast<std::uint8_t>(f);
        } else if (key == "reg") {
            if (value.size() < 2 || value[0] != 'r') bad("expected r<n>", line);
            i.reg_a = index_field(value.substr(1), "register", line);
        } else if (key == "wait") {
            auto ge = value.find(">=");
            if (value[0] != 's' || ge == std::string::npos) bad("expected s<n>>=<value>", line);
            i.wait_sem = index_field(value.substr(1, ge - 1), "semaphore", line);
            i.wait_value = field_value<std::uint32_t>(value.substr(ge + 2), "wait value", line);
        } else if (key == "signal") {
            auto p = value.find('+');
            if (value[0] != 's' || p == std::string::npos) bad("expected s<n>+<add>", line);
            i.signal_sem = index_field(value.substr(1, p - 1), "semaphore", line);
            i.signal_add = field_value<std::uint32_t>(value.substr(p + 1), "signal add", line);
        } else if (key == "dst") i.dst = parse_ap(value);
        else if (key == "src0") i.src0 = parse_ap(value);
        else if (key == "src1") i.src1 = parse_ap(value);
        else if (key == "scalar") i.scalar = float_field(value, line);
        else if (key == "scalar2") i.scalar2 = float_field(value, line);
        else if (key == "imm") i.imm = field_value<std::uint32_t>(value, "imm", line);
        else if (key == "target") i.target = field_value<std::uint32_t>(value, "target", line);
        else if (key == "sparse") {
            const int v = index_of(sparsity_names, value);
            if (v < 0) bad("unknown sparsity '" + value + "' (dense, 4:8, 4:16)", line);
            i.sparsity = static_cast<std::uint8_t>(v);
        } else if (key == "meta") i.meta = field_value<std::uint32_t>(value, "meta", line);
        else bad("unknown field '" + key + "'", line);
    }
    return i;
}

std::vector<instruction> assemble_stream(const std::string& text) {
    // Two passes: labels first, then instructions with @label targets resolved.
    std::vector<std::pair<unsigned, std::string>> lines;  // (line number, text)
    std::map<std::string, std::uint32_t> labels;
    std::stringstream ss(text);
    std::string raw;
    unsigned number = 0;
    while (std::getline(ss, raw)) {
        ++number;
        std::string line = raw.substr(0, raw.find('#'));
        line.erase(0, line.find_first_not_of(" \t"));
        line.erase(line.find_last_not_of(" \t\r") + 1);
        if (line.empty()) continue;
        if (line.back() == ':' && line.find(' ') == std::string::npos) {
            const std::string name = line.substr(0, line.size() - 1);
            if (!labels.emplace(name, static_cast<std::uint32_t>(lines.size())).second)
                throw std::invalid_argument(fmt::format("line {}: label '{}' defined twice", number, name));
            continue;
        }
        lines.emplace_back(number, line);
    }
    std::vector<instruction> code;
    for (auto& [n, line] : lines) {
        auto at = line.find("target=@");
        if (at != std::string::npos) {
            const auto end = line.find(' ', at);
            const std::string name = line.substr(at + 8, end == std::string::npos ? std::string::npos : end - at - 8);
            auto it = labels.find(name);
            if (it == labels.end()) throw std::invalid_argument(fmt::format("line {}: unknown label '{}'", n, name));
            line.replace(at, (end == std::string::npos ? line.size() : end) - at, fmt::format("target={}", it->second));
        }
        try {
            code.push_back(assemble(line));
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(fmt::format("line {}: {}", n, e.what()));
        }
    }
    return code;
}

std::string disassemble_stream(const std::vector<instruction>& code) {
    // Targets inside the stream get labels; one past its end (a label after
    // the last instruction) or beyond stays a number, as no line carries its
    // label (found by fuzz/targets/isa_stream.cpp: "unknown label 'L2'").
    std::set<std::uint32_t> targets;
    for (const instruction& i : code)
        if (static_cast<opcode>(i.op) == opcode::branch_lt && i.target < code.size()) targets.insert(i.target);
    std::string out;
    for (std::size_t index = 0; index < code.size(); ++index) {
        if (targets.count(static_cast<std::uint32_t>(index))) out += fmt::format("L{}:\n", index);
        std::string line = disassemble(code[index]);
        if (static_cast<opcode>(code[index].op) == opcode::branch_lt && targets.count(code[index].target)) {
            const std::string plain = fmt::format("target={}", code[index].target);
            const auto at = line.find(plain);
            if (at != std::string::npos) line.replace(at, plain.size(), fmt::format("target=@L{}", code[index].target));
        }
        out += "    " + line + "\n";
    }
    return out;
}

}  // namespace trn3::isa
