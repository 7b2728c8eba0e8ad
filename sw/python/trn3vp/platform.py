"""Platforms: list them and their params, build and run one with params."""
from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass, field

from ._worker import EXIT_OK, simulate

_UNITS = {"ps": 1e-12, "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def platforms() -> dict[str, str]:
    """Every platform the simulator builds: name -> description."""
    out = simulate(["list-platforms"]).stdout
    result = {}
    for line in out.splitlines():
        name, _, description = line.partition(" ")
        result[name] = description.strip()
    return result


def _param_args(params: dict | None) -> list[str]:
    args = []
    for key, value in (params or {}).items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        args += ["-p", f"{key}={value}"]
    return args


def params(platform: str, params: dict | None = None, filter: str | None = None) -> list[dict]:
    """Every param of `platform` (as built with `params`): dicts with name,
    type, unit (s, Hz, B, B/s for the quantities; values are texts with
    their unit, e.g. '120 ns'), default, value, description and range."""
    args = ["list-params", "--platform", platform, "--format", "json", *_param_args(params)]
    if filter:
        args += ["--filter", filter]
    return json.loads(simulate(args).stdout)


def _seconds(text: str) -> float:
    m = re.match(r"\s*([-+0-9.eE]+)\s*(ps|ns|us|ms|s)\b", text)
    return float(m.group(1)) * _UNITS[m.group(2)] if m else float("nan")


@dataclass
class RunResult:
    """What a run printed and wrote."""

    platform: str
    params: dict
    exit_code: int
    report: str  # the platform's report and the summary lines, as printed
    stats: dict = field(default_factory=dict)  # every counter and histogram (--stats)
    timeline: str | None = None  # the Perfetto timeline, when asked for
    stderr: str = ""

    @property
    def passed(self) -> bool:
        return self.exit_code == EXIT_OK

    @property
    def summary(self) -> dict:
        """simulated_s (exact, from the stats), wall_s and speed (simulated seconds per wall second)."""
        lines = dict(
            (line[:18].strip(), line[18:]) for line in self.report.splitlines() if line[:18].strip()
        )
        simulated = (self.stats["sim.simulated_ps"] * 1e-12 if "sim.simulated_ps" in self.stats
                     else _seconds(lines.get("simulated time", "")))
        wall = _seconds(lines.get("wall time", ""))
        return {"simulated_s": simulated, "wall_s": wall, "speed": simulated / wall if wall > 0 else float("nan")}


def run(platform: str, params: dict | None = None, timeline: str | None = None, timeout: float = 600.0,
        extra_args: list[str] | None = None) -> RunResult:
    """Builds `platform` with `params` ({"bringup.dram.read_latency": "120ns"})
    and runs it in a worker process. A user error (unknown param, bad value)
    raises SimulationError with the simulator's message; a failed workload
    returns a result whose `passed` is False."""
    with tempfile.TemporaryDirectory(prefix="trn3vp-") as tmp:
        stats_file = os.path.join(tmp, "stats.json")
        args = ["run", "--platform", platform, "--stats", stats_file, *_param_args(params)]
        if timeline:
            args += ["--timeline", os.path.abspath(timeline)]
        done = simulate(args + list(extra_args or []), timeout=timeout)
        stats = {}
        if os.path.exists(stats_file):
            with open(stats_file, encoding="utf-8") as f:
                stats = json.load(f)
    return RunResult(platform, dict(params or {}), done.exit_code, done.stdout, stats,
                     os.path.abspath(timeline) if timeline else None, done.stderr)
