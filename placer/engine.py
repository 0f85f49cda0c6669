"""The placement pipeline: documents -> model -> heuristics -> exact back end -> re-timing
-> validation + simulation -> placer.result/v1.

Outcomes are statuses (optimal, feasible, infeasible, no_solution); exceptions mean
failure: bad input (InputError), a missing solver (SolverUnavailableError), or an answer
our own validator rejects (SolutionCheckError), which is a bug and never returned.
"""
from __future__ import annotations

import itertools
import json
import logging
import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from placer.ancestral_loads import AncestralOptions, raise_by_ancestral_loads
from placer.bounds import Costs, bounds_and_switch_cover, head_tail_bounds_ms, lower_bound_ms
from placer.budget import Budget
from placer.coarsen import AUTO_THRESHOLD_OPS, DEFAULT_MAX_OPS, Coarsening, coarsen_for
from placer.cone_bounds import ConeBound, ConeOptions, raise_by_cones
from placer.errors import SolutionCheckError
from placer.feasibility import explain_infeasible
from placer.heuristics import (
    critical_path,
    heft,
    heft_by_paths,
    justify,
    resequence,
    single_device,
    stages,
    switch_cover_start,
)
from placer.model import Problem, build_problem
from placer.progress import Progress, ProgressFn, Reporter
from placer.refutation import RefuteOptions, refute
from placer.repair import is_placement_feasible, memory_overflow, repair_memory
from placer.schedule import Schedule, Solution, retime
from placer.schema import (
    Baselines,
    GraphSpec,
    HardwareSpec,
    ResultSpec,
    ScheduleEntry,
    SimulationSummary,
    TransferEntry,
    relative_gap,
)
from placer.simulator import simulate_problem
from placer.stats import SolveStats
from placer.validate import check_result
from placer.window_search import WindowOptions, improve_by_windows
from solvers import SolverRun, SolveStatus, available_solvers
from solvers.registry import Backend, Limits, get_backend

__all__ = ["EXACT_SOLVERS", "HEURISTICS", "PlaceOptions", "Progress", "Strategy", "available_solvers", "place"]

if TYPE_CHECKING:
    from placer.parallel import SubSolvePool

log = logging.getLogger("placer.engine")

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
    # the solvers' model leaves link contention out; with this the result's `simulation`
    # reports device utilisation and link busy times from the replay with contention
    contention: bool = Field(False, description="report the result's simulated utilisation and link times "
                             "under link contention (one transfer at a time per link direction)")
    relative_gap: float = Field(1e-4, ge=0, le=1)
    threads: int = Field(2, ge=1, le=64)
    seed: int = Field(0, ge=0, le=2**31 - 1)  # CP-SAT's random_seed is an int32
    coarsen: Literal["off", "auto", "force"] = "auto"
    coarsen_max_ops: int = Field(DEFAULT_MAX_OPS, ge=2, le=1_000_000)
    # CP-SAT work limits instead of wall time and fixed seeds: the same answer on any load
    deterministic: bool = False
    # independent sub-solves (decomposition components) run at once (placer.parallel): local
    # processes, or Ray tasks on the cluster at ray_address (then 1 means: as many as it has CPUs)
    workers: int = Field(1, ge=1, le=1024)
    ray_address: str | None = Field(None, max_length=300)
    # split operators (placer.split, DESIGN.md "Split operators"): configurations chosen with
    # the placement; off, answers are exactly the placement engine's
    split: bool = Field(False, description="allow splitting ops into tasks (data and operator parallelism)")


@dataclass(frozen=True)
class Strategy:
    """Every threshold the engine's strategies use, in one place (the defaults are what the
    benchmarks were measured with; see README "Big graphs").

    Sizes are in ops of the original graph, shares are fractions of the time left."""

    decompose_min_ops: int = 100        # below this the monolithic model is usually proven quickly
    monolithic_max_ops: int = 400       # above this, a decomposed graph is not also solved whole ...
    monolithic_min_share: float = 0.25  # ... unless this share of the limit is still left
    big_model_ops: int = 400            # above this CP-SAT's presolve and the redundant cumulative each
                                        # cost seconds (15 s for 2,000 ops on 4 GPUs) its limit cannot cut
    decompose_share: float = 0.6        # of the time left, for the decomposition of a graph that is
    decompose_share_big: float = 0.95   # then also solved whole / of a graph too big for that
    decompose_min_s_per_component: float = 0.05  # wall-clock mode: no decomposition with less time per component
    coarsen_above_ops: int = AUTO_THRESHOLD_OPS  # "auto" coarsens graphs with more ops than this
    repair_time_s: float = 5.0          # wall-clock cap of one memory repair (not in deterministic mode) ...
    repair_min_s: float = 0.2           # ... within the time left, but at least this
    repair_reserve_share: float = 0.1   # of the decomposition's limit, kept for repairing its answer (at most
                                        # repair_time_s) when some device cannot hold the graph's memory
    repair_max_moves: int = 400         # moves of groups one memory repair may make
    stages_share: float = 0.05         # of the limit, for the staged critical-path heuristic ...
    stages_max_s: float = 5.0           # ... at most this long
    stages_max_evaluations: int = 300   # list schedules it may evaluate (the bound in deterministic mode)
    moves_share: float = 0.2            # of the limit, for group moves (placer.local_search) ...
    moves_max_s: float = 20.0           # ... at most this long
    moves_max_evaluations: int = 3000   # re-timings it may try (the bound in deterministic mode)
    polish_share: float = 0.1           # of the time after the decomposition, for group moves after CP-SAT
    polish_share_one_worker: float = 0.5  # ... where CP-SAT runs one worker (deterministic mode, threads=1)
    polish_share_big: float = 0.3       # ... on graphs above big_model_ops
    coarse_probe_share: float = 0.25    # of a coarse model's CP-SAT time, tried first: the rest only if that
                                        # shortened the incumbent by cpsat_productive_gain (else the time
                                        # goes to the bounds and the windows at the end)
    cpsat_productive_gain: float = 0.001  # a monolithic CP-SAT solve that shortens its hint less than this
    cpsat_productive_gain_one_worker: float = 0.01  # ... where CP-SAT runs one worker (deterministic mode)
    kicks_max_evaluations: int = 50_000   # leaves the polish's iterated local search (kicks) what the
                                          # climbing leaves, at most this many re-timings in all
    lns_share: float = 0.0              # of the time after the decomposition, for neighbourhood search
    lns_share_big: float = 0.0          # ... on graphs above big_model_ops (the rest: one CP-SAT solve)
    lns_unproductive_share: float = 0.5  # of the time left after a one-worker (deterministic) CP-SAT solve of the
                                         # uncoarsened model that did not shorten its hint (..._gain_one_worker):
                                         # neighbourhood search, after the polish's climbing and before its kicks
    lns_min_s: float = 0.5              # no neighbourhood search with less time than this left
    lns_step_s: float = 2.0             # time limit of one neighbourhood
    lns_initial_groups: int = 40        # groups freed by the first neighbourhood (then adaptive)
    pool_start_s: float = 1.0           # wall-clock mode: kept from portfolio members' limit for starting the
                                        # pool's workers (placer solve --workers / --ray)
    milp_min_s: float = 0.2             # no MILP solve with less time than this left ...
    cpsat_min_s: float = 0.3            # ... nor a monolithic CP-SAT solve (wall-clock mode, with an incumbent)
    cpsat_again_min_share: float = 0.05  # of the limit: left after the polish, CP-SAT runs again from its answer
    milp_finish_s: float = 0.2          # kept from the MILP's limit for reading back and checking its answer
    ancestral_max_share: float = 0.05   # wall-clock mode: of the limit, at most, for the ancestral loads' heads and
                                        # tails (placer.ancestral_loads; deterministic mode caps its visits instead)
    ancestral: AncestralOptions = field(default_factory=AncestralOptions)  # its region, delay levels, ops near enough
    cone_min_gap: float = 0.02          # cone sub-solves (placer.cone_bounds) only while the gap is above this ...
    cone_share: float = 0.15            # ... for this share of the limit ...
    cone_max_s: float = 15.0            # ... at most this long; the time the strategies leave unused at the
                                        # end goes on with cones (twice as large once every join was solved)
    cone_min_s: float = 0.5             # no cone pass with less time than this
    cones_extend_gain: float = 0.01     # a cone pass that raised the bound this much and ran out of time goes on
    cones: ConeOptions = field(default_factory=ConeOptions)  # the size of a cone, one sub-solve's limit, which joins
    refute: RefuteOptions = field(default_factory=RefuteOptions)  # makespans refuted by group sub-models
                                        # (placer.refutation) in what the leftover cones leave of the time,
                                        # while the gap is above cone_min_gap: sub-model sizes, one test's limit
    windows_share: float = 0.4          # of the time left after the cones, for the window search before the
                                        # monolithic CP-SAT solve (placer.window_search; 0: no window search,
                                        # neither there nor at the end) ...
    windows_extend_gain: float = 0.01   # ... and again (the same share of what is left) after each pass
                                        # that shortened the incumbent by at least this fraction
    windows_min_s: float = 0.5          # ... when at least this long
    windows_fruitless_restarts: int = 3  # the time left at the end: window searches from other seeds until this
                                        # many in a row gain nothing
    windows: WindowOptions = field(default_factory=WindowOptions)  # window sizes, one sub-solve's limit


