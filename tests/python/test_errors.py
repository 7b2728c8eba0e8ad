"""Mistakes in a kernel raise KernelError naming the kernel's own line."""
import inspect

import numpy as np
import pytest

from trn3vp import kernel as nk


def here(offset=0):
    """This file's name and the caller's line + offset, as errors print them."""
    frame = inspect.currentframe().f_back
    return f"{frame.f_code.co_filename}:{frame.f_lineno + offset}"


def test_partition_dimension_over_128():
    k = nk.Kernel()
    where = here(2)
    with pytest.raises(nk.KernelError) as e:
        k.sbuf((129, 64), "fp32")
    assert str(e.value).startswith(where + ": ")
    assert "partition dimension is 1 to 128, not 129" in str(e.value)


def test_tile_past_sbuf_and_psum():
    k = nk.Kernel()
    where = here(2)
    with pytest.raises(nk.KernelError) as e:
        k.sbuf((128, 1024), "fp32", offset=256 * 1024 - 2048)
    assert str(e.value).startswith(where) and "past the 262144 bytes" in str(e.value)
    with pytest.raises(nk.KernelError, match="PSUM tile .* past the 16384 bytes"):
        k.psum((128, 4096), "fp32", offset=4)


def test_shape_mismatches():
    k = nk.Kernel()
    st, mv = k.sbuf((128, 128), "bf16"), k.sbuf((64, 512), "bf16")
    acc = k.psum((128, 512))
    where = here(2)
    with pytest.raises(nk.KernelError) as e:
        k.tensor.matmul(acc, st, mv)
    assert str(e.value).startswith(where) and "stationary has 128 partitions (K), moving 64" in str(e.value)
    with pytest.raises(nk.KernelError, match=r"the destination is \(128, 512\), stationary\^T x moving is \(128, 256\)"):
        k.tensor.matmul(acc, st, k.sbuf((128, 256), "bf16"))
    with pytest.raises(nk.KernelError, match=r"operand \(128, 256\) does not match the destination \(128, 512\)"):
        k.vector.tensor_tensor(k.sbuf((128, 512), "fp32"), k.sbuf((128, 512), "fp32"), k.sbuf((128, 256), "fp32"),
                               nk.alu.add)
    with pytest.raises(nk.KernelError, match="dma: 65536 elements into 32768"):
        k.sync.load(k.sbuf((128, 256), "fp32"), k.device((128, 512), "fp32"))
    with pytest.raises(nk.KernelError, match="modify the last instruction"):
        k.gpsimd.wait(0, 1)


def test_an_engine_error_names_the_instruction_line(rng):
    k = nk.Kernel()
    x = k.device((128, 64), "fp32")
    t = k.sbuf((128, 64), "fp32")
    k.sync.load(t, x).signal(0)
    # A 1-row "tensor" reaching far past device memory: the DMA faults on the device.
    outside = nk.DeviceTensor("outside", (16 << 30) - 64, 128, 64, nk.fp32)
    where = here(1)
    k.vector.store(outside, t).wait(0, 1)
    k.vector.halt()
    k.sync.halt()
    with pytest.raises(nk.KernelError) as e:
        k.run(inputs={x: np.zeros((128, 64))})
    assert str(e.value).startswith(where + ": the vector engine stopped: DMA outside device memory")


def test_a_kernel_that_never_finishes_names_the_waiting_line():
    k = nk.Kernel()
    k.sync.halt()
    where = here(1)
    k.vector.nop().wait(5, 1)  # nothing ever signals semaphore 5
    k.vector.halt()
    with pytest.raises(nk.KernelError) as e:
        k.run(timeout=60)
    assert str(e.value).startswith(where + ": the kernel never finished: the vector engine waits for s5 >= 1")


def test_a_bad_container_is_the_simulators_one_line_error():
    from trn3vp import SimulationError

    with pytest.raises(SimulationError, match=r"program: not a trn3 program container \(bad magic\)"):
        nk.run_container(b"NOTAPROG" + bytes(64))
    k = nk.Kernel()
    k.sync.halt()
    x = nk.DeviceTensor("x", 12 << 30, 1, 16, nk.fp32)  # where the code goes
    with pytest.raises(SimulationError, match="from 12 GiB up holds the code"):
        k.run(inputs={x: np.zeros(16)})
