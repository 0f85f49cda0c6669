"""Heads and tails raised by the load an op's ancestors put on its device.

The cheap heads of placer.bounds charge communication one join at a time, from the join's
direct inputs. Where a graph repeats cells of parallel branches joined by big tensors
(NASNet cells: 51 MB tensors cost 2 ms on NVLink, their ops 0.1 ms), every branch must
either run on the join's device or pay a transfer somewhere on its way back, and that
choice repeats cell after cell. The cone sub-solves (placer.cone_bounds) prove it exactly
for sixty ancestors at a time with CP-SAT; this pass proves a relaxation of it for hundreds
of ancestors at once, in milliseconds per op, before them.

For op v and an ancestor a of v, in any valid placement:

- a on v's device: a runs there before v, so the ancestors on v's device, released at
  their heads, are one machine's jobs that end before v starts (preemptive one-machine
  completion: max over j of head_j + the work of the jobs released at or after head_j);
- a elsewhere: every path a -> ... -> v crosses devices at some edge, which costs at least
  that edge's cheapest delay, so v starts no earlier than head(a) + a + the work of the
  path's inner ops + the least cheapest delay on the path, for every path. The pass keeps
  the best over a few delay thresholds (paths through edges of at least that delay).

A colocation group is on v's device whole or not at all. So with R(g) the latest such
arrival over the ancestors of group g, start(v) >= min over sets S of groups (v's own
always in S) of max(max of R(g) over g not in S, completion of S's ancestors). The best S
for each value of the first term is the groups of the latest arrivals, so one sweep (a
binary search: the first term falls and the second rises as S grows) finds the minimum.
Only the `region_ops` ancestors that come latest are looked at: fewer ancestors and fewer
paths give a smaller value, so the bound holds for every region. Tails are the same on the
reversed graph. Memory, pins and the other devices' loads are left out (relaxations).
"""
from __future__ import annotations

import bisect
import heapq
import math
import time
from dataclasses import dataclass

from placer.bounds import Costs
from placer.model import Problem

__all__ = ["AncestralOptions", "AncestralRaise", "raise_by_ancestral_loads"]


@dataclass(frozen=True)
class AncestralOptions:
    """How much the pass may do (the engine's Strategy holds its copy)."""

    region_ops: int = 100         # ancestors (descendants, for tails) looked at per op (0: no pass). NASNet cells
                                  # (2,214 ops, 4 V100s; 21.40 ms before): 50, 100, 200 give 25.28, 25.31, 25.31 ms
                                  # in 0.7, 1.5, 2.8 s; PipeDream NASNet-A-large (DGX-1): 193.14 ms for all three
    delay_levels: int = 16        # delay thresholds per op: quantiles of its region's distinct cheapest delays
                                  # (zoo Inception-V3, DGX-1: 4, 8, 16, 32 levels give 21.97, 22.35, 22.61, 22.61 ms)
    near: float = 0.95            # only ops whose head + op + tail reaches this share of the best bound
    visits_per_s: int = 200_000   # region ops visited per second of the time limit, at most (both passes):
                                  # a count, so deterministic runs raise the same heads on any load


@dataclass
class AncestralRaise:
    """The raised heads and tails, and what it took."""

    costs: Costs
    raised: int = 0        # heads and tails that went up
    visits: int = 0        # region ops visited
    stopped_by: str = "done"  # "done", "visits" or "time"


