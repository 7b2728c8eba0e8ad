// What the PCIe test files share: TLP makers, a test's own thread, and an
// arrival log on a link end.
#pragma once

#include <functional>
#include <vector>

#include "rig.h"
#include "trn3/pcie/tlp.h"

namespace trn3::pcie_test {

using namespace trn3::pcie;
using sc_core::sc_time;
using sc_core::SC_US;

inline constexpr std::uint64_t high = 0x4000000000ull;  // a 64-bit address: 4-DW headers
inline const sc_time l0_no_retimer = sc_time(29, SC_US);  // detect 1 + polling 4 + config 2 + eq 1 + 1 + (10 + 10) x 1

inline tlp mwr(std::uint64_t address, std::uint32_t length, std::uint32_t count = 1) {
    tlp t;
    t.type = tlp_type::mem_write;
    t.address = address;
    t.length = length;
    t.count = count;
    t.data.assign(std::uint64_t(length) * count, 0x5A);
    return t;
}

// A test's own thread: runs `body` from time 0.
struct script : sc_core::sc_module {
    std::function<void()> body;
    script(const sc_core::sc_module_name& n, std::function<void()> b) : sc_core::sc_module(n), body(std::move(b)) {
        SC_HAS_PROCESS(script);
        SC_THREAD(run);
    }
    void run() { body(); }
};

struct arrivals {
    std::vector<sc_time> head, tail;
    void attach(link_end& e) {
        e.on_receive([this](tlp& t) {
            head.push_back(sc_core::sc_time_stamp());
            tail.push_back(sc_core::sc_time_stamp() + t.train_span);
        });
    }
};

}  // namespace trn3::pcie_test
