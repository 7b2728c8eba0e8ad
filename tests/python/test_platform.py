"""Platforms from Python: listing, params, runs in worker processes."""
import json

import pytest

import trn3vp


def test_platforms_and_params():
    names = trn3vp.platforms()
    assert {"bringup", "neuroncore", "nl72x2", "cluster"} <= set(names)
    assert "144 chips" in names["nl72x2"]
    ps = {p["name"]: p for p in trn3vp.params("neuroncore", filter="neuroncore.nc0.dma_*")}
    bw = ps["neuroncore.nc0.dma_bandwidth"]
    assert bw["type"] == "bandwidth" and bw["unit"] == "B/s" and bw["description"] and bw["value"] == bw["default"]
    assert ps["neuroncore.nc0.dma_descriptor_cost"]["unit"] == "s"
    # A param set at build shows as the value.
    ps = trn3vp.params("neuroncore", {"neuroncore.m": 1024}, filter="neuroncore.m")
    assert len(ps) == 1 and ps[0]["value"] == "1024" and ps[0]["default"] == "512"
    assert ps[0]["range"] == "[0, 4294967295]"  # a checked conversion: no wrap past 32 bits


def test_run_reports_stats_summary_and_timeline(tmp_path):
    r = trn3vp.run("neuroncore", {"neuroncore.m": 256, "neuroncore.n": 1024, "neuroncore.k": 256},
                   timeline=str(tmp_path / "t.json"))
    assert r.passed and "platform neuroncore: PASSED" in r.report
    assert r.stats["neuroncore.nc0.matmul_flops"] == 2 * 256 * 1024 * 256
    assert r.summary["simulated_s"] == pytest.approx(4.257e-6, abs=1e-9)
    assert r.summary["wall_s"] > 0
    json.loads((tmp_path / "t.json").read_text())


def test_a_failed_workload_and_a_refused_run():
    r = trn3vp.run("neuroncore", {"neuroncore.kernel": "softmax", "neuroncore.tolerance": 0})
    assert not r.passed and r.exit_code == 1 and "FAILED" in r.report
    with pytest.raises(trn3vp.SimulationError, match="unknown param 'neuroncore.nope'"):
        trn3vp.run("neuroncore", {"neuroncore.nope": 1})
    with pytest.raises(trn3vp.SimulationError, match="multiple"):
        trn3vp.run("neuroncore", {"neuroncore.m": 100})
