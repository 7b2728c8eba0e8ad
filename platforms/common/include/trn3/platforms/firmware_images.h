// The MCU images this build made (firmware/): the firmware ELF, the boot ROM
// ELF and the firmware's SHA-256 digest that the chips' fuses hold by
// default. Every platform with MCUs boots these unless its params say other.
#pragma once

#include "trn3/mcu/mcu.h"

namespace trn3 {

const mcu::mcu::images& build_firmware_images();

}  // namespace trn3