@dataclass
class _Baselines:
    single_device: Schedule | None
    heft: Schedule | None
    critical_path: Schedule | None

    def best(self) -> Schedule | None:
        found = [s for s in (self.heft, self.critical_path, self.single_device) if s is not None]
        return min(found, key=lambda s: s.makespan_ms) if found else None

    def spec(self) -> Baselines:
        def ms(s: Schedule | None) -> float | None:
            return s.makespan_ms if s is not None else None

        return Baselines(single_device_ms=ms(self.single_device), heft_ms=ms(self.heft),
                         critical_path_ms=ms(self.critical_path))


class _Run:
    """One call of `place`: the problem, its baselines, the budget, the best valid
    candidate so far and the progress sink."""

    def __init__(self, graph: GraphSpec, hardware: HardwareSpec, options: PlaceOptions,
                 progress: Reporter | ProgressFn | None, strategy: Strategy, pool: SubSolvePool | None = None):
        self.budget = Budget(options.time_limit_s, options.deterministic, options.threads, options.seed)
        self.graph, self.hardware, self.options, self.strategy = graph, hardware, options, strategy
        self.pool = pool  # where independent sub-solves run (placer.parallel); None: in this process
        reporter = progress if isinstance(progress, Reporter) else Reporter(progress)  # no heartbeat outside `place`
        self.reporter = reporter
        reporter.began = self.budget.began  # one clock: progress elapsed_s and the result's solve_time_s
        self.progress = reporter.sink
        reporter.phase("model", f"building the model ({len(graph.ops)} ops, {len(hardware.devices)} devices)")
        self.problem = build_problem(graph, hardware)
        self.cheap_costs = Costs.of(self.problem)  # heads and tails before any raise, built once (0.1-0.5 s on 2,500 ops)
        self.bounds, self.switch_cover = bounds_and_switch_cover(self.problem, self.cheap_costs)
        self.bound_ms = max(self.bounds.values())
        self.bound_source = max(self.bounds, key=self.bounds.__getitem__)
        # the best bound but the ancestral loads': what the cones and the coupled chain-loads bound are
        # gated by, so that a cheap raise alone does not turn off the bounds that go further (BERT-base
        # on the DGX-1: the ancestral loads' 28.38 ms turned off the chain loads' 28.53)
        self.bound_but_ancestral_ms = self.bound_ms
        self.baselines: _Baselines | None = None
        self.best: Schedule | None = None
        self.best_source = ""
        self.cones: ConeBound | None = None  # heads and tails the cones raised (placer.cone_bounds)
        self.ancestral: Costs | None = None  # heads and tails the ancestral loads raised (placer.ancestral_loads)
        self.valid: list[tuple[Schedule, str]] = []  # every accepted candidate, for a fallback
        p = self.problem
        self.stats = SolveStats(ops=p.n_ops, edges=len(p.edges), devices=p.n_devices, groups=len(p.groups),
                                bounds_ms=self.bounds)
        self.strict_failure = False  # set in CP-SAT's callback thread, raised after its solve
        self.strict = os.environ.get("PLACER_STRICT", "") not in ("", "0")
        self._result_sent = False  # a progress report carried a full result
        self._lock = threading.Lock()

    @property
    def costs(self) -> Costs:
        """The best heads and tails known: the ancestral loads' and the cones', op by op (the
        cheap ones before either has run)."""
        raised = [c for c in (self.ancestral, self.cones.costs if self.cones else None) if c is not None]
        return raised[0].combined(raised[1]) if len(raised) == 2 else (raised[0] if raised else self.cheap_costs)

    def elapsed(self) -> float:
        return self.budget.elapsed()

    def report(self, message: str, incumbent: float | None = None, bound: float | None = None,
               result: ResultSpec | None = None, phase: str | None = None) -> None:
        """Report progress (entering `phase` when given); the numbers default to the run's own.
        The first report with an incumbent carries its validated result, so a caller that sees an
        incumbent can always be given a placement (a killed job, a cancel)."""
        incumbent = incumbent if incumbent is not None else (self.best.makespan_ms if self.best else None)
        bound = bound if bound is not None else self.bound_ms
        if result is None and not self._result_sent and self.best is not None and self.progress is not None:
            result = self.feasible_result(self.best)
        self._result_sent = self._result_sent or result is not None
        if phase is not None:
            self.reporter.phase(phase, message, incumbent, bound, result)
        else:
            self.reporter.report(message, incumbent, bound, result)

    def raise_bound(self, bound_ms: float, source: str) -> None:
        if not source.startswith("ancestral"):
            self.bound_but_ancestral_ms = max(self.bound_but_ancestral_ms, bound_ms)
        if bound_ms > self.bound_ms:
            self.bound_ms, self.bound_source = bound_ms, source
            self.reporter.update(bound_ms=bound_ms)

    def offer(self, candidate: Solution | Schedule | None, source: str,
              may_overflow: bool = False) -> Schedule | None:
        """Check a strategy's candidate: re-time it, repair its memory if needed, keep it
        when it is the best so far. An invalid candidate is rejected (counted, logged, and
        in strict mode an error), never returned. A candidate that `may_overflow` (built
        leaving memory to the repair on purpose) is only counted when the repair fails."""
        if candidate is None:
            return None
        p = self.problem
        try:
            schedule = candidate if isinstance(candidate, Schedule) else retime(p, candidate)
            device = schedule.solution.device
            if not is_placement_feasible(p, device):
                if any(memory_overflow(p, device)) and _groups_and_pins_hold(p, device):
                    repair = repair_memory(p, schedule, self._repair_seconds(),
                                           max_moves=self.strategy.repair_max_moves)
                    if repair.schedule is None and (may_overflow or repair.stopped_by == "clock"):
                        # out of time is no strategy's bug: never a rejection, whatever the load
                        self.stats.count("unrepaired_candidates", source)
                        return None
                    if repair.schedule is None:
                        self.reject(source, "exceeds device memory and the repair found no fitting placement",
                                    schedule.solution)
                        return None
                    self.stats.count("repaired_candidates", source)
                    schedule = repair.schedule
                else:
                    self.reject(source, "breaks a colocation group or a pin", schedule.solution)
                    return None
        except SolutionCheckError as exc:
            self.reject(source, str(exc), candidate if isinstance(candidate, Solution) else candidate.solution)
            return None
        with self._lock:
            self.valid.append((schedule, source))
            if self.best is None or schedule.makespan_ms < self.best.makespan_ms - 1e-12:
                self.best, self.best_source = schedule, source
        self.reporter.update(incumbent_ms=self.best.makespan_ms if self.best else None)
        return schedule

    def _repair_seconds(self) -> float:
        """A memory repair's wall-clock cap: the strategy's cap, within the time left (a little
        past it, so that a candidate found at the limit can still be fitted). Deterministic
        mode bounds the repair by its number of moves only."""
        if self.options.deterministic:
            return math.inf
        return min(self.strategy.repair_time_s, max(self.strategy.repair_min_s, self.budget.remaining()))

    def reject(self, source: str, reason: str, solution: Solution | None = None) -> None:
        """Discard an invalid candidate: a bug in a strategy, so loud in logs and tests."""
        self.stats.count("rejected_candidates", source)
        detail = {"source": source, "reason": reason, "graph": self.graph.name, "hardware": self.hardware.name,
                  "options": self.options.model_dump(), "device": solution.device if solution else None,
                  "order": solution.order if solution else None}
        log.warning("rejected an invalid %s candidate: %s; reproduce: %s", source, reason,
                    json.dumps(detail, default=str)[:20_000])
        if self.strict:
            raise SolutionCheckError(f"{source} produced an invalid candidate: {reason}")

    def stats_now(self) -> SolveStats:
        """A copy of the run's stats as they stand, for one result document."""
        snapshot = self.stats.model_copy(deep=True)
        snapshot.record(tight_bound=self.bound_source, best_from=self.best_source, **self.budget.stats())
        return snapshot

    def empty_result(self, status: str, reason: str) -> ResultSpec:
        single = self.baselines.single_device if self.baselines else None
        return ResultSpec(
            status=status, solver=self.options.solver, reason=reason, lower_bound_ms=self.bound_ms,
            single_device_ms=single.makespan_ms if single else None, solve_time_s=self.elapsed(),
            baselines=self.baselines.spec() if self.baselines else Baselines(), stats=self.stats_now(),
        )

    def proven(self, schedule: Schedule | None) -> bool:
        """Within the requested relative gap of the best valid lower bound."""
        if schedule is None:
            return False
        return schedule.makespan_ms - self.bound_ms <= (self.options.relative_gap + _NOISE) * schedule.makespan_ms

    def finish(self) -> ResultSpec:
        """The final result of the best candidate (optimal when proven within the relative
        gap, else feasible); a candidate that fails the full validation is rejected and
        the next best valid one is returned."""
        self.report("validating and simulating the best placement", phase="finish")
        for schedule, source in sorted(self.valid, key=lambda c: c[0].makespan_ms):
            try:
                result = self.result(schedule, "optimal" if self.proven(schedule) else "feasible")
            except SolutionCheckError as exc:
                self.reject(f"{source} (final check)", str(exc), schedule.solution)
                continue
            assert result.stats is not None
            result.stats.best_from = source
            return result
        return self.empty_result("no_solution", f"{self.options.solver} found no valid placement within "
                                 f"{self.options.time_limit_s} s and no heuristic fits memory")

    def result(self, schedule: Schedule, status: str) -> ResultSpec:
        """Build, simulate and validate the result document of a schedule."""
        p = self.problem
        makespan = schedule.makespan_ms
        bound = min(self.bound_ms, makespan)
        if makespan - bound <= _NOISE * makespan:
            bound = makespan  # floating-point noise of the solver's bound
        single = self.baselines.single_device if self.baselines else None
        sim = self._simulate(schedule)
        result = ResultSpec(
            status=status,
            solver=self.options.solver,
            makespan_ms=makespan,
            lower_bound_ms=bound,
            gap=relative_gap(makespan, bound),
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
            baselines=self.baselines.spec() if self.baselines else Baselines(),
            routing=self.options.routing,
            simulation=sim,
            stats=self.stats_now(),
        )
        violations = check_result(self.graph, self.hardware, result)
        if violations:
            raise SolutionCheckError(
                f"{self.options.solver} produced an invalid placement: " + "; ".join(violations[:5])
            )
        return result

    def feasible_result(self, schedule: Schedule) -> ResultSpec | None:
        """A validated `feasible` result for a progress report, or None (rejected)."""
        try:
            return self.result(schedule, "feasible")
        except SolutionCheckError as exc:
            self.reject("progress report", str(exc), schedule.solution)
            return None

    def _simulate(self, schedule: Schedule) -> SimulationSummary:
        """Replay with the solution's order (must agree), FIFO, and with link contention; the
        utilisation reported is the contended replay's when `options.contention` asks for it."""
        p, sol = self.problem, schedule.solution
        ordered = simulate_problem(p, sol.device, sol.order, routes=sol.routes)
        if not math.isclose(ordered.makespan_ms, schedule.makespan_ms, rel_tol=1e-9, abs_tol=1e-9):
            raise SolutionCheckError(
                f"the simulator replays the schedule in {ordered.makespan_ms} ms, the schedule says "
                f"{schedule.makespan_ms} ms"
            )
        fifo = simulate_problem(p, sol.device, None, routes=sol.routes)
        contended = simulate_problem(p, sol.device, sol.order, contention=True, routes=sol.routes)
        shown = contended if self.options.contention else ordered
        return SimulationSummary(
            makespan_ms=ordered.makespan_ms,
            fifo_makespan_ms=fifo.makespan_ms,
            contention_makespan_ms=contended.makespan_ms,
            contention=self.options.contention,
            device_utilisation=shown.device_utilisation,
            link_bytes=shown.link_bytes,
            link_busy_ms=shown.link_busy_ms,
        )


