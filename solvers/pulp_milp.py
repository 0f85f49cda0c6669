"""MILP back ends through PuLP: CBC (COIN_CMD on the cbcbox binary) and HiGHS (highspy).

PuLP reports status "Optimal" for a run the time limit stopped with a merely feasible
incumbent; `sol_status` tells them apart, so both are read. CBC's best bound is not
exposed by PuLP: it is read from CBC's log. HiGHS gives it in its info record.

CBC only accepts a solution better than the incumbent by its `increment`, 1e-4 by
default: an absolute optimality gap that, on objectives of a few 1e-4 (sub-microsecond
ops), let CBC call 0.00074 optimal where 0.0007 exists. It is set to CBC_INCREMENT.

CBC runs sequentially whatever `threads` says: its threaded branch and bound (any
`-threads` option, 1 included) deadlocks in this build now and then, all threads waiting on
a futex with no CPU use until the hard deadline kills it (3 of 1,800 runs with threads 1,
4 of 1,500 with 2, none of 3,300 sequential, on one 2-op model). HiGHS gets `threads`.

Each solve runs in a forked child (`solvers.processes.run_forked`) whose answer (status,
values, bound) comes back by pipe: CBC can overrun its `-sec` limit (reading the model,
presolve), HiGHS too (presolve), and PuLP spends seconds passing a big model to either; a
child still running 0.2 s past the caller's limit is killed with what it started,
and the run is `killed` (no solution: the engine answers with its heuristic incumbent).

A model built in scaled units says so with an `objective_unit` attribute on the problem:
objective and bound are reported multiplied by it (a plain multiplier, nothing placement-specific).
"""
from __future__ import annotations

import re
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from placer.errors import PlacerError
from solvers import cbc_path
from solvers.base import SolverError, SolverRun, SolverUnavailableError, SolveStatus

__all__ = ["solve_milp"]


def _status(prob: Any) -> SolveStatus:
    import pulp

    if prob.status == pulp.LpStatusOptimal:
        if prob.sol_status == pulp.LpSolutionOptimal:
            return SolveStatus.OPTIMAL
        if prob.sol_status == pulp.LpSolutionIntegerFeasible:
            return SolveStatus.FEASIBLE
        return SolveStatus.NO_SOLUTION
    if prob.status == pulp.LpStatusInfeasible:
        return SolveStatus.INFEASIBLE
    if prob.status == pulp.LpStatusNotSolved:
        return SolveStatus.NO_SOLUTION
    raise SolverError(f"MILP solver returned {pulp.LpStatus[prob.status]} / {pulp.LpSolution[prob.sol_status]}")


def _cbc_bound(log: str, status: SolveStatus, objective: float | None) -> float | None:
    """CBC's final best bound: "Lower bound:" when stopped, the objective when optimal."""
    if status is SolveStatus.OPTIMAL:
        return objective
    found = re.search(r"^Lower bound:\s+(-?[0-9.eE+-]+)", log, re.M)
    return float(found.group(1)) if found else None


CBC_INCREMENT = 1e-7  # absolute, in objective units (ms): inside the engine's 1e-6 tolerance
# Each solve runs in a forked child (solvers.processes.run_forked): the solver's own limit
# ends _READBACK_S before the caller's, which leaves time to read the answer back, and a child
# still running _KILL_GRACE_S after the caller's limit (CBC reading a big model, HiGHS in
# presolve, PuLP writing the model) is killed: the run is then `killed`, without a solution.
# (The engine keeps 0.2 s of its own limit for checking the answer: a kill lands on it.)
_READBACK_S = 0.2
_KILL_GRACE_S = 0.2


def _seconds_to(deadline: float) -> float:
    """Seconds left until `deadline` (time.perf_counter), at least 0.05."""
    return round(max(0.05, deadline - time.perf_counter()), 2)


def _cbc_solver(deadline: float, **kwargs: Any) -> Any:
    import pulp

    class DeadlineCBC(pulp.COIN_CMD):  # type: ignore[misc, valid-type]
        """pulp.COIN_CMD whose time limit is what is left when CBC starts, after PuLP has
        written the model (seconds on big models)."""

        @property
        def timeLimit(self) -> float:
            return _seconds_to(deadline)

        @timeLimit.setter
        def timeLimit(self, value: float | None) -> None:
            pass

    return DeadlineCBC(**kwargs)


