"""Baselines that every answer is compared against, and that seed the exact solvers.

- best single device: everything on one device, back to back (the paper's speedup base);
- HEFT (Topcuoglu et al. 2002): upward-rank priority, insertion-based earliest finish time,
  with communication delays, memory, colocation groups and pins;
- critical-path placement (CPOP, same paper): the ops on the critical path share the
  device that runs them fastest, the rest go to their earliest finish time.
"""
from __future__ import annotations

import heapq
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache

from placer.model import Problem
from placer.schedule import Schedule, Solution, retime, solution_from_starts

__all__ = ["single_device", "heft", "critical_path", "upward_rank"]

_EPS = 1e-9


def single_device(problem: Problem) -> Schedule | None:
    """The fastest device that can hold every op (None if no device can)."""
    total_memory = sum(problem.memory_bytes)
    best: tuple[float, int] | None = None
    for d in range(problem.n_devices):
        cap = problem.capacity_bytes[d]
        if cap is not None and total_memory > cap:
            continue
        if any(d not in allowed for allowed in problem.allowed):
            continue
        time = sum(row[d] for row in problem.time_ms)
        if best is None or time < best[0]:
            best = (time, d)
    if best is None:
        return None
    d = best[1]
    order = [[] for _ in problem.devices]
    order[d] = list(range(problem.n_ops))
    return retime(problem, Solution(device=[d] * problem.n_ops, order=order))


def _mean_delay_ms(problem: Problem):
    """Average transfer delay over ordered device pairs, by size (HEFT's mean comm cost)."""
    pairs = [(a, b) for a in problem.devices for b in problem.devices if a != b]

    @lru_cache(maxsize=None)
    def mean(size_bytes: int) -> float:
        if not pairs:
            return 0.0
        return sum(problem.router.delay_ms(size_bytes, a, b) for a, b in pairs) / len(pairs)

    return mean


def _mean_time_ms(problem: Problem, k: int) -> float:
    allowed = problem.allowed[problem.group[k]]
    return sum(problem.time_ms[k][d] for d in allowed) / len(allowed)


def upward_rank(problem: Problem) -> list[float]:
    """Longest mean-cost path from each op to an exit, the op included."""
    mean = _mean_delay_ms(problem)
    rank = [0.0] * problem.n_ops
    for k in reversed(range(problem.n_ops)):
        tail = 0.0
        for i in problem.succs[k]:
            e = problem.edges[i]
            tail = max(tail, mean(e.size_bytes) + rank[e.dst])
        rank[k] = _mean_time_ms(problem, k) + tail
    return rank


def _downward_rank(problem: Problem) -> list[float]:
    """Longest mean-cost path from an entry to each op, the op excluded."""
    mean = _mean_delay_ms(problem)
    rank = [0.0] * problem.n_ops
    for k in range(problem.n_ops):
        for i in problem.preds[k]:
            e = problem.edges[i]
            rank[k] = max(rank[k], rank[e.src] + _mean_time_ms(problem, e.src) + mean(e.size_bytes))
    return rank


@dataclass
class _Timeline:
    """Busy intervals of one device, sorted, for insertion-based scheduling."""

    starts: list[float]
    ends: list[float]

    def earliest(self, ready_ms: float, duration_ms: float) -> tuple[float, int]:
        i = bisect_right(self.ends, ready_ms)
        t = ready_ms
        while i < len(self.starts):
            if t + duration_ms <= self.starts[i] + _EPS:
                break
            t = max(t, self.ends[i])
            i += 1
        return t, i

    def insert(self, at: int, start_ms: float, end_ms: float) -> None:
        self.starts.insert(at, start_ms)
        self.ends.insert(at, end_ms)


def _list_schedule(problem: Problem, priority: list[float], forced: dict[int, int]) -> Schedule | None:
    """Schedule ready ops by priority, each on the device where it finishes first.

    `forced` maps a group to a device it should use when it fits there. Returns None
    when some group fits on no device it may use (memory or pins).
    """
    n = problem.n_ops
    device = [-1] * n
    start = [0.0] * n
    end = [0.0] * n
    group_device: dict[int, int] = {}
    free = [float("inf") if c is None else float(c) for c in problem.capacity_bytes]
    timelines = [_Timeline([], []) for _ in problem.devices]
    waiting = [len(problem.preds[k]) for k in range(n)]
    ready = [(-priority[k], k) for k in range(n) if waiting[k] == 0]
    heapq.heapify(ready)
    while ready:
        _, k = heapq.heappop(ready)
        g = problem.group[k]
        if g in group_device:
            candidates = [group_device[g]]
        else:
            need = problem.group_memory_bytes(g)
            candidates = [d for d in problem.allowed[g] if free[d] >= need]
            if not candidates:
                return None
            if g in forced and forced[g] in candidates:
                candidates = [forced[g]]
        best: tuple[float, int, float, int] | None = None
        for d in candidates:
            ready_ms = 0.0
            for i in problem.preds[k]:
                e = problem.edges[i]
                ready_ms = max(ready_ms, end[e.src] + problem.delay_ms(e, device[e.src], d))
            duration = problem.time_ms[k][d]
            t, at = timelines[d].earliest(ready_ms, duration)
            if best is None or t + duration < best[0] - _EPS:
                best = (t + duration, d, t, at)
        assert best is not None
        finish, d, t, at = best
        if g not in group_device:
            group_device[g] = d
            free[d] -= problem.group_memory_bytes(g)
        device[k], start[k], end[k] = d, t, finish
        timelines[d].insert(at, t, finish)
        for i in problem.succs[k]:
            v = problem.edges[i].dst
            waiting[v] -= 1
            if waiting[v] == 0:
                heapq.heappush(ready, (-priority[v], v))
    return retime(problem, solution_from_starts(problem, device, start))


def heft(problem: Problem) -> Schedule | None:
    """HEFT with insertion; None when memory or pins leave some group nowhere to go."""
    return _list_schedule(problem, upward_rank(problem), forced={})


def critical_path(problem: Problem) -> Schedule | None:
    """CPOP: critical-path ops on the one device that runs them fastest."""
    up = upward_rank(problem)
    down = _downward_rank(problem)
    priority = [u + d for u, d in zip(up, down)]
    length = max(priority, default=0.0)
    on_path = [k for k in range(problem.n_ops) if priority[k] >= length * (1 - 1e-9) - _EPS]
    path_groups = {problem.group[k] for k in on_path}
    need = sum(problem.group_memory_bytes(g) for g in path_groups)
    best: tuple[float, int] | None = None
    for d in range(problem.n_devices):
        cap = problem.capacity_bytes[d]
        if (cap is not None and need > cap) or any(d not in problem.allowed[g] for g in path_groups):
            continue
        time = sum(problem.time_ms[k][d] for k in on_path)
        if best is None or time < best[0]:
            best = (time, d)
    forced = {g: best[1] for g in path_groups} if best else {}
    return _list_schedule(problem, priority, forced)
