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

A model built in scaled units says so with an `objective_unit` attribute on the problem:
objective and bound are reported multiplied by it (a plain multiplier, nothing placement-specific).
"""
from __future__ import annotations

import contextlib
import os
import re
import signal
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

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
_GRACE_S = 5.0  # CBC may overrun its own limit (MPS reading, presolve): the hard deadline is later


def _child_pids(binary: str) -> list[int]:
    """Our child processes running `binary` (Linux /proc), so an overrunning CBC can be killed."""
    found = []
    for children in Path(f"/proc/{os.getpid()}/task").glob("*/children"):
        for pid in children.read_text().split():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
            except OSError:
                continue
            if cmdline == binary:
                found.append(int(pid))
    return found


def _run_with_deadline(call: Callable[[], object], deadline_s: float, binary: str) -> bool:
    """Run `call` (which waits for a `binary` child process); kill that child at the deadline.

    Returns False when the deadline struck.
    """
    error: list[BaseException] = []

    def target() -> None:
        try:
            call()
        except BaseException as exc:  # re-raised in the caller's thread
            error.append(exc)

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(deadline_s)
    if worker.is_alive():
        for pid in _child_pids(binary):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        worker.join()
        return False
    if error:
        raise error[0]
    return True


def _highs_solver(warm_start: bool, **kwargs: Any) -> Any:
    import highspy
    import pulp

    class WarmHiGHS(pulp.HiGHS):  # type: ignore[misc, valid-type]
        """pulp.HiGHS that hands the variables' initial values to HiGHS as a start."""

        def callSolver(self, lp: Any) -> None:
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


# HiGHS settings tried in turn while a run ends in "Solve error" (see _solve_highs)
_HIGHS_RETRIES: tuple[dict[str, Any], ...] = (
    {"presolve": "off"},
    {"presolve": "off", "mip_feasibility_tolerance": 1e-8},
    {"mip_feasibility_tolerance": 1e-8},
)


def _solve_highs(prob: Any, time_limit_s: float, threads: int, relative_gap: float, warm_start: bool) -> None:
    """HiGHS; after a "Solve error", again without presolve, then with a tighter tolerance.

    HiGHS 1.12 (pinned: the one ortools bundles) can end a MIP in "Solve error" when an
    incumbent of the presolved model fails to map back (ERGO-Code/HiGHS#2808; it prints
    `HighsMipSolverData::transformNewIntegerFeasibleSolution tmpSolver.run();`). The fuzz
    campaign met it on 78 of 34,000 small solves; without presolve 56 of them solve, and
    with the MIP feasibility tolerance at 1e-8 (default 1e-6) the rest. A looser one (1e-5)
    also ends the errors but, times a big-M of 1e5 units, let an "optimal" objective sit a
    unit below the optimum.
    """
    began = time.perf_counter()
    start = [v.varValue for v in prob.variables()]  # the warm start; a failed run may overwrite it
    options = {"msg": False, "gapRel": relative_gap, "gapAbs": 0.0, "threads": threads}
    prob.solve(_highs_solver(warm_start, timeLimit=time_limit_s, **options))
    for retry in _HIGHS_RETRIES:
        left = time_limit_s - (time.perf_counter() - began)
        if not _highs_failed(prob) or left <= 0:
            return
        for v, x in zip(prob.variables(), start):
            v.varValue = x
        prob.solve(_highs_solver(warm_start, timeLimit=left, **retry, **options))


def solve_milp(
    prob: Any,
    backend: str,
    time_limit_s: float,
    threads: int = 1,
    relative_gap: float = 0.0,
    warm_start: bool = False,
) -> SolverRun:
    """Solve a PuLP problem (minimisation) on `backend` ("cbc" or "highs").

    With `warm_start`, the variables' current values (set with setInitialValue) are
    a complete starting solution. `threads` is for HiGHS: CBC runs sequentially (see above).
    """
    import pulp

    began = time.perf_counter()
    log = ""
    if backend == "cbc":
        path = cbc_path()
        if path is None:
            raise SolverUnavailableError("CBC: no binary (install the cbcbox package or Debian coinor-cbc)")
        with tempfile.TemporaryDirectory(prefix="placer-cbc-") as tmp:
            log_path = Path(tmp) / "cbc.log"
            solver = pulp.COIN_CMD(
                path=path, msg=False, timeLimit=max(1.0, time_limit_s), gapRel=relative_gap,
                warmStart=warm_start, logPath=str(log_path), keepFiles=False,
                options=[f"increment {CBC_INCREMENT:g}"],
            )
            if not _run_with_deadline(lambda: prob.solve(solver), time_limit_s + _GRACE_S, path):
                return SolverRun(backend, SolveStatus.NO_SOLUTION, None, None, time.perf_counter() - began,
                                 killed=True)
            log = log_path.read_text() if log_path.exists() else ""
    elif backend == "highs":
        _solve_highs(prob, time_limit_s, threads, relative_gap, warm_start)
    else:
        raise SolverError(f"unknown MILP back end {backend!r}")
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
