// Errors the simulator distinguishes.
//
// config_error: the user gave something bad (a param, a config file, a CLI
// argument, an ELF). The CLI prints its message on one line and exits 2.
// Guest (simulated software) misbehaviour is never an exception: models turn
// it into the hardware's answer (an error response, status bit, interrupt).
#pragma once

#include <stdexcept>
#include <string>

namespace trn3 {

class config_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace trn3
