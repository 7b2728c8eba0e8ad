import numpy as np
import pytest

from trn3vp import numerics


def test_bf16_rounds_to_nearest_even_with_known_codes():
    # 1.0 = 0x3F80; pi -> 0x4049 (3.140625); 1 + 2^-8 is a tie between 0x3F80 and 0x3F81: even wins.
    codes = numerics.to_format([1.0, np.pi, 1.0 + 2.0**-8, 1.0 + 3 * 2.0**-8], "bf16")
    assert codes.dtype == np.uint16
    assert codes.tolist() == [0x3F80, 0x4049, 0x3F80, 0x3F82]
    assert numerics.from_format(codes, "bf16").tolist() == [1.0, 3.140625, 1.0, 1.0 + 2.0**-6]


def test_fp8_and_fp4_codes_and_saturation():
    assert numerics.to_format([448.0, -448.0, 0.0], "e4m3fn").tolist() == [0x7E, 0xFE, 0x00]
    # Past the largest finite: NaN without saturation (e4m3fn has no infinity), 448 with it.
    assert numerics.to_format([1000.0], "e4m3fn").tolist() == [0x7F]
    assert numerics.to_format([1000.0], "e4m3fn", saturate=True).tolist() == [0x7E]
    assert numerics.to_format([57344.0, 1e6], "e5m2").tolist() == [0x7B, 0x7C]  # max finite, +inf
    assert numerics.from_format(numerics.to_format([0.5, 1.5, 6.0, 7.0], "e2m1"), "e2m1").tolist() == [
        0.5, 1.5, 6.0, 6.0]


def test_every_code_round_trips():
    """Each finite code decodes to a value that encodes to the same code (signed zeros included)."""
    for fmt, bits in (("e4m3fn", 8), ("e5m2", 8), ("e2m1", 4), ("bf16", 16), ("fp16", 16)):
        codes = np.arange(1 << bits, dtype=np.uint32)
        values = numerics.from_format(codes, fmt)
        finite = np.isfinite(values)
        assert finite.sum() >= (1 << bits) - (1 << (bits - 3)), fmt
        assert np.array_equal(numerics.to_format(values[finite], fmt), codes[finite]), fmt


def test_fp16_known_codes():
    # 1.0 = 0x3C00, 65504 the largest finite, 2^-24 the smallest subnormal, -0.0 keeps its sign.
    assert numerics.to_format([1.0, 65504.0, 2.0**-24, -0.0, 1e6], "fp16").tolist() == [
        0x3C00, 0x7BFF, 0x0001, 0x8000, 0x7C00]


def test_stochastic_rounding_is_seeded_and_unbiased():
    x = np.full(20000, 1.0 + 2.0**-10, dtype=np.float32)  # an eighth of the way from 1.0 to the next bf16 (2^-7)
    a = numerics.to_format(x, "bf16", rounding="stochastic", seed=7)
    b = numerics.to_format(x, "bf16", rounding="stochastic", seed=7)
    c = numerics.to_format(x, "bf16", rounding="stochastic", seed=8)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)
    up = np.mean(a == 0x3F81)
    assert set(np.unique(a).tolist()) == {0x3F80, 0x3F81}
    assert abs(up - 0.125) < 0.01


def test_mx_blocks_along_the_last_axis():
    x = np.concatenate([np.linspace(-1.0, 1.0, 32), np.linspace(-8.0, 8.0, 32)]).astype(np.float32)
    codes, scales = numerics.quantize_mx(x.reshape(2, 32), "e4m3fn")
    assert codes.shape == (2, 32) and scales.shape == (2, 1)
    # amax 1.0: shared exponent 0 - 8 -> E8M0 code 119; amax 8: 3 - 8 -> 122.
    assert scales.ravel().tolist() == [119, 122]
    back = numerics.dequantize_mx(codes, scales, "e4m3fn")
    assert back[0, 0] == -1.0 and back[1, -1] == 8.0
    assert np.max(np.abs(back.ravel() - x)) <= 8.0 / 16  # within the e4m3 step at the block's top
    _, trn3 = numerics.quantize_mx(x.reshape(2, 32), "e4m3fn", rule="trn3")
    assert trn3.ravel().tolist() == [120, 123]


def test_bad_formats_and_shapes_raise():
    with pytest.raises(ValueError, match="unknown number format"):
        numerics.to_format([1.0], "fp12")
    with pytest.raises(ValueError, match="multiple of 32"):
        numerics.quantize_mx(np.zeros(31), "e4m3fn")
    with pytest.raises(ValueError, match="does not fit"):
        numerics.from_format([0x1FF], "e4m3fn")
    with pytest.raises(ValueError, match="unsigned integers"):
        numerics.from_format([1.7], "bf16")
    with pytest.raises(ValueError, match="need scales"):
        numerics.dequantize_mx(np.zeros((4, 32), np.uint8), np.zeros((2, 2), np.uint8), "e4m3fn")
    with pytest.raises(ValueError, match="code 31 does not fit e2m1"):
        numerics.dequantize_mx(np.full(32, 0x1F, np.uint8), np.zeros(1, np.uint8), "e2m1")
