"""One attention head, O = softmax(Q K^T / sqrt(D)) V, for 128 queries and up
to 512 keys (bf16 inputs, fp32 out): sw/kernels' attention.h, line for line."""
from __future__ import annotations

import numpy as np

from .. import kernel as nk

DONE = 8


def attention(k: nk.Kernel, q: nk.DeviceTensor, keys: nk.DeviceTensor, v: nk.DeviceTensor,
              o: nk.DeviceTensor) -> None:
    Sk, D = keys.shape
    chunks = Sk // 128
    if Sk == 0 or Sk % 128 or Sk > 512 or D == 0 or D > 128 or q.shape != (128, D) or v.shape != (Sk, D):
        nk._fail("attention: keys 128, 256, 384 or 512; head_dim 1 to 128; Q [128][D], K and V [keys][D]")
    bf, f32 = nk.bf16, nk.fp32
    qT, kT, v_at, e, mx, total, P, PT, out, scores, o_bank = (0, 1024, 4096, 8192, 12288, 12292, 16384, 20480,
                                                              24576, 0, 2048)
    sb = k.sbuf
    row = lambda off: sb((128, 1), f32, off).with_dims([(0, Sk)])  # noqa: E731
    sync, ten, vec, sca = k.sync, k.tensor, k.vector, k.scalar

    # 1. loads: Q^T[d][i] = Q[i][d] (partition d at q + 2d, element i every D values).
    sync.dma(sb((D, 128), bf, qT), q.region(0, D).with_dims([(D, 128)], stride=2)).signal(0, 1)
    sync.dma(sb((D, Sk), bf, kT), keys.region(0, D).with_dims([(D, Sk)], stride=2)).signal(0, 1)
    for c in range(chunks):
        sync.dma(sb((128, D), bf, v_at + c * 256), v.region(c * 128, 128)).signal(0, 1)
    sync.halt()
    # 2. scores
    ten.matmul(k.psum((128, Sk), f32, scores), sb((D, 128), bf, qT), sb((D, Sk), bf, kT)).wait(
        0, 2 + chunks).signal(1, 1)
    # 3. softmax over each row, with the 1/sqrt(D) scale folded into exp.
    vec.tensor_reduce(sb((128, 1), f32, mx), k.psum((128, Sk), f32, scores), nk.alu.max).wait(1, 1)
    vec.tensor_tensor(sb((128, Sk), f32, e), k.psum((128, Sk), f32, scores), row(mx), nk.alu.subtract).signal(2, 1)
    scale = float(np.float32(1.0) / np.sqrt(np.float32(D)))
    sca.activation(sb((128, Sk), f32, e), sb((128, Sk), f32, e), nk.act.exp, scale).wait(2, 1).signal(3, 1)
    vec.tensor_reduce(sb((128, 1), f32, total), sb((128, Sk), f32, e), nk.alu.add).wait(3, 1).signal(4, 1)
    sca.activation(sb((128, 1), f32, total), sb((128, 1), f32, total), nk.act.reciprocal).wait(4, 1).signal(5, 1)
    sca.halt()
    vec.tensor_tensor(sb((128, Sk), bf, P), sb((128, Sk), f32, e), row(total), nk.alu.multiply).wait(5, 1).signal(6, 1)
    # 4. P^T chunk by chunk, then O = sum over chunks of P^T_c x V_c.
    for c in range(chunks):
        ten.transpose(sb((128, 128), bf, PT + c * 256), sb((128, 128), bf, P + c * 256))
        if c == 0:
            ten.wait(6, 1)
    for c in range(chunks):
        ten.matmul(k.psum((128, D), f32, o_bank), sb((128, 128), bf, PT + c * 256), sb((128, D), bf, v_at + c * 256),
                   c > 0)
    ten.signal(7, 1).halt()
    # 5. out
    vec.tensor_copy(sb((128, D), f32, out), k.psum((128, D), f32, o_bank)).wait(7, 1)
    vec.dma(o.region(0, 128), sb((128, D), f32, out)).signal(DONE, 1)
    vec.nop().wait(DONE, 1).halt()
