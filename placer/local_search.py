"""Hill climbing on the incumbent by moving colocation groups, checked by re-timing.

The exact models stall on graphs of thousands of ops, but one re-timing of a candidate
takes milliseconds. A move takes one group (or a run or a chain of them) off its device and
puts it on another (the per-device orders follow the incumbent's start times, so they stay
consistent with the graph); it is kept when the re-timed makespan shrinks and memory
still fits. Only groups with an op on the incumbent's critical path can shorten it, so
the chains that hold or touch them are tried first, then those groups in a seeded random
order, and the critical path is recomputed after every accepted move.
Once no move helps, each move is checked more thoroughly (and dearly): also resequenced,
then (on request) also double-justified, and (on request) the search goes on from random
changes of the best answer (an iterated local search). Any graph, no structure assumed;
deterministic for a given seed and evaluation limit.
"""
from __future__ import annotations

import math
import random
import time
from collections import defaultdict

from placer.heuristics import justify, resequence
from placer.model import Problem
from placer.neighbourhood import critical_path
from placer.repair import memory_overflow
from placer.schedule import Schedule, retime, solution_from_starts

__all__ = ["improve_by_moves"]

# What checking a move costs in each phase, in re-timings (measured on 808 ops: a re-timing
# 2.7 ms, a resequencing 8.4 ms, a double justification 25 ms).
_PHASE_COSTS = {"retimed": 1, "resequenced": 3, "justified": 10}
# A kicked climb's share of them: climbing to the end after each kick left time for 2-3 kicks
# on separated Inception-V3 (808 ops, 8,000 re-timings); with this cap, dozens.
_KICK_CLIMB_EVALUATIONS = 600


class _Effort:
    """What the search may still spend: re-timings (a check costs `_PHASE_COSTS`) and time."""

    def __init__(self, time_budget_s: float, max_evaluations: int):
        self.deadline = time.perf_counter() + time_budget_s
        self.left = max_evaluations
        self.counts = {"evaluations": 0, "moves": 0, "run_moves": 0, "chain_moves": 0, "resequenced": 0,
                       "justified": 0, "kicks": 0, "kicks_improved": 0}

    def exhausted(self) -> bool:
        return self.left <= 0 or time.perf_counter() >= self.deadline


def improve_by_moves(problem: Problem, incumbent: Schedule, time_budget_s: float, max_evaluations: int,
                     seed: int = 0, justifying: bool = False,
                     kicks: bool = False) -> tuple[Schedule, dict[str, int]]:
    """The incumbent after improving group moves (or itself), and counts for the stats.

    A move puts one group of the critical path, several next to each other on it
    (`_run_moves`), or a chain of groups that holds or touches it (`_Chains`) on another
    device. Moves are first checked by re-timing alone; once none of them helps, each is
    also resequenced (`placer.heuristics.resequence`), which lets a moved group's ops take
    the places the new device has free; with `justifying`, once that is stuck too, each
    re-timed move is also double-justified (`placer.heuristics.justify`).
    A check costs `_PHASE_COSTS` re-timings against `max_evaluations`.

    With `kicks`, what is left after that is an iterated local search: one to three random
    groups of the best schedule's critical path on random devices, climbed from there
    (re-timed and resequenced moves), kept when better: hill climbing stops where every
    single step costs first (a separated 80-op training graph on 4 GPUs: 40.14 -> 39.71 ms)."""
    rng = random.Random(seed)
    effort = _Effort(time_budget_s, max_evaluations)
    if problem.n_devices < 2:
        return incumbent, effort.counts
    chains = _Chains(problem)
    best = _climb(problem, incumbent, tuple(_PHASE_COSTS) if justifying else ("retimed", "resequenced"),
                  effort, rng, chains)
    while kicks and not effort.exhausted():
        kicked = _kick(problem, best, rng)
        if kicked is None:
            break
        effort.counts["kicks"] += 1
        climbed = _climb(problem, kicked, ("retimed", "resequenced"), effort, rng, chains, _KICK_CLIMB_EVALUATIONS)
        if climbed.makespan_ms < best.makespan_ms * (1 - 1e-9):
            best = climbed
            effort.counts["kicks_improved"] += 1
    return best, effort.counts


