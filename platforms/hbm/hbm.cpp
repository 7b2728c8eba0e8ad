// hbm: one Trainium3's memory, driven end to end.
//
//      tg0 ─┐                ┌─ hbm0  0x0000_0000_0000   36 GiB
//      tg1 ─┤                ├─ hbm1  0x0040_0000_0000   36 GiB
//      tg2 ─┼── bus (router) ┼─ hbm2  0x8000_0000_0000   36 GiB   (bit 47 picks the die)
//      tg3 ─┘                └─ hbm3  0x8040_0000_0000   36 GiB
//
// Each traffic generator writes and verifies a window of its own stack.
// Every stack's memory-error interrupt is wired to the platform, which
// counts and logs the edges (the management controller takes this wire when
// it lands). The run passes when every byte read back matches and no access
// got an error response: an uncorrectable ECC error therefore fails it,
// never silently.
//
//   trn3vp run --platform hbm -p hbm.hbm1.ecc.single_rate=1e-4     # corrected: passes
//   trn3vp run --platform hbm -p hbm.hbm2.ecc.double_rate=1e-5     # poisoned: fails
#include <array>
#include <memory>

#include <fmt/format.h>

#include "trn3/core/protocol_checker.h"
#include "trn3/core/router.h"
#include "trn3/core/traffic_generator.h"
#include "trn3/hbm/hbm_stack.h"
#include "trn3/platforms/platform.h"

namespace trn3 {
namespace {

constexpr int stack_count = 4;

class hbm_platform final : public platform {
public:
    // The device address map of the stacks (reference: Trainium driver concepts).
    param<std::uint64_t> hbm0_base{this, "hbm0_base", 0x0000'0000'0000ull, "address of stack 0", address_range()};
    param<std::uint64_t> hbm1_base{this, "hbm1_base", 0x0040'0000'0000ull, "address of stack 1", address_range()};
    param<std::uint64_t> hbm2_base{this, "hbm2_base", 0x8000'0000'0000ull, "address of stack 2", address_range()};
    param<std::uint64_t> hbm3_base{this, "hbm3_base", 0x8040'0000'0000ull, "address of stack 3", address_range()};

    router bus{"bus"};
    std::array<std::unique_ptr<hbm::hbm_stack>, stack_count> stacks;
    std::array<std::unique_ptr<traffic_generator>, stack_count> tgs;
    counter irq_edges{this, "mem_error_irqs", "rising edges of the stacks' memory-error interrupts"};

    explicit hbm_platform(const sc_core::sc_module_name& name) : platform(name) {
        const std::uint64_t bases[stack_count] = {hbm0_base, hbm1_base, hbm2_base, hbm3_base};
        for (int s = 0; s < stack_count; ++s) {
            stacks[s] = std::make_unique<hbm::hbm_stack>(fmt::format("hbm{}", s).c_str());
            tgs[s] = std::make_unique<traffic_generator>(fmt::format("tg{}", s).c_str(),
                                                         traffic_generator::defaults{bases[s], byte_count{4 << 20},
                                                                                     20000, byte_count{4096},
                                                                                     "sequential", true, true});
        }
        for (int s = 0; s < stack_count; ++s) {
            tgs[s]->observe_dmi(connect(tgs[s]->out, bus.in));
            bus.map(stacks[s]->in, bases[s], stacks[s]->size.get().bytes, fmt::format("hbm{}", s));
            stacks[s]->mem_error.on_change([this, s](bool level) {
                if (!level) return;
                ++irq_edges;
                log().warn("memory-error interrupt from hbm{}", s);
            });
        }
        SC_HAS_PROCESS(hbm_platform);
        SC_THREAD(wait_for_traffic);
    }

    bool passed() const override {
        for (const auto& tg : tgs)
            if (!tg->finished() || tg->mismatches() || tg->errors()) return false;
        return true;
    }

    void report(std::ostream& os) const override {
        os << bus.memory_map_text();
        auto stat = [](const std::string& name) {
            const stat_base* s = stats_registry::instance().find(name);
            return s ? s->to_json().dump() : std::string("?");
        };
        for (int s = 0; s < stack_count; ++s) {
            const std::string n = stacks[s]->name();
            os << fmt::format(
                "{}: {} reads, {} writes, ECC corrected {}, uncorrectable {}; {}: {} mismatches, {} errors\n", n,
                stat(n + ".reads"), stat(n + ".writes"), stat(n + ".ecc_corrected"), stat(n + ".ecc_uncorrectable"),
                tgs[s]->name(), tgs[s]->mismatches(), tgs[s]->errors());
        }
        os << fmt::format("memory-error interrupts: {}\n", irq_edges.value());
    }

private:
    void wait_for_traffic() {
        for (auto& tg : tgs)
            if (!tg->finished()) wait(tg->done_event());
        sc_core::sc_stop();
    }
};

const platform_registration registration{
    "hbm", "one Trainium3's four HBM3E stacks at the device addresses, written and verified by traffic generators",
    [] { return std::make_unique<hbm_platform>("hbm"); }};

}  // namespace
}  // namespace trn3
