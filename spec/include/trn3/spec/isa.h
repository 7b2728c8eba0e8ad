// The NeuronCore-v4 instruction set as this platform encodes it.
//
// Real Trainium encodings are not public. The concepts and names follow the
// public Neuron (NKI) documentation: five engines with their own instruction
// streams, tiles in sbuf/psum/hbm described by access patterns, semaphores
// for synchronisation, sequencer registers for loops. The encoding is ours:
// every instruction is 192 bytes, little-endian, laid out exactly as the
// `instruction` struct below (docs/isa.md draws it). Models, the kernel
// builder and the assembler all use this header: the ISA is written once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trn3::isa {

constexpr unsigned instruction_bytes = 192;
constexpr unsigned max_free_dims = 4;  // access patterns walk up to 4 free dimensions
constexpr unsigned registers = 64;  // per sequencer, 32-bit
constexpr unsigned semaphores = 256;  // per core
constexpr std::uint8_t no_reg = 0xff;
constexpr std::uint8_t no_semaphore = 0xff;

enum class engine : std::uint8_t { tensor = 0, vector = 1, scalar = 2, gpsimd = 3, sync = 4 };
constexpr unsigned engine_count = 5;

enum class opcode : std::uint8_t {
    nop = 0x00,
    halt = 0x01,
    // sequencer: registers and branches (any engine)
    set_reg = 0x02,  // r[reg_a] = imm
    add_reg = 0x03,  // r[reg_a] += imm (wraps)
    branch_lt = 0x04,  // if r[reg_a] < imm: pc = target
    sem_increment = 0x05,  // semaphore[signal_sem] += signal_add (no data work)
    // data movement and elementwise (vector, scalar, gpsimd)
    memset = 0x10,  // dst = scalar
    tensor_copy = 0x11,  // dst = src0 (cast)
    iota = 0x12,  // dst[p][i] = imm + p * scalar2 + i * scalar   (gpsimd)
    tensor_tensor = 0x13,  // dst = src0 <alu> src1
    tensor_scalar = 0x14,  // dst = src0 <alu> scalar
    tensor_reduce = 0x15,  // dst[p][0] = reduce<alu>(src0[p][*])
    activation = 0x16,  // dst = func(src0 * scale + bias)          (scalar)
    quantize_mx = 0x17,  // dst (MX codes) and scales at SBUF offset imm = MX blocks of src0   (vector)
    affine_select = 0x18,  // dst = (scalar2*p + scalar*i + (int)imm >= 0) ? src0 : float(target bits) (gpsimd)
    // tensor engine
    matmul = 0x20,  // psum dst[m][n] (+)= sum_k src0[k][m] * src1[k][n]
    // with flag_mx: MXFP8/MXFP4, scales at SBUF offsets imm (src0) and target (src1)
    // with sparsity 4:8 / 4:16: src0 compressed, indices at SBUF offset meta
    transpose = 0x21,  // dst[j][i] = src0[i][j]
    // DMA (sync engine issues; queues run it)
    dma = 0x30,  // dst = src0 over the whole access pattern, with cast
};

enum class space : std::uint8_t { sbuf = 0, psum = 1, hbm = 2 };

enum class dtype : std::uint8_t {
    fp32 = 0,
    bf16 = 1,
    fp16 = 2,
    e4m3fn = 3,
    e5m2 = 4,
    int32 = 5,
    e2m1 = 6
};  // e2m1: one per byte
unsigned dtype_bytes(dtype t);

enum class alu : std::uint8_t { add = 0, subtract = 1, multiply = 2, max = 3, min = 4, bypass = 5 };

// Structured sparsity of a matmul's stationary operand: at most 4 non-zero
// values in every group of 8 or 16 consecutive K values (docs/isa.md).
enum class sparsity : std::uint8_t { dense = 0, s4_8 = 1, s4_16 = 2 };
// K values per group (0 for dense).
unsigned sparsity_group(sparsity s);

