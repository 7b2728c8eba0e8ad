#include "trn3/collectives/choose.h"

namespace trn3::collectives {

algorithm choose(op what, unsigned, std::uint64_t) {
    switch (what) {
    case op::all_to_all: return algorithm::direct;
    case op::broadcast: return algorithm::chain;
    default: return algorithm::ring;
    }
}

}  // namespace trn3::collectives
