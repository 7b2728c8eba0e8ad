// DRAM timing of one HBM3E pseudo-channel, in integer picoseconds.
//
// Filled from the stack's params (hbm_stack.h lists them with defaults and
// descriptions); kept as plain integers because the pseudo-channel engine
// does a few dozen max/add operations per request on them.
#pragma once

#include <cstdint>

namespace trn3::hbm {

using ps_t = std::uint64_t;

struct timing {
    ps_t t_burst;  // one burst of burst_bytes on the channel's data bus
    ps_t t_cl;  // READ to first data
    ps_t t_wl;  // WRITE to first data
    ps_t t_rcd;  // ACT to READ/WRITE
    ps_t t_rp;  // PRE to ACT
    ps_t t_ras;  // ACT to PRE
    ps_t t_rc;  // ACT to ACT, same bank
    ps_t t_faw;  // window holding at most four ACTs
    ps_t t_rrd_s;  // ACT to ACT, different bank groups
    ps_t t_rrd_l;  // ACT to ACT, same bank group
    ps_t t_ccd_s;  // column to column, different bank groups
    ps_t t_ccd_l;  // column to column, same bank group
    ps_t t_wr;  // end of write data to PRE
    ps_t t_wtr;  // end of write data to a READ (write-to-read turnaround)
    ps_t t_rtw;  // end of read data to a WRITE (read-to-write turnaround)
    ps_t t_refi;  // refresh interval
    ps_t t_rfc;  // all-bank refresh time
    unsigned write_queue_high;  // drain writes when this many are queued...
    unsigned write_queue_low;  // ...down to this many
    ps_t idle_drain;  // drain all queued writes when the channel has been idle this long
    ps_t reorder_window;  // how far before the latest arrival a request may still take a free gap
    unsigned read_queue;  // reads a channel holds; a read finding it full waits for the oldest to finish
};

}  // namespace trn3::hbm
