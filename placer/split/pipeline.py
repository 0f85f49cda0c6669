"""The split pipeline (`place` with `split=True`): documents -> problem -> configurations ->
baselines (the placement engine's best plan, data parallelism) -> CP-SAT over configurations,
starts and orders -> re-timing -> validation + simulation -> placer.result/v1 with `splits`,
task-level schedule and transfer entries, and `collectives`.

The answer is the best valid plan of the three, so it is never slower than data parallelism
nor than the placement-only answer; its lower bound holds for every plan of the configuration
space (placer.split.configs).
"""
from __future__ import annotations

import logging
import math
import os
import time
from typing import TYPE_CHECKING

from placer.budget import Budget
from placer.errors import InputError, SolutionCheckError
from placer.model import build_problem
from placer.progress import ProgressFn, Reporter
from placer.schema import Baselines, GraphSpec, HardwareSpec, ResultSpec, SimulationSummary, relative_gap
from placer.split.check import check_split_result, simulate_split
from placer.split.configs import SplitOptions
from placer.split.moves import improve_configs
from placer.split.plan import SplitPlan, SplitProblem
from placer.stats import SolveStats

if TYPE_CHECKING:
    from placer.engine import PlaceOptions

__all__ = ["place_split"]

log = logging.getLogger("placer.split")
_NOISE = 1e-9


class UnsupportedSplitError(InputError):
    """Splitting was asked of a back end that does not model it."""

    code = "split_unsupported"


def place_split(graph: GraphSpec, hardware: HardwareSpec, options: PlaceOptions,
                progress: ProgressFn | None = None, split_options: SplitOptions | None = None) -> ResultSpec:
    """The best split plan (configuration per op, schedule) CP-SAT finds in `options.time_limit_s`."""
    from placer.engine import place

    if options.solver != "cpsat":
        raise UnsupportedSplitError(
            f"options.solver: {options.solver!r} does not model split operators; use solver 'cpsat' with split")
    so = split_options or SplitOptions()
    budget = Budget(options.time_limit_s, options.deterministic, options.threads, options.seed)
    with Reporter(progress) as reporter:
        reporter.began = budget.began
        reporter.phase("model", f"split: building configurations ({len(graph.ops)} ops)")
        problem = build_problem(graph, hardware)
        sp = SplitProblem(problem, so)
        stats = SolveStats(ops=problem.n_ops, edges=len(problem.edges), devices=problem.n_devices,
                           groups=len(problem.groups))

        reporter.phase("baselines", "split: the placement-only plan and data parallelism")
        placement_options = options.model_copy(update={"split": False,
                                                       "time_limit_s": so.placement_share * options.time_limit_s})
        placed = place(graph, hardware, placement_options)
        if placed.status in ("optimal", "feasible"):
            budget.work += placed.stats.cpsat_work if placed.stats and placed.stats.cpsat_work else 0.0
        candidates: list[tuple[SplitPlan, str]] = []
        placement_plan = _from_result(sp, placed) if placed.makespan_ms is not None else None
        if placement_plan is not None:
            candidates.append((placement_plan, "placement"))
        data_parallel = sp.data_parallel()
        if data_parallel is not None:
            candidates.append((data_parallel, "data_parallel"))

        bounds = {"split_work_path": sp.lower_bound_ms()}
        if candidates and problem.n_devices > 1:
            hint = min(candidates, key=lambda c: c[0].makespan_ms)[0]
            seconds = math.inf if options.deterministic else so.moves_share * options.time_limit_s
            reporter.phase("group_moves", "split: configuration moves from the best baseline", hint.makespan_ms)
            moved, evaluations = improve_configs(sp, hint, seconds, so.moves_max_evaluations)
            stats.record(moves_evaluations=evaluations)
            if moved is not hint:
                candidates.append((moved, "configuration moves"))
                hint = moved
            plan, bound_ms = _solve(sp, hint, budget, options, reporter, stats)
            if plan is not None:
                candidates.append((plan, "cpsat"))
            if bound_ms is not None:
                bounds["cpsat"] = bound_ms
        bound = max(bounds.values())

        reporter.phase("finish", "validating and simulating the best split plan")
        strict = os.environ.get("PLACER_STRICT", "") not in ("", "0")
        for plan, source in sorted(candidates, key=lambda c: c[0].makespan_ms):
            try:
                result = _result(sp, plan, bound, options, placed, data_parallel, stats, budget, source, bounds)
            except SolutionCheckError as exc:
                log.warning("rejected an invalid %s split plan: %s", source, exc)
                stats.count("rejected_candidates", source)
                if strict:
                    raise
                continue
            return result
        return ResultSpec(status="no_solution", solver=options.solver, lower_bound_ms=bound,
                          solve_time_s=budget.elapsed(), reason="no split plan fits memory within the time limit",
                          baselines=placed.baselines, stats=stats)


def _from_result(sp: SplitProblem, placed: ResultSpec) -> SplitPlan:
    p = sp.problem
    config = []
    for g, ops in enumerate(p.groups):
        device = p.device_index[placed.placement[p.ops[ops[0]]]]
        config.append(next(i for i, c in enumerate(sp.configs[g]) if c.dim is None and c.devices == (device,)))
    start = {e.op: e.start_ms for e in placed.schedule}
    order = sorted(range(p.n_ops), key=lambda k: (start[p.ops[k]], k))
    return sp.retime(config, order)


