"""The placement pipeline: documents -> model -> heuristics -> exact back end -> re-timing
-> validation + simulation -> placer.result/v1.

Outcomes are statuses (optimal, feasible, infeasible, no_solution); exceptions mean
failure: bad input (InputError), a missing solver (SolverUnavailableError), or an answer
our own validator rejects (SolutionCheckError), which is a bug and never returned.
"""
from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from placer.bounds import lower_bound_ms
from placer.coarsen import DEFAULT_MAX_OPS, Coarsening, coarsen_for
from placer.errors import SolutionCheckError
from placer.feasibility import explain_infeasible
from placer.heuristics import critical_path, heft, single_device
from placer.model import Problem, build_problem
from placer.schedule import Schedule, Solution, retime
from placer.schema import GraphSpec, HardwareSpec, ResultSpec, ScheduleEntry, TransferEntry
from placer.simulator import simulate_problem
from placer.validate import check_result
from solvers import SolveStatus, SolverRun, available_solvers

__all__ = ["PlaceOptions", "Progress", "place", "available_solvers", "HEURISTICS", "EXACT_SOLVERS"]

EXACT_SOLVERS = ("cpsat", "cbc", "highs")
_NOISE = 1e-9  # relative floating-point noise in solver bounds and objectives
_MILP_TOL_MS = 1e-6  # the MILP solvers' own optimality tolerance
_RESULT_EVERY_S = 5.0  # how often progress carries a full validated incumbent
HEURISTICS = ("heft", "critical_path", "single_device")
_HEURISTIC_FUNCTIONS: dict[str, Callable[[Problem], Schedule | None]] = {
    "heft": heft,
    "critical_path": critical_path,
    "single_device": single_device,
}


class PlaceOptions(BaseModel):
    """How to solve. The same model is the CLI's flags and the API's `options`."""

    model_config = ConfigDict(extra="forbid")

    solver: Literal["cpsat", "cbc", "highs", "heft", "critical_path", "single_device"] = "cpsat"
    time_limit_s: float = Field(10.0, gt=0, le=86_400)
    routing: Literal["shortest", "flow"] = "shortest"
    contention: bool = False
    relative_gap: float = Field(1e-4, ge=0, le=1)
    threads: int = Field(2, ge=1, le=64)
    seed: int = Field(0, ge=0)
    coarsen: Literal["off", "auto", "force"] = "auto"
    coarsen_max_ops: int = Field(DEFAULT_MAX_OPS, ge=2)
    # CP-SAT work limits instead of wall time and fixed seeds: the same answer on any load
    deterministic: bool = False


@dataclass(frozen=True)
class Progress:
    """A progress report; `result` is a full validated result when an incumbent improved."""

    elapsed_s: float
    incumbent_ms: float | None
    bound_ms: float | None
    message: str
    result: ResultSpec | None = None


ProgressFn = Callable[[Progress], None]


@dataclass
class _Baselines:
    single_device: Schedule | None
    heft: Schedule | None
    critical_path: Schedule | None

    def best(self) -> Schedule | None:
        found = [s for s in (self.heft, self.critical_path, self.single_device) if s is not None]
        return min(found, key=lambda s: s.makespan_ms) if found else None

    def to_dict(self) -> dict[str, float | None]:
        def ms(s: Schedule | None) -> float | None:
            return s.makespan_ms if s is not None else None

        return {"single_device_ms": ms(self.single_device), "heft_ms": ms(self.heft), "critical_path_ms": ms(self.critical_path)}