def raise_by_ancestral_loads(problem: Problem, costs: Costs, known_ms: float, limit_s: float,
                             deadline_s: float | None = None, options: AncestralOptions | None = None
                             ) -> AncestralRaise:
    """Heads, then tails, raised from `costs` (each only ever up). `known_ms`, the best bound so
    far, picks the ops worth it (`AncestralOptions.near`); `limit_s`, the solve's time limit,
    caps the visits; `deadline_s` is a `time.perf_counter()` reading after which the pass
    raises nothing more (wall-clock mode; None in deterministic mode)."""
    options = options or AncestralOptions()
    result = AncestralRaise(costs)
    if problem.n_ops == 0 or problem.n_devices < 2 or options.region_ops < 1:
        return result
    cap = max(1, int(options.visits_per_s * limit_s))
    region = max(1, min(options.region_ops, cap // (2 * problem.n_ops)))
    known = [max(known_ms, max(h + p + t for h, p, t in zip(costs.head, costs.fastest, costs.tail)))]
    for tails in (False, True):
        hook = _Hook(problem, costs, tails, region, options.delay_levels, options.near, known, result, cap, deadline_s)
        costs = costs.raised(problem, hook, tails=tails)
        result.costs = costs
    return result


def _delay_levels(delay: list[float], count: int) -> list[float]:
    """Thresholds: the least finite delay first (every crossing pays at least that), then quantiles."""
    finite = sorted({d for d in delay if d != math.inf})
    if not finite:
        return [0.0]
    return sorted({finite[q * (len(finite) - 1) // max(1, count - 1)] for q in range(count)})


class _Hook:
    """The `raise_at` hook of placer.bounds._releases for one pass (heads or tails)."""

    def __init__(self, problem: Problem, costs: Costs, tails: bool, region: int, n_levels: int, near: float,
                 known: list[float], result: AncestralRaise, cap: int, deadline_s: float | None):
        self.p, self.fastest, self.delay, self.tails, self.region = problem, costs.fastest, costs.delay, tails, region
        self.n_levels, self.result, self.cap, self.deadline_s = n_levels, result, cap, deadline_s
        self.inputs = problem.succs if tails else problem.preds    # towards the ancestors
        self.outputs = problem.preds if tails else problem.succs   # back towards v
        self.other = costs.head if tails else costs.tail  # the other pass's releases
        self.near, self.known = near, known
        self.calls = 0
        self.passes, self.steps = 3, 64

    def _other(self, i: int, towards_ancestors: bool) -> int:
        e = self.p.edges[i]
        return (e.dst if self.tails else e.src) if towards_ancestors else (e.src if self.tails else e.dst)

    def __call__(self, v: int, release: list[float]) -> float:
        current = release[v]
        result = self.result
        if not self.inputs[v] or result.stopped_by != "done":
            return current
        if current + self.fastest[v] + self.other[v] < self.near * self.known[0]:
            return current  # far from the critical path: its head hardly matters
        self.calls += 1
        if self.deadline_s is not None and self.calls % 64 == 1 and time.perf_counter() > self.deadline_s:
            result.stopped_by = "time"
            return current
        if result.visits >= self.cap:
            result.stopped_by = "visits"
            return current
        region = self._region(v, release)
        result.visits += len(region)
        value = self._bound(v, region, release, current)
        if value > current * (1 + 1e-12) + 1e-12:
            result.raised += 1
            self.known[0] = max(self.known[0], value + self.fastest[v] + self.other[v])
            return value
        return current

    def _region(self, v: int, release: list[float]) -> list[int]:
        """The `region` ancestors of v that end latest by `release`, nearest first on ties."""
        fastest, seen = self.fastest, {v}
        heap: list[tuple[float, int, int]] = []
        order = 1 if self.tails else -1  # ties: nearer ops (by topological index) first

        def push(k: int) -> None:
            for i in self.inputs[k]:
                u = self._other(i, True)
                if u not in seen:
                    seen.add(u)
                    heapq.heappush(heap, (-(release[u] + fastest[u]), order * u, u))

        push(v)
        region: list[int] = []
        while heap and len(region) < self.region:
            u = heapq.heappop(heap)[2]
            region.append(u)
            push(u)
        return region

    def _bound(self, v: int, region: list[int], release: list[float], current: float) -> float:
        """The largest start of v below which the ancestors refute every placement (see `_refuted`)."""
        p, fastest, delay = self.p, self.fastest, self.delay
        if _completion(sorted((release[u], fastest[u]) for u in region)) <= current:
            return current  # not even every ancestor on v's device delays it
        out = self._outbound(v, region)
        inside = set(region)
        inbound = {a: [(u, delay[i]) for i in self.inputs[a] if (u := self._other(i, True)) in inside]
                   for a in region}
        members: dict[int, list[int]] = {}
        for u in region:
            members.setdefault(p.group[u], []).append(u)
        first = sorted(region, reverse=self.tails)  # ancestors before their descendants

        def completion(local: set[int]) -> float:
            return _completion(sorted((release[u], fastest[u]) for g in local for u in members.get(g, ())))

        # per region op, its inputs in the region and when each input's tensor would reach it from v's device
        crossing = {a: [(u, release[u] + fastest[u] + d) for u, d in inbound[a]] for a in region}
        group = p.group

        def refuted(theta: float) -> tuple[float, float] | None:
            """Whether v cannot start by theta: the groups that must share v's device for it to (an op
            elsewhere would deliver later than theta) cannot all run there by then. If so, their
            completion and the least delivery that forced one of them: the same groups are forced,
            and the same completion refutes, for every theta up to that delivery."""
            local, forced_at = {group[v]}, math.inf
            for _ in range(self.passes):
                grew = False
                end: dict[int, float] = {}
                for a in first:
                    if group[a] in local:
                        continue
                    start = release[a]  # a is elsewhere: each input from v's device crosses to it
                    for u, crossed in crossing[a]:
                        if group[u] in local:
                            start = max(start, crossed)
                        else:
                            start = max(start, min(crossed, end.get(u, crossed)))
                    end[a] = start + fastest[a]
                    if end[a] + out[a] > theta:
                        local.add(group[a])
                        forced_at = min(forced_at, end[a] + out[a])
                        grew = True
                if not grew:
                    break
            value = completion(local)
            return (value, forced_at) if value > theta else None

        # refuted(theta) holds on [theta, min(completion, forced_at)): where the completion comes
        # first, that is the bound (every later theta forces fewer ops, which complete by then);
        # else the test goes on from forced_at, where fewer groups are forced
        theta, step = current, refuted(current)
        for _ in range(self.steps):
            if step is None:
                return theta
            value, forced_at = step
            if value <= forced_at:
                return value
            theta, step = forced_at, refuted(forced_at)
        return theta if step is None else min(step)

    def _outbound(self, v: int, region: list[int]) -> dict[int, float]:
        """Per region op a, the least time from a's end to v's start when a is not on v's
        device: the most, over paths and delay levels, of the path's inner work plus the level
        (every path crosses devices at some edge, of at least the least delay on it)."""
        fastest, delay = self.fastest, self.delay
        levels = _delay_levels([delay[i] for u in region for i in self.outputs[u]], self.n_levels)
        n_levels = len(levels)
        minus = -math.inf
        # longest[u][t]: the most work of inner ops on a path from u to v through edges of delay
        # >= levels[t]; filled nearest to v first (reverse topological order of the pass)
        longest: dict[int, list[float]] = {v: [0.0] * n_levels}
        out: dict[int, float] = {}
        for u in sorted(region, reverse=not self.tails):
            best = [minus] * n_levels
            for i in self.outputs[u]:
                y = self._other(i, False)
                row = longest.get(y)
                if row is None:
                    continue
                add = 0.0 if y == v else fastest[y]
                d = delay[i]
                for t in range(n_levels if d == math.inf else bisect.bisect_right(levels, d)):
                    if row[t] != minus and row[t] + add > best[t]:
                        best[t] = row[t] + add
            longest[u] = best
            out[u] = max((best[t] + levels[t] for t in range(n_levels) if best[t] != minus), default=minus)
        return out


def _completion(jobs: list[tuple[float, float]]) -> float:
    """Preemptive one-machine completion of (release, duration) jobs sorted by release: the
    latest release r plus the work released at or after r, maximised over r."""
    best, work = 0.0, 0.0
    for r, d in reversed(jobs):
        work += d
        best = max(best, r + work)
    return best
