/* PCI Express configuration space as the platform implements it: the
 * offsets and bits of the type-0 and type-1 headers and of the capabilities
 * the models provide, the IDs of the devices, and the ECAM address layout.
 * Shared by the models (models/pcie), the host driver's enumeration
 * (sw/driver) and firmware. The values are the PCI Express Base
 * Specification's; docs/pcie.md lists what each device implements. Plain C.
 */
#ifndef TRN3_SPEC_PCI_H
#define TRN3_SPEC_PCI_H

#include <stdint.h>

/* IDs */
#define TRN3_PCI_VENDOR_AMAZON 0x1D0Fu /* Amazon's PCI vendor id */
#define TRN3_PCI_DEVICE_TRN3 0x7364u /* Trainium3 chip, function 0 */
#define TRN3_PCI_DEVICE_TEST_EP 0x7FF0u /* the fabric tests' endpoint */
#define TRN3_PCI_DEVICE_NIC 0x7A00u /* the Nitro-v6 scale-out NIC (spec/nic.h) */
#define TRN3_PCI_CLASS_NETWORK 0x020000u /* Ethernet controller */
#define TRN3_PCI_DEVICE_ROOT_PORT 0x7F00u /* the host's root port */
#define TRN3_PCI_DEVICE_SWITCH_UP 0x7F10u /* a switch's upstream port */
#define TRN3_PCI_DEVICE_SWITCH_DN 0x7F11u /* a switch's downstream port */
#define TRN3_PCI_CLASS_ACCELERATOR 0x120000u /* processing accelerator */
#define TRN3_PCI_CLASS_BRIDGE_P2P 0x060400u /* PCI-to-PCI bridge */

/* ECAM: one 4 KiB page per function at base + (bus << 20 | dev << 15 | fn << 12) */
#define TRN3_ECAM_OFFSET(bus, dev, fn) (((uint64_t)(bus) << 20) | ((uint64_t)(dev) << 15) | ((uint64_t)(fn) << 12))
#define TRN3_ECAM_BDF(offset) ((uint16_t)((offset) >> 12)) /* the function an ECAM offset addresses */
#define TRN3_ECAM_REGISTER(offset) ((offset)&0xFFFu) /* and the register in its space */
#define TRN3_PCI_BDF(bus, dev, fn) ((uint16_t)(((bus) << 8) | ((dev) << 3) | (fn)))
#define TRN3_PCI_BDF_BUS(bdf) (((bdf) >> 8) & 0xFFu)
#define TRN3_PCI_BDF_DEV(bdf) (((bdf) >> 3) & 0x1Fu)
#define TRN3_PCI_BDF_FN(bdf) ((bdf)&0x7u)
#define TRN3_PCI_CONFIG_SIZE 4096u
#define TRN3_PCI_DEVICES_PER_BUS 32u /* device numbers 0..31 */
#define TRN3_PCI_FUNCTIONS 8u /* function numbers 0..7 */

/* Common header */
#define TRN3_PCI_VENDOR_ID 0x00u /* 16 */
#define TRN3_PCI_DEVICE_ID 0x02u /* 16 */
#define TRN3_PCI_COMMAND 0x04u /* 16 */
#define TRN3_PCI_STATUS 0x06u /* 16 */
#define TRN3_PCI_CLASS_REV 0x08u /* 32: class << 8 | revision */
#define TRN3_PCI_HEADER_TYPE 0x0Eu /* 8: 0 endpoint, 1 bridge; bit 7 multi-function */
#define TRN3_PCI_BAR0 0x10u /* type 0: six BARs at 0x10..0x24; type 1: two */
#define TRN3_PCI_BAR(i) (TRN3_PCI_BAR0 + 4u * (i)) /* a 64-bit BAR i takes slots i and i + 1 */
#define TRN3_PCI_CAP_PTR 0x34u /* 8 */
#define TRN3_PCI_INTERRUPT_LINE 0x3Cu

#define TRN3_PCI_COMMAND_MEMORY 0x0002u /* respond to memory requests */
#define TRN3_PCI_COMMAND_BUS_MASTER 0x0004u /* may issue requests */
#define TRN3_PCI_STATUS_CAP_LIST 0x0010u
#define TRN3_PCI_STATUS_SIG_TARGET_ABORT 0x0800u /* W1C: sent a completer abort */
#define TRN3_PCI_STATUS_REC_MASTER_ABORT 0x2000u /* W1C: received an unsupported request completion */
#define TRN3_PCI_STATUS_DETECTED_PARITY 0x8000u /* W1C: received a poisoned TLP */

