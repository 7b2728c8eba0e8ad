// A firmware image: an RV32 RISC-V ELF executable, checked and read into its
// loadable segments and symbols.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace trn3::mcu {

struct elf_segment {
    std::uint32_t address = 0;  // physical load address
    std::uint32_t memory_size = 0;  // bytes in memory (the rest past `bytes` is zero)
    std::vector<std::uint8_t> bytes;  // the file's bytes
};

struct elf_image {
    std::string path;
    std::uint32_t entry = 0;
    std::vector<elf_segment> segments;
    std::map<std::string, std::uint32_t> symbols;  // from .symtab, when present

    // Throws config_error (one line naming the file and the problem) when
    // the file is missing or unreadable, not ELF, truncated, not a 32-bit
    // little-endian RISC-V executable, has no loadable segment, or has
    // segments that overlap.
    static elf_image load(const std::string& path);
    // The same checks on a file's bytes; `path` names it in the messages.
    static elf_image parse(const std::vector<std::uint8_t>& file, const std::string& path);
};

}  // namespace trn3::mcu
