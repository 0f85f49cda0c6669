"""Heads and tails raised by the load an op's ancestors put on its device.

The cheap heads of placer.bounds charge communication one join at a time, from the join's
direct inputs. Where a graph repeats cells of parallel branches joined by big tensors
(NASNet cells: 51 MB tensors cost 2 ms on NVLink, their ops 0.1 ms), every branch must
either run on the join's device or pay transfers into it and back, and that choice repeats
cell after cell. The cone sub-solves (placer.cone_bounds) prove it exactly for sixty
ancestors at a time with CP-SAT; this pass proves a relaxation of it over a hundred
ancestors per op, in milliseconds, before them.

For op v, a time T and an ancestor a of v, in a valid schedule where v starts by T:

- a elsewhere than v's device: every path a -> ... -> v crosses devices at some edge, which
  costs at least that edge's cheapest delay, so a's end + the path's inner work + the least
  delay on the path <= T, for every path (the pass keeps the best over 16 delay levels:
  paths through edges of at least that delay). And a starts no earlier than its head, nor
  than the arrival of each input from v's device (that tensor crosses too).
- so a group with an ancestor that, elsewhere, would end too late for that is on v's
  device, and its ancestors of v run there before v: that forces more groups (their inputs
  from it now cross), up to a fixed point;
- the forced ancestors, released at their heads, are one machine's jobs that end before v
  starts: if their completion (max over j of head_j + the work released at or after it)
  exceeds T, v cannot start by T in any valid placement.

The test refutes every T below some value, and at a T it refutes, the same groups are forced
for every larger T up to the least delivery that forced one of them, and the same completion
refutes there; at or above that completion nothing is refuted. So stepping from one such
delivery to the next finds the largest refuted T in a few tests. Only the `region_ops`
ancestors that end latest are looked at: fewer ancestors and fewer paths refute less, so the
bound holds for every region. Tails are the same on the reversed graph. Memory, pins and the
other devices' loads are left out (relaxations).
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
    visits_per_s: int = 20_000    # region ops visited per second of the time limit, at most (both passes; about
                                  # 7 us each on this machine: 15% of a deterministic limit at most):
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
    began = time.perf_counter()
    for tails in (False, True):  # half the visits and the time each; what heads leave goes to tails
        passes_left = 1 if tails else 2
        pass_cap = result.visits + (cap - result.visits) // passes_left
        pass_deadline = None if deadline_s is None else began + (deadline_s - began) / passes_left
        hook = _Hook(problem, costs, tails, region, options.delay_levels, options.near, known, result, pass_cap,
                     pass_deadline)
        costs = costs.raised(problem, hook, tails=tails)
        result.costs = costs
        began = time.perf_counter()
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
        self.calls, self.stopped = 0, False
        self.passes, self.steps = 3, 64

    def _other(self, i: int, towards_ancestors: bool) -> int:
        e = self.p.edges[i]
        return (e.dst if self.tails else e.src) if towards_ancestors else (e.src if self.tails else e.dst)

    def __call__(self, v: int, release: list[float]) -> float:
        current = release[v]
        result = self.result
        if not self.inputs[v] or self.stopped:
            return current
        if current + self.fastest[v] + self.other[v] < self.near * self.known[0]:
            return current  # far from the critical path: its head hardly matters
        self.calls += 1
        if self.deadline_s is not None and self.calls % 64 == 1 and time.perf_counter() > self.deadline_s:
            self.stopped, result.stopped_by = True, "time"
            return current
        if result.visits >= self.cap:
            self.stopped, result.stopped_by = True, "visits"
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
        """The largest T such that v cannot start before T in any valid placement (`refuted`, above)."""
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
                        else:  # u on v's device (its tensor crosses) or elsewhere (a follows its end)
                            start = max(start, min(crossed, end.get(u, release[u] + fastest[u])))
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
