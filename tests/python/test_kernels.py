"""The reference kernels written in Python against their C++ twins: the same
instruction bytes, bit-identical outputs and identical simulated times, and
outputs that are right against numpy in fp64."""
import numpy as np
import pytest

import trn3vp
from trn3vp import _native, kernel as nk, library, numerics

GiB = 1 << 30


def same_run(k: nk.Kernel, cpp_program, inputs, outputs, builtin: dict):
    """The Python kernel is its C++ twin's bytes (so, with the same inputs, the
    same outputs and time on the deterministic simulator), and it takes the
    time the neuroncore platform's own run of that kernel takes, to the ps."""
    assert k.container() == cpp_program.pack(), "the Python kernel encodes differently from the C++ one"
    r = k.run(inputs=inputs, outputs=outputs)
    own = trn3vp.run("neuroncore", builtin)
    assert own.passed
    assert round(r.profile.simulated_s * 1e12) == own.stats["sim.simulated_ps"]
    assert r.profile.simulated_s > 0
    return r


@pytest.mark.parametrize("dtype,M,N,K", [("bf16", 256, 1024, 256), ("e4m3fn", 128, 512, 384)])
def test_gemm(rng, dtype, M, N, K):
    k = nk.Kernel()
    a, b, c = k.device((K, M), dtype, 0), k.device((K, N), dtype, 4 * GiB), k.device((M, N), "fp32", 8 * GiB)
    library.gemm(k, a, b, c)
    A = rng.standard_normal((K, M)).astype(np.float32)
    B = rng.standard_normal((K, N)).astype(np.float32)
    r = same_run(k, _native.gemm_program(M, N, K, getattr(nk, dtype), False, True, 0, 4 * GiB, 8 * GiB),
                 {a: A, b: B}, [c], {"neuroncore.m": M, "neuroncore.n": N, "neuroncore.k": K, "neuroncore.dtype": dtype})
    want = numerics.round_to(A, dtype).astype(np.float64).T @ numerics.round_to(B, dtype).astype(np.float64)
    assert np.max(np.abs(r[c] - want)) < 1e-4 * np.sqrt(K)
    assert r.profile.flops == 2 * M * N * K
    assert r.profile.engine_busy_s["tensor"] > 0 and r.profile.dma_bytes > 0


