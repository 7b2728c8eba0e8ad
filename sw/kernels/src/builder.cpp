#include "trn3/kernels/builder.h"

#include <cstring>
#include <stdexcept>
#include <string>

namespace trn3::kernels {
namespace {
access_pattern tile(isa::space s, dtype t, unsigned start, unsigned parts, std::uint64_t address, unsigned free) {
    // What the encoding cannot hold is refused, never wrapped (the core checks the rest when it runs).
    if (start > 255 || parts > 255)
        throw std::invalid_argument("a tile's start partition and partitions are encoded in 8 bits (" +
                                    std::to_string(start) + ", " + std::to_string(parts) + ")");
    if (free > 65535)
        throw std::invalid_argument("a free dimension is encoded in 16 bits (" + std::to_string(free) + " elements)");
    access_pattern ap{};
    ap.space = static_cast<std::uint8_t>(s);
    ap.dtype = static_cast<std::uint8_t>(t);
    ap.start_partition = static_cast<std::uint8_t>(start);
    ap.partitions = static_cast<std::uint8_t>(parts);
    ap.base_reg = isa::no_reg;
    ap.dims = 1;
    ap.address = address;
    ap.step[0] = 1;
    ap.num[0] = static_cast<std::uint16_t>(free);
    return ap;
}
}  // namespace

access_pattern sbuf(dtype t, unsigned start, unsigned parts, std::uint64_t off, unsigned free) {
    return tile(isa::space::sbuf, t, start, parts, off, free);
}
access_pattern psum(dtype t, unsigned start, unsigned parts, std::uint64_t off, unsigned free) {
    return tile(isa::space::psum, t, start, parts, off, free);
}
access_pattern hbm(dtype t, std::uint64_t address, unsigned parts, std::uint32_t stride, unsigned free) {
    access_pattern ap = tile(isa::space::hbm, t, 0, parts, address, free);
    ap.partition_stride = stride;
    return ap;
}
access_pattern with_dims(access_pattern ap, const std::vector<std::pair<std::int32_t, std::uint16_t>>& dims) {
    if (dims.empty() || dims.size() > isa::max_free_dims)
        throw std::invalid_argument("an access pattern has 1 to 4 free dimensions");
    ap.dims = 0;
    for (auto [step, num] : dims) {
        ap.step[ap.dims] = step;
        ap.num[ap.dims] = num;
        ++ap.dims;
    }
    return ap;
}
access_pattern with_dims(access_pattern ap, std::initializer_list<std::pair<std::int32_t, std::uint16_t>> dims) {
    return with_dims(ap, std::vector<std::pair<std::int32_t, std::uint16_t>>(dims));
}
access_pattern with_base_reg(access_pattern ap, unsigned reg) {
    ap.base_reg = static_cast<std::uint8_t>(reg);
    return ap;
}

isa::instruction& stream::emit(isa::opcode op) {
    isa::instruction i{};
    i.op = static_cast<std::uint8_t>(op);
    i.engine = static_cast<std::uint8_t>(engine_);
    i.reg_a = isa::no_reg;
    i.wait_sem = isa::no_semaphore;
    i.signal_sem = isa::no_semaphore;
    code_.push_back(i);
    return code_.back();
}

// The instruction a modifier (wait, signal, sparse, stochastic) applies to.
isa::instruction& stream::last(const char* modifier) {
    if (code_.empty())
        throw std::logic_error(std::string(modifier) + "() modifies the last instruction, and the stream has none");
    return code_.back();
}

stream& stream::matmul(const access_pattern& dst, const access_pattern& st, const access_pattern& mv, bool acc) {
    auto& i = emit(isa::opcode::matmul);
    i.dst = dst;
    i.src0 = st;
    i.src1 = mv;
    if (acc) i.flags |= isa::flag_accumulate;
    return *this;
}
stream& stream::matmul_mx(const access_pattern& dst, const access_pattern& st, const access_pattern& mv,
                          std::uint32_t scales_a, std::uint32_t scales_b, bool acc) {
    matmul(dst, st, mv, acc);
    code_.back().flags |= isa::flag_mx;
    code_.back().imm = scales_a;
    code_.back().target = scales_b;
    return *this;
}
stream& stream::sparse(isa::sparsity s, std::uint32_t meta) {
    isa::instruction& i = last("sparse");
    if (static_cast<isa::opcode>(i.op) != isa::opcode::matmul) throw std::logic_error("sparse() applies to a matmul");
    i.sparsity = static_cast<std::uint8_t>(s);
    i.meta = meta;
    return *this;
}
stream& stream::quantize_mx(const access_pattern& dst, const access_pattern& src, std::uint32_t scales,
                            bool trn3_rule) {
    auto& i = emit(isa::opcode::quantize_mx);
    i.dst = dst;
    i.src0 = src;
    i.imm = scales;
    if (trn3_rule) i.flags |= isa::flag_mx_trn3_scale;
    return *this;
}
stream& stream::affine_select(const access_pattern& dst, const access_pattern& src, float partition_coef,
                              float free_coef, std::int32_t offset, float otherwise) {
    auto& i = emit(isa::opcode::affine_select);
    i.dst = dst;
    i.src0 = src;
    i.scalar2 = partition_coef;
    i.scalar = free_coef;
    i.imm = static_cast<std::uint32_t>(offset);
    std::memcpy(&i.target, &otherwise, 4);
    return *this;
}
stream& stream::transpose(const access_pattern& dst, const access_pattern& src) {
    auto& i = emit(isa::opcode::transpose);
    i.dst = dst;
    i.src0 = src;
    return *this;
}
stream& stream::activation(const access_pattern& dst, const access_pattern& src, isa::function f, float scale,
                           float bias) {
    auto& i = emit(isa::opcode::activation);
    i.dst = dst;
    i.src0 = src;
    i.function = static_cast<std::uint8_t>(f);
    i.scalar = scale;
    i.scalar2 = bias;
    return *this;
}
stream& stream::tensor_tensor(const access_pattern& dst, const access_pattern& a, const access_pattern& b,
                              isa::alu op) {
    auto& i = emit(isa::opcode::tensor_tensor);
    i.dst = dst;
    i.src0 = a;
    i.src1 = b;
    i.alu = static_cast<std::uint8_t>(op);
    return *this;
}
stream& stream::tensor_scalar(const access_pattern& dst, const access_pattern& a, isa::alu op, float scalar) {
    auto& i = emit(isa::opcode::tensor_scalar);
    i.dst = dst;
    i.src0 = a;
    i.alu = static_cast<std::uint8_t>(op);
    i.scalar = scalar;
    return *this;
}
stream& stream::tensor_reduce(const access_pattern& dst, const access_pattern& src, isa::alu op) {
    auto& i = emit(isa::opcode::tensor_reduce);
    i.dst = dst;
    i.src0 = src;
    i.alu = static_cast<std::uint8_t>(op);
    return *this;
}
stream& stream::tensor_copy(const access_pattern& dst, const access_pattern& src) {
    auto& i = emit(isa::opcode::tensor_copy);
    i.dst = dst;
    i.src0 = src;
    return *this;
}
stream& stream::memset(const access_pattern& dst, float value) {
    auto& i = emit(isa::opcode::memset);
    i.dst = dst;
    i.scalar = value;
    return *this;
}
stream& stream::iota(const access_pattern& dst, std::uint32_t base, float step, float partition_step) {
    auto& i = emit(isa::opcode::iota);
    i.dst = dst;
    i.imm = base;
    i.scalar = step;
    i.scalar2 = partition_step;
    return *this;
}
stream& stream::dma(const access_pattern& dst, const access_pattern& src, unsigned queue) {
    auto& i = emit(isa::opcode::dma);
    i.dst = dst;
    i.src0 = src;
    i.flags = static_cast<std::uint8_t>((queue & 0xf) << isa::flag_dma_queue_shift);
    return *this;
}
stream& stream::set_reg(unsigned reg, std::uint32_t value) {
    auto& i = emit(isa::opcode::set_reg);
    i.reg_a = static_cast<std::uint8_t>(reg);
    i.imm = value;
    return *this;
}
stream& stream::add_reg(unsigned reg, std::uint32_t value) {
    auto& i = emit(isa::opcode::add_reg);
    i.reg_a = static_cast<std::uint8_t>(reg);
    i.imm = value;
    return *this;
}
stream& stream::branch_lt(unsigned reg, std::uint32_t bound, std::uint32_t target) {
    auto& i = emit(isa::opcode::branch_lt);
    i.reg_a = static_cast<std::uint8_t>(reg);
    i.imm = bound;
    i.target = target;
    return *this;
}
stream& stream::sem_increment(unsigned sem, std::uint32_t add) {
    emit(isa::opcode::sem_increment);
    return signal(sem, add);
}
stream& stream::nop() {
    emit(isa::opcode::nop);
    return *this;
}
stream& stream::halt() {
    emit(isa::opcode::halt);
    return *this;
}
stream& stream::wait(unsigned sem, std::uint32_t at_least) {
    isa::instruction& i = last("wait");
    i.wait_sem = static_cast<std::uint8_t>(sem);
    i.wait_value = at_least;
    return *this;
}
stream& stream::signal(unsigned sem, std::uint32_t add) {
    isa::instruction& i = last("signal");
    i.signal_sem = static_cast<std::uint8_t>(sem);
    i.signal_add = add;
    return *this;
}
stream& stream::stochastic() {
    last("stochastic").flags |= isa::flag_stochastic;
    return *this;
}

stream& stream::raw(const isa::instruction& i) {
    if (i.engine != static_cast<std::uint8_t>(engine_))
        throw std::invalid_argument(std::string("an instruction of engine ") +
                                    isa::name(static_cast<isa::engine>(i.engine)) + " in the " + isa::name(engine_) +
                                    " stream");
    code_.push_back(i);
    return *this;
}

program::program() {
    for (unsigned e = 0; e < isa::engine_count; ++e) streams_.emplace_back(static_cast<isa::engine>(e));
}

std::array<std::uint64_t, isa::engine_count> program::load(const writer& write, std::uint64_t base) const {
    std::array<std::uint64_t, isa::engine_count> pcs{};
    std::uint64_t at = base;
    for (const stream& s : streams_) {
        if (s.code().empty()) continue;
        pcs[static_cast<unsigned>(s.engine())] = at;
        write(at, s.code().data(), s.code().size() * sizeof(isa::instruction));
        at += (s.code().size() * sizeof(isa::instruction) + 4095) / 4096 * 4096;
    }
    return pcs;
}

std::size_t program::instructions() const {
    std::size_t n = 0;
    for (const stream& s : streams_) n += s.code().size();
    return n;
}

}  // namespace trn3::kernels