def _climb(problem: Problem, current: Schedule, phases: tuple[str, ...], effort: _Effort,
           rng: random.Random, chains: _Chains, max_evaluations: float = math.inf) -> Schedule:
    """First-improvement hill climbing by group, run and chain moves, phase after phase, for
    at most `max_evaluations` re-timings of the effort."""
    counts = effort.counts
    stop_at = effort.left - max_evaluations
    for phase in phases:
        improved = True
        while improved:
            path = critical_path(problem, current)
            groups = sorted({problem.group[k] for k in path})
            rng.shuffle(groups)
            moves = [(moved, d, "chain") for moved, d in chains.moves(groups)]
            moves += [([g], d, "group") for g in groups for d in problem.allowed[g]]
            moves += [(moved, d, "run") for moved, d in _run_moves(problem, current.solution.device, path)]
            improved = False
            for moved, d, kind in moves:
                if effort.exhausted() or effort.left <= stop_at:
                    return current
                if all(current.solution.device[problem.groups[g][0]] == d for g in moved):
                    continue
                device = _placed(problem, current.solution.device, moved, d)
                if any(memory_overflow(problem, device)):
                    continue
                counts["evaluations"] += 1
                effort.left -= _PHASE_COSTS[phase]
                trial = _checked_move(problem, device, current, phase)
                if trial.makespan_ms < current.makespan_ms * (1 - 1e-9):
                    current, improved = trial, True
                    counts["moves"] += 1
                    if kind != "group":
                        counts[f"{kind}_moves"] += 1
                    if phase != "retimed":
                        counts[phase] += 1
                    break
    return current


def _kick(problem: Problem, best: Schedule, rng: random.Random) -> Schedule | None:
    """`best` with one to three random groups of its critical path on random allowed devices
    (re-timed in its order), or None when no such change fits memory in ten draws."""
    groups = sorted({problem.group[k] for k in critical_path(problem, best)})
    for _ in range(10):
        device = best.solution.device
        for _ in range(rng.randint(1, 3)):
            g = rng.choice(groups)
            device = _placed(problem, device, [g], rng.choice(problem.allowed[g]))
        if device != best.solution.device and not any(memory_overflow(problem, device)):
            return retime(problem, solution_from_starts(problem, device, best.start_ms))
    return None


def _run_moves(problem: Problem, device: list[int], path: list[int]) -> list[tuple[list[int], int]]:
    """Moves of several groups at once along the critical path, tried after the single ones.

    The path is cut into runs of ops on one device. Each run's groups go to the device of
    the run before or after it: all of them, or the first (last) two or three, next to that
    run. A whole run moved removes two switches of the path between devices, which no single
    group move can do when the run holds several groups (its middle group moved alone adds
    two); separated Inception-V3 on 4 V100s, the engine's deterministic answer: 43.22 ->
    42.57 ms where single moves were stuck. Then each long run's first or last few groups
    (`_offload_sizes`) go to a device no op uses yet (`_offload_devices`). Only moves the
    groups' pins allow."""
    runs: list[tuple[int, list[int]]] = []
    for k in path:
        g = problem.group[k]
        if runs and runs[-1][0] == device[k]:
            if g not in runs[-1][1]:
                runs[-1][1].append(g)
        else:
            runs.append((device[k], [g]))
    moves: list[tuple[list[int], int]] = []
    idle = _offload_devices(problem, device)
    for i, (_, groups) in enumerate(runs):
        ends = range(2, min(4, len(groups)))  # how many groups of a run's end move without the rest
        if i > 0:
            moves += [(moved, runs[i - 1][0]) for moved in [groups, *(groups[:n] for n in ends)]]
        if i + 1 < len(runs):
            moves += [(moved, runs[i + 1][0]) for moved in [groups, *(groups[-n:] for n in ends)]]
        for n in _offload_sizes(len(groups)):
            moves += [(moved, there) for moved in (groups[:n], groups[-n:]) for there in idle]
    return [(moved, there) for moved, there in moves
            if len(moved) > 1 and all(there in problem.allowed[g] for g in moved)]


