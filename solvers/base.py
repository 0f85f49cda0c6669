"""What every solver back end hands back: a status, the objective and the proven bound.

Its failures are `SolverError` and `SolverUnavailableError`, which live in the one error
tree (`placer.errors`, a module that imports nothing) and are re-exported here.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from placer.errors import SolverError, SolverUnavailableError

__all__ = ["SolveStatus", "SolverRun", "SolverError", "SolverUnavailableError"]


class SolveStatus(str, Enum):
    """Why the solver stopped and what it holds. Anything else is a SolverError."""

    OPTIMAL = "optimal"          # proven optimal (within the requested relative gap)
    FEASIBLE = "feasible"        # stopped by a limit, holds an incumbent
    INFEASIBLE = "infeasible"    # proven: nothing satisfies the constraints
    NO_SOLUTION = "no_solution"  # stopped by a limit before any incumbent


@dataclass(frozen=True, slots=True)
class SolverRun:
    """One solver call: status, objective and bound in the model's own units, wall seconds."""

    backend: str
    status: SolveStatus
    objective: float | None
    bound: float | None
    wall_s: float
    killed: bool = False  # the hard deadline stopped a solver that overran its own limit
    work: float = 0.0     # the solver's deterministic time (CP-SAT), the same on any load

    @property
    def reason(self) -> str:
        """Why the solver stopped."""
        if self.killed:
            return "killed at the hard deadline"
        return {SolveStatus.OPTIMAL: "proven optimal", SolveStatus.INFEASIBLE: "proven infeasible"}.get(
            self.status, "limit reached")

    @property
    def has_solution(self) -> bool:
        return self.status in (SolveStatus.OPTIMAL, SolveStatus.FEASIBLE)
