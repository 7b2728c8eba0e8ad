"""Tiled GEMM on one NeuronCore: C[M][N] (fp32) = A^T B, A[K][M], B[K][N]
(bf16 or fp8, or MX codes with E8M0 scales). The schedule is sw/kernels'
gemm.h, line for line: B panels (K x 512) stay in SBUF while every M tile of
A streams through them, the next panel loads meanwhile, PSUM banks
alternate, and the engines order their work through semaphores."""
from __future__ import annotations

from .. import kernel as nk

_A_BUFFERS = 3
_SEM_A = (0, 1, 7)
_SEM_MATMULS, _SEM_COPIED, _SEM_B, _SEM_B_SCALES, _SEM_DONE = 2, 3, 5, 6, 4
_SEM_A_SCALES = (10, 11, 12)
_Q_A, _Q_A_SCALES, _Q_OUT, _Q_B, _Q_B_SCALES = (0, 1, 6), (2, 3, 7), 4, 8, 9
_OUT_PIECES = 4
SBUF_BYTES = 256 * 1024


def gemm(k: nk.Kernel, a: nk.DeviceTensor, b: nk.DeviceTensor, c: nk.DeviceTensor, mx: bool = False,
         scales_a: nk.DeviceTensor | None = None, scales_b: nk.DeviceTensor | None = None,
         resident_a: bool = True) -> None:
    K, M = a.shape
    N = b.cols
    t = a.dtype
    if M % 128 or N % 512 or K % 128 or b.rows != K or c.shape != (M, N):
        nk._fail(f"gemm: A {a.shape}, B {b.shape}, C {c.shape}: M and K multiples of 128, N of 512")
    esize = nk._native.dtype_bytes(t)
    if mx and (K % 512 or esize != 1 or scales_a is None or scales_b is None):
        nk._fail("gemm: MX needs K a multiple of 512, one-byte operands and both scale tensors")
    k_tile = 512 if mx else 128
    MT, NT, KT = M // 128, N // 512, K // k_tile
    out_buf, a_buf, sa_buf = (0, 2048), (4096, 4608, 5120), (5632, 5760, 5888)
    b_tile_bytes = 512 * (4 if mx else esize)
    panel_bytes = KT * b_tile_bytes
    b_panel = (8192, 8192 + panel_bytes)
    sb_panel = (8192 + 2 * panel_bytes, 8192 + 2 * panel_bytes + KT * 512)
    sbuf_used = sb_panel[1] + KT * 512 if mx else b_panel[1] + panel_bytes
    if sbuf_used > SBUF_BYTES:
        nk._fail(f"gemm: K = {K} needs {sbuf_used} bytes per SBUF partition for two resident B panels")
    bank = (0, 2048)
    a_tile_bytes = 512 if mx else 128 * esize
    a_region = sbuf_used
    sa_region = a_region + MT * KT * a_tile_bytes
    a_resident = resident_a and sa_region + (MT * KT * 128 if mx else 0) <= SBUF_BYTES

    def slot_of(step, nt, mt, kt):  # (at, scales_at, buffer, loaded, load)
        if a_resident:
            i = mt * KT + kt
            return a_region + i * a_tile_bytes, sa_region + i * 128, 0, i + 1, nt == 0
        buf = step % _A_BUFFERS
        return a_buf[buf], sa_buf[buf], buf, step // _A_BUFFERS + 1, True

    sync, tensor, vector = k.sync, k.tensor, k.vector
    f32 = nk.fp32

    def load_b_tile(nt, kt):
        buf = nt % 2
        free_after = (nt - 1) * MT * KT if nt >= 2 else 0
        dst = b_panel[buf] + kt * b_tile_bytes
        src = b.region(kt * k_tile, 128, nt * 512, 512)
        if not mx:
            sync.dma(k.sbuf((128, 512), t, dst), src, _Q_B)
        else:
            sync.dma(k.sbuf((128, 2048), t, dst), src.with_dims([(1, 512), (N, 4)], stride=4 * N), _Q_B)
        sync.signal(_SEM_B, 1)
        if free_after:
            sync.wait(_SEM_MATMULS, free_after)
        if mx:
            sync.dma(k.sbuf((16, 512), nk.e4m3fn, sb_panel[buf] + kt * 512),
                     scales_b.region(kt * 16, 16, nt * 512, 512), _Q_B_SCALES).signal(_SEM_B_SCALES, 1)
            if free_after:
                sync.wait(_SEM_MATMULS, free_after)

    def prefetch_at(kt):
        return KT + kt * (MT - 1) if MT > 1 else kt

    for kt in range(KT):
        load_b_tile(0, kt)
    step = 0
    for nt in range(NT):
        next_b = 0
        for mt in range(MT):
            tile = nt * MT + mt
            for kt in range(KT):
                at, scales_at, buffer, loaded, load = slot_of(step, nt, mt, kt)
                i = mt * KT + kt
                while nt + 1 < NT and next_b < KT and prefetch_at(next_b) == i:
                    load_b_tile(nt + 1, next_b)
                    next_b += 1
                free_after = step - _A_BUFFERS + 1 if step >= _A_BUFFERS else 0
                if load:
                    src = a.region(kt * k_tile, 128, mt * 128, 128)
                    if not mx:
                        sync.dma(k.sbuf((128, 128), t, at), src, _Q_A[buffer])
                    else:
                        sync.dma(k.sbuf((128, 512), t, at), src.with_dims([(1, 128), (M, 4)], stride=4 * M),
                                 _Q_A[buffer])
                    sync.signal(_SEM_A[buffer], 1)
                    if free_after:
                        sync.wait(_SEM_MATMULS, free_after)
                    if mx:
                        sync.dma(k.sbuf((16, 128), nk.e4m3fn, scales_at), scales_a.region(kt * 16, 16, mt * 128, 128),
                                 _Q_A_SCALES[buffer]).signal(_SEM_A_SCALES[buffer], 1)
                        if free_after:
                            sync.wait(_SEM_MATMULS, free_after)
                if kt == 0 and tile >= 2:
                    tensor.nop().wait(_SEM_COPIED, tile - 1)
                if mt == 0:
                    tensor.nop().wait(_SEM_B, nt * KT + kt + 1)
                    if mx:
                        tensor.nop().wait(_SEM_B_SCALES, nt * KT + kt + 1)
                if mx:
                    tensor.nop().wait(_SEM_A_SCALES[buffer], loaded)
                dst = k.psum((128, 512), f32, bank[tile % 2])
                b_at = b_panel[nt % 2] + kt * b_tile_bytes
                if not mx:
                    tensor.matmul(dst, k.sbuf((128, 128), t, at), k.sbuf((128, 512), t, b_at), kt > 0)
                else:
                    tensor.matmul_mx(dst, k.sbuf((128, 512), t, at), k.sbuf((128, 2048), t, b_at), scales_at,
                                     sb_panel[nt % 2] + kt * 512, kt > 0)
                tensor.wait(_SEM_A[buffer], loaded).signal(_SEM_MATMULS, 1)
                step += 1
            if tile >= 2:
                vector.nop().wait(_SEM_DONE, tile - 1)
            out = k.sbuf((128, 512), f32, out_buf[tile % 2])
            vector.tensor_copy(out, k.psum((128, 512), f32, bank[tile % 2])).wait(
                _SEM_MATMULS, (tile + 1) * KT).signal(_SEM_COPIED, 1)
            total = MT * NT * KT
            for piece in range(_OUT_PIECES):
                rows = 128 // _OUT_PIECES
                row0 = piece * rows
                after = min(total, (tile + 1) * KT + piece * KT // _OUT_PIECES)
                vector.dma(c.region(mt * 128 + row0, rows, nt * 512, 512), out[row0:row0 + rows], _Q_OUT).wait(
                    _SEM_MATMULS, after)
                if piece + 1 == _OUT_PIECES:
                    vector.signal(_SEM_DONE, 1)
    sync.halt()
    tensor.halt()
    vector.nop().wait(_SEM_DONE, MT * NT)
    vector.halt()
