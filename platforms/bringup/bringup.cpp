// bringup: the smallest platform that runs the whole modelling core.
//
//      tg0 ──┐                 ┌── dram  (0x0000_0000_0000, 144 GiB, sparse)
//            ├── bus (router) ─┤
//      tg1 ──┘                 └── sram  (0x0100_0000_0000, 256 KiB)
//
// tg0 streams over the first MiB of dram through DMI; tg1 hits sram at random
// through b_transport. Both check every byte they read back. The run passes
// when both finish with no mismatch and no error response.
#include <memory>

#include <fmt/format.h>

#include "trn3/core/protocol_checker.h"
#include "trn3/core/router.h"
#include "trn3/core/sparse_memory.h"
#include "trn3/core/traffic_generator.h"
#include "trn3/platforms/platform.h"

namespace trn3 {
namespace {

class bringup final : public platform {
public:
    param<std::uint64_t> dram_base{this, "dram_base", 0x0, "address of dram on the bus", address_range()};
    param<std::uint64_t> sram_base{this, "sram_base", 0x0100'0000'0000ull, "address of sram on the bus",
                                   address_range()};

    traffic_generator tg0{"tg0", {dram_base, byte_count{1 << 20}, 100000, byte_count{64}, "sequential", true}};
    traffic_generator tg1{"tg1", {sram_base, byte_count{256 << 10}, 20000, byte_count{8}, "random", false}};
    router bus{"bus"};
    sparse_memory dram{"dram", byte_count{144ull << 30}};
    sparse_memory sram{"sram", byte_count{256 << 10}};

    explicit bringup(const sc_core::sc_module_name& name) : platform(name) {
        tg0.observe_dmi(connect(tg0.out, bus.in));
        tg1.observe_dmi(connect(tg1.out, bus.in));
        bus.map(dram.in, dram_base, dram.size.get().bytes, "dram");
        bus.map(sram.in, sram_base, sram.size.get().bytes, "sram");
        SC_HAS_PROCESS(bringup);
        SC_THREAD(wait_for_traffic);
    }

    bool passed() const override {
        return tg0.finished() && tg1.finished() &&
               tg0.mismatches() + tg1.mismatches() + tg0.errors() + tg1.errors() == 0;
    }

    void report(std::ostream& os) const override {
        os << bus.memory_map_text();
        for (const traffic_generator* tg : {&tg0, &tg1})
            os << fmt::format("{}: {} blocks of {} over [0x{:x}, +{}), {} mismatches, {} errors\n", tg->name(),
                              tg->count.get(), format_byte_count(tg->block), tg->base.get(),
                              format_byte_count(tg->window), tg->mismatches(), tg->errors());
        os << fmt::format("dram: {} reserved, {} pages resident\n", format_byte_count(dram.size),
                          dram.resident_pages());
    }

private:
    void wait_for_traffic() {
        if (!tg0.finished()) wait(tg0.done_event());
        if (!tg1.finished()) wait(tg1.done_event());
        sc_core::sc_stop();
    }
};

const platform_registration registration{
    "bringup", "traffic generators, a router and sparse memories: the modelling core end to end",
    [] { return std::make_unique<bringup>("bringup"); }};

}  // namespace
}  // namespace trn3