def test_gemm_mxfp8(rng):
    M, N, K = 128, 512, 512
    k = nk.Kernel()
    a, b = k.device((K, M), "e4m3fn", 0), k.device((K, N), "e4m3fn", 4 * GiB)
    c = k.device((M, N), "fp32", 8 * GiB)
    sa, sb = k.device((K // 32, M), "e4m3fn", 10 * GiB), k.device((K // 32, N), "e4m3fn", 11 * GiB)
    library.gemm(k, a, b, c, mx=True, scales_a=sa, scales_b=sb)
    A = rng.standard_normal((K, M)).astype(np.float32)
    B = rng.standard_normal((K, N)).astype(np.float32)
    # MX blocks run down K (32 rows of a column): quantise the transposes along their last axis.
    ca, qa = numerics.quantize_mx(A.T, "e4m3fn")
    cb, qb = numerics.quantize_mx(B.T, "e4m3fn")
    inputs = {a: np.ascontiguousarray(ca.T), b: np.ascontiguousarray(cb.T), sa: np.ascontiguousarray(qa.T),
              sb: np.ascontiguousarray(qb.T)}
    r = same_run(k, _native.gemm_program(M, N, K, nk.e4m3fn, True, True, 0, 4 * GiB, 8 * GiB, 10 * GiB, 11 * GiB),
                 inputs, [c], {"neuroncore.m": M, "neuroncore.n": N, "neuroncore.k": K, "neuroncore.dtype": "mxfp8"})
    held_a = numerics.dequantize_mx(ca, qa, "e4m3fn").T.astype(np.float64)
    held_b = numerics.dequantize_mx(cb, qb, "e4m3fn").T.astype(np.float64)
    assert np.max(np.abs(r[c] - held_a.T @ held_b)) < 1e-4 * np.sqrt(K)


def test_softmax_and_rmsnorm(rng):
    rows, cols = 256, 512
    x_val = (3 * rng.standard_normal((rows, cols))).astype(np.float32)
    k = nk.Kernel()
    x, y = k.device((rows, cols), "fp32", 0), k.device((rows, cols), "fp32", 8 * GiB)
    library.softmax(k, x, y)
    r = same_run(k, _native.softmax_program(rows, cols, 0, 8 * GiB), {x: x_val}, [y],
                 {"neuroncore.kernel": "softmax", "neuroncore.rows": rows, "neuroncore.cols": cols})
    e = np.exp(x_val.astype(np.float64) - x_val.max(axis=1, keepdims=True))
    assert np.max(np.abs(r[y] - e / e.sum(axis=1, keepdims=True))) < 1e-5  # values up to 1

    g_val = rng.standard_normal((1, cols)).astype(np.float32)
    k = nk.Kernel()
    x, g, y = k.device((rows, cols), "fp32", 0), k.device((1, cols), "fp32", 4 * GiB), k.device((rows, cols), "fp32", 8 * GiB)
    library.rmsnorm(k, x, g, y, 1e-6)
    r = same_run(k, _native.rmsnorm_program(rows, cols, 0, 4 * GiB, 8 * GiB, 1e-6), {x: x_val, g: g_val}, [y],
                 {"neuroncore.kernel": "rmsnorm", "neuroncore.rows": rows, "neuroncore.cols": cols})
    x64 = x_val.astype(np.float64)
    want = x64 / np.sqrt((x64**2).mean(axis=1, keepdims=True) + 1e-6) * g_val
    assert np.max(np.abs(r[y] - want)) < 1e-4


def test_attention_head(rng):
    keys, D = 256, 64
    k = nk.Kernel()
    q, kk = k.device((128, D), "bf16", 0), k.device((keys, D), "bf16", 1 * GiB)
    v, o = k.device((keys, D), "bf16", 2 * GiB), k.device((128, D), "fp32", 3 * GiB)
    library.attention(k, q, kk, v, o)
    Q, K_, V = (rng.standard_normal(s).astype(np.float32) for s in ((128, D), (keys, D), (keys, D)))
    r = same_run(k, _native.attention_program(keys, D, 0, 1 * GiB, 2 * GiB, 3 * GiB), {q: Q, kk: K_, v: V}, [o],
                 {"neuroncore.kernel": "attention", "neuroncore.keys": keys, "neuroncore.head_dim": D})
    Qr, Kr, Vr = (numerics.round_to(m, "bf16").astype(np.float64) for m in (Q, K_, V))
    s = Qr @ Kr.T / np.sqrt(D)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    want = (p / p.sum(axis=1, keepdims=True)) @ Vr
    assert np.max(np.abs(r[o] - want)) < 2e-2 * np.max(np.abs(want))  # P is rounded to bf16 on the way


def test_rtl_and_check_backends_give_the_models_bits(rng):
    M, N, K = 128, 512, 128
    k = nk.Kernel()
    a, b, c = k.device((K, M), "bf16", 0), k.device((K, N), "bf16", 4 * GiB), k.device((M, N), "fp32", 8 * GiB)
    library.gemm(k, a, b, c)
    inputs = {a: rng.standard_normal((K, M)), b: rng.standard_normal((K, N))}
    model = k.run(inputs=inputs, outputs=[c])
    for backend in ("rtl", "check"):
        other = k.run(inputs=inputs, outputs=[c], backend=backend)
        assert other[c].tobytes() == model[c].tobytes()
        assert other.profile.simulated_s == model.profile.simulated_s
        assert "0 mismatches" in other.report
    # The checker catches a flipped bit: the run fails, loudly.
    with pytest.raises(trn3vp.SimulationError, match="disagreed with the model 1 times"):
        k.run(inputs=inputs, outputs=[c], backend="check", params={"neuroncore.nc0.tensor_engine.inject_flip": 1})


def test_profile_and_timeline(rng, tmp_path):
    k = nk.Kernel()
    x, y = k.device((128, 256), "fp32"), k.device((128, 256), "fp32")
    library.softmax(k, x, y)
    path = tmp_path / "softmax.json"
    r = k.run(inputs={x: rng.standard_normal((128, 256))}, outputs=[y], timeline=str(path))
    assert r.profile.instructions == k.program.instructions()
    assert r.profile.engine_busy_s["scalar"] > 0 and r.profile.engine_busy_s["vector"] > 0
    assert r.profile.dma_bytes == 2 * 128 * 256 * 4
    assert r.profile.flops == 0
    text = path.read_text()
    assert '"traceEvents"' in text and "activation" in text


def test_the_docs_kernel_relu_of_a_sum(rng):
    """docs/python.md's first kernel: y = relu(a + b) over a 128 x 512 tile."""
    k = nk.Kernel()
    a, b, y = k.device((128, 512), "fp32"), k.device((128, 512), "fp32"), k.device((128, 512), "fp32")
    ta, tb, ty = k.sbuf((128, 512), "fp32"), k.sbuf((128, 512), "fp32"), k.sbuf((128, 512), "fp32")
    k.sync.load(ta, a).signal(0)
    k.sync.load(tb, b).signal(0)
    k.sync.halt()
    k.vector.tensor_tensor(ty, ta, tb, nk.alu.add).wait(0, 2).signal(1)
    k.vector.halt()
    k.scalar.activation(ty, ty, nk.act.relu).wait(1, 1).signal(2)
    k.scalar.store(y, ty).signal(3)
    k.scalar.nop().wait(3, 1).halt()
    A, B = rng.standard_normal((128, 512)), rng.standard_normal((128, 512))
    r = k.run(inputs={a: A, b: B}, outputs=[y])
    want = np.maximum(A.astype(np.float32) + B.astype(np.float32), 0)
    assert np.array_equal(r[y], want)  # fp32 add and relu: exact
    assert r.profile.engine_busy_s["vector"] > 0 and r.profile.engine_busy_s["scalar"] > 0


def test_every_dtype_through_inputs_and_outputs(rng):
    """fp16 in, cast by the DMA to fp32 and back out as e5m2, e2m1 and fp16; int32 passes through."""
    k = nk.Kernel()
    x = k.device((128, 64), "fp16")
    n = k.device((128, 64), "int32")
    y5, y4, y16, m = (k.device((128, 64), t) for t in ("e5m2", "e2m1", "fp16", "int32"))
    t, ti = k.sbuf((128, 64), "fp32"), k.sbuf((128, 64), "int32")
    k.sync.load(t, x).signal(0)
    k.sync.load(ti, n).signal(0).halt()
    k.vector.store(y5, t).wait(0, 2).signal(1)
    k.vector.store(y4, t).signal(1)
    k.vector.store(y16, t).signal(1)
    k.vector.store(m, ti).signal(1)
    k.vector.nop().wait(1, 4).halt()
    X = (2 * rng.standard_normal((128, 64))).astype(np.float32)
    N = rng.integers(-(1 << 31), (1 << 31) - 1, size=(128, 64), dtype=np.int64)
    r = k.run(inputs={x: X, n: N}, outputs=[y5, y4, y16, m])
    held = numerics.round_to(X, "fp16")
    assert np.array_equal(r[y16], held)
    assert np.array_equal(r[y5], numerics.round_to(held, "e5m2"))
    assert np.array_equal(r[y4], numerics.round_to(held, "e2m1"))
    assert np.array_equal(r[m], N.astype(np.int32))
    # Codes go in as they are: the fp16 codes of X give the same result.
    codes = numerics.to_format(X, "fp16")
    assert np.array_equal(k.run(inputs={x: codes, n: N}, outputs=[y16])[y16], held)


@pytest.mark.parametrize("rule", ["ocp", "trn3"])
def test_quantize_mx_on_the_vector_engine_equals_numerics(rng, rule):
    """Vector quantize_mx of an [8][4C] fp32 tile: each column's 32 values (8
    partitions x 4) are one block; codes land in the matmul_mx layout, the
    E8M0 scales in partition 0 at byte `scales` + c. Bit for bit what
    numerics.quantize_mx gives."""
    C = 16
    k = nk.Kernel()
    x, codes_out = k.device((8, 4 * C), "fp32"), k.device((8, 4 * C), "e4m3fn")
    scales_out = k.device((1, C), "e4m3fn")  # E8M0 bytes, read back as codes
    src, dst = k.sbuf((8, 4 * C), "fp32"), k.sbuf((8, 4 * C), "e4m3fn")
    scales_at = 4096
    k.sync.load(src, x).signal(0).halt()
    k.vector.quantize_mx(dst, src, scales_at, trn3_rule=rule == "trn3").wait(0, 1)
    k.vector.store(codes_out, dst).signal(1)
    k.vector.store(scales_out, k.sbuf((1, C), "e4m3fn", offset=scales_at)).signal(1)
    k.vector.nop().wait(1, 2).halt()
    X = (3 * rng.standard_normal((8, 4 * C))).astype(np.float32)
    r = k.run(inputs={x: X}, outputs=[codes_out, scales_out])
    blocks = X.reshape(8, C, 4).transpose(1, 0, 2).reshape(C, 32)  # column c's block: partition-major
    want_codes, want_scales = numerics.quantize_mx(blocks, "e4m3fn", rule=rule)
    got_codes = numerics.to_format(r[codes_out], "e4m3fn").reshape(8, C, 4).transpose(1, 0, 2).reshape(C, 32)
    assert np.array_equal(got_codes, want_codes)
    assert np.array_equal(numerics.to_format(r[scales_out], "e4m3fn").ravel(), want_scales.ravel())
