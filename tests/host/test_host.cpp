// The host's IOMMU and DDR5 memory.
#include <catch2/catch.hpp>

#include <cstring>
#include <functional>

#include <tlm_utils/simple_initiator_socket.h>

#include "trn3/core/payload.h"
#include "trn3/host/ddr5_memory.h"
#include "trn3/host/graviton4.h"
#include "trn3/host/iommu.h"
#include "trn3/pcie/requester_id.h"

using namespace trn3;
using sc_core::sc_time;

namespace {

// Device accesses (with a requester id) into the IOMMU, from a thread.
struct device_port : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<device_port> out{"out"};
    std::function<void(device_port&)> body;
    explicit device_port(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {
        SC_HAS_PROCESS(device_port);
        SC_THREAD(run);
    }
    void run() {
        if (body) body(*this);
    }
    tlm::tlm_response_status access(std::uint16_t bdf, tlm::tlm_command cmd, std::uint64_t a, void* d, unsigned n,
                                    sc_time* took = nullptr) {
        tlm::tlm_generic_payload tx;
        sc_time delay;
        set_access(tx, cmd, a, d, n);
        pcie::requester_id id;
        id.bdf = bdf;
        tx.set_extension(&id);
        out->b_transport(tx, delay);
        tx.clear_extension(&id);
        if (took) *took = delay;
        return tx.get_response_status();
    }
};

}  // namespace

TEST_CASE("the IOMMU translates per device and page, refuses unmapped and read-only pages, and moves nothing then") {
    host::iommu mmu("mmu");
    host::ddr5_memory ddr("ddr");
    device_port dev("dev");
    dev.out.bind(mmu.in);
    mmu.out.bind(ddr.in);
    struct fault_record {
        std::uint16_t device;
        std::uint64_t address;
        bool write;
    };
    std::vector<fault_record> faults;
    mmu.fault = [&](std::uint16_t d, std::uint64_t a, bool write) { faults.push_back({d, a, write}); };
    // Bus pages 0x10000..0x12fff of device 01:00.0 map to physical 0x50000, 0x90000 (not contiguous), 0x91000.
    mmu.map(0x0100, 0x10000, 0x50000, 4096, true);
    mmu.map(0x0100, 0x11000, 0x90000, 8192, true);
    mmu.map(0x0100, 0x20000, 0x60000, 4096, false);  // read-only
    std::vector<std::uint8_t> data(3 * 4096);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 13);
    tlm::tlm_response_status across = tlm::TLM_INCOMPLETE_RESPONSE, other = across, ro = across, unmapped = across,
                             back = across;
    std::vector<std::uint8_t> readback(3 * 4096 - 100);
    dev.body = [&](device_port& d) {
        across = d.access(0x0100, tlm::TLM_WRITE_COMMAND, 0x10000, data.data(), static_cast<unsigned>(data.size()));
        back =
            d.access(0x0100, tlm::TLM_READ_COMMAND, 0x10064, readback.data(), static_cast<unsigned>(readback.size()));
        other = d.access(0x0200, tlm::TLM_READ_COMMAND, 0x10000, readback.data(), 4);  // another device: no mapping
        std::uint8_t x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        ro = d.access(0x0100, tlm::TLM_WRITE_COMMAND, 0x20000, x, 8);
        // Spans a mapped page and an unmapped one: refused as a whole.
        unmapped = d.access(0x0100, tlm::TLM_WRITE_COMMAND, 0x12ffc, x, 8);
    };
    sc_core::sc_start();
    CHECK(across == tlm::TLM_OK_RESPONSE);
    CHECK(std::memcmp(ddr.data() + 0x50000, data.data(), 4096) == 0);
    CHECK(std::memcmp(ddr.data() + 0x90000, data.data() + 4096, 8192) == 0);
    CHECK(back == tlm::TLM_OK_RESPONSE);
    CHECK(std::memcmp(readback.data(), data.data() + 100, readback.size()) == 0);
    CHECK(other == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK(ro == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK(ddr.data()[0x60000] == 0);
    CHECK(unmapped == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK(ddr.data()[0x91ffc] == data[2 * 4096 + 4092]);  // the mapped half was not written either
    REQUIRE(faults.size() == 3);
    CHECK((faults[0].device == 0x0200 && faults[0].address == 0x10000 && !faults[0].write));
    CHECK((faults[1].device == 0x0100 && faults[1].address == 0x20000 && faults[1].write));  // read-only page
    CHECK((faults[2].device == 0x0100 && faults[2].address == 0x13000 && faults[2].write));  // the unmapped page
    CHECK(mmu.faults() == 3);
}

TEST_CASE("DDR5 at 12 x 5600 MT/s moves 537.6 GB/s: back-to-back accesses queue on the bus") {
    host::ddr5_memory ddr("ddr");
    device_port dev("dev");
    dev.out.bind(ddr.in);
    sc_time first, second;
    dev.body = [&](device_port& d) {
        std::vector<std::uint8_t> buf(537600);  // 1 us of bandwidth
        d.access(0, tlm::TLM_WRITE_COMMAND, 0, buf.data(), static_cast<unsigned>(buf.size()), &first);
        d.access(0, tlm::TLM_WRITE_COMMAND, 1 << 20, buf.data(), static_cast<unsigned>(buf.size()), &second);
    };
    sc_core::sc_start();
    CHECK(ddr.bytes_per_second() == 537.6e9);
    CHECK(first == sc_time(1, sc_core::SC_US) + sc_time(100, sc_core::SC_NS));
    CHECK(second == sc_time(2, sc_core::SC_US) + sc_time(100, sc_core::SC_NS));  // waited for the first on the bus
}

TEST_CASE("host memory that runs out is the software's failure: alloc answers no_memory, the simulator goes on") {
    param_registry::instance().set_pending_text("g.ddr.size", "2GiB", "test");
    host::graviton4 g("g");  // DMA buffers from 1 GiB up
    const std::uint64_t a = g.alloc(512ull << 20);
    CHECK(a == (1ull << 30));
    CHECK(g.alloc(1ull << 30) == host::graviton4::no_memory);
    CHECK(g.alloc(512ull << 20) == a + (512ull << 20));  // what is left can still be had
}