#define TRN3_PCI_HEADER_TYPE_ENDPOINT 0x00u /* HEADER_TYPE layout: type 0 */
#define TRN3_PCI_HEADER_TYPE_BRIDGE 0x01u /* type 1 */
#define TRN3_PCI_HEADER_TYPE_LAYOUT(v) ((v)&0x7Fu)
#define TRN3_PCI_HEADER_TYPE_MULTI_FUNCTION 0x80u

#define TRN3_PCI_BAR_IO 0x1u /* bit 0: an I/O BAR (ours are all memory) */
#define TRN3_PCI_BAR_TYPE 0x6u /* a memory BAR's type, bits 2:1 */
#define TRN3_PCI_BAR_MEM64 0x4u /* BAR type bits 2:1 = 10b: 64-bit */
#define TRN3_PCI_BAR_PREFETCH 0x8u
#define TRN3_PCI_BAR_FLAGS 0xFu /* a memory BAR's bits 3:0: type and prefetchable, not address */

/* Type-1 (bridge) header */
#define TRN3_PCI_PRIMARY_BUS 0x18u
#define TRN3_PCI_SECONDARY_BUS 0x19u
#define TRN3_PCI_SUBORDINATE_BUS 0x1Au
#define TRN3_PCI_MEMORY_BASE 0x20u /* 16: bits 15:4 = address 31:20 */
#define TRN3_PCI_MEMORY_LIMIT 0x22u /* 16: bits 15:4 = address 31:20 (inclusive, | 0xFFFFF) */
#define TRN3_PCI_PREF_MEMORY_BASE 0x24u /* 16: bits 15:4 = address 31:20; bits 3:0 = 1: 64-bit */
#define TRN3_PCI_PREF_MEMORY_LIMIT 0x26u
#define TRN3_PCI_PREF_BASE_UPPER 0x28u /* 32: address 63:32 */
#define TRN3_PCI_PREF_LIMIT_UPPER 0x2Cu
/* A window register's bits 15:4 hold address bits 31:20 (1 MiB granules); a
 * limit covers its whole granule. PREF_MEMORY_BASE/LIMIT bits 3:0 = 1: 64-bit. */
#define TRN3_PCI_WINDOW_MASK 0xFFF0u
#define TRN3_PCI_WINDOW_ADDR(v) (((uint64_t)(v)&TRN3_PCI_WINDOW_MASK) << 16)
#define TRN3_PCI_WINDOW_FIELD(a) ((uint32_t)((a) >> 16) & TRN3_PCI_WINDOW_MASK)
#define TRN3_PCI_WINDOW_GRANULE 0x100000ull
#define TRN3_PCI_PREF_64BIT 0x1u

/* Capabilities (standard list from CAP_PTR; extended list from 0x100) */
#define TRN3_PCI_CAP_ID_PCIE 0x10u
#define TRN3_PCI_CAP_ID_MSIX 0x11u
#define TRN3_PCI_EXT_CAP_ID_AER 0x0001u
#define TRN3_PCI_EXT_CAP_ID_ACS 0x000Du

/* Where the models place them (fixed, so the listing and tests can name them) */
#define TRN3_PCI_PCIE_CAP 0x40u
#define TRN3_PCI_MSIX_CAP 0x80u /* endpoints only */
#define TRN3_PCI_AER_CAP 0x100u
#define TRN3_PCI_ACS_CAP 0x140u /* switch downstream ports only */

/* Capability headers. Standard: byte 0 the ID, byte 1 the next pointer.
 * Extended: bits 15:0 the ID, 19:16 the version, 31:20 the next offset. */
#define TRN3_PCI_CAP_NEXT 0x01u
#define TRN3_PCI_EXT_CAP_ID(h) ((h)&0xFFFFu)
#define TRN3_PCI_EXT_CAP_VERSION(h) (((h) >> 16) & 0xFu)
#define TRN3_PCI_EXT_CAP_NEXT(h) (((h) >> 20) & 0xFFFu)
#define TRN3_PCI_EXT_CAP_HEADER(id, version, next) \
    ((uint32_t)(id) | ((uint32_t)(version) << 16) | ((uint32_t)(next) << 20))

