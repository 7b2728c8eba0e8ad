#include "trn3/mcu/gdb_stub.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "trn3/core/error.h"

namespace trn3::mcu {

namespace {
std::string hex32(std::uint32_t v) {  // target byte order: little-endian
    return fmt::format("{:02x}{:02x}{:02x}{:02x}", v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >> 24);
}
std::uint32_t parse_hex32_le(const std::string& s, std::size_t at) {
    std::uint32_t v = 0;
    for (unsigned i = 0; i < 4; ++i)
        v |= static_cast<std::uint32_t>(std::stoul(s.substr(at + 2 * i, 2), nullptr, 16)) << (8 * i);
    return v;
}
constexpr unsigned pc_regnum = 32, csr_regbase = 65;  // GDB's RISC-V numbering: CSR n is register 65 + n

// The CSRs the hart implements (rv32_hart.h), as the target description
// names them; a test checks the list against the hart's csr_read.
struct described_csr {
    const char* name;
    std::uint16_t number;
};
constexpr described_csr described_csrs[] = {
    {"mstatus", csr_mstatus},     {"misa", csr_misa},           {"mie", csr_mie},
    {"mtvec", csr_mtvec},         {"mscratch", csr_mscratch},   {"mepc", csr_mepc},
    {"mcause", csr_mcause},       {"mtval", csr_mtval},         {"mip", csr_mip},
    {"mcycle", csr_mcycle},       {"minstret", csr_minstret},   {"mcycleh", csr_mcycleh},
    {"minstreth", csr_minstreth}, {"cycle", csr_cycle},         {"time", csr_time},
    {"instret", csr_instret},     {"cycleh", csr_cycleh},       {"timeh", csr_timeh},
    {"instreth", csr_instreth},   {"mvendorid", csr_mvendorid}, {"marchid", csr_marchid},
    {"mimpid", csr_mimpid},       {"mhartid", csr_mhartid},
};

// The target description GDB reads with qXfer:features:read:target.xml: the
// architecture, the core registers (x0-x31 and pc, numbered 0-32 as in the g
// packet) and the CSRs (numbered csr_regbase + their CSR number), all 32 bits.
// CSRs are not saved and restored around calls GDB makes (counters, read-only ones).
std::string make_target_xml() {
    std::string x = "<?xml version=\"1.0\"?>\n<!DOCTYPE target SYSTEM \"gdb-target.dtd\">\n"
                    "<target version=\"1.0\">\n  <architecture>riscv:rv32</architecture>\n"
                    "  <feature name=\"org.gnu.gdb.riscv.cpu\">\n";
    for (unsigned i = 0; i < 32; ++i)
        x += fmt::format("    <reg name=\"x{}\" bitsize=\"32\" regnum=\"{}\" type=\"{}\"/>\n", i, i,
                         i == 1   ? "code_ptr"
                         : i == 2 ? "data_ptr"
                                  : "int");
    x += fmt::format("    <reg name=\"pc\" bitsize=\"32\" regnum=\"{}\" type=\"code_ptr\"/>\n", pc_regnum);
    x += "  </feature>\n  <feature name=\"org.gnu.gdb.riscv.csr\">\n";
    for (const auto& c : described_csrs)
        x += fmt::format(
            "    <reg name=\"{}\" bitsize=\"32\" regnum=\"{}\" type=\"int\" group=\"csr\" save-restore=\"no\"/>\n",
            c.name, csr_regbase + c.number);
    return x + "  </feature>\n</target>\n";
}

// qXfer:features:read:<annex>:<offset>,<length>: the part of the document
// from offset, at most length bytes as sent (binary-escaped), 'm' before
// more, 'l' before the last part.
std::string read_features(const std::string& request) {
    static const std::string target_xml = make_target_xml();
    const std::string args = request.substr(std::strlen("qXfer:features:read:"));
    const auto colon = args.rfind(':'), comma = args.rfind(',');
    if (colon == std::string::npos || comma == std::string::npos || comma < colon) return "E01";
    if (args.substr(0, colon) != "target.xml") return "E00";  // no such annex
    const std::size_t offset = std::stoul(args.substr(colon + 1, comma - colon - 1), nullptr, 16);
    const std::size_t length = std::stoul(args.substr(comma + 1), nullptr, 16);
    if (offset > target_xml.size()) return "E01";
    std::string part;
    std::size_t at = offset;
    for (; at < target_xml.size(); ++at) {
        const char c = target_xml[at];
        const bool escaped = c == '$' || c == '#' || c == '}' || c == '*';
        if (part.size() + (escaped ? 2 : 1) > length) break;
        if (escaped) part += {'}', static_cast<char>(c ^ 0x20)};
        else part += c;
    }
    return (at < target_xml.size() ? "m" : "l") + part;
}
}  // namespace

gdb_stub::gdb_stub(rv32_hart& hart, std::uint16_t port) : hart_(hart), port_(port) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (listener_ < 0) throw config_error(fmt::format("gdb stub: cannot create a socket: {}", std::strerror(errno)));
    const int one = 1;
    ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port_);
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0 || ::listen(listener_, 1) < 0) {
        const std::string why = std::strerror(errno);
        ::close(listener_);
        throw config_error(fmt::format("gdb stub: cannot listen on localhost:{}: {}", port_, why));
    }
}

