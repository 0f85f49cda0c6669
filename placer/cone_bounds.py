"""Heads and tails raised by exact sub-solves over small cones of the graph.

The cheap heads of placer.bounds charge communication one join at a time: where a cell
of parallel branches must either run its branches one after another or pay transfers
in and out of them, they see only part of that price, and as the graph repeats such
cells the bound falls further and further behind (NASNet cells, per-head attention on a
machine whose links are slow next to its compute). Here a join's head is raised to a
proven lower bound on its earliest start in every valid placement: CP-SAT places and
schedules its nearest ancestors (at most `cone_ops` of them) from their own heads, with
device exclusivity, colocation groups, pins and the transfer delays of the devices
chosen, and minimises the join's start. Everything outside the cone is dropped, so any
valid placement of the whole graph restricted to the cone is a solution of the
sub-model: its proven bound holds for the whole graph. Heads are raised in topological
order, so what one join proves flows on through the next cones; then tails, the same
way on the reversed graph. The raised heads and tails feed the bounds that rest on them
(placer.bounds.head_tail_bounds_ms).

Durations and delays are rounded down to ticks (floor(a + b) >= floor(a) + floor(b)
keeps every real schedule a tick solution), so the sub-model's bound times the tick is
a bound in milliseconds. Memory is left out (a relaxation).
"""
from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from placer.bounds import Costs, head_tail_bounds_ms
from placer.budget import Budget
from placer.formulations.cpsat_model import pair_delays
from placer.model import Problem
from placer.sub_model import sub_model
from solvers import SolveStatus

__all__ = ["ConeBound", "ConeOptions", "raise_by_cones"]


@dataclass(frozen=True)
class ConeOptions:
    """How much the cone sub-solves may do (the engine's Strategy holds its copy)."""

    cone_ops: int = 60            # ancestors (descendants, for tails) in one sub-model; in 9 s on NASNet
                                  # cells (492 ops, 4 GPUs) 40, 60, 80, 120 raised the bound to 6.53,
                                  # 6.72, 6.43, 6.42 ms (5.87 before): more per cone, fewer cones
    step_s: float = 1.0           # limit of one sub-solve
    near: float = 0.9             # only joins whose head + op + tail reaches this share of the bound
    max_solves: int = 2000        # sub-solves in one call (bounds deterministic runs too)
    probe: float = 0.3            # a pass that has not raised the bound in this share of its time stops
                                  # (and leaves its time to the other strategies)


@dataclass
class ConeBound:
    """What the cones proved: the bounds resting on the raised heads and tails (ms)."""

    named: dict[str, float]
    costs: Costs = field(repr=False)
    cone_ops: int = 0
    solves: int = 0
    raised: int = 0               # joins whose head or tail went up
    stopped_by: str = "done"      # "done", "time", "solves" or "no gain"
    solved: set[tuple[int, bool]] = field(default_factory=set, repr=False)  # (op, tails) done at cone_ops

    @property
    def bound_ms(self) -> float:
        return max(self.named.values(), default=0.0)


def raise_by_cones(problem: Problem, budget: Budget, seconds: float, known_ms: float,
                   options: ConeOptions | None = None, earlier: ConeBound | None = None,
                   on_step: Callable[[str, float], None] | None = None, base: Costs | None = None) -> ConeBound:
    """Raise heads, then tails (half the time each, a pass ending early leaves its rest to
    the next) by cone sub-solves within `seconds` of `budget`; `known_ms` is the best bound
    so far (it picks the joins worth a sub-solve); `earlier`: what an earlier call proved, to
    build on (joins it solved with cones of the same size are not solved again).
    `on_step(message, bound_ms)` hears of each pass; `base`: the problem's `Costs.of`, when the
    caller has them already (the first call starts from them)."""
    options = options or ConeOptions()
    began = budget.spent()
    costs = earlier.costs if earlier is not None else (base or Costs.of(problem))
    solved = set(earlier.solved) if earlier is not None and earlier.cone_ops == options.cone_ops else set()
    result = ConeBound(named=head_tail_bounds_ms(problem, costs), costs=costs, cone_ops=options.cone_ops,
                       solved=solved)
    target = [max(known_ms, result.bound_ms)]

    passes = [began + seconds / 2, began + seconds]  # heads, then tails: half the time each

    def left() -> float:
        return passes[0] - budget.spent()

    def raise_at(tails: bool, proven_before: list[float], other: list[float]) -> Callable[[int, list[float]], float]:
        """The hook of placer.bounds._releases: a sub-solve at joins that may matter; the
        pass gives up once a share of its time has not raised the bound at all."""
        pass_began, pass_s, target_before = budget.spent(), left(), target[0]
        gave_up = [False]

        def hook(v: int, release: list[float]) -> float:
            current = max(release[v], proven_before[v])
            inputs = problem.succs[v] if tails else problem.preds[v]
            if len(inputs) < 2 or current + costs.fastest[v] + other[v] < options.near * target[0] \
                    or (v, tails) in result.solved or gave_up[0]:
                return current
            if result.solves >= options.max_solves:
                result.stopped_by = "solves"
                return current
            if left() <= 0.01:
                result.stopped_by = "time"
                return current
            if budget.spent() - pass_began > options.probe * pass_s and target[0] <= target_before * (1 + 1e-6):
                result.stopped_by, gave_up[0] = "no gain", True
                return current
            result.solves += 1
            result.solved.add((v, tails))
            release[v] = current  # the cone's own floor
            proven = _solve_cone(problem, budget, min(options.step_s, left()), v,
                                 _cone(problem, v, options.cone_ops, tails, release), release, tails)
            if proven > current * (1 + 1e-9):
                result.raised += 1
                target[0] = max(target[0], proven + costs.fastest[v] + other[v])
                return proven
            return current

        return hook

    for tails in (False, True):
        hook = raise_at(tails, costs.tail if tails else costs.head, costs.head if tails else costs.tail)
        costs = costs.raised(problem, hook, tails=tails)
        result.named = head_tail_bounds_ms(problem, costs)
        result.costs = costs
        passes.pop(0)
        if on_step is not None:
            on_step(f"{'tails' if tails else 'heads'} raised at {result.raised} joins "
                    f"({result.solves} sub-solves)", result.bound_ms)
    return result