def _groups_and_pins_hold(problem: Problem, device: list[int]) -> bool:
    return all(device[ops[0]] in problem.allowed[g] and all(device[k] == device[ops[0]] for k in ops)
               for g, ops in enumerate(problem.groups))


def place(
    graph: GraphSpec,
    hardware: HardwareSpec,
    options: PlaceOptions | None = None,
    progress: ProgressFn | None = None,
    strategy: Strategy | None = None,
) -> ResultSpec:
    """The best placement of `graph` on `hardware` that `options.solver` finds in time.

    Every returned schedule has passed `placer.validate.check_result` and the simulator.
    `progress` hears of every phase (placer.progress.PHASES) and, while one runs, a heartbeat
    at least every placer.progress.HEARTBEAT_S seconds.
    """
    options = options or PlaceOptions()
    if options.split:
        from placer.split.pipeline import place_split

        return place_split(graph, hardware, options, progress)
    # a missing back end fails before any work (SolverUnavailableError), not after the heuristics
    backend = get_backend(options.solver) if options.solver not in HEURISTICS else None
    from placer.parallel import pool_for

    # one pool for the whole solve: its workers (or its Ray connection) start once
    with Reporter(progress) as reporter, pool_for(options.workers, options.ray_address, options.threads) as pool:
        return _place(_Run(graph, hardware, options, reporter, strategy or Strategy(), pool), backend)


