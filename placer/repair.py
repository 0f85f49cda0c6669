"""Make a candidate placement respect device memory, at the least cost in step time.

Strategies that solve parts of a graph on their own (the series decomposition, re-fits,
coarsening, neighbourhoods) see only part of the memory. Their stitched answer can
overload a device even though the whole graph fits the machine. `repair_memory` moves
colocation groups off overloaded devices until every device fits, choosing each move by
re-timing the candidate: a single group, or a run of groups that are consecutive in time
on the overloaded device (a run costs only the transfers at its two ends, which is why
moving the tail of a chain beats moving scattered layers). It is greedy and bounded in
time; when it cannot make the candidate fit it says why (`Repair.stopped_by`), and the
caller keeps its previous incumbent. A repair stopped by the clock is not a strategy's bug:
the caller counts it apart from a repair that found no fitting move.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from placer.model import Problem
from placer.schedule import Schedule, retime, solution_from_starts

__all__ = ["Repair", "is_placement_feasible", "memory_overflow", "repair_memory"]

_MAX_RUN_STARTS = 48  # runs tried per move (spread over the overloaded device's groups)
_MAX_SINGLES = 24     # single groups tried per move
_MAX_TARGETS = 3      # target devices tried per candidate (those with the most free memory)


def memory_overflow(problem: Problem, device: list[int]) -> list[int]:
    """Bytes above capacity per device (0 where it fits)."""
    used = [0] * problem.n_devices
    for k, d in enumerate(device):
        used[d] += problem.memory_bytes[k]
    return [max(0, u - c) if c is not None else 0 for u, c in zip(used, problem.capacity_bytes)]


def is_placement_feasible(problem: Problem, device: list[int]) -> bool:
    """Memory, colocation groups and pins hold for a device per op."""
    for g, ops in enumerate(problem.groups):
        d = device[ops[0]]
        if d not in problem.allowed[g] or any(device[k] != d for k in ops):
            return False
    return not any(memory_overflow(problem, device))


def _free(problem: Problem, device: list[int]) -> list[float]:
    used = [0] * problem.n_devices
    for k, d in enumerate(device):
        used[d] += problem.memory_bytes[k]
    return [float("inf") if c is None else c - u for u, c in zip(used, problem.capacity_bytes)]


def _spread(items: list, limit: int) -> list:
    if len(items) <= limit:
        return items
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]


@dataclass(frozen=True)
class Repair:
    """A repair's outcome: the fitting schedule, or why there is none."""

    schedule: Schedule | None
    stopped_by: Literal["", "clock", "no_move", "moves"] = ""  # "" when it fits


def repair_memory(problem: Problem, schedule: Schedule, time_budget_s: float = 5.0,
                  max_moves: int = 400) -> Repair:
    """A schedule whose placement fits every device's memory, or why none was found.

    Groups keep their relative order: after a move the per-device orders are re-derived
    from the current start times, which respect the graph, so the result is a valid order.
    The clock is checked before every re-timing, so the repair ends within one re-timing of
    `time_budget_s`.
    """
    deadline = time.perf_counter() + time_budget_s
    current = schedule
    device = list(schedule.solution.device)
    for _ in range(max_moves + 1):
        overflow = memory_overflow(problem, device)
        if not any(overflow):
            return Repair(current)
        if time.perf_counter() > deadline:
            return Repair(None, "clock")
        d = max(range(problem.n_devices), key=overflow.__getitem__)
        move = _best_move(problem, current, device, d, overflow[d], deadline)
        if move is None:
            return Repair(None, "clock" if time.perf_counter() > deadline else "no_move")
        device, current = move
    return Repair(None, "moves")


def _best_move(problem: Problem, current: Schedule, device: list[int], d: int, need: int, deadline: float
               ) -> tuple[list[int], Schedule] | None:
    """The cheapest move of groups off device d that frees `need` bytes, or, when no such
    move fits anywhere, the move that frees the most memory (ties: the cheapest)."""
    first_start: dict[int, float] = {}
    for k, dk in enumerate(device):
        if dk == d:
            g = problem.group[k]
            first_start[g] = min(first_start.get(g, float("inf")), current.start_ms[k])
    groups = sorted((g for g in first_start if len(problem.allowed[g]) > 1), key=first_start.__getitem__)
    memory = {g: problem.group_memory_bytes(g) for g in groups}
    free = _free(problem, device)
    roomy = max((free[x] for x in range(problem.n_devices) if x != d), default=0.0)
    enough = [[g] for g in sorted((g for g in groups if memory[g] >= need), key=memory.__getitem__)[:_MAX_SINGLES]]
    enough += _runs(groups, memory, lambda total, _: total < need, lambda total: total >= need)
    move = _cheapest(problem, current, device, d, enough, free, deadline)
    if move is not None or time.perf_counter() > deadline:
        return move
    # partial progress: the largest runs that fit on some other device
    partial = _runs(groups, memory, lambda total, g: total + memory[g] <= roomy, lambda total: total > 0)
    partial += [[g] for g in groups if 0 < memory[g] <= roomy]
    if not partial:
        return None
    most = max(sum(memory[g] for g in run) for run in partial)
    return _cheapest(problem, current, device, d, [r for r in partial if sum(memory[g] for g in r) == most], free,
                     deadline)


def _runs(groups: list[int], memory: dict[int, int], extend: Callable[[int, int], bool],
          keep: Callable[[int], bool]) -> list[list[int]]:
    """Runs of groups consecutive in time: from spread-out starts, extended while
    `extend(total, next group)` holds, kept when `keep(total)` holds."""
    runs = []
    for i in _spread(list(range(len(groups))), _MAX_RUN_STARTS):
        total, j = 0, i
        while j < len(groups) and extend(total, groups[j]):
            total += memory[groups[j]]
            j += 1
        if j > i and keep(total):
            runs.append(groups[i:j])
    return runs


def _cheapest(problem: Problem, current: Schedule, device: list[int], d: int, candidates: list[list[int]],
              free: list[float], deadline: float) -> tuple[list[int], Schedule] | None:
    """The candidate run whose move to some device with room gives the shortest re-timed
    schedule, among those re-timed before the deadline."""
    best: tuple[float, list[int], Schedule] | None = None
    for run in candidates:
        size = sum(problem.group_memory_bytes(g) for g in run)
        targets = [x for x in range(problem.n_devices) if x != d and free[x] >= size
                   and all(x in problem.allowed[g] for g in run)]
        targets.sort(key=lambda x: -free[x])
        for x in targets[:_MAX_TARGETS]:
            if time.perf_counter() > deadline:
                return None if best is None else (best[1], best[2])
            moved = list(device)
            for g in run:
                for k in problem.groups[g]:
                    moved[k] = x
            schedule = retime(problem, solution_from_starts(problem, moved, current.start_ms))
            if best is None or schedule.makespan_ms < best[0]:
                best = (schedule.makespan_ms, moved, schedule)
    return None if best is None else (best[1], best[2])
