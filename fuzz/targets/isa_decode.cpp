// Fuzz target: instructions as their 192-byte encoding, as a NeuronCore
// fetches them (spec/isa.h). Any bytes disassemble to text without a crash;
// what that text assembles to is a valid instruction, which survives
// disassemble then assemble bit for bit (isa.h's promise). Text itself need
// not come back the same: an operand written out with every field zero and
// one left out encode alike, and the disassembler leaves such one out.
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "fuzz_check.h"
#include "trn3/spec/isa.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace trn3::isa;
    for (std::size_t at = 0; at + sizeof(instruction) <= size; at += sizeof(instruction)) {
        instruction i;
        std::memcpy(&i, data + at, sizeof i);
        instruction valid;
        try {
            valid = assemble(disassemble(i));
        } catch (const std::invalid_argument&) {
            continue;
        }
        const instruction again = assemble(disassemble(valid));
        TRN3_FUZZ_CHECK(std::memcmp(&again, &valid, sizeof valid) == 0);
    }
    return 0;
}
