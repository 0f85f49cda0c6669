"""Solver back ends behind one small interface; they know solvers, not placement.

- `solvers.pulp_milp.solve_milp(problem, backend="cbc" | "highs", ...)`: PuLP models on CBC
  (the cbcbox binary through COIN_CMD) or HiGHS (highspy, in process).
- `solvers.cpsat.solve_cpsat(model, ...)`: OR-Tools CP-SAT.

Importing this package imports no solver library; `available_solvers()` probes cheaply.
"""
from __future__ import annotations

import importlib.util
import os
import shutil

from solvers.base import SolverError, SolverRun, SolverUnavailableError, SolveStatus

__all__ = ["SolveStatus", "SolverRun", "SolverError", "SolverUnavailableError", "available_solvers", "cbc_path"]


def cbc_path() -> str | None:
    """The CBC binary: `PLACER_CBC` when set (None when it names no executable file), else
    the cbcbox wheel's, else `cbc` on PATH (Debian coinor-cbc)."""
    chosen = os.environ.get("PLACER_CBC")
    if chosen:
        return chosen if os.path.isfile(chosen) and os.access(chosen, os.X_OK) else None
    if importlib.util.find_spec("cbcbox") is not None:
        import cbcbox

        return str(cbcbox.cbc_bin_path())
    return shutil.which("cbc")


def available_solvers() -> dict[str, bool]:
    """Which exact back ends can run here."""
    has_pulp = importlib.util.find_spec("pulp") is not None
    return {
        "cpsat": importlib.util.find_spec("ortools") is not None,
        "cbc": has_pulp and cbc_path() is not None,
        "highs": has_pulp and importlib.util.find_spec("highspy") is not None,
    }