def _highs_solver(warm_start: bool, deadline: float, **kwargs: Any) -> Any:
    import highspy
    import pulp

    class WarmHiGHS(pulp.HiGHS):  # type: ignore[misc, valid-type]
        """pulp.HiGHS that hands the variables' initial values to HiGHS as a start, with
        the time left once PuLP has passed the model to HiGHS as its limit."""

        def callSolver(self, lp: Any) -> None:
            lp.solverModel.setOptionValue("time_limit", _seconds_to(deadline))
            if warm_start:
                values = [v.varValue for v in lp.variables()]
                if all(x is not None for x in values):
                    sol = highspy.HighsSolution()
                    sol.col_value = [float(x) for x in values]
                    sol.value_valid = True
                    lp.solverModel.setSolution(sol)
            lp.solverModel.run()

    return WarmHiGHS(**kwargs)


def _highs_failed(prob: Any) -> bool:
    import highspy

    return prob.solverModel.getModelStatus() == highspy.HighsModelStatus.kSolveError


# HiGHS's MIP feasibility tolerance (default 1e-6) times a big-M row of some hundred units let an
# "optimal" objective sit 6e-5 ms below the schedule it decodes to (fuzz seed 8223), and on one
# flow-routing model (seed 8261) HiGHS called 2.755 ms optimal where CBC proves 2.368 (it printed
# the failed mapping of ERGO-Code/HiGHS#2808, below). At 1e-7 both solve exactly, no slower.
_HIGHS_DEFAULTS: dict[str, Any] = {"mip_feasibility_tolerance": 1e-7}
# HiGHS settings tried in turn while a run ends in "Solve error" (see _solve_highs)
_HIGHS_RETRIES: tuple[dict[str, Any], ...] = (
    {"presolve": "off"},
    {"presolve": "off", "mip_feasibility_tolerance": 1e-8},
    {"mip_feasibility_tolerance": 1e-8},
    {"mip_feasibility_tolerance": 1e-7, "primal_feasibility_tolerance": 1e-9},
    {"mip_feasibility_tolerance": 1e-9, "primal_feasibility_tolerance": 1e-9},
    {"mip_heuristic_run_feasibility_jump": False},
    {"mip_feasibility_tolerance": 1e-6},
    {"mip_feasibility_tolerance": 1e-5},
    {"presolve": "off", "mip_feasibility_tolerance": 1e-5},
)


def _solve_highs(prob: Any, deadline: float, threads: int, relative_gap: float, warm_start: bool) -> None:
    """HiGHS; after a "Solve error", again without presolve, then with a tighter tolerance.

    HiGHS 1.12 (pinned: the one ortools bundles) can end a MIP in "Solve error" when an
    incumbent of the presolved model fails to map back (ERGO-Code/HiGHS#2808; it prints
    `HighsMipSolverData::transformNewIntegerFeasibleSolution tmpSolver.run();`). The fuzz
    campaign met it on 78 of 34,000 small solves; without presolve 56 of them solve, and
    with the MIP feasibility tolerance at 1e-8 (default 1e-6) the rest. A looser one (1e-5)
    also ends the errors but, times a big-M of 1e5 units, let an "optimal" objective sit a
    unit below the optimum. Two later cases (seeds 4301 and 4559: independent ops, pins,
    analytic costs) failed every one of those and solve, exactly, with the MIP tolerance at
    1e-7 and the primal one at 1e-9; a third (seed 5747, flow routing, tiny durations) only
    with both at 1e-9. (Those figures are against HiGHS's default tolerance; every run now
    starts from `_HIGHS_DEFAULTS`, the MIP tolerance at 1e-7, and a retry's settings replace
    those it names.) Seed 9302 (5 ops, 2 GPUs, memory nearly full) failed all of those: HiGHS's
    feasibility jump heuristic finds the optimum with one row violated by 1.00001 times the
    MIP tolerance, whatever that tolerance is, and the final check then rejects it ("MIP
    solver claims optimality, but with ... primal infeasibilities"); without that heuristic
    it solves exactly. Seed 15208 (7 independent ops, two of them pinned, analytic costs on two
    unlike GPUs) gets the same rejection at every tolerance up to 1e-7, with or without that
    heuristic, restarts or any heuristics at all; at HiGHS's default (1e-6) it is optimal, 2.6 ms,
    as CBC and CP-SAT prove. Seed 15094 (flow routing, 5 ops, 3 unlike GPUs, memory, groups)
    fails the same way up to 1e-6, with presolve on or off, and solves at 1e-5 (2.4675 ms, as
    CBC and CP-SAT prove). The answer is re-timed, so a looser row moves only the objective,
    never the schedule; every earlier case solves before those two. Seed 19119 (5 ops, 3 unlike
    GPUs behind a switch, a group, analytic costs) fails at 1e-5 too, and solves at 1e-5
    without presolve (2.8475 ms, as CBC and CP-SAT prove): the last try.
    """
    start = [v.varValue for v in prob.variables()]  # the warm start; a failed run may overwrite it
    options = {"msg": False, "gapRel": relative_gap, "gapAbs": 0.0, "threads": threads, **_HIGHS_DEFAULTS}
    prob.solve(_highs_solver(warm_start, deadline, timeLimit=_seconds_to(deadline), **options))
    for retry in _HIGHS_RETRIES:
        if not _highs_failed(prob) or deadline - time.perf_counter() <= 0.1:
            return
        for v, x in zip(prob.variables(), start):
            v.varValue = x
        prob.solve(_highs_solver(warm_start, deadline, timeLimit=_seconds_to(deadline), **{**options, **retry}))


