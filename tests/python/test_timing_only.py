"""The NeuronCore's timing-only mode (neuroncore.nc0.timing_only): every
reference kernel takes the same simulated time, to the ps, with the same
instructions, engine busy times, FLOPs and DMA bytes, as with data; and no
data moves."""
import numpy as np
import pytest

import trn3vp
from trn3vp import kernel as nk, library

KERNELS = [
    {"neuroncore.kernel": "gemm", "neuroncore.m": 256, "neuroncore.n": 1024, "neuroncore.k": 512},
    {"neuroncore.kernel": "gemm", "neuroncore.m": 384, "neuroncore.n": 512, "neuroncore.k": 256, "neuroncore.dtype": "e4m3fn"},
    {"neuroncore.kernel": "gemm", "neuroncore.m": 256, "neuroncore.n": 512, "neuroncore.k": 1024, "neuroncore.dtype": "mxfp8"},
    {"neuroncore.kernel": "gemm", "neuroncore.m": 128, "neuroncore.n": 1024, "neuroncore.k": 512, "neuroncore.dtype": "mxfp4"},
    {"neuroncore.kernel": "softmax", "neuroncore.rows": 256, "neuroncore.cols": 1024},
    {"neuroncore.kernel": "rmsnorm", "neuroncore.rows": 384, "neuroncore.cols": 512},
    {"neuroncore.kernel": "attention", "neuroncore.keys": 512, "neuroncore.head_dim": 128},
    {"neuroncore.kernel": "attention", "neuroncore.keys": 1280, "neuroncore.head_dim": 64},
    {"neuroncore.kernel": "matmul_stream", "neuroncore.repeats": 50},
    {"neuroncore.kernel": "matmul_stream", "neuroncore.repeats": 50, "neuroncore.dtype": "e4m3fn"},
]
SAME = ["sim.simulated_ps", "neuroncore.nc0.instructions", "neuroncore.nc0.matmul_flops", "neuroncore.nc0.dma_bytes"] + [
    f"neuroncore.nc0.{e}_busy_ps" for e in nk.ENGINES]


@pytest.mark.parametrize("params", KERNELS, ids=lambda p: "-".join(str(v) for v in p.values()))
def test_every_reference_kernel_takes_the_same_time(params):
    data = trn3vp.run("neuroncore", params)
    timed = trn3vp.run("neuroncore", dict(params, **{"neuroncore.nc0.timing_only": True}))
    assert data.passed and timed.passed
    assert "not checked: timing only" in timed.report
    for stat in SAME:
        assert timed.stats[stat] == data.stats[stat], stat
    assert data.stats["sim.simulated_ps"] > 0


def test_no_data_moves_and_the_python_kernel_times_the_same(rng):
    M, N, K = 128, 512, 256
    k = nk.Kernel()
    a, b, c = k.device((K, M), "bf16"), k.device((K, N), "bf16"), k.device((M, N), "fp32")
    library.gemm(k, a, b, c)
    inputs = {a: rng.standard_normal((K, M)), b: rng.standard_normal((K, N))}
    data = k.run(inputs=inputs, outputs=[c])
    timed = k.run(inputs=inputs, outputs=[c], params={"neuroncore.nc0.timing_only": True})
    assert timed.profile.simulated_s == data.profile.simulated_s
    assert timed.profile.engine_busy_s == data.profile.engine_busy_s
    assert np.count_nonzero(data[c]) > 0
    assert np.count_nonzero(timed[c]) == 0  # device memory was never written
