"""Lower bounds by refutation: a makespan T is impossible when a few colocation groups alone
cannot meet it.

If some schedule ends by T, every op k in it starts no earlier than its head and ends no
later than T minus its tail, and an op b that descends from an op a starts no earlier than
a's end plus the longest path between them (the ops in between at their fastest, no
transfers but those a group split forces). Keep only the ops of a few whole groups, with
those windows and lags, their placement on devices, one op at a time per device and the
transfers between them: the schedule restricted to these ops is a solution of that
sub-model. So when CP-SAT proves the sub-model infeasible, no schedule ends by T and T is a
lower bound. Durations, lags, heads and delays are rounded down to ticks and deadlines up,
which only widens the sub-model. Memory is left out.

Where the heads and tails each see one chain at a time, a sub-model sees chains that meet
on the same devices: GNMT in msr-fiddle's form (the forward graph and a gradient copy of
it, joined only by the layers' groups, 262 ops, 4 V100s) has a one-machine bound of 27.40 ms
from its classifier's group; its heaviest groups' 168 ops cannot meet 28.5 ms, as both
copies must pass through the same layers' devices before the classifier can start.

The search grows T from the bound while it is refuted (1%, 2%, 4%, ... above it), then
bisects between the last refuted T and the first that was not; each size of sub-model in
`RefuteOptions.group_ops` in turn. The groups kept for a T are the densest: work over the
time between their earliest head and T minus their least tail.
"""
from __future__ import annotations

from dataclasses import dataclass

from placer.bounds import Costs
from placer.budget import Budget
from placer.model import Problem
from placer.sub_model import sub_model
from solvers import SolveStatus

__all__ = ["Refutation", "RefuteOptions", "refute"]


@dataclass(frozen=True)
class RefuteOptions:
    """How much the refutation may do (the engine's Strategy holds its copy)."""

    group_ops: tuple[int, ...] = (100, 200)  # sub-model sizes tried in turn, in ops of whole groups
    step_s: float = 6.0        # limit of one test: GNMT in msr form, 60 s deterministic, bound 27.75 ms
                               # with 2 s, 27.99 with 6 (4 V100s), 18.93 -> 19.21 (DGX-1)
    first_step: float = 0.01   # the first T tried: the bound plus this share (then doubled)
    resolution: float = 0.002  # the search stops when the refuted and unrefuted T are this close


@dataclass
class Refutation:
    """The highest makespan refuted (or the bound it started from) and what it took."""

    bound_ms: float
    tests: int = 0
    refuted: int = 0
    stopped_by: str = "done"   # "done" or "time"


def refute(problem: Problem, costs: Costs, budget: Budget, seconds: float, bound_ms: float,
           incumbent_ms: float, options: RefuteOptions | None = None) -> Refutation:
    """The best bound refutations prove within `seconds` of `budget`, starting from
    `bound_ms` (a bound already proven) below `incumbent_ms` (a makespan met)."""
    options = options or RefuteOptions()
    result = Refutation(bound_ms)
    deadline = budget.spent() + seconds
    if problem.n_devices < 2 or not any(len(ops) > 1 for ops in problem.groups):
        return result
    lags = _Lags(problem, costs)
    for size in options.group_ops:
        lo, hi, step, growing = result.bound_ms, incumbent_ms, options.first_step, True
        while hi - lo > options.resolution * lo:
            left = deadline - budget.spent()
            if left <= 0.01:
                result.stopped_by = "time"
                return result
            target = min(lo * (1 + step), (lo + hi) / 2) if growing else (lo + hi) / 2
            result.tests += 1
            if _infeasible(problem, costs, lags, budget, min(options.step_s, left), target,
                           _densest_groups(problem, costs, target, size)):
                result.refuted += 1
                result.bound_ms = lo = target
                step *= 2
            else:
                hi, growing = target, False
    return result


def _densest_groups(problem: Problem, costs: Costs, target_ms: float, size: int) -> list[int]:
    """Whole groups, densest first (work over the time between their earliest head and
    target minus their least tail), up to `size` ops; single-op groups only fill in."""
    def density(g: int) -> float:
        ops = problem.groups[g]
        window = target_ms - min(costs.head[k] for k in ops) - min(costs.tail[k] for k in ops)
        return sum(costs.fastest[k] for k in ops) / max(window, 1e-9)

    ranked = sorted(range(len(problem.groups)), key=lambda g: (len(problem.groups[g]) < 2, -density(g), g))
    chosen, total = [], 0
    for g in ranked:
        if total + len(problem.groups[g]) <= size:
            chosen.append(g)
            total += len(problem.groups[g])
    return chosen


class _Lags:
    """Per op a, the longest path from a's end to the start of each descendant: the ops in
    between at their fastest, a transfer only where the edge's groups never share a device
    (computed on demand, once per op)."""

    def __init__(self, problem: Problem, costs: Costs):
        self.problem, self.costs = problem, costs
        self._from: dict[int, dict[int, float]] = {}

    def after(self, a: int) -> dict[int, float]:
        if a not in self._from:
            p, c = self.problem, self.costs
            lag = {a: 0.0}
            for k in _bits(p.descendants[a]):  # in topological order, as the ops are
                best = -1.0
                for i in p.preds[k]:
                    u = p.edges[i].src
                    if u in lag:
                        best = max(best, (0.0 if u == a else lag[u] + c.fastest[u])
                                   + (c.delay[i] if c.apart[i] else 0.0))
                if best >= 0:
                    lag[k] = best
            del lag[a]
            self._from[a] = lag
        return self._from[a]


def _bits(bits: int) -> list[int]:
    """The positions of the set bits, lowest first."""
    out = []
    while bits:
        low = bits & -bits
        out.append(low.bit_length() - 1)
        bits ^= low
    return out


def _infeasible(problem: Problem, costs: Costs, lags: _Lags, budget: Budget, seconds: float,
                target_ms: float, groups: list[int]) -> bool:
    """Whether CP-SAT proves that the ops of `groups` cannot all run within their windows
    for a makespan of `target_ms` (see the module docstring)."""
    ops = sorted(k for g in groups for k in problem.groups[g])
    inside = set(ops)
    sub = sub_model(problem, ops, target_ms, {k: costs.head[k] for k in ops},
                    {k: target_ms - costs.tail[k] for k in ops})
    for a in ops:
        for b, lag in lags.after(a).items():
            if b in inside and sub.down(lag) > 0:
                sub.model.add(sub.start[b] >= sub.finish[a] + sub.down(lag))
    run, _ = budget.solve_cpsat(sub.model, seconds)
    return run.status is SolveStatus.INFEASIBLE
