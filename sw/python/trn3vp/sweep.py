"""Sweeps: many simulations in parallel worker processes, their figures as
rows, and a plot of one figure against one parameter.

    rows = sweep("neuroncore", {"neuroncore.m": [512, 1024], "neuroncore.dtype": ["bf16", "mxfp8"]},
                 figures={"tflops": stat_rate("neuroncore.nc0.matmul_flops", 1e-12)})
    plot(rows, x="neuroncore.m", y="tflops", series="neuroncore.dtype", path="gemm.png")
"""
from __future__ import annotations

import itertools
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

from .platform import RunResult, run


def grid(axes: dict) -> list[dict]:
    """Every combination of the axes' values, in order (the last axis fastest)."""
    keys = list(axes)
    return [dict(zip(keys, values)) for values in itertools.product(*(axes[k] for k in keys))]


def stat(name: str) -> Callable[[RunResult], float]:
    """A figure: one stat's value."""
    return lambda r: r.stats[name]


def stat_rate(name: str, scale: float = 1.0) -> Callable[[RunResult], float]:
    """A figure: a stat per simulated second, times `scale` (FLOPs -> TFLOP/s: 1e-12)."""
    return lambda r: r.stats[name] / r.summary["simulated_s"] * scale


def simulated_s(r: RunResult) -> float:
    return r.summary["simulated_s"]


def sweep(platform: str, points, figures: dict[str, Callable[[RunResult], float]] | None = None,
          jobs: int | None = None, timeout: float = 600.0, progress: bool = False) -> list[dict]:
    """Runs `platform` once per point (a dict of params, or a grid: a dict
    of lists), each simulation in its own worker process, `jobs` at a time
    (default: the machine's cores). Returns one record per point, in the
    points' order: its params, `passed`, `simulated_s`, `wall_s` and each
    figure. A point whose params are refused raises SimulationError."""
    points = grid(points) if isinstance(points, dict) else list(points)
    figures = dict(figures or {})
    jobs = jobs or os.cpu_count() or 1

    def one(point: dict) -> dict:
        r = run(platform, point, timeout=timeout)
        record = dict(point)
        record.update(passed=r.passed, simulated_s=r.summary["simulated_s"], wall_s=r.summary["wall_s"])
        for name, figure in figures.items():
            record[name] = figure(r)
        return record

    rows = []
    pool = ThreadPoolExecutor(max_workers=jobs)  # threads wait; the simulations are processes
    try:
        for i, record in enumerate(pool.map(one, points)):
            rows.append(record)
            if progress:
                print(f"sweep: {i + 1}/{len(points)} points", flush=True)
    finally:  # a refused point (or Ctrl-C) stops the points not yet started
        pool.shutdown(wait=True, cancel_futures=True)
    return rows


def plot(rows: list[dict], x: str, y: str, series: str | None = None, path: str | None = None, logx: bool = False,
         title: str | None = None):
    """Plots figure `y` against parameter `x`, one line per value of
    `series`, with matplotlib; writes `path` (PNG or SVG) when given and
    returns the figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    groups: dict = {}
    for r in rows:
        groups.setdefault(r.get(series) if series else None, []).append(r)
    for key, members in groups.items():
        members = sorted(members, key=lambda r: r[x])
        ax.plot([r[x] for r in members], [r[y] for r in members], marker="o",
                label=f"{series}={key}" if series else None)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    if logx:
        ax.set_xscale("log", base=2)
    if series:
        ax.legend()
    if title:
        ax.set_title(title)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    if path:
        fig.savefig(path)
    return fig
