"""Row-wise softmax and RMSNorm over fp32 rows (128 rows per tile, up to 4096
columns): sw/kernels' norm.h, line for line."""
from __future__ import annotations

import numpy as np

from .. import kernel as nk

ROWS_DONE = 2
_XIN = 0


def _rows(k: nk.Kernel, x: nk.DeviceTensor):
    """The shape's checks; its columns, row tiles, and fp32 tiles of a row or one value per partition."""
    rows, cols = x.shape
    if rows == 0 or rows % 128 or cols == 0 or cols > 4096:
        nk._fail("rows must be a multiple of 128 and cols 1 to 4096")
    return cols, rows // 128, lambda off: k.sbuf((128, cols), nk.fp32, off), lambda off: k.sbuf((128, 1), nk.fp32, off)


def _load_rows(k, x, t, at):
    C = x.cols
    k.sync.dma(k.sbuf((128, C), nk.fp32, at), x.region(t * 128, 128)).signal(0, 1)
    if t > 0:
        k.sync.wait(ROWS_DONE, t)


def _store_rows(k, y, t, at):
    k.vector.dma(y.region(t * 128, 128), k.sbuf((128, y.cols), nk.fp32, at)).signal(ROWS_DONE, 1)


def _finish(k, tiles):
    k.sync.halt()
    k.scalar.halt()
    k.vector.nop().wait(ROWS_DONE, tiles).halt()


def _broadcast(k, offset, cols):
    return k.sbuf((128, 1), nk.fp32, offset).with_dims([(0, cols)])


def softmax(k: nk.Kernel, x: nk.DeviceTensor, y: nk.DeviceTensor) -> None:
    C, T, row, one = _rows(k, x)
    tmp, stat, stat2 = 16384, 32768, 32772
    vec, sca = k.vector, k.scalar
    for t in range(T):
        _load_rows(k, x, t, _XIN)
        vec.tensor_reduce(one(stat), row(_XIN), nk.alu.max).wait(0, t + 1)
        vec.tensor_tensor(row(tmp), row(_XIN), _broadcast(k, stat, C), nk.alu.subtract).signal(3, 1)
        sca.activation(row(tmp), row(tmp), nk.act.exp).wait(3, t + 1).signal(4, 1)
        vec.tensor_reduce(one(stat2), row(tmp), nk.alu.add).wait(4, t + 1).signal(5, 1)
        sca.activation(one(stat2), one(stat2), nk.act.reciprocal).wait(5, t + 1).signal(6, 1)
        vec.tensor_tensor(row(_XIN), row(tmp), _broadcast(k, stat2, C), nk.alu.multiply).wait(6, t + 1).signal(1, 1)
        _store_rows(k, y, t, _XIN)
    _finish(k, T)


def rmsnorm(k: nk.Kernel, x: nk.DeviceTensor, gamma: nk.DeviceTensor, y: nk.DeviceTensor, eps: float) -> None:
    C, T, row, one = _rows(k, x)
    sq, g, stat = 16384, 32768, 49152
    vec, sca = k.vector, k.scalar
    # gamma[c] to every partition (partition stride 0).
    k.sync.dma(row(g), gamma.broadcast(128)).signal(7, 1)
    inv_cols = float(np.float32(1.0) / np.float32(C))
    for t in range(T):
        _load_rows(k, x, t, _XIN)
        sca.activation(row(sq), row(_XIN), nk.act.square).wait(0, t + 1).signal(3, 1)
        vec.tensor_reduce(one(stat), row(sq), nk.alu.add).wait(3, t + 1)
        vec.tensor_scalar(one(stat), one(stat), nk.alu.multiply, inv_cols)
        vec.tensor_scalar(one(stat), one(stat), nk.alu.add, eps).signal(4, 1)
        sca.activation(one(stat), one(stat), nk.act.rsqrt).wait(4, t + 1).signal(5, 1)
        vec.tensor_tensor(row(sq), row(_XIN), _broadcast(k, stat, C), nk.alu.multiply).wait(5, t + 1)
        vec.tensor_tensor(row(_XIN), row(sq), row(g), nk.alu.multiply).wait(7, 1).signal(1, 1)
        _store_rows(k, y, t, _XIN)
    _finish(k, T)
