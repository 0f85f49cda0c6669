"""CP-SAT back end (OR-Tools): runs a built CpModel and maps its status.

With `deterministic`, the limit is CP-SAT's deterministic time (a count of work, not
seconds) and one worker runs: the same model gives the same answer on any load. (CP-SAT's
interleaved multi-worker search is deterministic too, but its fixed work chunks overran a
5-unit limit twentyfold here.) Otherwise several workers race on the wall clock, faster
but not reproducible.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from solvers.base import SolverError, SolverRun, SolveStatus

__all__ = ["WALL_SAFETY", "solve_cpsat"]

# Deterministic runs stop anyway after this many times their limit (work units) in seconds. It
# must stay far above any real rate: a 31-op decomposition component of msr Inception-V3 spent
# 18-20 s of wall time (five solves sharing 2 cores) on 0.76 units, and at 20 the stop cut one
# run and not the next, so two deterministic runs answered differently.
WALL_SAFETY = 100.0

log = logging.getLogger("solvers.cpsat")

_STATUS = {
    "OPTIMAL": SolveStatus.OPTIMAL,
    "FEASIBLE": SolveStatus.FEASIBLE,
    "INFEASIBLE": SolveStatus.INFEASIBLE,
    "UNKNOWN": SolveStatus.NO_SOLUTION,
}


def solve_cpsat(
    model: Any,
    time_limit_s: float,
    threads: int = 1,
    seed: int = 0,
    relative_gap: float = 0.0,
    on_solution: Callable[[Any], None] | None = None,
    on_bound: Callable[[float], None] | None = None,
    presolve: bool = True,
    linear_relaxation: bool = True,
    bound_search: bool = False,
    deterministic: bool = False,
) -> tuple[SolverRun, Any]:
    """Solve `model`; returns the run and the CpSolver (to read values from).

    `on_solution(callback)` is called on every improving solution, from the solver's
    thread, with a CpSolverSolutionCallback whose Value() and BestObjectiveBound() work;
    `on_bound(bound)` on every improved proven bound (in the model's units), between solutions.
    Without `presolve` a hinted big model gets its first solution at once. Without
    `linear_relaxation` no LP runs (linearization level 0). With `bound_search` CP-SAT's
    lower-bound tree search spends the search on the proof (answers come later and worse):
    for solves kept only for their bound. With `deterministic`, `time_limit_s` is
    deterministic time; a wall-clock safety stop at WALL_SAFETY times that (a machine many
    times slower than usual) keeps it bounded.
    """
    from ortools.sat.python import cp_model

    solver = cp_model.CpSolver()
    time_limit_s = max(0.01, float(time_limit_s))  # a negative limit makes CP-SAT answer MODEL_INVALID
    wall_limit_s = time_limit_s
    if deterministic:
        solver.parameters.max_deterministic_time = time_limit_s
        wall_limit_s = WALL_SAFETY * time_limit_s + 5.0
    solver.parameters.max_time_in_seconds = wall_limit_s
    # deterministic: one worker, whatever `threads` says (interleaved workers overrun their limit
    # many times over, and racing ones are not reproducible)
    solver.parameters.num_workers = 1 if deterministic else max(1, int(threads))
    solver.parameters.random_seed = int(seed)
    solver.parameters.relative_gap_limit = float(relative_gap)
    # presolve can take seconds on big models and is not interrupted by the time limit
    solver.parameters.cp_model_presolve = presolve
    if not linear_relaxation:
        solver.parameters.linearization_level = 0
    if bound_search:
        solver.parameters.optimize_with_lb_tree_search = True
    if on_bound is not None:
        solver.best_bound_callback = on_bound

    class _Callback(cp_model.CpSolverSolutionCallback):  # type: ignore[misc]
        def on_solution_callback(self) -> None:
            if on_solution is not None:
                on_solution(self)

    began = time.perf_counter()

    def solve() -> int:
        # CP-SAT can overrun max_time_in_seconds by seconds on big models: stop it from outside too
        timer = threading.Timer(wall_limit_s, solver.stop_search)
        timer.daemon = True
        timer.start()
        try:
            return solver.solve(model, _Callback() if on_solution else None)
        finally:
            timer.cancel()

    try:
        code = solve()
    except IndexError:
        # OR-Tools 9.15's presolve symmetry detection crashes on some memory-infeasible
        # models (`raw_hash_map<>::at`, benchmarks/reports/2026-11-23-fuzz/findings.md);
        # without symmetry detection the same model is answered
        solver.parameters.symmetry_level = 0
        code = solve()
    name = solver.status_name(code)
    if name == "MODEL_INVALID" and len(model.proto.solution_hint.vars) and not model.validate():
        # a hint CP-SAT rejects makes the whole model invalid: solve again without it
        model.clear_hints()
        code = solve()
        name = solver.status_name(code)
    if name not in _STATUS:
        raise SolverError(f"CP-SAT returned {name}: {model.validate()}")
    status = _STATUS[name]
    has = status in (SolveStatus.OPTIMAL, SolveStatus.FEASIBLE)
    run = SolverRun(
        backend="cpsat",
        status=status,
        objective=solver.objective_value if has else None,
        # the proven bound holds even when no solution was found
        bound=solver.best_objective_bound if has or name == "UNKNOWN" else None,
        wall_s=time.perf_counter() - began,
        work=solver.response_proto.deterministic_time,
    )
    if deterministic and run.wall_s >= wall_limit_s:
        log.warning("a deterministic CP-SAT solve was stopped by its wall-clock safety (%.1f s for %.3f work "
                    "units): this answer may differ from run to run", run.wall_s, time_limit_s)
    return run, solver
