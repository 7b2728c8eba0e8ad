// Fuzz target: the MCU firmware's ELF reader (models/mcu elf_image::parse).
// Any bytes are read or refused with config_error (one line), never a
// crash, a read past the file or a hang; what is read has segments that
// hold their bytes and do not overlap.
#include <cstdint>
#include <vector>

#include "fuzz_check.h"
#include "trn3/core/error.h"
#include "trn3/mcu/elf_image.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::vector<std::uint8_t> file(data, data + size);
    try {
        const trn3::mcu::elf_image img = trn3::mcu::elf_image::parse(file, "fuzz");
        TRN3_FUZZ_CHECK(!img.segments.empty());
        for (std::size_t i = 0; i < img.segments.size(); ++i) {
            const auto& s = img.segments[i];
            TRN3_FUZZ_CHECK(s.bytes.size() <= s.memory_size);
            if (i > 0) {
                const auto& p = img.segments[i - 1];
                TRN3_FUZZ_CHECK(std::uint64_t(p.address) + p.memory_size <= s.address);
            }
        }
    } catch (const trn3::config_error&) {}
    return 0;
}