def _place(run: _Run, backend: Backend | None) -> ResultSpec:
    options = run.options
    reason = explain_infeasible(run.problem)
    if reason is not None:
        return run.empty_result("infeasible", reason)

    p = run.problem
    run.report(f"single device, HEFT, critical path ({p.n_ops} ops, {p.n_devices} devices)",
               phase="baselines")
    run.baselines = _Baselines(single_device=single_device(p), heft=heft(p), critical_path=critical_path(p))
    if options.solver in HEURISTICS:
        run.offer(getattr(run.baselines, options.solver), options.solver)
        if run.best is None:
            return run.empty_result(
                "no_solution", f"{options.solver} found no placement that fits memory, groups and pins; "
                "an exact solver (cpsat) can search further"
            )
        return run.finish()

    for name in HEURISTICS:
        run.offer(getattr(run.baselines, name), name)
    if not run.proven(run.best):
        seconds = min(run.strategy.stages_max_s, run.strategy.stages_share * options.time_limit_s)
        # a list schedule costs about 5 us per op and device: the cap bounds deterministic runs
        cap = min(run.strategy.stages_max_evaluations, max(10, int(seconds * 200_000 / (p.n_ops * p.n_devices))))
        run.report(f"staged critical-path heuristic (limit {seconds:.1f} s)", phase="stages")
        run.offer(stages(p, math.inf if options.deterministic else seconds, cap), "stages")
    if not run.proven(run.best):
        run.report("the critical path's groups as the switch cover places them", phase="switch_cover")
        run.offer(switch_cover_start(p, run.switch_cover), "switch cover")
        run.offer(heft_by_paths(p), "heft by paths")
    if run.best is not None:
        run.report("heuristic incumbent", run.best.makespan_ms, run.bound_ms, run.feasible_result(run.best))
        if run.proven(run.best):
            run.stats.proof = "a heuristic meets the lower bound"
            return run.finish()
        _raise_bound_by_ancestral_loads(run)
        if run.proven(run.best):
            run.stats.proof = "a heuristic meets the bound the ancestral loads raised"
            return run.finish()

    assert backend is not None
    if backend.model == "cp":
        heuristic_best = run.best
        decomposed = _try_decomposition(run) if options.coarsen != "force" else False
        if run.proven(run.best):
            run.stats.proof = "the series decomposition meets its bound"
            return run.finish()
        # the monolithic model of a big graph spends seconds in CP-SAT's first propagation
        # (beyond its time limit): worth it only with time to spare. The cheap steps before it
        # still run: where the decomposition's answer was lost (its stitch overflowed a tight
        # machine's memory) they are all that improves on the heuristics
        monolithic = not (decomposed and p.n_ops > run.strategy.monolithic_max_ops
                          and run.budget.remaining() < run.strategy.monolithic_min_share * options.time_limit_s)
        if not options.deterministic and run.best is not None and run.budget.remaining() < run.strategy.cpsat_min_s:
            run.stats.record(cpsat_skipped="no time left after the decomposition")
            return run.finish()
        decomposition_best = run.best
        _improve_by_moves(run)
        if heuristic_best is not None and decomposition_best is not heuristic_best and not run.proven(run.best):
            # a second start: moves from the decomposition's answer can end above those from the
            # heuristics' (msr ResNet-50 on a DGX-1: 610-611 ms against 602.58)
            _improve_by_moves(run, start=heuristic_best)
        if run.proven(run.best):
            return run.finish()
        _raise_bound_by_cones(run)
        if run.proven(run.best):
            run.stats.proof = "a heuristic meets the bound the cones raised"
            return run.finish()
        _improve_by_windows(run, run.strategy.windows_share)
        if run.proven(run.best):
            return run.finish()
        if not monolithic:
            run.stats.record(cpsat_skipped="the decomposition left too little time for the monolithic model")
            _improve_in_leftover(run)
            return run.finish()
        if not options.deterministic and run.best is not None and run.budget.remaining() < run.strategy.cpsat_min_s:
            # building the model alone takes longer (0.2 s for 300 ops on 4 devices)
            run.stats.record(cpsat_skipped="no time left for the monolithic model")
            return run.finish()
        coarse = None if decomposed else coarsen_for(p, options.coarsen, threshold_ops=run.strategy.coarsen_above_ops,
                                                     max_ops=options.coarsen_max_ops)
        if coarse is not None:
            run.stats.record(**coarse.stats())
        big = p.n_ops > run.strategy.big_model_ops
        one_worker = options.deterministic or options.threads == 1  # solvers.cpsat: deterministic runs one
        lns_share = run.strategy.lns_share_big if big else run.strategy.lns_share
        polish_share = _polish_share(run.strategy, big, one_worker)
        before_cpsat = run.best
        solver_run = _solve_cpsat_coarse_first(run, coarse, share=1.0 - lns_share - polish_share)
        cpsat_improved = run.best is not before_cpsat
        productive = _shorter(run.best, before_cpsat, _productive_gain(run.strategy, one_worker))
        if lns_share > 0 and solver_run.status is not SolveStatus.INFEASIBLE and not run.proven(run.best):
            _neighbourhood_search(run)
        elif not productive and one_worker and coarse is None and not run.proven(run.best):
            # CP-SAT's own LNS needs a second worker; ours clones the whole model per step, too
            # heavy where the model had to be coarsened. The polish's climbing goes first, so that
            # the neighbourhoods start from a local optimum of group moves
            _improve_by_moves(run, seconds=run.budget.remaining(), phase="polish")
            _neighbourhood_search(run, run.strategy.lns_unproductive_share * run.budget.remaining())
        if polish_share > 0 and not run.proven(run.best):
            _polish(run, productive=productive)
        if not run.proven(run.best):
            _offer_reordered(run, "justified")
        if cpsat_improved:
            _solve_cpsat_again(run, coarse)
        _raise_bound_by_cones(run, leftover=True)
        _raise_bound_by_refutation(run)
        _improve_in_leftover(run)
    else:
        solver_run = _solve_milp(run, backend)
    run.stats.record(solver_status=solver_run.status.value, solver_wall_s=solver_run.wall_s,
                     solver_reason=f"not run: {run.stats.milp_skipped}" if run.stats.milp_skipped
                     else solver_run.reason)

    if solver_run.status is SolveStatus.INFEASIBLE:
        if run.best is None:
            return run.empty_result("infeasible", f"{options.solver} proved that no placement satisfies memory, "
                                    "groups and pins")
        # a wrong answer of the solver's: counted and logged (fatal in strict mode), the incumbent stands
        run.reject(options.solver, "it says infeasible, but a heuristic found a valid placement")
    return run.finish()


