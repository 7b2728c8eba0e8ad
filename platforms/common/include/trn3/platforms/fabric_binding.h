// Binds the calling software context (a SystemC thread of a host) to a NIC
// for the libfabric provider (sw/fabric binding.h). Also points libfabric
// at the build's provider (FI_PROVIDER_PATH, unless the user set it), so
// call it before the context's first libfabric call.
#pragma once

#include "trn3/fabric/binding.h"

namespace trn3::fabric {

void attach(const binding& b);
void detach();  // the calling context's binding, if any

}  // namespace trn3::fabric
