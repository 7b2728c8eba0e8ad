"""Number formats on numpy arrays, bit-exact through the platform's numerics
library (docs/numerics.md): fp32, bf16, fp16, fp8 e4m3fn / e5m2, fp4 e2m1,
and OCP MX blocks of 32 with E8M0 scales.

    codes = to_format(x, "bf16")                  # uint16 codes, round to nearest even
    codes = to_format(x, "e4m3fn", rounding="stochastic", seed=7)
    y = from_format(codes, "bf16")                 # float32, exact
    codes, scales = quantize_mx(x, "e4m3fn")       # blocks along the last axis
"""
from __future__ import annotations

import numpy as np

from . import _native

FORMATS = ("fp32", "bf16", "fp16", "e4m3fn", "e5m2", "e2m1")


def to_format(values, fmt: str, rounding: str = "nearest_even", seed: int = 0, saturate: bool = False) -> np.ndarray:
    """Codes of `values` (converted to float32 first) in `fmt`. Stochastic
    rounding draws one XORWOW number per element in C order from `seed`, so a
    seed gives the same codes every time."""
    return _native.encode(np.asarray(values, dtype=np.float32), fmt, rounding, seed, saturate)


def from_format(codes, fmt: str) -> np.ndarray:
    """The exact float32 values of codes in `fmt` (unsigned integers; a code
    wider than the format raises ValueError)."""
    codes = np.asarray(codes)
    if codes.size and (not np.issubdtype(codes.dtype, np.integer) or codes.min() < 0):
        raise ValueError(f"codes are unsigned integers, not {codes.dtype} values")
    return _native.decode(codes.astype(np.uint32), fmt)


def round_to(values, fmt: str, rounding: str = "nearest_even", seed: int = 0, saturate: bool = False) -> np.ndarray:
    """float32 values rounded to `fmt` (to_format then from_format)."""
    return from_format(to_format(values, fmt, rounding, seed, saturate), fmt)


def quantize_mx(values, element_format: str, rule: str = "ocp") -> tuple[np.ndarray, np.ndarray]:
    """OCP MX v1.0 blocks of 32 along the last axis: (codes, E8M0 scales).
    rule "trn3" is Trainium3's quantize_mx (one power of two larger)."""
    return _native.quantize_mx(np.asarray(values, dtype=np.float32), element_format, rule)


def dequantize_mx(codes, scales, element_format: str) -> np.ndarray:
    """The float32 values MX blocks hold: codes [..., 32 k], scales [..., k]."""
    codes, scales = np.asarray(codes), np.asarray(scales)
    if codes.ndim == 0 or scales.shape != codes.shape[:-1] + (codes.shape[-1] // 32,) or codes.shape[-1] % 32:
        raise ValueError(f"dequantize_mx: codes {codes.shape} need scales {codes.shape[:-1]} + (last axis / 32,), "
                         f"not {scales.shape}")
    return _native.dequantize_mx(np.asarray(codes, dtype=np.uint8), np.asarray(scales, dtype=np.uint8),
                                 element_format)
