// The native module's parts, one per file.
#pragma once

#include <pybind11/pybind11.h>

namespace trn3::python {
void bind_numerics(pybind11::module_& m);  // numerics_bindings.cpp
void bind_builder(pybind11::module_& m);  // builder_bindings.cpp
}  // namespace trn3::python