enum class function : std::uint8_t {
    copy = 0,
    exp = 1,
    relu = 2,
    gelu = 3,
    silu = 4,
    tanh = 5,
    sigmoid = 6,
    square = 7,
    rsqrt = 8,
    reciprocal = 9
};

// flags
constexpr std::uint8_t flag_accumulate = 0x01;  // matmul: add into psum instead of overwriting
constexpr std::uint8_t flag_stochastic = 0x02;  // round the output stochastically
constexpr std::uint8_t flag_mx = 0x04;  // matmul: MX operands (4 K values per partition, E8M0 scales)
constexpr std::uint8_t flag_mx_trn3_scale = 0x08;  // quantize_mx: Trainium3 scale rule (one power of two larger)
constexpr std::uint8_t flag_dma_queue_shift = 4;  // dma: queue number in bits 4..7

// An access pattern: a tile of `partitions` partitions starting at
// `start_partition`, and in each partition up to four free dimensions
// [step, num] in elements (outermost first). For hbm, `address` is a device
// address and partition p starts at address + p * partition_stride bytes.
struct access_pattern {
    std::uint8_t space;  // isa::space
    std::uint8_t dtype;  // isa::dtype
    std::uint8_t start_partition;
    std::uint8_t partitions;  // 1..128
    std::uint8_t base_reg;  // address += r[base_reg] (bytes); no_reg: none
    std::uint8_t dims;  // free dimensions used, 1..4
    std::uint16_t reserved;
    std::uint64_t address;  // byte offset in the partition, or device address (hbm)
    std::int32_t step[max_free_dims];  // elements
    std::uint16_t num[max_free_dims];  // elements
    std::uint32_t partition_stride;  // hbm only: bytes between partitions
    std::uint32_t reserved2;
};
static_assert(sizeof(access_pattern) == 48, "access_pattern is 48 bytes");

struct instruction {
    std::uint8_t op;  // isa::opcode
    std::uint8_t engine;  // isa::engine the instruction belongs to
    std::uint8_t flags;
    std::uint8_t alu;  // isa::alu (also the reduce operation)
    std::uint8_t function;  // isa::function (activation)
    std::uint8_t reg_a;
    std::uint8_t wait_sem;  // wait until semaphore[wait_sem] >= wait_value before starting
    std::uint8_t signal_sem;  // semaphore[signal_sem] += signal_add when done
    std::uint32_t wait_value;
    std::uint32_t signal_add;
    access_pattern dst;
    access_pattern src0;
    access_pattern src1;
    float scalar;  // memset value, tensor_scalar operand, activation scale, iota step
    float scalar2;  // activation bias, iota partition step
    std::uint32_t imm;  // register immediate, branch bound, iota base
    std::uint32_t target;  // branch target: instruction index in this stream
    std::uint32_t meta;  // sparse matmul: byte offset of the sparsity metadata in SBUF
    std::uint8_t sparsity;  // isa::sparsity (matmul)
    std::uint8_t reserved_b[3];  // zero
    std::uint64_t reserved;  // zero
};
static_assert(sizeof(instruction) == instruction_bytes, "instruction is 192 bytes");

// Names for the text form and for messages.
const char* name(opcode o);
const char* name(engine e);
const char* name(space s);
const char* name(dtype t);
const char* name(alu a);
const char* name(function f);
const char* name(sparsity s);

// Elements a pattern covers in one partition.
std::uint64_t free_elements(const access_pattern& ap);

// The text form (one instruction per line), and back. assemble() throws
// std::invalid_argument naming the problem; disassemble(assemble(x)) == x and
// assemble(disassemble(i)) == i for every valid instruction.
std::string disassemble(const instruction& i);
instruction assemble(const std::string& line);

// A stream's text: one instruction per line; blank lines and '#' comments are
// ignored; "name:" labels the next instruction and "target=@name" refers to
// it. disassemble_stream writes "L<n>:" labels at branch targets, so
// assemble_stream(disassemble_stream(code)) == code. Errors name the line.
std::vector<instruction> assemble_stream(const std::string& text);
std::string disassemble_stream(const std::vector<instruction>& code);

}  // namespace trn3::isa
