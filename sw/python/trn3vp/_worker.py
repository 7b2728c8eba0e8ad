"""Worker processes: every simulation runs in a process of its own.

SystemC elaborates one platform per process, so the module never simulates
in the Python process: it starts the trn3vp program (the one this build
made, `_build.SIMULATOR`) with the run's arguments and reads back what it
wrote. A worker that runs past its timeout is killed.
"""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

from . import _build

# Exit codes of the trn3vp program (sw/tools/trn3vp/cli.h).
EXIT_OK, EXIT_FAILED, EXIT_USER_ERROR = 0, 1, 2


class SimulationError(RuntimeError):
    """The simulator refused the run (bad params, files) or did not finish."""


@dataclass
class Completed:
    exit_code: int
    stdout: str
    stderr: str


def simulator() -> str:
    """The trn3vp program; TRN3VP_SIMULATOR overrides the build's."""
    return os.environ.get("TRN3VP_SIMULATOR", _build.SIMULATOR)


def simulate(args: list[str], timeout: float = 600.0) -> Completed:
    """Runs `trn3vp args...` in a worker process; raises SimulationError on a
    user error (exit 2: the simulator's one-line message), a crash or a timeout."""
    try:
        p = subprocess.run([simulator(), *args], capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as e:
        raise SimulationError(f"the simulation ran past its timeout of {timeout:g} s and was stopped") from e
    if p.returncode == EXIT_USER_ERROR:
        lines = [line for line in p.stderr.splitlines() if line.strip()]
        raise SimulationError(lines[-1] if lines else "trn3vp refused the run (exit 2)")
    if p.returncode not in (EXIT_OK, EXIT_FAILED) or "terminated with signal" in p.stderr:
        raise SimulationError(f"trn3vp ended with exit code {p.returncode}: {p.stderr.strip()[-500:]}")
    return Completed(p.returncode, p.stdout, p.stderr)
