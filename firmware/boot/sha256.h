/* SHA-256 (FIPS 180-4), for the boot ROM's image check. */
#ifndef TRN3_BOOT_SHA256_H
#define TRN3_BOOT_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* digest = SHA-256 of the `size` bytes at `data`. */
void sha256(const uint8_t* data, size_t size, uint8_t digest[32]);

#endif
