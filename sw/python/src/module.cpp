// trn3vp._native: the parts of the platform that Python calls in its own
// process (no SystemC): the numerics library and the kernel builder with the
// program container. Simulations run in worker processes (trn3vp/_worker.py).
#include <pybind11/pybind11.h>

#include "bindings.h"

PYBIND11_MODULE(_native, m) {
    m.doc() = "trn3vp native parts: number formats and the NeuronCore kernel builder";
    trn3::python::bind_numerics(m);
    trn3::python::bind_builder(m);
}
