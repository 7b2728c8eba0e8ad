#include "trn3/core/protocol_checker.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "trn3/core/payload.h"

namespace trn3 {
namespace {
bool& checks_flag() {
    static bool on =
#ifdef TRN3_PROTOCOL_CHECKS_DEFAULT
        true;
#else
        false;
#endif
    return on;
}
std::uint64_t& total() {
    static std::uint64_t n = 0;
    return n;
}
}  // namespace

bool protocol_checks_enabled() { return checks_flag(); }
void set_protocol_checks(bool on) { checks_flag() = on; }
std::uint64_t protocol_checker::total_violations() { return total(); }

protocol_checker::protocol_checker(const sc_core::sc_module_name& name)
    : component(name, frequency{1e9}), in("in"), out("out"),
      check_write_enables(this, "check_write_enables", true,
                          "verify through debug reads that writes leave byte-disabled bytes alone"),
      violations_(this, "violations", "TLM base-protocol violations seen") {
    in.register_b_transport(this, &protocol_checker::b_transport);
    in.register_get_direct_mem_ptr(this, &protocol_checker::get_direct_mem_ptr);
    in.register_transport_dbg(this, &protocol_checker::transport_dbg);
    out.register_invalidate_direct_mem_ptr(this, &protocol_checker::invalidate_direct_mem_ptr);
}

void protocol_checker::violation(const std::string& rule, const std::string& detail) {
    ++violations_;
    ++total();
    std::string text = rule + ": " + detail;
    log().error("protocol violation: {}", text);
    reports_.push_back(std::move(text));
}

bool protocol_checker::peek(std::uint64_t addr, unsigned len, std::vector<unsigned char>& bytes) {
    bytes.assign(len, 0);
    tlm::tlm_generic_payload dbg;
    set_access(dbg, tlm::TLM_READ_COMMAND, addr, bytes.data(), len);
    return out->transport_dbg(dbg) == len;
}

void protocol_checker::b_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay) {
    // The transaction's text is built only when a rule is broken.
    auto where = [&tx] { return describe(tx, "in"); };
    if (tx.get_response_status() != tlm::TLM_INCOMPLETE_RESPONSE)
        violation("initiator", "response status not TLM_INCOMPLETE_RESPONSE before b_transport: " + where());
    // Every read or write carries a data pointer and a length, timing_only
    // ones too (their target charges the time and must leave the data alone).
    const bool carries_data = tx.get_command() != tlm::TLM_IGNORE_COMMAND;
    const bool timing = tx.get_extension<timing_only>() != nullptr;
    if (carries_data && (tx.get_data_ptr() == nullptr || tx.get_data_length() == 0)) {
        violation("initiator", "no data pointer or zero length: " + where());
        out->b_transport(tx, delay);
        return;
    }
    const unsigned char* be = tx.get_byte_enable_ptr();
    const unsigned be_len = tx.get_byte_enable_length();
    if (be && be_len == 0) violation("initiator", "byte-enable pointer with zero byte-enable length: " + where());
    const bool with_enables = be && be_len > 0 && carries_data && !timing;

    std::vector<unsigned char> before_buffer, before_target, after_target;
    const unsigned len = tx.get_data_length();
    if (with_enables && tx.is_read()) before_buffer.assign(tx.get_data_ptr(), tx.get_data_ptr() + len);
    bool watch_target =
        with_enables && tx.is_write() && check_write_enables.get() && peek(tx.get_address(), len, before_target);

    std::vector<unsigned char> timing_data;
    if (timing) timing_data.assign(tx.get_data_ptr(), tx.get_data_ptr() + tx.get_data_length());

    out->b_transport(tx, delay);

    if (tx.get_response_status() == tlm::TLM_INCOMPLETE_RESPONSE)
        violation("target", "b_transport returned without a response status: " + where());
    if (timing && !std::equal(timing_data.begin(), timing_data.end(), tx.get_data_ptr()))
        violation("target", "moved data of a timing_only payload: " + where());
    if (!with_enables || !tx.is_response_ok()) return;
    for (unsigned i = 0; i < len; ++i) {
        if (be[i % be_len] == TLM_BYTE_ENABLED) continue;
        if (tx.is_read() && tx.get_data_ptr()[i] != before_buffer[i]) {
            violation("target", fmt::format("read wrote byte {} whose byte enable is off: {}", i, where()));
            return;
        }
    }
    if (watch_target && peek(tx.get_address(), len, after_target)) {
        for (unsigned i = 0; i < len; ++i) {
            if (be[i % be_len] != TLM_BYTE_ENABLED && before_target[i] != after_target[i]) {
                violation("target", fmt::format("write changed byte {} whose byte enable is off: {}", i, where()));
                return;
            }
        }
    }
}