class _Run:
    """One call of `place`: the problem, its baselines, the clock and the progress sink."""

    def __init__(self, graph: GraphSpec, hardware: HardwareSpec, options: PlaceOptions, progress: ProgressFn | None):
        self.began = time.perf_counter()
        self.graph, self.hardware, self.options = graph, hardware, options
        self.progress = progress
        self.problem = build_problem(graph, hardware)
        self.bound_ms = lower_bound_ms(self.problem)
        self.baselines: _Baselines | None = None
        self.extra: dict[str, Any] = {}

    def elapsed(self) -> float:
        return time.perf_counter() - self.began

    def report(self, message: str, incumbent: float | None = None, bound: float | None = None,
               result: ResultSpec | None = None) -> None:
        if self.progress is not None:
            self.progress(Progress(self.elapsed(), incumbent, bound, message, result))

    def stats(self) -> dict[str, Any]:
        p = self.problem
        return {"ops": p.n_ops, "edges": len(p.edges), "devices": p.n_devices, "groups": len(p.groups),
                **self.extra}

    def empty_result(self, status: str, reason: str) -> ResultSpec:
        single = self.baselines.single_device if self.baselines else None
        return ResultSpec(
            status=status, solver=self.options.solver, reason=reason, lower_bound_ms=self.bound_ms,
            single_device_ms=single.makespan_ms if single else None, solve_time_s=self.elapsed(),
            baselines=self.baselines.to_dict() if self.baselines else {}, stats=self.stats(),
        )

    def proven(self, schedule: Schedule, bound_ms: float) -> bool:
        """Within the requested relative gap of a valid lower bound."""
        bound = max(bound_ms, self.bound_ms)
        return schedule.makespan_ms - bound <= (self.options.relative_gap + _NOISE) * schedule.makespan_ms

    def finish(self, schedule: Schedule, bound_ms: float) -> ResultSpec:
        """The final result: optimal when proven within the relative gap, else feasible."""
        return self.result(schedule, "optimal" if self.proven(schedule, bound_ms) else "feasible", bound_ms)

    def result(self, schedule: Schedule, status: str, bound_ms: float) -> ResultSpec:
        """Build, simulate and validate the result document of a schedule."""
        p = self.problem
        makespan = schedule.makespan_ms
        bound = min(max(bound_ms, self.bound_ms), makespan)
        if makespan - bound <= _NOISE * makespan:
            bound = makespan  # floating-point noise of the solver's bound
        single = self.baselines.single_device if self.baselines else None
        sim = self._simulate(schedule)
        result = ResultSpec(
            status=status,
            solver=self.options.solver,
            makespan_ms=makespan,
            lower_bound_ms=bound,
            gap=(makespan - bound) / makespan if makespan > 0 else 0.0,
            single_device_ms=single.makespan_ms if single else None,
            speedup=single.makespan_ms / makespan if single and makespan > 0 else None,
            solve_time_s=self.elapsed(),
            placement={p.ops[k]: p.devices[d] for k, d in enumerate(schedule.solution.device)},
            schedule=[
                ScheduleEntry(op=p.ops[k], device=p.devices[schedule.solution.device[k]],
                              start_ms=schedule.start_ms[k], end_ms=schedule.end_ms[k])
                for k in sorted(range(p.n_ops), key=lambda k: (schedule.start_ms[k], k))
            ],
            transfers=[
                TransferEntry(src=p.ops[p.edges[t.edge].src], dst=p.ops[p.edges[t.edge].dst],
                              bytes=p.edges[t.edge].size_bytes, route=list(t.route),
                              start_ms=t.start_ms, end_ms=t.end_ms)
                for t in schedule.transfers
            ],
            memory_bytes=dict(zip(p.devices, schedule.memory_bytes(p))),
            baselines=self.baselines.to_dict() if self.baselines else {},
            routing=self.options.routing,
            simulation=sim,
            stats=self.stats(),
        )
        violations = check_result(self.graph, self.hardware, result)
        if violations:
            raise SolutionCheckError(
                f"{self.options.solver} produced an invalid placement: " + "; ".join(violations[:5])
            )
        return result

    def _simulate(self, schedule: Schedule) -> dict[str, Any]:
        """Replay with the solution's order (must agree), FIFO, and with link contention."""
        p, sol = self.problem, schedule.solution
        ordered = simulate_problem(p, sol.device, sol.order, routes=sol.routes)
        if not math.isclose(ordered.makespan_ms, schedule.makespan_ms, rel_tol=1e-9, abs_tol=1e-9):
            raise SolutionCheckError(
                f"the simulator replays the schedule in {ordered.makespan_ms} ms, the schedule says "
                f"{schedule.makespan_ms} ms"
            )
        fifo = simulate_problem(p, sol.device, None, routes=sol.routes)
        contended = simulate_problem(p, sol.device, sol.order, contention=True, routes=sol.routes)
        return {
            "makespan_ms": ordered.makespan_ms,
            "fifo_makespan_ms": fifo.makespan_ms,
            "contention_makespan_ms": contended.makespan_ms,
            "device_utilisation": ordered.device_utilisation,
            "link_bytes": ordered.link_bytes,
        }


