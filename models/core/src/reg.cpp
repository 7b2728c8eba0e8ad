#include "trn3/core/reg.h"

#include <algorithm>

#include <fmt/format.h>

#include "trn3/core/error.h"

namespace trn3 {

const char* to_string(access a) {
    switch (a) {
    case access::rw: return "RW";
    case access::ro: return "RO";
    case access::wo: return "WO";
    case access::w1c: return "W1C";
    case access::w1s: return "W1S";
    }
    return "?";
}

reg::reg(reg_bank& bank, std::string name, std::uint64_t offset, unsigned width_bytes, std::uint64_t reset_value,
         access policy, std::string description)
    : name_(std::move(name)), description_(std::move(description)), offset_(offset), width_(width_bytes),
      reset_value_(0), value_(0) {
    if (width_ != 1 && width_ != 2 && width_ != 4 && width_ != 8)
        throw config_error(
            fmt::format("register {}.{}: width {} bytes is not 1, 2, 4 or 8", bank.name(), name_, width_));
    reset_value_ = value_ = reset_value & mask();
    set_policy_bits(mask(), policy);
    bank.add(this);
}

void reg::set_policy_bits(std::uint64_t bits, access policy) {
    rw_ &= ~bits;
    ro_ &= ~bits;
    wo_ &= ~bits;
    w1c_ &= ~bits;
    w1s_ &= ~bits;
    switch (policy) {
    case access::rw: rw_ |= bits; break;
    case access::ro: ro_ |= bits; break;
    case access::wo: wo_ |= bits; break;
    case access::w1c: w1c_ |= bits; break;
    case access::w1s: w1s_ |= bits; break;
    }
}

reg& reg::field(const std::string& name, unsigned lsb, unsigned width, access policy) {
    if (width == 0 || lsb + width > 8 * width_)
        throw config_error(fmt::format("register {}: field {} [{}+:{}] does not fit", name_, name, lsb, width));
    std::uint64_t bits = (width == 64 ? ~0ull : ((1ull << width) - 1)) << lsb;
    set_policy_bits(bits, policy);
    fields_.push_back({name, lsb, width});
    return *this;
}

std::uint64_t reg::get_field(const std::string& name) const {
    for (const auto& f : fields_)
        if (f.name == name) return (value_ >> f.lsb) & (f.width == 64 ? ~0ull : ((1ull << f.width) - 1));
    throw config_error("register " + name_ + " has no field " + name);
}

namespace {
// Is byte `i` of the access enabled? be_phase is the access offset of byte 0
// of this register slice, so enables wrap around be_len as TLM specifies.
inline bool enabled(const unsigned char* be, unsigned be_len, unsigned i) {
    return be == nullptr || be[i % be_len] == TLM_BYTE_ENABLED;
}
}  // namespace

void reg::bus_read(unsigned first, unsigned n, unsigned char* data, const unsigned char* be, unsigned be_len,
                   unsigned be_phase, bool debug) {
    if (!debug && on_read_) on_read_(*this);
    std::uint64_t v = value_ & ~wo_;
    for (unsigned i = 0; i < n; ++i)
        if (enabled(be, be_len, be_phase + i)) data[i] = static_cast<unsigned char>(v >> (8 * (first + i)));
}

void reg::bus_write(unsigned first, unsigned n, const unsigned char* data, const unsigned char* be, unsigned be_len,
                    unsigned be_phase, bool debug) {
    std::uint64_t d = 0, covered = 0;
    for (unsigned i = 0; i < n; ++i) {
        if (!enabled(be, be_len, be_phase + i)) continue;
        d |= static_cast<std::uint64_t>(data[i]) << (8 * (first + i));
        covered |= 0xffull << (8 * (first + i));
    }
    std::uint64_t old = value_;
    if (debug) {
        // A debug write deposits the bytes as they are: no policy, no handler.
        value_ = (value_ & ~covered) | (d & covered);
        return;
    }
    std::uint64_t v = value_;
    v = (v & ~(covered & (rw_ | wo_))) | (d & covered & (rw_ | wo_));
    v &= ~(d & covered & w1c_);
    v |= d & covered & w1s_;
    value_ = v & mask();
    if (on_write_) on_write_(*this, old);
}

void reg_bank::add(reg* r) {
    auto it = std::lower_bound(regs_.begin(), regs_.end(), r,
                               [](const reg* a, const reg* b) { return a->offset() < b->offset(); });
    if (it != regs_.end() && (*it)->offset() < r->offset() + r->width())
        throw config_error(fmt::format("{}: registers {} and {} overlap", name_, r->name(), (*it)->name()));
    if (it != regs_.begin() && (*(it - 1))->offset() + (*(it - 1))->width() > r->offset())
        throw config_error(fmt::format("{}: registers {} and {} overlap", name_, (*(it - 1))->name(), r->name()));
    regs_.insert(it, r);
}

std::uint64_t reg_bank::size() const { return regs_.empty() ? 0 : regs_.back()->offset() + regs_.back()->width(); }

void reg_bank::reset() {
    for (reg* r : regs_) r->reset();
}

void reg_bank::transport(tlm::tlm_generic_payload& tx, bool debug) {
    const std::uint64_t start = tx.get_address();
    const unsigned len = tx.get_data_length();
    unsigned char* data = tx.get_data_ptr();
    if (len == 0 || data == nullptr) {
        tx.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        return;
    }
    if (tx.get_streaming_width() < len) {
        tx.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
        return;
    }
    if ((tx.get_command() == tlm::TLM_IGNORE_COMMAND)) {
        tx.set_response_status(tlm::TLM_OK_RESPONSE);
        return;
    }
    const std::uint64_t end = start + len;
    // First register that ends after `start`.
    auto first = std::upper_bound(regs_.begin(), regs_.end(), start,
                                  [](std::uint64_t a, const reg* r) { return a < r->offset() + r->width(); });
    // Every byte must belong to a register: walk the covered span once.
    std::uint64_t cursor = start;
    auto last = first;
    for (; last != regs_.end() && (*last)->offset() < end; ++last) {
        if ((*last)->offset() > cursor) break;
        cursor = (*last)->offset() + (*last)->width();
    }
    if (cursor < end) {
        tx.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    const unsigned char* be = tx.get_byte_enable_ptr();
    const unsigned be_len = be ? tx.get_byte_enable_length() : 0;
    if (be && be_len == 0) {
        tx.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
        return;
    }
    for (auto it = first; it != last; ++it) {
        reg* r = *it;
        std::uint64_t lo = std::max(start, r->offset());
        std::uint64_t hi = std::min(end, r->offset() + r->width());
        auto first_byte = static_cast<unsigned>(lo - r->offset());
        auto n = static_cast<unsigned>(hi - lo);
        auto phase = static_cast<unsigned>(lo - start);
        if (tx.is_read()) r->bus_read(first_byte, n, data + phase, be, be_len, phase, debug);
        else r->bus_write(first_byte, n, data + phase, be, be_len, phase, debug);
    }
    tx.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace trn3