def _solve(sp: SplitProblem, hint: SplitPlan, budget: Budget, options: PlaceOptions, reporter: Reporter,
           stats: SolveStats) -> tuple[SplitPlan | None, float | None]:
    from placer.split.cpsat import build_split_cpsat

    built = time.perf_counter()
    f = build_split_cpsat(sp, hint, hint.makespan_ms)
    stats.record(**f.stats, tick_ms=f.tick_ms, rounding_slack_ms=f.rounding_slack_ms,
                 build_s=time.perf_counter() - built)
    remaining = budget.remaining()
    if not options.deterministic:
        remaining = max(0.1, 0.9 * remaining - 0.2)
    reporter.phase("cpsat", f"split: CP-SAT over {f.stats['split_configs']} configurations "
                   f"(limit {remaining:.1f} s)", hint.makespan_ms)
    run, solver = budget.solve_cpsat(f.model, remaining, relative_gap=options.relative_gap)
    stats.record(solver_status=run.status.value, solver_wall_s=run.wall_s)
    plan = f.decode(solver.value, sp) if run.has_solution else None
    bound = f.lower_bound_ms(run.bound) if run.bound is not None else None
    return plan, bound


def _result(sp: SplitProblem, plan: SplitPlan, bound_ms: float, options: PlaceOptions, placed: ResultSpec,
            data_parallel: SplitPlan | None, stats: SolveStats, budget: Budget, source: str,
            bounds: dict[str, float]) -> ResultSpec:
    p = sp.problem
    if not sp.fits(plan.config):
        raise SolutionCheckError(f"the {source} plan exceeds device memory")
    makespan = plan.makespan_ms
    bound = min(bound_ms, makespan)
    if makespan - bound <= _NOISE * makespan:
        bound = makespan
    gap = relative_gap(makespan, bound)
    single = placed.single_device_ms
    schedule, moves, collectives = sp.entries(plan)
    splits = sp.splits(plan)
    base = placed.baselines or Baselines()
    snapshot = stats.model_copy(deep=True)
    snapshot.record(best_from=source, bounds_ms=bounds, **budget.stats())
    result = ResultSpec(
        status="optimal" if gap <= options.relative_gap + _NOISE else "feasible",
        solver=options.solver,
        makespan_ms=makespan,
        lower_bound_ms=bound,
        gap=gap,
        single_device_ms=single,
        speedup=single / makespan if single and makespan > 0 else None,
        solve_time_s=budget.elapsed(),
        placement={p.ops[k]: p.devices[sp.config_of(k, plan.config[p.group[k]]).devices[0]]
                   for k in range(p.n_ops) if p.ops[k] not in splits},
        schedule=schedule,
        transfers=moves,
        memory_bytes=dict(zip(p.devices, sp.memory_bytes(plan.config))),
        splits=splits,
        collectives=collectives,
        routing=options.routing,
        baselines=base.model_copy(update={
            "data_parallel_ms": data_parallel.makespan_ms if data_parallel else None,
            "placement_only_ms": placed.makespan_ms}),
        stats=snapshot,
    )
    violations = check_split_result(p.graph, p.hardware, result, sp.options.task_overhead_ms)
    if violations:
        raise SolutionCheckError(f"split plan from {source} is invalid: " + "; ".join(violations[:5]))
    ordered = simulate_split(p.graph, p.hardware, result)
    if ordered.makespan_ms > makespan * (1 + 1e-9) + 1e-9:
        raise SolutionCheckError(f"the simulator replays the {source} split plan in {ordered.makespan_ms} ms, "
                                 f"the plan says {makespan} ms")
    contended = simulate_split(p.graph, p.hardware, result, contention=True)
    shown = contended if options.contention else ordered
    result.simulation = SimulationSummary(
        makespan_ms=ordered.makespan_ms, contention_makespan_ms=contended.makespan_ms,
        contention=options.contention, device_utilisation=shown.device_utilisation,
        link_bytes=shown.link_bytes, link_busy_ms=shown.link_busy_ms)
    result.stats.record(collective_ms=sum(c.end_ms - c.start_ms for c in collectives),
                        split_ops=len(splits))
    return result


def plan_summary(result: ResultSpec) -> list[str]:
    """Lines for the CLI summary: which ops were split how, and the time in collectives."""
    if result.splits is None:
        return []
    ways: dict[str, int] = {}
    for s in result.splits.values():
        key = f"{s.dim} x{s.degree} on {','.join(s.devices)}"
        ways[key] = ways.get(key, 0) + 1
    lines = [f"split ops:      {len(result.splits)} of {len(result.splits) + len(result.placement)}"]
    lines += [f"  {n:4d} ops  {way}" for way, n in sorted(ways.items(), key=lambda w: -w[1])]
    collective = sum(c.end_ms - c.start_ms for c in result.collectives or [])
    lines.append(f"collectives:    {len(result.collectives or [])} all-reduces, {collective:.3f} ms in total")
    if result.baselines is not None:
        dp, po = result.baselines.data_parallel_ms, result.baselines.placement_only_ms
        lines.append(f"data parallel:  {dp:.3f} ms" if dp is not None else "data parallel:  does not fit")
        lines.append(f"placement only: {po:.3f} ms" if po is not None else "placement only: none")
    return lines