def _cone(problem: Problem, v: int, size: int, tails: bool, release: list[float]) -> list[int]:
    """v and its ancestors (descendants, for tails) that come latest by `release` (heads; tails
    for tails), cut where the fewest of them take an input from outside: between half of
    `size` and `size` ops.

    Outside the cone everything is dropped, so an op at its edge may run on any device as
    soon as its release allows, its inputs already there: the more such ops, the more the
    sub-model misses of what placing and moving the data really costs. A cut across a few
    ops of a narrow point (a cell's two inputs, say) keeps that to a minimum; a breadth-first
    cut runs through the middle of parallel branches (NASNet cells, 2,214 ops, 4 GPUs: the
    head of a cell's concatenation raised by 0.147 ms with 53 ops cut at 5, by 0.009 ms with
    the 53 nearest by breadth cut at 11)."""
    def inputs(k: int) -> list[int]:
        return [problem.edges[i].dst if tails else problem.edges[i].src
                for i in (problem.succs[k] if tails else problem.preds[k])]

    order, taken = [v], {v: inputs(v)}  # the cone's ops in the order they join it; their inputs
    heap = [(-release[u], u) for u in set(taken[v])]
    heapq.heapify(heap)
    while heap and len(order) < size:
        _, u = heapq.heappop(heap)
        if u not in taken:
            taken[u] = inputs(u)
            order.append(u)
            for w in taken[u]:
                if w not in taken:
                    heapq.heappush(heap, (-release[w], w))
    # how many of the first n ops have an input outside them, for every n: each op counts from
    # its own position until its last input joins (a difference array, one pass)
    position = {k: n for n, k in enumerate(order)}
    change = [0] * (len(order) + 2)
    for n, k in enumerate(order):
        joins = max((position.get(w, len(order)) for w in taken[k]), default=n)
        if joins > n:
            change[n + 1] += 1
            change[joins + 1] -= 1
    best_n, fewest, open_now = len(order), math.inf, 0
    for n in range(1, len(order) + 1):
        open_now += change[n]
        if n >= size // 2 and open_now <= fewest:
            best_n, fewest = n, open_now
    return sorted(order[:best_n])


def _solve_cone(problem: Problem, budget: Budget, seconds: float, target: int, ops: list[int],
                release: list[float], tails: bool) -> float:
    """A proven lower bound on the target's release (start, or for tails the time from its
    end to the makespan) in every valid placement; at least its current release. The model
    is the whole model restricted to the cone (placer.sub_model)."""
    # Times count from the cone's earliest release, up to the end of a schedule that surely
    # exists: all its ops on one device they may all use, one after another (no transfers), else
    # each at its longest plus every transfer. Every op of the cone precedes the target (follows
    # it, for tails), so an optimum lies within. A short horizon makes fine ticks: NASNet
    # cells' cones span a few ms, their transfers tens of ms.
    origin = min(release[k] for k in ops)
    common = set.intersection(*(set(problem.allowed[problem.group[k]]) for k in ops))
    if common:
        span_ms = min(sum(problem.time_ms[k][d] for k in ops) for d in common)
    else:
        inside = set(ops)
        span_ms = (sum(max(problem.time_ms[k][d] for d in problem.allowed[problem.group[k]]) for k in ops)
                   + sum(max(pair_delays(problem, problem.edges[i]).values(), default=0.0)
                         for k in ops for i in problem.preds[k] if problem.edges[i].src in inside))
    horizon_ms = max(release[k] for k in ops) - origin + span_ms
    sub = sub_model(problem, ops, horizon_ms, {k: release[k] - origin for k in ops}, reverse=tails)
    sub.model.minimize(sub.start[target])
    # without presolve: a sub-model of 60 ops needs none, and NASNet cells (2,214 ops, 4 GPUs,
    # 9 s) get 244 sub-solves instead of 111 and a bound of 22.13 ms instead of 21.84. Without
    # the LP relaxation: the same bounds on 120 of its cones, in 9% less work and 25% less time
    run, _ = budget.solve_cpsat(sub.model, seconds, presolve=False, linear_relaxation=False)
    if run.status is SolveStatus.INFEASIBLE or run.bound is None:
        return release[target]  # the cone always has a solution: nothing to learn
    return max(release[target], origin + math.floor(run.bound + 1e-9) * sub.tick)
