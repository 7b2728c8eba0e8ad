#include "trn3/platforms/fabric_binding.h"

#include <cstdlib>
#include <map>

#include <systemc>

namespace trn3::fabric {
namespace {

// One per software context; all of them run on the simulation's one thread.
std::map<const sc_core::sc_process_b*, binding>& bindings() {
    static std::map<const sc_core::sc_process_b*, binding> all;
    return all;
}

}  // namespace

void attach(const binding& b) {
    ::setenv("FI_PROVIDER_PATH", TRN3_FABRIC_PROVIDER_DIR, 0);
    bindings()[sc_core::sc_get_current_process_b()] = b;
}

void detach() { bindings().erase(sc_core::sc_get_current_process_b()); }

}  // namespace trn3::fabric

extern "C" const trn3::fabric::binding* trn3vp_fabric_binding(void) {
    auto& all = trn3::fabric::bindings();
    const auto it = all.find(sc_core::sc_get_current_process_b());
    return it == all.end() ? nullptr : &it->second;
}
