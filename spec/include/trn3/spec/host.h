/* The hosts' PCI address windows: where a host's firmware places the memory
 * its enumerator hands to BARs and bridge windows (the non-prefetchable
 * window below 4 GiB, the 64-bit prefetchable one above). Shared by the
 * platforms that build hosts and the host programs that enumerate. Plain C.
 */
#ifndef TRN3_SPEC_HOST_H
#define TRN3_SPEC_HOST_H

/* A compute tray's (or JBOG's) host, up to 8 chips of 512 GiB BAR2 each. */
#define TRN3_TRAY_MMIO32_BASE 0x80000000ull
#define TRN3_TRAY_MMIO32_SIZE 0x70000000ull
#define TRN3_TRAY_MMIO64_BASE 0x100000000000ull
#define TRN3_TRAY_MMIO64_SIZE (1ull << 44)

/* A development host with one chip (trn3-dev). */
#define TRN3_DEVHOST_MMIO32_BASE 0xE0000000ull
#define TRN3_DEVHOST_MMIO32_SIZE 0x10000000ull
#define TRN3_DEVHOST_MMIO64_BASE 0x100000000000ull
#define TRN3_DEVHOST_MMIO64_SIZE (1ull << 40)

/* A PCIe test bench's bare root complex (the pcie platform). */
#define TRN3_BENCH_MMIO32_BASE 0xE0000000ull
#define TRN3_BENCH_MMIO32_SIZE 0x10000000ull
#define TRN3_BENCH_MMIO64_BASE 0x4000000000ull
#define TRN3_BENCH_MMIO64_SIZE (1ull << 40)

#endif /* TRN3_SPEC_HOST_H */
