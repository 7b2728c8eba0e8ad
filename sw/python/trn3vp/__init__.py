"""trn3vp: the Trn3 UltraServer virtual platform from Python (docs/python.md).

- platforms(), params(platform), run(platform, params): simulations, each in
  a worker process (SystemC elaborates one platform per process);
- numerics: bit-exact number formats on numpy arrays;
- kernel: NKI-style kernels compiled to the NeuronCore's instruction set and
  run on the simulated NeuronCore; library: the reference kernels in it;
- sweep(), plot(): many simulations in parallel, and their figures plotted.
"""
from . import kernel, library, numerics
from ._worker import SimulationError
from .kernel import Kernel, KernelError
from .platform import RunResult, params, platforms, run
from .sweep import grid, plot, stat, stat_rate, sweep

__all__ = ["Kernel", "KernelError", "RunResult", "SimulationError", "grid", "kernel", "library", "numerics", "params",
           "platforms", "plot", "run", "stat", "stat_rate", "sweep"]
