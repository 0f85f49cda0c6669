"""Hill climbing on the incumbent by moving colocation groups, checked by re-timing.

The exact models stall on graphs of thousands of ops, but one re-timing of a candidate
takes milliseconds. A move takes one group off its device and puts it on another (the
per-device orders follow the incumbent's start times, so they stay consistent with the
graph); it is kept when the re-timed makespan shrinks and memory still fits. Only groups
with an op on the incumbent's critical path can shorten it, so those are tried, in a
seeded random order, and the critical path is recomputed after every accepted move.
Once no move helps, each move is checked more thoroughly (and dearly): also resequenced,
then (on request) also double-justified. Any graph, no structure assumed; deterministic
for a given seed and evaluation limit.
"""
from __future__ import annotations

import random
import time

from placer.heuristics import justify, resequence
from placer.model import Problem
from placer.neighbourhood import critical_path
from placer.repair import memory_overflow
from placer.schedule import Schedule, retime, solution_from_starts

__all__ = ["improve_by_moves"]

# What checking a move costs in each phase, in re-timings (measured on 808 ops: a re-timing
# 2.7 ms, a resequencing 8.4 ms, a double justification 25 ms).
_PHASE_COSTS = {"retimed": 1, "resequenced": 3, "justified": 10}


def improve_by_moves(problem: Problem, incumbent: Schedule, time_budget_s: float, max_evaluations: int,
                     seed: int = 0, justifying: bool = False) -> tuple[Schedule, dict[str, int]]:
    """The incumbent after improving group moves (or itself), and counts for the stats.

    Moves are first checked by re-timing alone; once none of them helps, each is also
    resequenced (`placer.heuristics.resequence`), which lets a moved group's ops take the
    places the new device has free; with `justifying`, once that is stuck too, each re-timed
    move is also double-justified (`placer.heuristics.justify`). A check costs `_PHASE_COSTS`
    re-timings against `max_evaluations`."""
    rng = random.Random(seed)
    deadline = time.perf_counter() + time_budget_s
    current = incumbent
    counts = {"evaluations": 0, "moves": 0, "resequenced": 0, "justified": 0}
    if problem.n_devices < 2:
        return current, counts
    spent = 0
    phases = iter(_PHASE_COSTS if justifying else ("retimed", "resequenced"))
    phase = next(phases)
    while True:
        improved = False
        groups = sorted({problem.group[k] for k in critical_path(problem, current)})
        rng.shuffle(groups)
        for g in groups:
            if spent >= max_evaluations or time.perf_counter() >= deadline:
                return current, counts
            here = current.solution.device[problem.groups[g][0]]
            for d in problem.allowed[g]:
                if d == here:
                    continue
                device = list(current.solution.device)
                for k in problem.groups[g]:
                    device[k] = d
                if any(memory_overflow(problem, device)):
                    continue
                counts["evaluations"] += 1
                spent += _PHASE_COSTS[phase]
                trial = _checked_move(problem, device, current, phase)
                if trial.makespan_ms < current.makespan_ms * (1 - 1e-9):
                    current, improved = trial, True
                    counts["moves"] += 1
                    if phase != "retimed":
                        counts[phase] += 1
                    break
            if improved:
                break
        if not improved:
            phase = next(phases, None)
            if phase is None:
                return current, counts


def _checked_move(problem: Problem, device: list[int], current: Schedule, phase: str) -> Schedule:
    """The move's schedule: the incumbent's orders re-timed, or better as `phase` checks it."""
    trial = retime(problem, solution_from_starts(problem, device, current.start_ms))
    if phase == "resequenced":
        again = resequence(problem, device)
        if again is not None and again.makespan_ms < trial.makespan_ms:
            trial = again
    elif phase == "justified":
        trial = justify(problem, trial)
    return trial
