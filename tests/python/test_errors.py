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


def test_an_engine_error_names_the_instruction_line():
    k = nk.Kernel()
    st, mv = k.sbuf((128, 128), "int32"), k.sbuf((128, 512), "int32")
    k.sync.halt()
    where = here(1)
    k.tensor.matmul(k.psum((128, 512)), st, mv)  # the array multiplies floats only: the core refuses int32
    k.tensor.halt()
    with pytest.raises(nk.KernelError) as e:
        k.run()
    assert str(e.value).startswith(where + ": the tensor engine stopped: operand type not allowed")


def test_a_dma_past_device_memory_is_refused_while_tracing():
    k = nk.Kernel()
    t = k.sbuf((128, 64), "fp32")
    outside = nk.DeviceTensor("outside", (12 << 30) - 64, 128, 64, nk.fp32)  # made by hand, past the 12 GiB
    where = here(2)
    with pytest.raises(nk.KernelError) as e:
        k.vector.store(outside, t)
    assert str(e.value).startswith(where + ": a DMA pattern reaches bytes")


def test_a_kernel_that_never_finishes_names_the_waiting_line():
    k = nk.Kernel()
    k.sync.halt()
    where = here(1)
    k.vector.nop().wait(5, 1)  # nothing ever signals semaphore 5
    k.vector.halt()
    with pytest.raises(nk.KernelError) as e:
        k.run(timeout=60)
    assert str(e.value).startswith(where + ": the kernel never finished: vector waits for s5 >= 1 (now 0)")


def test_the_engine_error_that_left_another_waiting_is_the_one_reported():
    k = nk.Kernel()
    t = k.sbuf((128, 64), "fp32")
    k.sync.halt()
    where = here(1)
    k.tensor.activation(t, t, nk.act.exp).signal(1)  # activation is not the Tensor engine's
    k.tensor.halt()
    k.scalar.nop().wait(1, 1).halt()  # waits for it forever
    with pytest.raises(nk.KernelError) as e:
        k.run(timeout=60)
    assert str(e.value).startswith(where + ": the tensor engine stopped: illegal instruction")


def test_a_stream_without_halt_is_refused_at_its_last_line():
    k = nk.Kernel()
    t = k.sbuf((128, 64), "fp32")
    k.sync.halt()
    where = here(1)
    k.vector.memset(t, 1.0)
    with pytest.raises(nk.KernelError) as e:
        k.run()
    assert str(e.value).startswith(where + ": the vector stream ends without halt")


def test_exact_boundaries_are_accepted_and_one_past_refused():
    k = nk.Kernel()
    k.sbuf((128, 1024), "fp32", offset=256 * 1024 - 4096)  # ends at the last byte
    k.sbuf((1, 4), "fp32", offset=0, start_partition=127)
    k.psum((128, 512), "fp32", offset=16 * 1024 - 2048)
    with pytest.raises(nk.KernelError, match="partitions 127..128 are past the 128"):
        k.sbuf((2, 4), "fp32", offset=0, start_partition=127)
    with pytest.raises(nk.KernelError, match="ends past the 262144 bytes"):
        k.sbuf((128, 1024), "fp32", offset=256 * 1024 - 4092)
    assert k.sbuf((128, 64), "fp32", offset=0)[3].shape == (1, 64)
    top = k.device((1, 64), "fp32", address=(12 << 30) - 256)  # ends where the code begins
    top.region()
    with pytest.raises(nk.KernelError, match="device memory for tensors ends at 12 GiB"):
        top.region().with_dims([(64, 64)])


def test_what_the_encoding_cannot_hold_is_refused_not_wrapped():
    k = nk.Kernel()
    with pytest.raises(nk.KernelError, match="free size is 1 to 65535 elements, not 65536"):
        k.sbuf((1, 65536), "e4m3fn")
    with pytest.raises(nk.KernelError, match="num is 1 to 65535"):
        k.sbuf((1, 4), "fp32").with_dims([(0, 70000)])
    with pytest.raises(nk.KernelError, match="1 to 4 free dimensions, not 5"):
        k.sbuf((1, 4), "fp32").with_dims([(0, 2)] * 5)
    with pytest.raises(nk.KernelError, match="1 to 128 partitions"):
        k.device((1, 64), "fp32").broadcast(200)
    with pytest.raises(nk.KernelError, match="unknown dtype 'fp12'"):
        k.sbuf((1, 4), "fp12")
    with pytest.raises(nk.KernelError, match="semaphores count 0 to"):
        k.vector.nop().wait(0, -1)


def test_inputs_must_match_their_tensors():
    k = nk.Kernel()
    y, n, f4 = k.device((2, 3), "fp32"), k.device((1, 4), "int32"), k.device((1, 4), "e2m1")
    k.sync.halt()
    with pytest.raises(nk.KernelError, match=r"has shape \(3, 2\), the tensor \(2, 3\)"):
        k.run(inputs={y: np.zeros((3, 2))})
    with pytest.raises(nk.KernelError, match="must be integers in the int32 range"):
        k.run(inputs={n: np.array([1.5, 2, 3, 4])})
    with pytest.raises(nk.KernelError, match="e2m1 codes are 4 bits"):
        k.run(inputs={f4: np.array([1, 2, 3, 0x1F], dtype=np.uint8)})


def test_a_bad_container_is_the_simulators_one_line_error():
    from trn3vp import SimulationError

    with pytest.raises(SimulationError, match=r"program: not a trn3 program container \(bad magic\)"):
        nk.run_container(b"NOTAPROG" + bytes(64))
    k = nk.Kernel()
    k.sync.halt()
    x = nk.DeviceTensor("x", 12 << 30, 1, 16, nk.fp32)  # where the code goes
    with pytest.raises(SimulationError, match="from 12 GiB up holds the code"):
        k.run(inputs={x: np.zeros(16)})
