"""Sweeps in parallel worker processes, and their plot."""
import trn3vp


def test_sweep_rows_in_order_with_figures(tmp_path):
    rows = trn3vp.sweep("neuroncore", {"neuroncore.m": [128, 256], "neuroncore.dtype": ["bf16", "e4m3fn"]},
                        figures={"flops": trn3vp.stat("neuroncore.nc0.matmul_flops"),
                                 "tflops": trn3vp.stat_rate("neuroncore.nc0.matmul_flops", 1e-12)}, jobs=2)
    assert [(r["neuroncore.m"], r["neuroncore.dtype"]) for r in rows] == [
        (128, "bf16"), (128, "e4m3fn"), (256, "bf16"), (256, "e4m3fn")]
    assert all(r["passed"] for r in rows)
    assert [r["flops"] for r in rows] == [2 * m * 1024 * 512 for m in (128, 128, 256, 256)]
    # The platform's own report of the first point: the same throughput, to its two decimals.
    own = trn3vp.run("neuroncore", {"neuroncore.m": 128, "neuroncore.dtype": "bf16"})
    reported = float(own.report.split("throughput")[1].split("TFLOP/s")[0])
    assert round(rows[0]["tflops"], 2) == reported
    # The same point twice gives the same simulated figures.
    again = trn3vp.sweep("neuroncore", [{"neuroncore.m": 128, "neuroncore.dtype": "bf16"}], jobs=1)
    assert again[0]["simulated_s"] == rows[0]["simulated_s"]
    png = tmp_path / "tflops.png"
    trn3vp.plot(rows, x="neuroncore.m", y="tflops", series="neuroncore.dtype", path=str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
