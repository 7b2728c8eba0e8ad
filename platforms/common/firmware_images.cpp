#include "trn3/platforms/firmware_images.h"

#include <fstream>
#include <string>

namespace trn3 {

const mcu::mcu::images& build_firmware_images() {
    static const mcu::mcu::images images = [] {
        std::ifstream in(TRN3_FIRMWARE_DIGEST_FILE);
        std::string digest;
        in >> digest;
        return mcu::mcu::images{TRN3_FIRMWARE_ELF, TRN3_BOOT_ROM_ELF, digest};
    }();
    return images;
}

}  // namespace trn3
