"""The exact back ends behind one interface, found by name in one registry.

A back end takes a built model of the kind it declares (`"cp"`: an OR-Tools CpModel;
`"milp"`: a PuLP problem) and `Limits`, and answers a `SolverRun` (status, objective,
bound, and why it stopped). The engine asks the registry, never compares solver names.
"""
from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from solvers.base import SolverRun, SolverUnavailableError

__all__ = ["BACKENDS", "Backend", "Limits", "get_backend"]


@dataclass(frozen=True)
class Limits:
    """What a solve may spend and how: the same fields for every back end (each ignores
    what it cannot use, e.g. CBC has no deterministic mode and no solution callback)."""

    time_limit_s: float
    threads: int = 1
    seed: int = 0
    relative_gap: float = 0.0
    deterministic: bool = False            # time_limit_s is deterministic work (CP-SAT)
    presolve: bool = True
    linear_relaxation: bool = True         # CP-SAT: its LP relaxation (linearization level 1) or none (0)
    bound_search: bool = False             # CP-SAT: its lower-bound tree search (for solves kept for their bound)
    warm_start: bool = False               # the model's initial values are a complete start (MILP)
    on_solution: Callable[[Any], None] | None = None  # CP-SAT: every improving solution
    on_bound: Callable[[float], None] | None = None   # CP-SAT: every improved proven bound


class Backend(Protocol):
    name: str
    model: Literal["cp", "milp"]
    install_hint: str  # what makes it available, for the error that says it is not

    def available(self) -> bool: ...

    def solve(self, model: Any, limits: Limits) -> tuple[SolverRun, Any]:
        """The run, and the object to read variable values from (or None)."""
        ...


class CpSat:
    """OR-Tools CP-SAT (solvers.cpsat)."""

    name = "cpsat"
    model: Literal["cp", "milp"] = "cp"
    install_hint = "install the ortools package"

    def available(self) -> bool:
        return importlib.util.find_spec("ortools") is not None

    def solve(self, model: Any, limits: Limits) -> tuple[SolverRun, Any]:
        from solvers.cpsat import solve_cpsat

        return solve_cpsat(model, limits.time_limit_s, threads=limits.threads,
                           seed=limits.seed, relative_gap=limits.relative_gap, on_solution=limits.on_solution,
                           on_bound=limits.on_bound, presolve=limits.presolve,
                           linear_relaxation=limits.linear_relaxation, bound_search=limits.bound_search,
                           deterministic=limits.deterministic)


class PulpMilp:
    """CBC or HiGHS on a PuLP problem (solvers.pulp_milp); values are read from the problem."""

    model: Literal["cp", "milp"] = "milp"

    def __init__(self, name: str, install_hint: str):
        self.name = name
        self.install_hint = install_hint

    def available(self) -> bool:
        from solvers import available_solvers

        return available_solvers()[self.name]

    def solve(self, model: Any, limits: Limits) -> tuple[SolverRun, Any]:
        from solvers.pulp_milp import solve_milp

        run = solve_milp(model, self.name, limits.time_limit_s, threads=limits.threads,
                         relative_gap=limits.relative_gap, warm_start=limits.warm_start)
        return run, model


BACKENDS: dict[str, Backend] = {
    "cpsat": CpSat(),
    "cbc": PulpMilp("cbc", "install the cbcbox package or Debian coinor-cbc, or point PLACER_CBC at a CBC binary"),
    "highs": PulpMilp("highs", "install the pulp and highspy packages"),
}


def get_backend(name: str) -> Backend:
    """The back end called `name`; SolverUnavailableError when it is unknown or not installed."""
    backend = BACKENDS.get(name)
    if backend is None:
        raise SolverUnavailableError(f"no solver back end {name!r} (known: {', '.join(BACKENDS)})")
    if not backend.available():
        others = [n for n, b in BACKENDS.items() if n != name and b.available()]
        raise SolverUnavailableError(f"solver back end {name!r} is not available here: {backend.install_hint}"
                                     f" (available: {', '.join(others) or 'none'})")
    return backend
