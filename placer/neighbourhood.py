"""Large-neighbourhood search around the incumbent, on the one CP-SAT model of the graph.

A step frees a *neighbourhood* of colocation groups: their devices and their places in
the per-device orders. Every other group stays on its device and every other op keeps
its order; CP-SAT then re-optimises the whole schedule from the incumbent as its hint.
The model is built once (placer.formulations.cpsat_model, without symmetry breaking so
that any incumbent can be kept as it is) and each step solves a copy with the extra
constraints, which CP-SAT's presolve shrinks to the free part.

Neighbourhoods assume no structure of the graph:

- window: the ops that start in a stretch of the incumbent's timeline;
- critical: a stretch of the incumbent's critical path (the ops and transfers that
  set its makespan), with the ops running beside it;
- devices: a stretch of the timeline on two devices only (re-balancing a pair);
- layers: groups that are consecutive in the graph's topological order. A training graph's
  layer is a group (its forward, backward and update ops), so this frees a range of layers
  wherever their ops run in time: what moves a stage of a forward pass together with the
  matching stage of the backward pass, which no stretch of the timeline holds.

Their size adapts as in CP-SAT's own LNS: a neighbourhood that CP-SAT closes (proves
optimal) in its time makes the next one bigger, one it cannot close makes it smaller.
Every answer is decoded, re-timed and checked by the caller (`offer`) before it can
become the incumbent; the search only moves to answers that are no worse.
"""
from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from typing import Any

from placer.budget import Budget
from placer.formulations.cpsat_model import CpSatFormulation, _tick_makespan
from placer.model import Problem
from placer.schedule import Schedule, Solution
from solvers.base import SolveStatus

__all__ = ["critical_path", "improve"]

KINDS = ("window", "critical", "devices", "layers")
_MIN_GROUPS = 4
_GROW = 1.3


def improve(problem: Problem, f: CpSatFormulation, incumbent: Schedule, budget: Budget, seconds: float,
            seed: int, offer: Callable[[Solution, str], Schedule | None], done: Callable[[Schedule], bool],
            step_s: float = 2.0, initial_groups: int = 40) -> dict[str, Any]:
    """Improve `incumbent` for about `seconds` of `budget`; returns counts for the stats.

    `offer(solution, source)` checks a candidate and returns its schedule (None when
    rejected); `done(schedule)` says when the gap is closed.
    """
    rng = random.Random(seed)
    n_groups = len(problem.groups)
    size = float(min(initial_groups, n_groups))
    stop_at = budget.spent() + seconds
    current = incumbent
    counts = {"steps": 0, "improved": 0, "closed": 0, "no_answer": 0}
    while not done(current):
        left = min(stop_at - budget.spent(), budget.remaining())
        if left < 0.05:
            break
        kind = KINDS[counts["steps"] % len(KINDS)]
        free = _neighbourhood(problem, current, kind, max(_MIN_GROUPS, int(size)), rng)
        model = _restricted(problem, f, current, free)
        run, solver = budget.solve_cpsat(model, min(step_s, left), presolve=True)
        counts["steps"] += 1
        if run.status is SolveStatus.OPTIMAL:
            counts["closed"] += 1
            size = min(n_groups, size * _GROW + 1)
        else:
            size = max(_MIN_GROUPS, size / _GROW)
        if not run.has_solution:
            counts["no_answer"] += 1
            continue
        candidate = offer(f.decode(solver.value, problem), f"neighbourhood ({kind})")
        if candidate is None:
            continue
        if candidate.makespan_ms < current.makespan_ms * (1 - 1e-12):
            counts["improved"] += 1
        if candidate.makespan_ms <= current.makespan_ms * (1 + 1e-12):
            current = candidate
    return counts


def _restricted(problem: Problem, f: CpSatFormulation, current: Schedule, free: set[int]) -> Any:
    """A copy of the model with every group outside `free` on its current device and every
    op outside it in its current per-device order, hinted with `current`."""
    model = f.model.clone()
    boolean = model.get_bool_var_from_proto_index
    integer = model.get_int_var_from_proto_index
    device = current.solution.device
    for g, lits in enumerate(f.presence):
        if g not in free:
            model.add(boolean(lits[device[problem.groups[g][0]]].index) == 1)
    for d, seq in enumerate(current.solution.order):
        kept = [k for k in seq if problem.group[k] not in free]
        for a, b in itertools.pairwise(kept):
            # a zero-length op occupies one tick of its device in the model
            model.add(integer(f.start[b].index) >= integer(f.start[a].index) + max(1, f.duration_ticks[a][d]))
    model.clear_hints()
    starts, end = _tick_makespan(problem, current.solution, f.duration_ticks, f.delay_ticks)
    for g, lits in enumerate(f.presence):
        chosen = device[problem.groups[g][0]]
        for d, lit in lits.items():
            model.add_hint(boolean(lit.index), d == chosen)
    for k, s in enumerate(f.start):
        model.add_hint(integer(s.index), starts[k])
    model.add_hint(integer(f.cmax.index), end)
    return model


def _neighbourhood(problem: Problem, current: Schedule, kind: str, size: int, rng: random.Random) -> set[int]:
    """About `size` groups to free, chosen by `kind` (see the module docstring)."""
    by_start = sorted(range(problem.n_ops), key=lambda k: (current.start_ms[k], k))
    if kind == "critical":
        path = critical_path(problem, current)
        first = rng.randrange(len(path))
        seeds = path[first:first + max(1, size // 2)]
        lo = min(current.start_ms[k] for k in seeds)
        hi = max(current.end_ms[k] for k in seeds)
        free = {problem.group[k] for k in seeds}
        for k in by_start:  # ops running beside that stretch of the path
            if len(free) >= size:
                break
            if current.start_ms[k] < hi and current.end_ms[k] > lo:
                free.add(problem.group[k])
        return free
    if kind == "layers":
        size = min(size, len(problem.groups))
        first = rng.randrange(len(problem.groups) - size + 1)  # groups are numbered in topological order
        return set(range(first, first + size))
    pool = by_start
    if kind == "devices" and problem.n_devices > 2:
        pair = set(rng.sample(range(problem.n_devices), 2))
        pool = [k for k in by_start if current.solution.device[k] in pair]
    if not pool:
        pool = by_start
    i = rng.randrange(len(pool))
    free: set[int] = set()
    for k in pool[i:] + pool[:i]:
        free.add(problem.group[k])
        if len(free) >= size:
            break
    return free


def critical_path(problem: Problem, current: Schedule) -> list[int]:
    """The ops that set the makespan, from the first to the last: walk back from the op that
    ends last through whatever made each op start when it did."""
    arrival = {t.edge: t.end_ms for t in current.transfers}
    device_pred: dict[int, int] = {}
    for seq in current.solution.order:
        for a, b in itertools.pairwise(seq):
            device_pred[b] = a
    tolerance = 1e-9 * max(1.0, current.makespan_ms)
    k = max(range(problem.n_ops), key=lambda x: (current.end_ms[x], -x))
    path = [k]
    while True:
        start = current.start_ms[k]
        before = None
        for i in problem.preds[k]:
            u = problem.edges[i].src
            if abs(arrival.get(i, current.end_ms[u]) - start) <= tolerance:
                before = u
                break
        if before is None and k in device_pred and abs(current.end_ms[device_pred[k]] - start) <= tolerance:
            before = device_pred[k]
        if before is None:
            break
        path.append(before)
        k = before
    path.reverse()
    return path