def _try_decomposition(run: _Run) -> bool:
    """Series decomposition (placer.decompose): a better bound, often a better incumbent.

    Returns whether the decomposition ran.
    """
    from placer.decompose import decompose, solve_decomposed

    p, strategy = run.problem, run.strategy
    if p.n_ops < strategy.decompose_min_ops or p.n_devices < 2:
        return False
    dec = decompose(p)
    if dec is None or len(dec.components) < 2:
        return False
    share = strategy.decompose_share_big if p.n_ops > strategy.monolithic_max_ops else strategy.decompose_share
    limit = share * run.budget.remaining()
    if p.memory_exceeds_a_device():
        # the stitched answer may overload a device: keep time to repair it
        limit -= min(strategy.repair_time_s, strategy.repair_reserve_share * limit)
    if not run.options.deterministic and limit < strategy.decompose_min_s_per_component * len(dec.components):
        # every component is solved at least once, and each costs CP-SAT's start-up
        # (44 components of a 300-op graph took 2.2 s of a 1 s limit on a loaded machine)
        run.stats.record(decomposition_skipped=f"{len(dec.components)} components, {limit:.2f} s")
        return False
    best = run.best
    run.report(f"{len(dec.cuts)} time cuts, {len(dec.components)} components "
               f"(limit {limit:.1f} s)", best.makespan_ms if best else None, run.bound_ms, phase="decomposition")
    try:
        answer = solve_decomposed(p, dec, run.budget, limit, best.solution if best else None,
                                  on_step=run.report, pool=run.pool, bound_to_beat_ms=run.bound_but_ancestral_ms)
    except SolutionCheckError as exc:  # a bug in the stitch: counted and logged, never the user's traceback
        run.reject("decomposition", str(exc))
        return True
    run.stats.record(**answer.stats.model_dump())
    if answer.stitch_error is not None:
        run.reject("decomposition", answer.stitch_error)
    run.raise_bound(answer.bound_ms, "decomposition")
    if answer.chain_loads_ms is not None:
        run.raise_bound(answer.chain_loads_ms, "chain_loads")
    before = run.best
    run.offer(answer.schedule, "decomposition")
    run.offer(answer.alternative, "decomposition", may_overflow=True)
    if run.best is not before and run.best is not None:
        run.report("decomposition incumbent", run.best.makespan_ms, run.bound_ms, run.feasible_result(run.best))
    return True


def _raise_bound_by_ancestral_loads(run: _Run) -> None:
    """Heads and tails raised by the loads ancestors put on an op's device (placer.ancestral_loads):
    milliseconds per op, no CP-SAT, before every strategy that reads heads and tails (the cones
    raise their own and the two combine; NASNet cells, 4 V100s: 21.40 -> 25.31 ms in 1.5 s)."""
    p, strategy = run.problem, run.strategy
    if p.n_devices < 2 or strategy.ancestral.region_ops < 1:
        return
    limit = run.options.time_limit_s
    deadline = None if run.options.deterministic else time.perf_counter() + strategy.ancestral_max_share * limit
    run.report("heads and tails by the loads of ancestors", phase="ancestral_loads")
    raised = raise_by_ancestral_loads(p, run.cheap_costs, run.bound_ms, limit, deadline, strategy.ancestral)
    run.ancestral = raised.costs
    run.stats.record(ancestral_raised=raised.raised, ancestral_visits=raised.visits,
                     ancestral_stopped_by=raised.stopped_by)
    if raised.raised:
        named = head_tail_bounds_ms(p, raised.costs)
        assert run.stats.bounds_ms is not None
        run.stats.bounds_ms.update({f"ancestral_{name}": value for name, value in named.items()})
        source = max(named, key=named.__getitem__)
        run.raise_bound(named[source], f"ancestral_{source}")


def _raise_bound_by_cones(run: _Run, leftover: bool = False) -> None:
    """Heads and tails raised by sub-solves over small cones (placer.cone_bounds): a better
    bound where communication makes parallel branches expensive; the CP-SAT model then
    starts from the raised heads and tails too. A pass that ran out of time after raising
    the bound by `Strategy.cones_extend_gain` is followed by another where it stopped: on a
    long graph of cells each cone builds on the last, and the bound rises as far as the
    passes get. With `leftover`, the time the strategies left unused goes on where the
    last pass ran out of time, or to cones twice as large."""
    p, strategy, best = run.problem, run.strategy, run.best
    if best is None or p.n_devices < 2 or not _cones_wanted(run, best):
        return
    if leftover:
        seconds = _leftover_seconds(run)
        options = strategy.cones
        if run.cones is not None and run.cones.stopped_by != "time":  # else: go on where the time ran out
            options = replace(options, cone_ops=2 * options.cone_ops)
        if seconds >= strategy.cone_min_s:
            _cone_pass(run, options, seconds, "cones_leftover")
        return
    while True:
        seconds = min(strategy.cone_max_s, strategy.cone_share * run.options.time_limit_s,
                      0.5 * run.budget.remaining())
        if seconds < strategy.cone_min_s:
            return
        before_ms = run.bound_ms
        stopped_by = _cone_pass(run, strategy.cones, seconds, "cones")
        if stopped_by != "time" or run.bound_ms < before_ms * (1 + strategy.cones_extend_gain) \
                or not _cones_wanted(run, best):
            return


def _cone_pass(run: _Run, options: ConeOptions, seconds: float, phase: str) -> str:
    """One call of placer.cone_bounds, building on the run's earlier ones; its bounds go into
    the run's stats and bound. Returns why it stopped (ConeBound.stopped_by)."""
    run.report(f"heads and tails by sub-solves over cones of {options.cone_ops} ops (limit {seconds:.1f} s)",
               phase=phase)
    # the cones start from the cheap heads and tails, as if the ancestral loads had not run (from
    # theirs, more joins look near the critical path and the passes cover less of the graph:
    # NASNet-A-mobile on the DGX-1 170.65 ms against 171.05); the two raises combine op by op
    cones = raise_by_cones(run.problem, run.budget, seconds, run.bound_but_ancestral_ms, options, run.cones,
                           on_step=lambda message, bound: run.report(message, bound=max(bound, run.bound_ms)),
                           base=run.cheap_costs)
    run.cones = cones
    named = head_tail_bounds_ms(run.problem, run.costs)
    assert run.stats.bounds_ms is not None
    run.stats.bounds_ms.update({f"cones_{name}": value for name, value in named.items()})
    run.stats.record(cone_solves=(run.stats.cone_solves or 0) + cones.solves,
                     cone_raised=(run.stats.cone_raised or 0) + cones.raised, cone_stopped_by=cones.stopped_by,
                     cone_passes=(run.stats.cone_passes or 0) + 1)
    source = max(named, key=named.__getitem__)
    run.raise_bound(named[source], f"cones_{source}")
    return cones.stopped_by


def _raise_bound_by_refutation(run: _Run) -> None:
    """Makespans between the bound and the incumbent refuted by sub-models of a few whole
    groups (placer.refutation), from the heads and tails the cones raised: where chains that
    the heads see one at a time meet on the same devices (GNMT in msr-fiddle's form). It is the
    last bound, in the time that the leftover cones leave once they have solved every join: a
    bound for the time no other strategy takes (benchmarks/reports/2026-12-09-refutation)."""
    p, best = run.problem, run.best
    if best is None or p.n_devices < 2 or not _cones_wanted(run, best):
        return
    seconds = _leftover_seconds(run)
    if seconds < run.strategy.cone_min_s:
        return
    run.report(f"makespans refuted by sub-models of whole groups (limit {seconds:.1f} s)", phase="refutation")
    refuted = refute(p, run.costs, run.budget, seconds, run.bound_ms, best.makespan_ms, run.strategy.refute)
    run.stats.record(refute_tests=refuted.tests, refute_refuted=refuted.refuted)
    if refuted.refuted:
        assert run.stats.bounds_ms is not None
        run.stats.bounds_ms["refutation"] = refuted.bound_ms
        run.raise_bound(refuted.bound_ms, "refutation")


