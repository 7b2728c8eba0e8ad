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
constexpr unsigned pc_regnum = 32, csr_regbase = 65;  // GDB's RISC-V numbering
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
        std::string reply;
        try {
            reply = handle(packet, act, done);
        } catch (const std::exception&) {  // a malformed packet: an error reply, never the end of the simulation
            reply = "E01";
        }
        if (done && (act == action::detach || act == action::kill)) disconnect();
        if (done) return act;
        send(reply);
    }
    disconnect();
    return action::detach;  // the connection closed
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
        if (n >= csr_regbase && n < csr_regbase + 4096)
            return hex32(hart_.csr(static_cast<std::uint16_t>(n - csr_regbase)));
        return "E01";
    }
    case 'P': {
        const auto eq = p.find('=');
        const unsigned n = static_cast<unsigned>(std::stoul(p.substr(1, eq - 1), nullptr, 16));
        const std::uint32_t v = parse_hex32_le(p, eq + 1);
        if (n < 32) hart_.set_reg(n, v);
        else if (n == pc_regnum) hart_.set_pc(v);
        else return "E01";
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
        send("OK");
        act = action::detach;
        done = true;
        return "";
    case 'q':
        if (p.rfind("qSupported", 0) == 0) return "PacketSize=4000";
        if (p == "qAttached") return "1";
        if (p == "qC") return "QC1";
        if (p == "qfThreadInfo") return "m1";
        if (p == "qsThreadInfo") return "l";
        return "";
    default: return "";
    }
}

}  // namespace trn3::mcu
