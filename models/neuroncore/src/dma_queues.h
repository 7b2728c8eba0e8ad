// The core's DMA queues (param dma_queues, 16): a DMA instruction names its
// queue (flags >> 4); each queue takes its descriptors in order, and the
// transfers share the core's DMA bandwidth (a calendar). The copy is
// visible when the instruction is issued; its semaphore signal lands when
// the queue finishes it, which is when a kernel that waits may look.
#pragma once

#include <vector>

#include "engine_common.h"
#include "trn3/core/calendar.h"
#include "trn3/core/stats.h"

namespace trn3::neuroncore {

class device_port;
class sbuf_psum;
class semaphore_bank;

class dma_queues {
public:
    dma_queues(const neuroncore& core, sbuf_psum& memory, device_port& port, semaphore_bank& semaphores);

    // dst = src0 element by element over the pattern, with a cast; throws fault.
    void issue(const engine_state& es, const isa::instruction& ins);

private:
    const neuroncore& core_;
    sbuf_psum& memory_;
    device_port& port_;
    semaphore_bank& semaphores_;
    calendar bus_;
    std::vector<calendar::tick> queue_free_;
    counter dma_bytes_;
};

}  // namespace trn3::neuroncore