def _improve_in_leftover(run: _Run) -> None:
    """Window search again, from the final incumbent, in the time the bounds at the end leave
    (they stop once they find nothing): the polish's moves changed the incumbent since the
    first windows, so their neighbourhoods are new (NASNet cells on 4 V100s, deterministic: 12.7 s
    left, 31.41 -> 30.82 ms). What a search stopped by its patience leaves goes to searches from
    other seeds (other kinds and windows drawn), until `Strategy.windows_fruitless_restarts` in a
    row gain nothing: they only add to the end of a run, so no answer gets longer (deterministic,
    41 benchmark cases: NASNet-A-large 2.57 -> 2.03%, benchmarks/reports/2026-12-18-window-restarts)."""
    best = run.best
    if best is None or run.proven(best) or run.strategy.windows_share <= 0 \
            or _leftover_seconds(run) < run.strategy.windows_min_s:
        return
    run.stats.record(leftover_s=round(run.budget.remaining(), 3))
    _leftover_windows(run, run.options.seed)
    fruitless = 0
    for restart in itertools.count(1):
        if run.proven(run.best) or fruitless >= run.strategy.windows_fruitless_restarts \
                or _leftover_seconds(run) < run.strategy.windows_min_s:
            break
        improved = _leftover_windows(run, run.options.seed + restart)
        run.stats.record(windows_restarts=restart)
        fruitless = 0 if improved else fruitless + 1


def _leftover_windows(run: _Run, seed: int) -> bool:
    """One window search (and the passes its gains earn) in the time left, its answer
    justified; whether it shortened the incumbent."""
    best = run.best
    _improve_by_windows(run, 1.0, leftover=True, seed=seed)
    if run.best is not best and not run.proven(run.best):
        _offer_reordered(run, "justified")
    return run.best is not best


def _leftover_seconds(run: _Run) -> float:
    """What the bounds at the end may take of the time left: all of it in deterministic mode,
    else a margin for validating and simulating the answer."""
    return run.budget.remaining() if run.options.deterministic else 0.9 * run.budget.remaining() - 0.2


def _cones_wanted(run: _Run, best: Schedule) -> bool:
    """Whether the gap is wide enough for the cone sub-solves (`Strategy.cone_min_gap`); below
    it the time left at the end goes to CP-SAT again (`_solve_cpsat_again`) instead. The gap
    is the one the ancestral loads leave aside: the cones raise their own heads and tails, and
    go further where they combine with the ancestral ones."""
    return relative_gap(best.makespan_ms, run.bound_but_ancestral_ms) > run.strategy.cone_min_gap


def _improve_by_moves(run: _Run, seconds: float | None = None, phase: str = "group_moves",
                      start: Schedule | None = None, kicks: bool = False) -> None:
    """Group moves checked by re-timing (placer.local_search): cheap gains on graphs too big
    for the exact models to improve. They start from the incumbent, or from `start`."""
    from placer.local_search import improve_by_moves

    _offer_reordered(run, "resequenced")
    strategy, best = run.strategy, start or run.best
    if best is None or run.problem.n_devices < 2:
        return
    if seconds is None:
        seconds = min(strategy.moves_max_s, strategy.moves_share * run.options.time_limit_s,
                      0.5 * run.budget.remaining())
    # re-timing costs about 5 us per op: the cap keeps deterministic runs near their limit
    ceiling = strategy.kicks_max_evaluations if kicks else strategy.moves_max_evaluations
    cap = min(ceiling, max(20, int(seconds * 200_000 / max(1, run.problem.n_ops)))) if math.isfinite(seconds) \
        else ceiling
    if run.options.deterministic:
        seconds = math.inf
    limit = f"limit {seconds:.1f} s, " if math.isfinite(seconds) else ""
    run.report(f"group moves ({limit}at most {cap} re-timings)", best.makespan_ms, run.bound_ms, phase=phase)
    # moves checked by justifying only in the polish: before CP-SAT they change its hint, and its
    # search from there (GNMT in msr form, 4 V100s, tight, deterministic: 32.84 -> 34.87 ms)
    improved, counts = improve_by_moves(run.problem, best, seconds, cap, run.options.seed,
                                        justifying=phase == "polish", kicks=kicks)
    run.stats.record(**{f"moves_{k}": v for k, v in counts.items()})
    if run.offer(improved, "group moves") is improved and run.best is improved and improved is not best:
        run.report("group moves incumbent", improved.makespan_ms, run.bound_ms, run.feasible_result(improved))


def _polish_share(strategy: Strategy, big: bool, one_worker: bool) -> float:
    """The polish's share of the time after the decomposition (the monolithic CP-SAT solve has
    the rest). One CP-SAT worker has no LNS of its own, and on graphs up to big_model_ops its
    solve shortened its hint by 0.1% on 2 of the 11 benchmark cases where it ran (deterministic,
    60 s): there the polish gets half, and its kicks (when CP-SAT gained nothing) find what the
    solve does not: GNMT in msr form on 4 tight V100s 33.67 -> 32.59 ms, PipeDream ResNet-50
    there 452.13 -> 442.98 ms, the other small cases identical
    (benchmarks/reports/2026-12-06-window-share)."""
    if big:
        return strategy.polish_share_big
    return strategy.polish_share_one_worker if one_worker else strategy.polish_share


def _productive_gain(strategy: Strategy, one_worker: bool) -> float:
    """How much the monolithic CP-SAT solve must shorten its hint to keep the polish from its
    kicks (and, with one worker, from the neighbourhood search before them). One worker without
    LNS gains little for its time: GNMT in msr form on 4 V100s, 37 s for 33.87 -> 33.70 ms (0.5%),
    where kicks and neighbourhoods then reach 32.01 ms against 32.20 by the climbing alone;
    separated Inception-V3 there 41.115 -> 40.978 ms (benchmarks/reports/2026-12-17-polish-kicks)."""
    return strategy.cpsat_productive_gain_one_worker if one_worker else strategy.cpsat_productive_gain


def _polish(run: _Run, productive: bool) -> None:
    """Group moves after CP-SAT, for the time left. When CP-SAT did not shorten its hint by
    `_productive_gain`, what the climbing leaves goes to an iterated local search
    (kicks): deterministic mode's CP-SAT is one worker without LNS, and on some graphs it finds
    nothing its hint does not have (separated Inception-V3 on 4 V100s: 43.5965 -> 43.5908 ms
    for 10.75 work units). Kicks from there: GNMT in msr form, tight 4 V100s, 34.90 -> 33.93
    ms. (With half the time for the climbing, three other answers got worse.)"""
    run.stats.record(cpsat_productive=productive)
    _improve_by_moves(run, seconds=run.budget.remaining(), phase="polish", kicks=not productive)


def _shorter(schedule: Schedule | None, than: Schedule | None, by: float) -> bool:
    """`schedule` is shorter than `than` by the fraction `by` (any schedule beats none)."""
    return schedule is not None and (than is None or schedule.makespan_ms <= than.makespan_ms * (1 - by))


def _offer_reordered(run: _Run, how: Literal["resequenced", "justified"]) -> None:
    """The incumbent's placement with its ops ordered anew: list-scheduled by longest tails
    or paths (placer.heuristics.resequence) or double-justified (placer.heuristics.justify). A few
    list schedules, and orders that searches assembled piece by piece often gain (separated
    Inception-V3 on 4 V100s after 15 s: 49.9 -> 47.1 ms resequenced; msr Inception-V3 on
    4 V100s after 60 s: 321.77 -> 321.42 ms justified). The engine justifies only its final
    incumbent: earlier, the searches that follow start elsewhere, measured worse as often
    as better."""
    if run.best is None:
        return
    before = run.best
    if how == "resequenced":
        run.offer(resequence(run.problem, before.solution.device), how)
    else:
        run.offer(justify(run.problem, before), how)
    if run.best is not before:
        run.report(f"{how} incumbent", run.best.makespan_ms, run.bound_ms, run.feasible_result(run.best))