bool protocol_checker::get_direct_mem_ptr(tlm::tlm_generic_payload& tx, tlm::tlm_dmi& dmi) {
    const std::uint64_t addr = tx.get_address();
    if (!out->get_direct_mem_ptr(tx, dmi)) return false;
    const bool want_write = tx.is_write();
    std::string what =
        fmt::format("DMI grant [0x{:x}, 0x{:x}] for 0x{:x}", dmi.get_start_address(), dmi.get_end_address(), addr);
    if (dmi.get_dmi_ptr() == nullptr) violation("target", what + " has no pointer");
    else if (addr < dmi.get_start_address() || addr > dmi.get_end_address())
        violation("target", what + " does not cover the requested address");
    else if (want_write ? !dmi.is_write_allowed() : !dmi.is_read_allowed())
        violation("target", what + " does not allow the requested access");
    else {
        // The pointer must show what the target itself returns.
        unsigned n = static_cast<unsigned>(std::min<std::uint64_t>(8, dmi.get_end_address() - addr + 1));
        std::vector<unsigned char> bytes;
        if (dmi.is_read_allowed() && peek(addr, n, bytes) &&
            std::memcmp(bytes.data(), dmi.get_dmi_ptr() + (addr - dmi.get_start_address()), n) != 0)
            violation("target", what + " points at data that differs from debug transport");
    }
    grants_.push_back(
        {dmi.get_start_address(), dmi.get_end_address(), dmi.is_read_allowed(), dmi.is_write_allowed(), true});
    return true;
}

unsigned protocol_checker::transport_dbg(tlm::tlm_generic_payload& tx) {
    const unsigned len = tx.get_data_length();
    unsigned n = out->transport_dbg(tx);
    if (n > len) violation("target", fmt::format("transport_dbg returned {} bytes for a {}-byte request", n, len));
    if (tx.is_read() && n > 0 && n <= len) {
        std::vector<unsigned char> again;
        peek(tx.get_address(), n, again);
        if (std::memcmp(again.data(), tx.get_data_ptr(), n) != 0)
            violation("target",
                      fmt::format("debug read at 0x{:x} has side effects: a second read differs", tx.get_address()));
    }
    return n;
}

void protocol_checker::invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end) {
    for (grant& g : grants_)
        if (g.start <= end && start <= g.end) g.live = false;
    in->invalidate_direct_mem_ptr(start, end);
}

void protocol_checker::note_dmi_access(std::uint64_t addr, unsigned len, bool is_write) {
    bool stale = false;
    for (auto it = grants_.rbegin(); it != grants_.rend(); ++it) {
        const grant& g = *it;
        if (addr < g.start || addr + len - 1 > g.end) continue;
        if (!g.live) {
            stale = true;
            continue;
        }
        if (is_write ? g.write : g.read) return;
    }
    violation("initiator", fmt::format("DMI {} of {} bytes at 0x{:x} {}", is_write ? "write" : "read", len, addr,
                                       stale ? "after its grant was invalidated" : "outside any live grant"));
}

}  // namespace trn3
