#include "trn3/mcu/elf_image.h"

#include <elf.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "trn3/core/error.h"
#include "trn3/core/user_file.h"

namespace trn3::mcu {

namespace {
[[noreturn]] void refuse(const std::string& path, const std::string& why) {
    throw config_error("firmware '" + path + "': " + why);
}
}  // namespace

elf_image elf_image::load(const std::string& path) {
    // A regular file of at most 16 MiB (the MCU's memories are far smaller):
    // a directory or a device such as /dev/zero is refused, not read forever.
    return parse(read_user_file(path, "firmware", 16ull << 20), path);
}

elf_image elf_image::parse(const std::vector<std::uint8_t>& file, const std::string& path) {
    auto need = [&](std::uint64_t offset, std::uint64_t size, const char* what) {
        if (offset > file.size() || size > file.size() - offset) refuse(path, std::string("truncated (") + what + ")");
    };
    need(0, sizeof(Elf32_Ehdr), "header");
    Elf32_Ehdr eh;
    std::memcpy(&eh, file.data(), sizeof eh);
    if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) refuse(path, "not an ELF file");
    if (eh.e_ident[EI_CLASS] != ELFCLASS32) refuse(path, "not a 32-bit ELF file (the MCU is RV32)");
    if (eh.e_ident[EI_DATA] != ELFDATA2LSB) refuse(path, "not little-endian");
    if (eh.e_machine != EM_RISCV)
        refuse(path, "not a RISC-V executable (e_machine " + std::to_string(eh.e_machine) + ")");
    if (eh.e_type != ET_EXEC) refuse(path, "not an executable (e_type " + std::to_string(eh.e_type) + ")");
    if (eh.e_phentsize != sizeof(Elf32_Phdr)) refuse(path, "unexpected program header size");

    elf_image img;
    img.path = path;
    img.entry = eh.e_entry;
    need(eh.e_phoff, static_cast<std::uint64_t>(eh.e_phnum) * sizeof(Elf32_Phdr), "program headers");
    for (unsigned i = 0; i < eh.e_phnum; ++i) {
        Elf32_Phdr ph;
        std::memcpy(&ph, file.data() + eh.e_phoff + i * sizeof ph, sizeof ph);
        if (ph.p_type != PT_LOAD || ph.p_memsz == 0) continue;
        need(ph.p_offset, ph.p_filesz, "segment data");
        if (ph.p_filesz > ph.p_memsz) refuse(path, "a segment's file size exceeds its memory size");
        if (static_cast<std::uint64_t>(ph.p_paddr) + ph.p_memsz > (1ull << 32))
            refuse(path, "a segment ends past 4 GiB");
        elf_segment seg;
        seg.address = ph.p_paddr;
        seg.memory_size = ph.p_memsz;
        seg.bytes.assign(file.begin() + ph.p_offset, file.begin() + ph.p_offset + ph.p_filesz);
        img.segments.push_back(std::move(seg));
    }
    if (img.segments.empty()) refuse(path, "no loadable segment");
    std::sort(img.segments.begin(), img.segments.end(),
              [](const auto& a, const auto& b) { return a.address < b.address; });
    for (std::size_t i = 1; i < img.segments.size(); ++i) {
        const auto& p = img.segments[i - 1];
        if (static_cast<std::uint64_t>(p.address) + p.memory_size > img.segments[i].address)
            refuse(path, fmt::format("segments overlap at 0x{:08x}", img.segments[i].address));
    }

    // Symbols (optional): .symtab and its string table.
    if (eh.e_shoff && eh.e_shnum && eh.e_shentsize == sizeof(Elf32_Shdr)) {
        need(eh.e_shoff, static_cast<std::uint64_t>(eh.e_shnum) * sizeof(Elf32_Shdr), "section headers");
        std::vector<Elf32_Shdr> sh(eh.e_shnum);
        std::memcpy(sh.data(), file.data() + eh.e_shoff, sh.size() * sizeof(Elf32_Shdr));
        for (const Elf32_Shdr& s : sh) {
            if (s.sh_type != SHT_SYMTAB || s.sh_link >= sh.size()) continue;
            const Elf32_Shdr& strtab = sh[s.sh_link];
            need(s.sh_offset, s.sh_size, "symbol table");
            need(strtab.sh_offset, strtab.sh_size, "string table");
            for (std::uint32_t off = 0; off + sizeof(Elf32_Sym) <= s.sh_size; off += sizeof(Elf32_Sym)) {
                Elf32_Sym sym;
                std::memcpy(&sym, file.data() + s.sh_offset + off, sizeof sym);
                if (sym.st_name == 0 || sym.st_name >= strtab.sh_size) continue;
                const char* name = reinterpret_cast<const char*>(file.data() + strtab.sh_offset + sym.st_name);
                const std::size_t max = strtab.sh_size - sym.st_name;
                img.symbols[std::string(name, strnlen(name, max))] = sym.st_value;
            }
        }
    }
    return img;
}

}  // namespace trn3::mcu
