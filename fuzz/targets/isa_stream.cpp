// Fuzz target: the NeuronCore assembler (spec/isa.h assemble_stream). Any
// text is assembled or refused with std::invalid_argument; what assembles
// disassembles to text that assembles back to the same instructions, bit
// for bit.
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "fuzz_check.h"
#include "trn3/spec/isa.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace trn3::isa;
    const std::string text(reinterpret_cast<const char*>(data), size);
    std::vector<instruction> code;
    try {
        code = assemble_stream(text);
    } catch (const std::invalid_argument&) {
        return 0;
    }
    const std::vector<instruction> back = assemble_stream(disassemble_stream(code));
    TRN3_FUZZ_CHECK(back.size() == code.size());
    TRN3_FUZZ_CHECK(back.empty() || std::memcmp(back.data(), code.data(), code.size() * sizeof(instruction)) == 0);
    return 0;
}