def place(
    graph: GraphSpec,
    hardware: HardwareSpec,
    options: PlaceOptions | None = None,
    progress: ProgressFn | None = None,
) -> ResultSpec:
    """The best placement of `graph` on `hardware` that `options.solver` finds in time.

    Every returned schedule has passed `placer.validate.check_result` and the simulator.
    """
    options = options or PlaceOptions()
    run = _Run(graph, hardware, options, progress)
    reason = explain_infeasible(run.problem)
    if reason is not None:
        return run.empty_result("infeasible", reason)

    p = run.problem
    run.baselines = _Baselines(single_device=single_device(p), heft=heft(p), critical_path=critical_path(p))
    best = run.baselines.best()
    if options.solver in HEURISTICS:
        chosen = getattr(run.baselines, options.solver)
        if chosen is None:
            return run.empty_result(
                "no_solution", f"{options.solver} found no placement that fits memory, groups and pins; "
                "an exact solver (cpsat) can search further"
            )
        return run.finish(chosen, run.bound_ms)

    if best is not None:
        run.report("heuristic incumbent", best.makespan_ms, run.bound_ms,
                   run.result(best, "feasible", run.bound_ms))
        if run.proven(best, run.bound_ms):
            run.extra["proof"] = "a heuristic meets the lower bound"
            return run.finish(best, run.bound_ms)

    if options.solver == "cpsat":
        best, decomposed = _try_decomposition(run, best) if options.coarsen != "force" else (best, False)
        if best is not None and run.proven(best, run.bound_ms):
            run.extra["proof"] = "the series decomposition meets its bound"
            return run.finish(best, run.bound_ms)
        remaining = options.time_limit_s - run.elapsed()
        if decomposed and p.n_ops > MONOLITHIC_MAX_OPS and remaining < 0.25 * options.time_limit_s:
            # the monolithic model of a big graph spends seconds in CP-SAT's first
            # propagation (beyond its time limit): worth it only with time to spare
            assert best is not None
            return run.finish(best, run.bound_ms)
        coarse = None if decomposed else coarsen_for(p, options.coarsen, max_ops=options.coarsen_max_ops)
        if coarse is not None:
            run.extra.update(coarse.stats())
        solver_run, schedule, bound = _solve_cpsat(run, best, coarse)
    else:
        solver_run, schedule, bound = _solve_milp(run, best)
    run.extra["solver_status"] = solver_run.status.value
    run.extra["solver_wall_s"] = solver_run.wall_s

    if solver_run.status is SolveStatus.INFEASIBLE:
        if best is not None:
            raise SolutionCheckError(f"{options.solver} says infeasible, but a heuristic found a valid placement")
        return run.empty_result("infeasible", f"{options.solver} proved that no placement satisfies memory, "
                                "groups and pins")
    if schedule is None or (best is not None and best.makespan_ms < schedule.makespan_ms):
        schedule = best
    if schedule is None:
        return run.empty_result("no_solution", f"{options.solver} found no placement within "
                                f"{options.time_limit_s} s and no heuristic fits memory")
    return run.finish(schedule, bound)

BIG_MODEL_OPS = 400        # above this CP-SAT's presolve and the redundant cumulative each cost
                           # seconds (15 s for 2,000 ops on 4 GPUs) that its time limit cannot cut
MONOLITHIC_MAX_OPS = 400   # above this, a decomposed graph is not also solved whole
DECOMPOSE_MIN_OPS = 100    # below this the monolithic model is usually proven quickly
DECOMPOSE_SHARE = 0.6      # of the time limit when the whole graph is solved after the parts


def _try_decomposition(run: _Run, best: Schedule | None) -> tuple[Schedule | None, bool]:
    """Series decomposition (placer.decompose): a better bound, often a better incumbent.

    Returns the best schedule and whether the decomposition ran.
    """
    from placer.decompose import decompose, solve_decomposed

    p, options = run.problem, run.options
    if p.n_ops < DECOMPOSE_MIN_OPS or p.n_devices < 2:
        return best, False
    dec = decompose(p)
    if dec is None or len(dec.components) < 2:
        return best, False
    share = 0.95 if p.n_ops > MONOLITHIC_MAX_OPS else DECOMPOSE_SHARE
    budget = share * max(0.0, options.time_limit_s - run.elapsed())
    run.report(f"decomposition: {len(dec.cuts)} time cuts, {len(dec.components)} components "
               f"(limit {budget:.1f} s)", best.makespan_ms if best else None, run.bound_ms)
    answer = solve_decomposed(p, dec, budget, options.threads, options.seed, best.solution if best else None)
    run.extra.update({f"decomposition_{k}" if not k.startswith("decomposition") else k: v
                      for k, v in answer.stats.items() if not isinstance(v, list)})
    run.bound_ms = max(run.bound_ms, answer.bound_ms)
    if answer.schedule is not None and (best is None or answer.schedule.makespan_ms < best.makespan_ms):
        best = answer.schedule
        run.report("decomposition incumbent", best.makespan_ms, run.bound_ms,
                   run.result(best, "feasible", run.bound_ms))
    return best, True