/* PCI Express capability (offsets from its start) */
#define TRN3_PCIE_CAPS 0x02u /* 16: bits 7:4 device/port type */
#define TRN3_PCIE_LINK_CAP 0x0Cu /* 32: bits 3:0 max speed, 9:4 max width */
#define TRN3_PCIE_LINK_CONTROL 0x10u
#define TRN3_PCIE_LINK_STATUS 0x12u /* 16: bits 3:0 speed, 9:4 width, 13 DL active */
#define TRN3_PCIE_LINK_STATUS2 0x32u /* 16: bit 10 flit mode (PCIe 6.0) */
#define TRN3_PCIE_CAPS_VERSION(v) ((v)&0xFu)
#define TRN3_PCIE_CAPS_TYPE(v) (((v) >> 4) & 0xFu) /* TRN3_PCIE_TYPE_* */
#define TRN3_PCIE_CAPS_VALUE(type, version) ((uint32_t)(version) | ((uint32_t)(type) << 4))
#define TRN3_PCIE_CAP_VERSION 2u /* ours; from version 2 on, LINK_STATUS2 and the other "2" registers exist */
#define TRN3_PCIE_TYPE_ENDPOINT 0x0u
#define TRN3_PCIE_TYPE_ROOT_PORT 0x4u
#define TRN3_PCIE_TYPE_UPSTREAM 0x5u
#define TRN3_PCIE_TYPE_DOWNSTREAM 0x6u
/* LINK_CAP bits 9:0 and LINK_STATUS bits 9:0 alike: speed and width */
#define TRN3_PCIE_LINK_SPEED(v) ((v)&0xFu)
#define TRN3_PCIE_LINK_WIDTH(v) (((v) >> 4) & 0x3Fu)
#define TRN3_PCIE_LINK_VALUE(speed, width) ((uint32_t)(speed) | ((uint32_t)(width) << 4))
#define TRN3_PCIE_LINK_DL_ACTIVE 0x2000u
#define TRN3_PCIE_LINK_STATUS2_FLIT_MODE 0x0400u
/* Link speed codes: 1 2.5 GT/s ... 4 16 GT/s, 5 32 GT/s, 6 64 GT/s.
 * Width: lanes (x1 .. x64; NeuronLink bundles report their lane count). */
#define TRN3_PCIE_SPEED_GEN5 5u /* 32 GT/s */
#define TRN3_PCIE_SPEED_GEN6 6u /* 64 GT/s */
#define TRN3_PCIE_SPEED_UALINK 7u /* not a PCIe code: UALink's 200 Gb/s lanes (spec/link.h STATUS) */

/* MSI-X capability (offsets from its start) */
#define TRN3_MSIX_CONTROL 0x02u /* 16: bits 10:0 table size - 1, 14 function mask, 15 enable */
#define TRN3_MSIX_TABLE 0x04u /* 32: bits 2:0 BAR, 31:3 offset */
#define TRN3_MSIX_PBA 0x08u /* 32: bits 2:0 BAR, 31:3 offset */
#define TRN3_MSIX_ENABLE 0x8000u
#define TRN3_MSIX_FUNCTION_MASK 0x4000u
#define TRN3_MSIX_TABLE_SIZE_MASK 0x07FFu /* CONTROL bits 10:0: entries - 1 */
/* A table entry: 16 bytes */
#define TRN3_MSIX_ENTRY_ADDR_LO 0x0u
#define TRN3_MSIX_ENTRY_ADDR_HI 0x4u
#define TRN3_MSIX_ENTRY_DATA 0x8u
#define TRN3_MSIX_ENTRY_CONTROL 0xCu /* bit 0: vector masked */
#define TRN3_MSIX_ENTRY_MASKED 0x1u
#define TRN3_MSIX_ENTRY_SIZE 16u
/* Our endpoints keep the table at offset 0 of their MSI-X BAR and the PBA here */
#define TRN3_EP_MSIX_BAR 4u
#define TRN3_EP_MSIX_PBA_OFFSET 0x8000u

/* AER (offsets from its start) */
#define TRN3_AER_UNCOR_STATUS 0x04u /* 32, W1C */
#define TRN3_AER_POISONED_TLP 0x00001000u
#define TRN3_AER_COMPLETION_TIMEOUT 0x00004000u
#define TRN3_AER_COMPLETER_ABORT 0x00008000u
#define TRN3_AER_UNEXPECTED_COMPLETION 0x00010000u
#define TRN3_AER_MALFORMED_TLP 0x00040000u
#define TRN3_AER_UNSUPPORTED_REQUEST 0x00100000u
#define TRN3_AER_ACS_VIOLATION 0x00200000u

/* ACS (offsets from its start) */
#define TRN3_ACS_CAPS 0x04u /* 16 */
#define TRN3_ACS_CONTROL 0x06u /* 16 */
#define TRN3_ACS_REQUEST_REDIRECT 0x0004u /* P2P requests go upstream */
#define TRN3_ACS_COMPLETION_REDIRECT 0x0008u /* P2P completions go upstream */
#define TRN3_ACS_UPSTREAM_FORWARDING 0x0010u /* forward upstream what a port below redirected to us */
#define TRN3_ACS_EGRESS_CONTROL 0x0020u /* P2P requests blocked (ACS violation) */

/* MSI target window on the host (writes here are interrupts, not memory) */
#define TRN3_MSI_WINDOW_BASE 0xFEE00000ull
#define TRN3_MSI_WINDOW_SIZE 0x00100000ull

#endif /* TRN3_SPEC_PCI_H */