def _reporting_offer(run: _Run, message: str) -> Callable[[Solution | Schedule, str], Schedule | None]:
    """`run.offer` for a search that finds many incumbents: each new best is reported as
    `message`, with a full validated result at most every _RESULT_EVERY_S seconds (validating
    and simulating a big graph takes time the search would lose)."""
    last_full = [run.elapsed()]

    def offer(candidate: Solution | Schedule, source: str) -> Schedule | None:
        before = run.best
        schedule = run.offer(candidate, source)
        if run.best is not before and run.best is not None:
            full = run.elapsed() - last_full[0] >= _RESULT_EVERY_S
            if full:
                last_full[0] = run.elapsed()
            run.report(message, run.best.makespan_ms, run.bound_ms, run.feasible_result(run.best) if full else None)
        return schedule

    return offer


def _improve_by_windows(run: _Run, share: float, leftover: bool = False, seed: int | None = None) -> None:
    """Window search (placer.window_search) for `share` of the time left: stretches of the
    incumbent's timeline re-optimised by small CP-SAT models, hundreds of them where one
    solve of the whole model crawls. A pass that gained `Strategy.windows_extend_gain` is
    followed by another (the same share of what is left): where the windows still gain, they
    use time better than the monolithic solve after them (msr Inception-V3), and where they
    do not, that solve and the cones keep their time (U-Net on a memory-tight DGX-1). With
    `leftover`, the shares are of what the bounds at the end leave (`_leftover_seconds`)."""
    p, strategy = run.problem, run.strategy
    while run.best is not None and p.n_ops >= 3 and not run.proven(run.best):
        best = run.best
        seconds = share * (_leftover_seconds(run) if leftover else run.budget.remaining())
        if seconds < strategy.windows_min_s:
            return
        run.report(f"window search ({p.n_ops} ops, limit {seconds:.1f} s)", best.makespan_ms, run.bound_ms,
                   phase="windows_leftover" if leftover else "windows")
        counts = improve_by_windows(p, best, run.budget, seconds, run.options.seed if seed is None else seed,
                                    _reporting_offer(run, "window search incumbent"), run.proven, strategy.windows)
        # summed over passes, the leftover's included
        run.stats.record(**{f"windows_{k}": (getattr(run.stats, f"windows_{k}") or 0) + v
                            for k, v in {**counts, "passes": 1}.items()})
        _offer_reordered(run, "resequenced")
        if run.best is None or run.best.makespan_ms > (1 - strategy.windows_extend_gain) * best.makespan_ms:
            return


def _neighbourhood_search(run: _Run, seconds: float | None = None) -> None:
    """Large-neighbourhood search (placer.neighbourhood) around the best candidate for
    `seconds` (the time left by default): any graph, no structure assumed."""
    from placer.formulations.cpsat_model import build_cpsat
    from placer.neighbourhood import improve

    p, best = run.problem, run.best
    seconds = run.budget.remaining() if seconds is None else min(seconds, run.budget.remaining())
    if best is None or seconds < run.strategy.lns_min_s:
        return
    f = build_cpsat(p, best, run.bound_ms, redundant_cumulative=False, symmetry_breaking=False)
    if not run.options.deterministic:
        seconds = max(0.0, 0.95 * seconds - 0.2)  # CP-SAT overruns each step a little
    run.report(f"neighbourhood search ({p.n_ops} ops, limit {seconds:.1f} s)", best.makespan_ms, run.bound_ms,
               phase="neighbourhood")
    counts = improve(p, f, best, run.budget, seconds, run.options.seed, _reporting_offer(run, "neighbourhood incumbent"),
                     run.proven, step_s=run.strategy.lns_step_s, initial_groups=run.strategy.lns_initial_groups)
    run.stats.record(**{f"neighbourhood_{k}": v for k, v in counts.items()})


def _solve_cpsat_coarse_first(run: _Run, coarse: Coarsening | None, share: float) -> SolverRun:
    """The monolithic solve for `share` of the time left; a coarse model's solve first for
    `Strategy.coarse_probe_share` of that, and the rest only if it shortened the incumbent by
    `Strategy.cpsat_productive_gain`. Its answers, expanded to every op, beat the window search's
    on none of the 6 coarsened benchmark cases (deterministic), and what it leaves goes
    to the bounds and the windows at the end: NASNet-A-mobile on 4 V100s and the DGX-1, roomy and
    tight, 12.26/12.72/5.07/7.45% -> 12.10/11.98/4.48/7.14%, NASNet-A-large 2.65 -> 2.57%; NASNet
    cells on 4 V100s 17.85 -> 19.07% (their windows from elsewhere gained less)."""
    probe = run.strategy.coarse_probe_share
    if coarse is None or probe >= 1.0:
        return _solve_cpsat(run, coarse, share)
    before = run.best
    first = _solve_cpsat(run, coarse, share * probe)
    if first.status is SolveStatus.INFEASIBLE or run.proven(run.best):
        return first
    if not _shorter(run.best, before, run.strategy.cpsat_productive_gain):
        run.stats.record(cpsat_coarse_stopped=True)
        return first
    return _solve_cpsat(run, coarse, share * (1 - probe) / (1 - share * probe))