def _solve_cpsat(run: _Run, best: Schedule | None, coarse: Coarsening | None = None
                 ) -> tuple[SolverRun, Schedule | None, float]:
    """CP-SAT on the problem, or on its coarsening (placer.coarsen) whose answers are
    expanded back to every op. A coarse model is a restriction: its bound and its
    infeasibility say nothing about the original, so neither is used."""
    from placer.formulations.cpsat_model import build_cpsat
    from solvers.cpsat import solve_cpsat

    p, options = run.problem, run.options
    built = time.perf_counter()
    q = coarse.coarse if coarse is not None else p

    def lift(solution: Solution) -> Schedule:
        return retime(p, coarse.expand(solution) if coarse is not None else solution)

    hint = best
    if coarse is not None:
        projected = coarse.project(best.solution) if best is not None else None
        candidates = [retime(q, projected)] if projected is not None else []
        candidates += [s for s in (heft(q), critical_path(q)) if s is not None]
        hint = min(candidates, key=lambda s: s.makespan_ms) if candidates else None
    f = build_cpsat(q, hint, run.bound_ms if coarse is None else lower_bound_ms(q),
                    redundant_cumulative=q.n_ops <= BIG_MODEL_OPS)
    run.extra.update(f.stats)
    run.extra.update(tick_ms=f.tick_ms, exact_ticks=f.exact, rounding_slack_ms=f.rounding_slack_ms,
                     build_s=time.perf_counter() - built)
    state = {"last_report": 0.0, "last_result": 0.0, "best_ms": best.makespan_ms if best else math.inf}
    lock = threading.Lock()

    def on_solution(cb: Any) -> None:
        """Runs in the solver's thread and blocks its search: numbers often, a full
        validated result (for callers that may be cut off) at most every few seconds."""
        now = run.elapsed()
        with lock:
            if now - state["last_report"] < 0.5:
                return
            state["last_report"] = now
            full = now - state["last_result"] >= _RESULT_EVERY_S
            if full:
                state["last_result"] = now
        bound = run.bound_ms if coarse is not None else max(run.bound_ms, f.lower_bound_ms(cb.best_objective_bound))
        incumbent = cb.objective_value * f.tick_ms
        result = None
        if full:
            schedule = lift(f.decode(cb.value, q))
            if schedule.makespan_ms < state["best_ms"]:
                state["best_ms"] = schedule.makespan_ms
                result = run.result(schedule, "feasible", bound)
        run.report("cpsat incumbent", min(state["best_ms"], incumbent), bound, result)

    # CP-SAT overruns its limit a little (presolve, callbacks): keep a margin
    remaining = max(0.1, 0.9 * (options.time_limit_s - run.elapsed()) - 0.2)
    run.report(f"cpsat: solving ({q.n_ops} {'super-' if coarse else ''}ops, {p.n_devices} devices, "
               f"limit {remaining:.1f} s)",
               best.makespan_ms if best else None, run.bound_ms)
    solver_run, solver = solve_cpsat(
        f.model, remaining, threads=options.threads, seed=options.seed,
        relative_gap=options.relative_gap, on_solution=on_solution if run.progress else None,
        presolve=q.n_ops <= BIG_MODEL_OPS,
    )
    if coarse is not None:
        if not solver_run.has_solution:  # an infeasible coarsening proves nothing
            return replace(solver_run, status=SolveStatus.NO_SOLUTION), None, run.bound_ms
        return replace(solver_run, status=SolveStatus.FEASIBLE), lift(f.decode(solver.value, q)), run.bound_ms
    if not solver_run.has_solution:
        return solver_run, None, run.bound_ms
    schedule = retime(p, f.decode(solver.value, p))
    return solver_run, schedule, f.lower_bound_ms(solver_run.bound or 0.0)


def _solve_milp(run: _Run, best: Schedule | None) -> tuple[SolverRun, Schedule | None, float]:
    from placer.formulations.milp import build_milp
    from solvers.pulp_milp import solve_milp

    p, options = run.problem, run.options
    built = time.perf_counter()
    f = build_milp(p, options.routing, best, run.bound_ms)
    run.extra.update(f.stats)
    run.extra["build_s"] = time.perf_counter() - built
    remaining = max(1.0, options.time_limit_s - run.elapsed())
    run.report(f"{options.solver}: solving the DLPlacer MILP ({f.stats['variables']} variables, "
               f"limit {remaining:.1f} s)", best.makespan_ms if best else None, run.bound_ms)
    solver_run = solve_milp(
        f.prob, options.solver, remaining, threads=options.threads,
        relative_gap=options.relative_gap, warm_start=best is not None,
    )
    if not solver_run.has_solution:
        return solver_run, None, run.bound_ms
    schedule = retime(p, f.decode(p))
    bound = solver_run.bound if solver_run.bound is not None else 0.0
    if solver_run.status is SolveStatus.OPTIMAL:
        # proven up to the solver's feasibility tolerance (HiGHS: 1e-6 absolute on Cmax)
        if schedule.makespan_ms - bound <= _MILP_TOL_MS * max(1.0, schedule.makespan_ms):
            bound = schedule.makespan_ms
    return solver_run, schedule, bound

