"""Portfolio members of one CP-SAT solve: the same model solved at once by several workers of a
pool (placer.parallel: local processes or Ray tasks), each with its own seed.

Every member proves a bound on the same model, so the largest of them holds; the member with
the best answer gives the values, which the caller decodes and checks like any other answer.
Members that do not come back (a lost node, a killed process) count as having found nothing.
With deterministic work limits every member is reproducible on its own, and the best is chosen
by (objective, member number): the same answer on every run with the same number of workers.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from placer.parallel import SubSolvePool
from solvers.base import SolverRun, SolveStatus
from solvers.registry import Limits, get_backend

__all__ = ["PortfolioAnswer", "solve_portfolio"]


@dataclass(frozen=True)
class _Member:
    """What every member receives once: the model and its limits (its seed is the item)."""

    model_text: str  # the CpModelProto in text format (OR-Tools' Python proto has no binary form)
    limits: Limits


@dataclass(frozen=True)
class PortfolioAnswer:
    """The combined run (best member's status and objective, the largest bound, the work of
    the longest member: members run at once) and the best member's variable values, by
    variable index."""

    run: SolverRun
    values: list[int] | None
    members: int
    answered: int

    def value(self, variable: Any) -> int:
        """A variable's value in the best member's answer (what `CpSolver.value` gives)."""
        assert self.values is not None
        return self.values[variable.index]


def _solve_member(shared: _Member, seed: int) -> tuple[SolverRun, list[int] | None]:
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    model.proto.parse_text_format(shared.model_text)
    run, solver = get_backend("cpsat").solve(model, replace(shared.limits, seed=seed))
    return run, list(solver.response_proto.solution) if run.has_solution else None


def solve_portfolio(pool: SubSolvePool, model: Any, limits: Limits) -> PortfolioAnswer:
    """`pool.workers` members of `model` at once, seeds `limits.seed` + 0, 1, ...; no solution
    callbacks (the members run elsewhere)."""
    shared = _Member(str(model.proto), replace(limits, on_solution=None, on_bound=None))
    seeds = [limits.seed + i for i in range(pool.workers)]
    # a member past its limit is a lost member: CP-SAT overruns a little, the grace covers it
    wait_s = None if limits.deterministic else 2.0 * limits.time_limit_s + 10.0
    answers = pool.map(_solve_member, shared, seeds, timeout_s=wait_s)
    came = [(i, a) for i, a in enumerate(answers) if a is not None]
    runs = [run for _, (run, _) in came]
    solved = [(run.objective, i, values) for i, (run, values) in came if run.has_solution and values is not None]
    bounds = [run.bound for run in runs if run.bound is not None]
    if any(run.status is SolveStatus.INFEASIBLE for run in runs):
        status = SolveStatus.INFEASIBLE
    elif any(run.status is SolveStatus.OPTIMAL for run in runs):
        status = SolveStatus.OPTIMAL
    else:
        status = SolveStatus.FEASIBLE if solved else SolveStatus.NO_SOLUTION
    best = min(solved, key=lambda s: (s[0], s[1])) if solved else None
    combined = SolverRun(
        backend="cpsat", status=status, objective=best[0] if best else None,
        bound=max(bounds) if bounds else None, wall_s=max((run.wall_s for run in runs), default=0.0),
        work=max((run.work for run in runs), default=0.0),
    )
    return PortfolioAnswer(combined, best[2] if best else None, members=len(seeds), answered=len(came))
