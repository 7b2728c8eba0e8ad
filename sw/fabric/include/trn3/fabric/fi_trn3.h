/* The trn3vp provider's extensions to libfabric's API (as fi_ext.h holds
 * other providers'): operation flags in the range libfabric leaves to
 * providers (bits 60-63, fabric.h). C and C++. */
#ifndef TRN3_FABRIC_FI_TRN3_H
#define TRN3_FABRIC_FI_TRN3_H

/* fi_writemsg / fi_readmsg: the operation is timed only (simulation only):
 * it is checked, protected and completed as ever, and its bytes take their
 * time on PCIe and on the network, but none is read or written (the NIC's
 * TRN3_NIC_WQE_TIMING_ONLY). What a timed-only collective row uses, so it
 * costs no host memory. Not with FI_INJECT (-FI_EINVAL). */
#define FI_TRN3_TIMING_ONLY (1ULL << 60)

#endif