gdb_stub::~gdb_stub() {
    if (client_ >= 0) ::close(client_);
    if (listener_ >= 0) ::close(listener_);
}

void gdb_stub::accept() {
    client_ = ::accept(listener_, nullptr, nullptr);
    const int one = 1;
    if (client_ >= 0) ::setsockopt(client_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    hart_.debugger_attached = client_ >= 0;
}

bool gdb_stub::read_packet(std::string& packet) {
    // $<data>#<checksum>; acknowledged with '+'. A lone 0x03 is an interrupt.
    char c;
    for (;;) {
        if (::recv(client_, &c, 1, 0) != 1) return false;
        if (c == '$') break;
        if (c == 0x03) {
            packet = "\x03";
            return true;
        }
    }
    packet.clear();
    unsigned sum = 0;
    while (::recv(client_, &c, 1, 0) == 1 && c != '#') {
        packet += c;
        sum += static_cast<unsigned char>(c);
    }
    char given[3] = {};
    if (::recv(client_, given, 2, MSG_WAITALL) != 2) return false;
    if (std::strtoul(given, nullptr, 16) != (sum & 0xff)) {  // corrupted: ask again
        ::send(client_, "-", 1, 0);
        return read_packet(packet);
    }
    ::send(client_, "+", 1, 0);
    return true;
}

void gdb_stub::send(const std::string& payload) {
    unsigned sum = 0;
    for (char c : payload) sum += static_cast<unsigned char>(c);
    const std::string frame = fmt::format("${}#{:02x}", payload, sum & 0xff);
    ::send(client_, frame.data(), frame.size(), 0);
    char ack;
    ::recv(client_, &ack, 1, 0);  // '+' (or '-': a retransmission request we do not expect on TCP)
}

void gdb_stub::disconnect() {
    if (client_ >= 0) ::close(client_);
    client_ = -1;
    hart_.debugger_attached = false;
    hart_.step_over_breakpoint = false;
}

bool gdb_stub::interrupted() {
    pollfd p{client_, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    char c;
    return ::recv(client_, &c, 1, MSG_PEEK) == 1 && c == 0x03 && ::recv(client_, &c, 1, 0) == 1;
}

gdb_stub::action gdb_stub::stopped(int signal) {
    send(fmt::format("S{:02x}", signal));
    return serve();
}

gdb_stub::action gdb_stub::serve() {
    std::string packet;
    while (read_packet(packet)) {
        action act = action::resume;
        bool done = false;
        const std::string reply = answer(packet, act, done);
        if (done && act == action::detach) send(reply);
        if (done && (act == action::detach || act == action::kill)) disconnect();
        if (done) return act;
        send(reply);
    }
    disconnect();
    return action::detach;  // the connection closed
}

std::string gdb_stub::reply(const std::string& packet) {
    action act = action::resume;
    bool done = false;
    return answer(packet, act, done);
}

std::string gdb_stub::answer(const std::string& packet, action& act, bool& done) {
    try {
        return handle(packet, act, done);
    } catch (const std::exception&) {  // a malformed packet: an error reply, never the end of the simulation
        return "E01";
    }
}

std::string gdb_stub::handle(const std::string& p, action& act, bool& done) {
    if (p.empty()) return "";
    switch (p[0]) {
    case '?': return "S05";
    case '\x03': return "S02";
    case 'g': {
        std::string r;
        for (unsigned i = 0; i < 32; ++i) r += hex32(hart_.reg(i));
        return r + hex32(hart_.pc());
    }
    case 'G':
        if (p.size() < 1 + 33 * 8) return "E01";
        for (unsigned i = 0; i < 32; ++i) hart_.set_reg(i, parse_hex32_le(p, 1 + 8 * i));
        hart_.set_pc(parse_hex32_le(p, 1 + 8 * 32));
        return "OK";
    case 'p': {
        const unsigned n = static_cast<unsigned>(std::stoul(p.substr(1), nullptr, 16));
        if (n < 32) return hex32(hart_.reg(n));
        if (n == pc_regnum) return hex32(hart_.pc());
        std::uint32_t v;
        if (n >= csr_regbase && n < csr_regbase + 4096 &&
            hart_.csr_read(static_cast<std::uint16_t>(n - csr_regbase), v))
            return hex32(v);
        return "E01";
    }
    case 'P': {
        const auto eq = p.find('=');
        const unsigned n = static_cast<unsigned>(std::stoul(p.substr(1, eq - 1), nullptr, 16));
        const std::uint32_t v = parse_hex32_le(p, eq + 1);
        if (n < 32) hart_.set_reg(n, v);
        else if (n == pc_regnum) hart_.set_pc(v);
        else if (n < csr_regbase || n >= csr_regbase + 4096 ||
                 !hart_.csr_write(static_cast<std::uint16_t>(n - csr_regbase), v))
            return "E01";  // no such register, or a read-only CSR
        return "OK";
    }
    case 'm': {
        const auto comma = p.find(',');
        const std::uint32_t addr = static_cast<std::uint32_t>(std::stoul(p.substr(1, comma - 1), nullptr, 16));
        const std::size_t len = std::stoul(p.substr(comma + 1), nullptr, 16);
        std::string r;
        for (std::size_t i = 0; i < len; ++i) {
            std::uint8_t b;
            if (!hart_.debug_read(static_cast<std::uint32_t>(addr + i), b)) return r.empty() ? "E14" : r;
            r += fmt::format("{:02x}", b);
        }
        return r;
    }
    case 'M': {
        const auto comma = p.find(','), colon = p.find(':');
        const std::uint32_t addr = static_cast<std::uint32_t>(std::stoul(p.substr(1, comma - 1), nullptr, 16));
        const std::size_t len = std::stoul(p.substr(comma + 1, colon - comma - 1), nullptr, 16);
        for (std::size_t i = 0; i < len; ++i)
            if (!hart_.debug_write(static_cast<std::uint32_t>(addr + i),
                                   static_cast<std::uint8_t>(std::stoul(p.substr(colon + 1 + 2 * i, 2), nullptr, 16))))
                return "E14";
        return "OK";
    }
    case 'c':
        if (p.size() > 1) hart_.set_pc(static_cast<std::uint32_t>(std::stoul(p.substr(1), nullptr, 16)));
        act = action::resume;
        done = true;
        return "";
    case 's':
        if (p.size() > 1) hart_.set_pc(static_cast<std::uint32_t>(std::stoul(p.substr(1), nullptr, 16)));
        act = action::step;
        done = true;
        return "";
    case 'Z':
    case 'z':
        if (p.size() > 3 && (p[1] == '0' || p[1] == '1')) {
            const auto second = p.find(',', 3);
            hart_.set_breakpoint(static_cast<std::uint32_t>(std::stoul(p.substr(3, second - 3), nullptr, 16)),
                                 p[0] == 'Z');
            return "OK";
        }
        return "";
    case 'H': return "OK";
    case 'k':
        act = action::kill;
        done = true;
        return "";
    case 'D':
        act = action::detach;
        done = true;
        return "OK";
    case 'q':
        if (p.rfind("qSupported", 0) == 0) return "PacketSize=4000;qXfer:features:read+";
        if (p.rfind("qXfer:features:read:", 0) == 0) return read_features(p);
        if (p == "qAttached") return "1";
        if (p == "qC") return "QC1";
        if (p == "qfThreadInfo") return "m1";
        if (p == "qsThreadInfo") return "l";
        return "";
    default: return "";
    }
}

}  // namespace trn3::mcu
