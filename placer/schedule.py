"""Placements and their schedules in continuous time.

Every back end and heuristic answers with a `Solution`: a device per op, an order per
device and optionally the route of each transfer. `retime` turns it into the earliest
schedule with that order (paper assumptions: co-located ops run back to back, transfers
overlap compute). This removes the integer rounding of CP-SAT and any slack a MILP
leaves, and can only shorten the solver's own schedule.
"""
from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TypeVar

from placer.errors import SolutionCheckError
from placer.model import Problem
from placer.routing import route_delay_ms

__all__ = ["Solution", "Transfer", "Schedule", "retime", "earliest_times", "solution_from_starts"]

T = TypeVar("T", int, float)


@dataclass
class Solution:
    """What an algorithm decides: where each op runs and in which order per device."""

    device: list[int]
    order: list[list[int]]
    routes: dict[int, tuple[str, ...]] = field(default_factory=dict)  # edge index -> route (else min-delay)


@dataclass(frozen=True, slots=True)
class Transfer:
    edge: int
    route: tuple[str, ...]
    start_ms: float
    end_ms: float


@dataclass
class Schedule:
    """A solution's earliest times: per op, and per transfer (edge off one device) its route and delay.

    `transfers` is built only when read: search loops re-time thousands of candidates and
    look at the makespan of most of them only.
    """

    solution: Solution
    start_ms: list[float]
    end_ms: list[float]
    routes: dict[int, tuple[str, ...]]  # edge index -> route, for the edges that cross devices
    delay_ms: list[float]  # per edge index (0 on one device)
    edge_src: list[int]  # source op per edge index: a transfer starts when its source ends

    @property
    def makespan_ms(self) -> float:
        return max(self.end_ms, default=0.0)

    @cached_property
    def transfers(self) -> list[Transfer]:
        end, src, delay = self.end_ms, self.edge_src, self.delay_ms
        return [Transfer(i, path, end[src[i]], end[src[i]] + delay[i]) for i, path in sorted(self.routes.items())]

    def memory_bytes(self, problem: Problem) -> list[int]:
        used = [0] * problem.n_devices
        for k, d in enumerate(self.solution.device):
            used[d] += problem.memory_bytes[k]
        return used


def solution_from_starts(
    problem: Problem, device: Sequence[int], start: Sequence[float], time_unit_ms: float = 1.0
) -> Solution:
    """Per-device orders from a solver's start times (in units of `time_unit_ms`: ms or ticks).

    The orders are cut from one topological order of the graph: Kahn's algorithm takes
    the ready op whose interval has the earliest midpoint (then the lowest index). So
    they never contradict the graph, even when solver tolerances put an op a hair
    before its own predecessor. On a device, non-overlapping intervals have midpoints
    in the same order, at least (d_x + d_y) / 2 apart: this is the solver's own order
    for exact starts (re-timing can then only shorten its schedule), a zero-length op
    starting with a longer one goes first (second, it would delay its successors), and
    noise smaller than half a duration changes nothing. Sorting by start alone fails
    the last two. Starts in ticks with durations in ms keep these properties while the
    tick is at most 1 ms (durations shrink, gaps stay).
    """
    time_ms, succs, edge_dst = problem.time_ms, problem.succs, problem.edge_ends[1]
    midpoint = [start[k] + time_ms[k][device[k]] / time_unit_ms / 2 for k in range(problem.n_ops)]
    waiting = [len(problem.preds[k]) for k in range(problem.n_ops)]
    ready = [(midpoint[k], k) for k in range(problem.n_ops) if waiting[k] == 0]
    heapq.heapify(ready)
    order: list[list[int]] = [[] for _ in problem.devices]
    while ready:
        k = heapq.heappop(ready)[1]
        order[device[k]].append(k)
        for i in succs[k]:
            v = edge_dst[i]
            waiting[v] -= 1
            if waiting[v] == 0:
                heapq.heappush(ready, (midpoint[v], v))
    return Solution(device=list(device), order=order)


def earliest_times(
    problem: Problem,
    solution: Solution,
    duration: Sequence[T],
    delay: Sequence[T],
    zero: T,
) -> tuple[list[T], list[T]]:
    """Earliest (start, end) per op for a placement and per-device order.

    `duration[k]` (op k on its device) and `delay[edge]` give the costs (floats in ms, or
    integer ticks): lists, not callables, since this loop runs for every candidate of every search.
    Raises SolutionCheckError when the order does not list every op exactly once on
    its device, or contradicts the graph (a cycle of dependencies and device order).
    """
    n = problem.n_ops
    if sorted(k for seq in solution.order for k in seq) != list(range(n)):
        raise SolutionCheckError("the per-device order does not list every op exactly once")
    device_pred = [-1] * n
    device_succ = [-1] * n
    for d, seq in enumerate(solution.order):
        if any(solution.device[k] != d for k in seq):
            raise SolutionCheckError(f"device {problem.devices[d]}: its order lists ops placed elsewhere")
        for a, b in zip(seq, seq[1:]):
            device_pred[b] = a
            device_succ[a] = b

    preds, succs = problem.preds, problem.succs
    edge_src, edge_dst = problem.edge_ends
    waiting = [len(preds[k]) + (device_pred[k] >= 0) for k in range(n)]
    ready = deque(k for k in range(n) if waiting[k] == 0)
    start = [zero] * n
    end = [zero] * n
    done = 0
    while ready:  # the hot loop of every search: locals, and max written out
        k = ready.popleft()
        p = device_pred[k]
        t = end[p] if p >= 0 else zero
        for i in preds[k]:
            arrival = end[edge_src[i]] + delay[i]
            if arrival > t:  # noqa: PLR1730 (max() is a call per edge)
                t = arrival
        start[k] = t
        end[k] = t + duration[k]
        done += 1
        for i in succs[k]:
            v = edge_dst[i]
            waiting[v] -= 1
            if waiting[v] == 0:
                ready.append(v)
        v = device_succ[k]
        if v >= 0:
            waiting[v] -= 1
            if waiting[v] == 0:
                ready.append(v)
    if done != n:
        raise SolutionCheckError("the per-device order contradicts the graph's dependencies")
    return start, end


def retime(problem: Problem, solution: Solution) -> Schedule:
    """The earliest schedule in continuous time for a placement and per-device order.

    Transfers use the solution's routes where given, else the minimum-delay route.
    """
    route: dict[int, tuple[str, ...]] = {}
    delay = [0.0] * len(problem.edges)
    device, given = solution.device, solution.routes
    for i, e in enumerate(problem.edges):
        a, b = device[e.src], device[e.dst]
        if a != b:
            path = given.get(i)
            if path:
                route[i], delay[i] = path, route_delay_ms(problem.router, path, e.size_bytes)
            else:
                route[i], delay[i] = problem.transfer(e, a, b)
    time_ms = problem.time_ms
    duration = [time_ms[k][d] for k, d in enumerate(device)]
    start, end = earliest_times(problem, solution, duration, delay, 0.0)
    return Schedule(solution=solution, start_ms=start, end_ms=end, routes=route, delay_ms=delay,
                    edge_src=problem.edge_ends[0])