def solve_milp(
    prob: Any,
    backend: str,
    time_limit_s: float,
    threads: int = 1,
    relative_gap: float = 0.0,
    warm_start: bool = False,
) -> SolverRun:
    """Solve a PuLP problem (minimisation) on `backend` ("cbc" or "highs") within
    `time_limit_s` seconds of wall clock, everything included (passing the model to the
    solver, reading its answer); at most _KILL_GRACE_S later the run is killed (`killed`,
    no solution). The variables' values and the problem's status are set as after
    `prob.solve`.

    With `warm_start`, the variables' current values (set with setInitialValue) are
    a complete starting solution. `threads` is for HiGHS: CBC runs sequentially (see above).
    """
    from solvers.processes import Overrun, run_forked

    began = time.perf_counter()
    if backend == "cbc":
        path = cbc_path()
        if path is None:
            raise SolverUnavailableError("CBC: no binary (install the cbcbox package or Debian coinor-cbc)")
    elif backend == "highs":
        path = None
    else:
        raise SolverError(f"unknown MILP back end {backend!r}")
    deadline = began + time_limit_s - _READBACK_S

    def solve_here() -> tuple[SolverRun, list[float | None], int, int]:
        run = _solve(prob, backend, path, deadline, threads, relative_gap, warm_start)
        return run, [v.varValue for v in prob.variables()], prob.status, prob.sol_status

    try:
        run, values, status, sol_status = run_forked(solve_here, time_limit_s + _KILL_GRACE_S)
    except Overrun:
        return SolverRun(backend, SolveStatus.NO_SOLUTION, None, None, time.perf_counter() - began, killed=True)
    except PlacerError:
        raise
    except Exception as exc:  # PuLP's and the solvers' own, a dead child: failures of the back end
        raise SolverError(f"{backend} failed: {type(exc).__name__}: {exc}") from exc
    for v, x in zip(prob.variables(), values):
        v.varValue = x
    prob.status, prob.sol_status = status, sol_status
    return replace(run, wall_s=time.perf_counter() - began)


def _solve(prob: Any, backend: str, path: str | None, deadline: float, threads: int, relative_gap: float,
           warm_start: bool) -> SolverRun:
    """One solve in this process, the solver's own limit ending at `deadline`."""
    import pulp

    began = time.perf_counter()
    log = ""
    if backend == "cbc":
        with tempfile.TemporaryDirectory(prefix="placer-cbc-") as tmp:
            log_path = Path(tmp) / "cbc.log"
            solver = _cbc_solver(
                deadline, path=path, msg=False, gapRel=relative_gap, warmStart=warm_start, logPath=str(log_path),
                keepFiles=False, options=[f"increment {CBC_INCREMENT:g}"],
            )
            prob.solve(solver)
            log = log_path.read_text() if log_path.exists() else ""
    else:
        _solve_highs(prob, deadline, threads, relative_gap, warm_start)
    status = _status(prob)
    objective = pulp.value(prob.objective) if status in (SolveStatus.OPTIMAL, SolveStatus.FEASIBLE) else None
    if backend == "cbc":
        bound = _cbc_bound(log, status, objective)
    elif status in (SolveStatus.OPTIMAL, SolveStatus.FEASIBLE):
        bound = float(prob.solverModel.getInfo().mip_dual_bound)
    else:
        bound = None
    unit = float(getattr(prob, "objective_unit", 1.0))
    objective = objective * unit if objective is not None else None
    bound = bound * unit if bound is not None else None
    return SolverRun(
        backend=backend, status=status, objective=objective, bound=bound, wall_s=time.perf_counter() - began
    )