def _solve_cpsat(run: _Run, coarse: Coarsening | None = None, share: float = 1.0) -> SolverRun:
    """CP-SAT on the problem, or on its coarsening (placer.coarsen) whose answers are
    expanded back to every op. A coarse model is a restriction: its bound and its
    infeasibility say nothing about the original, so neither is used."""
    from placer.formulations.cpsat_model import build_cpsat

    p, options = run.problem, run.options
    built = time.perf_counter()
    q = coarse.coarse if coarse is not None else p
    best = run.best

    def lift(solution: Solution) -> Solution:
        return coarse.expand(solution) if coarse is not None else solution

    hint = best
    if coarse is not None:
        projected = coarse.project(best.solution) if best is not None else None
        candidates = [retime(q, projected)] if projected is not None else []
        candidates += [s for s in (heft(q), critical_path(q)) if s is not None]
        hint = min(candidates, key=lambda s: s.makespan_ms) if candidates else None
    # heads and tails as redundant constraints: without them CP-SAT's first propagation walks
    # the long chains of a big graph (msr BERT-12, 2,012 ops: 15 s idle, 21 s beside one busy
    # process, past its limit; with them 8 and 10 s)
    releases = None
    if coarse is None:
        costs = run.costs  # a property that combines two raises: read once
        releases = (costs.head, costs.tail)
    big = q.n_ops > run.strategy.big_model_ops
    f = build_cpsat(q, hint, run.bound_ms if coarse is None else lower_bound_ms(q),
                    redundant_cumulative=not big, releases=releases, complete_hint=big)
    run.stats.record(**f.stats, tick_ms=f.tick_ms, exact_ticks=f.exact, rounding_slack_ms=f.rounding_slack_ms,
                     build_s=time.perf_counter() - built)
    state = {"last_report": -math.inf, "last_result": -math.inf}
    lock = threading.Lock()
    stopped_by_proof: list[bool] = []  # the callback proved a solution with the run's bound and stopped

    def on_solution(cb: Any) -> None:
        """Runs in the solver's thread and blocks its search: stops it once the run's own bound
        proves the solution (CP-SAT, whose model rounds durations up, may never see that);
        with a progress sink, numbers often and a full validated result (for callers that
        may be cut off) at most every few seconds."""
        before = run.best

        def offer() -> None:
            try:
                run.offer(lift(f.decode(cb.value, q)), "cpsat")
            except SolutionCheckError:  # strict mode: surfaces at the end of the solve
                run.strict_failure = True

        upper_ms = cb.objective_value * f.tick_ms  # the real makespan is at most this
        near_bound = upper_ms - f.rounding_slack_ms - run.bound_ms <= (options.relative_gap + _NOISE) * upper_ms
        if near_bound:
            offer()
            if run.proven(run.best):
                run.stats.proof = f"a cpsat solution meets the {run.bound_source} bound"
                stopped_by_proof.append(True)
                cb.stop_search()
                return
        if run.progress is None:
            return
        now = run.elapsed()
        with lock:
            if now - state["last_report"] < 0.5:
                return
            state["last_report"] = now
            full = now - state["last_result"] >= _RESULT_EVERY_S
            if full:
                state["last_result"] = now
        bound = run.bound_ms if coarse is not None else max(run.bound_ms, f.lower_bound_ms(cb.best_objective_bound))
        result = None
        if full:
            if not near_bound:  # else offered above
                offer()
            if run.best is not before and run.best is not None:
                result = run.feasible_result(run.best)
        best_ms = run.best.makespan_ms if run.best is not None else math.inf
        run.report("cpsat incumbent", min(best_ms, upper_ms), bound, result)

    # CP-SAT overruns its limit a little (presolve, callbacks): keep a margin
    remaining = share * run.budget.remaining()
    if not options.deterministic:
        remaining = max(0.1, 0.9 * remaining - 0.2)
    def on_bound(bound_ticks: float) -> None:
        """CP-SAT's proven bound improved: the heartbeat carries it (a coarse bound proves nothing)."""
        if coarse is None:
            run.reporter.update(bound_ms=f.lower_bound_ms(bound_ticks))

    run.report(f"solving ({q.n_ops} {'super-' if coarse else ''}ops, {p.n_devices} devices, "
               f"limit {remaining:.1f} s)",
               best.makespan_ms if best else None, run.bound_ms, phase="cpsat_coarse" if coarse else "cpsat")
    if run.pool is None:
        solver_run, solver = run.budget.solve_cpsat(
            f.model, remaining, relative_gap=options.relative_gap,
            on_solution=on_solution,
            on_bound=on_bound if run.progress else None,
            presolve=not big,
        )
        value = solver.value
    else:
        # portfolio members at once (placer.portfolio); starting the workers takes time too
        if not options.deterministic:
            remaining = max(0.1, remaining - run.strategy.pool_start_s)
        answer = run.budget.solve_cpsat_portfolio(run.pool, f.model, remaining, relative_gap=options.relative_gap,
                                                  presolve=not big)
        solver_run, value = answer.run, answer.value
        run.stats.record(portfolio_members=answer.members, portfolio_answered=answer.answered)
    if run.strict_failure:
        raise SolutionCheckError("cpsat produced an invalid candidate (strict mode)")
    if stopped_by_proof:  # the search ended with a proof: the run's bound meets its solution
        solver_run = replace(solver_run, status=SolveStatus.OPTIMAL)
    if coarse is not None:
        if not solver_run.has_solution:  # an infeasible coarsening proves nothing
            return replace(solver_run, status=SolveStatus.NO_SOLUTION)
        run.offer(lift(f.decode(value, q)), "cpsat (coarse)")
        return replace(solver_run, status=SolveStatus.OPTIMAL if stopped_by_proof else SolveStatus.FEASIBLE)
    if solver_run.has_solution:
        run.offer(f.decode(value, p), "cpsat")
        run.raise_bound(f.lower_bound_ms(solver_run.bound or 0.0), "cpsat")
    return solver_run


def _solve_cpsat_again(run: _Run, coarse: Coarsening | None) -> None:
    """The polish stops early once no move gains (zoo ResNet-50 on the DGX-1: 4 of its 17 s):
    where the leftover cones will not run (the gap is below `Strategy.cone_min_gap`), the time
    left goes to CP-SAT once more, hinted by the polished incumbent. Called only after a first
    solve that improved on its hint: on msr BERT-12 (2,012 ops) the first found nothing, and a
    second, given 3 s, took 7 s beside one busy process (CP-SAT's first propagation of a big
    model does not heed the time limit)."""
    strategy, best = run.strategy, run.best
    if best is None or run.proven(best) or _cones_wanted(run, best):
        return
    if run.budget.remaining() < strategy.cpsat_again_min_share * run.options.time_limit_s:
        return
    run.stats.record(cpsat_again_s=round(run.budget.remaining(), 3))
    _solve_cpsat(run, coarse)
    if run.best is not best and not run.proven(run.best):
        _offer_reordered(run, "justified")


def _solve_milp(run: _Run, backend: Backend) -> SolverRun:
    """The MILP in the time the heuristics left, building included; when nothing useful fits,
    the run ends with the heuristic incumbent (`stats.milp_skipped` says why)."""
    from placer.formulations.milp import build_milp

    p, options, best, strategy = run.problem, run.options, run.best, run.strategy

    def skipped(reason: str) -> SolverRun:
        run.stats.record(milp_skipped=reason)
        run.report(f"{options.solver}: {reason}", best.makespan_ms if best else None, run.bound_ms)
        return SolverRun(options.solver, SolveStatus.NO_SOLUTION, None, None, 0.0)

    # the time after the solve (decoding, re-timing, validating and simulating the answer)
    # is kept out of the MILP's limit
    left = run.budget.remaining() - strategy.milp_finish_s
    if left < strategy.milp_min_s:
        return skipped(f"no time left for the MILP ({max(0.0, left):.2f} s after the heuristics)")
    run.report(f"{options.solver}: solving the DLPlacer MILP: building it ({left:.1f} s left)", phase="milp")
    built = time.perf_counter()
    f = build_milp(p, options.routing, best, run.bound_ms, deadline=built + left - strategy.milp_min_s)
    run.stats.record(build_s=time.perf_counter() - built)
    if f is None:
        return skipped(f"the MILP did not build within the time left ({left:.2f} s)")
    run.stats.record(**f.stats)
    remaining = run.budget.remaining() - strategy.milp_finish_s
    run.report(f"{options.solver}: solving the DLPlacer MILP ({f.stats['variables']} variables, "
               f"limit {remaining:.1f} s)", best.makespan_ms if best else None, run.bound_ms)
    solver_run, _ = backend.solve(f.prob, Limits(remaining, threads=options.threads,
                                                 relative_gap=options.relative_gap, warm_start=best is not None))
    if not solver_run.has_solution:
        return solver_run
    try:
        decoded = f.decode(p)
    except SolutionCheckError as exc:
        run.reject(options.solver, str(exc))
        return solver_run
    schedule = run.offer(decoded, options.solver)
    bound = solver_run.bound if solver_run.bound is not None else 0.0
    # proven up to the solver's feasibility tolerance (HiGHS: 1e-6 absolute on Cmax)
    if (schedule is not None and solver_run.status is SolveStatus.OPTIMAL
            and schedule.makespan_ms - bound <= _MILP_TOL_MS * max(1.0, schedule.makespan_ms)):
        bound = schedule.makespan_ms
    run.raise_bound(bound, options.solver)
    return solver_run