def _offload_sizes(length: int) -> list[int]:
    """How many groups of a long run's start or end go to an idle device at once: 4, 6, 8, 11, 16, ...
    (each about 1.4 times the last) while fewer than the run's groups. Offloading the first layers
    of a training step that one device runs lets their gradients and weight updates overlap the
    rest's (ResNet-50 on a DGX-1, 168 groups on one device: the first 11 off it, 31.57 -> 31.35 ms
    resequenced); no single or run-end move gets there, each step of it costs two transfers first."""
    sizes, n = [], 4.0
    while round(n) < length:
        sizes.append(round(n))
        n *= 2 ** 0.5
    return sizes


def _offload_devices(problem: Problem, device: list[int]) -> list[int]:
    """The devices a run's part may go to: those no op uses (a new stage; moves onto the
    devices in use are the run moves' and the group moves'), and of interchangeable ones
    (Problem.interchangeable_devices) only the first, as the rest give the same answers."""
    used = set(device)
    same = {d for c in problem.interchangeable_devices for d in [x for x in c if x not in used][1:]}
    return [d for d in range(problem.n_devices) if d not in used and d not in same]


class _Chains:
    """Chains of groups: maximal paths of groups that each touch exactly two other groups (by
    an edge of any of their ops), such as a branch's conv, norm and activation with their
    gradients. Moved whole, a chain pays only the transfers at its two ends; moved one group
    at a time, each step adds two transfers first, so a climb never gets there. Moves of the
    chains that hold or touch the critical path's groups: off a device whose order delays the
    path, or next to the path's ops they feed. Any graph, no structure assumed. On NASNet-style
    cells (2,214 ops, 4 V100s), from the engine's answer where single and run moves were stuck
    (33.77 ms), chain moves alone reach 32.04 ms re-timed and 30.91 ms resequenced."""

    def __init__(self, problem: Problem):
        self.neighbours: dict[int, set[int]] = defaultdict(set)
        for e in problem.edges:
            a, b = problem.group[e.src], problem.group[e.dst]
            if a != b:
                self.neighbours[a].add(b)
                self.neighbours[b].add(a)
        self.chains: list[list[int]] = []
        self.chain_of: dict[int, int] = {}
        for g in range(len(problem.groups)):
            if g not in self.chain_of and len(self.neighbours[g]) == 2:
                self._grow(g)
        # the devices every group of a chain may use, once: the moves are listed at each step
        self.devices = [sorted(set.intersection(*(set(problem.allowed[g]) for g in chain)))
                        for chain in self.chains]

    def _grow(self, g: int) -> None:
        """The chain through `g`, recorded: followed both ways while groups have two neighbours."""
        c = len(self.chains)
        self.chain_of[g] = c
        sides = []
        for first in sorted(self.neighbours[g]):
            side, previous, here = [], g, first
            while here not in self.chain_of and len(self.neighbours[here]) == 2:
                self.chain_of[here] = c
                side.append(here)
                previous, here = here, min(self.neighbours[here] - {previous})
            sides.append(side)
        self.chains.append([*reversed(sides[0]), g, *sides[1]])

    def moves(self, path_groups: list[int]) -> list[tuple[list[int], int]]:
        """Each chain holding or touching one of `path_groups` (in their order) on each device
        all its groups may use; a one-group chain on the path is a group move already."""
        on_path = set(path_groups)
        picked: dict[int, None] = {}
        for g in path_groups:
            for h in (g, *sorted(self.neighbours[g])):
                if h in self.chain_of:
                    picked[self.chain_of[h]] = None
        moves = []
        for c in picked:
            chain = self.chains[c]
            if len(chain) == 1 and chain[0] in on_path:
                continue
            moves += [(chain, d) for d in self.devices[c]]
        return moves


def _placed(problem: Problem, device: list[int], groups: list[int], d: int) -> list[int]:
    """A copy of `device` with every op of `groups` on device `d`."""
    placed = list(device)
    for g in groups:
        for k in problem.groups[g]:
            placed[k] = d
    return placed


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
