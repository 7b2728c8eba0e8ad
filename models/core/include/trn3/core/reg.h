// Memory-mapped registers.
//
// A model declares its registers as members, each with an offset, a width, a
// reset value, an access policy and optional fields, and hangs behaviour off
// small handlers. The bank decodes an access once for all models: partial,
// misaligned and spanning accesses, byte enables, and debug accesses (which
// run no handler and so have no side effects).
//
//   reg_bank regs{"regs"};
//   reg      irq_status{regs, "irq_status", 0x10, 4, 0, access::w1c, "pending interrupts"};
//   irq_status.on_write([this](reg&, uint64_t old_v) { update_irq(); });
//
// Semantics, bit by bit, of a write of data D over the bytes it enables:
//   rw: V = D      ro: V unchanged      wo: V = D, reads return 0
//   w1c: V &= ~D   w1s: V |= D
// A field overrides the register's policy on its bits. An access that touches
// any byte no register covers gets TLM_ADDRESS_ERROR_RESPONSE and changes
// nothing; a streaming width below the length gets TLM_BURST_ERROR_RESPONSE.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <tlm>

namespace trn3 {

enum class access { rw, ro, wo, w1c, w1s };
const char* to_string(access a);

class reg_bank;

class reg {
public:
    using read_handler = std::function<void(reg&)>;  // before the value is read
    using write_handler = std::function<void(reg&, std::uint64_t old_value)>;  // after the value changed

    reg(reg_bank& bank, std::string name, std::uint64_t offset, unsigned width_bytes, std::uint64_t reset_value,
        access policy, std::string description);
    reg(const reg&) = delete;
    reg& operator=(const reg&) = delete;

    reg& field(const std::string& name, unsigned lsb, unsigned width, access policy);
    reg& on_read(read_handler h) {
        on_read_ = std::move(h);
        return *this;
    }
    reg& on_write(write_handler h) {
        on_write_ = std::move(h);
        return *this;
    }

    // Hardware-side view: the stored value, unaffected by policies.
    std::uint64_t value() const { return value_; }
    void set(std::uint64_t v) { value_ = v & mask(); }
    std::uint64_t get_field(const std::string& name) const;
    void reset() { value_ = reset_value_; }

    const std::string& name() const { return name_; }
    const std::string& description() const { return description_; }
    std::uint64_t offset() const { return offset_; }
    unsigned width() const { return width_; }
    std::uint64_t mask() const { return width_ == 8 ? ~0ull : (1ull << (8 * width_)) - 1; }

private:
    friend class reg_bank;
    // Bus-side access to bytes [first, first + n) of this register.
    void bus_read(unsigned first, unsigned n, unsigned char* data, const unsigned char* be, unsigned be_len,
                  unsigned be_phase, bool debug);
    void bus_write(unsigned first, unsigned n, const unsigned char* data, const unsigned char* be, unsigned be_len,
                   unsigned be_phase, bool debug);
    void set_policy_bits(std::uint64_t bits, access policy);

    struct field_info {
        std::string name;
        unsigned lsb, width;
    };
    std::string name_, description_;
    std::uint64_t offset_;
    unsigned width_;
    std::uint64_t reset_value_, value_;
    // One mask per policy; every bit of the register is in exactly one.
    std::uint64_t rw_ = 0, ro_ = 0, wo_ = 0, w1c_ = 0, w1s_ = 0;
    std::vector<field_info> fields_;
    read_handler on_read_;
    write_handler on_write_;
};

class reg_bank {
public:
    explicit reg_bank(std::string name) : name_(std::move(name)) {}
    reg_bank(const reg_bank&) = delete;
    reg_bank& operator=(const reg_bank&) = delete;

    // Serves an access whose address is relative to the bank's base.
    void transport(tlm::tlm_generic_payload& tx, bool debug = false);
    void reset();
    const std::vector<reg*>& registers() const { return regs_; }
    const std::string& name() const { return name_; }
    // Bank size in bytes: one past the highest register byte.
    std::uint64_t size() const;

private:
    friend class reg;
    void add(reg* r);  // throws config_error when registers overlap
    std::string name_;
    std::vector<reg*> regs_;  // sorted by offset
};

}  // namespace trn3
