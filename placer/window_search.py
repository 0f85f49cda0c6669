"""Window search: re-optimise one stretch of the incumbent's timeline with a small CP-SAT model.

A large-neighbourhood search whose steps cost what their neighbourhood costs, not what the
whole graph costs. A step takes the ops that start in a window [lo, hi) of the incumbent's
timeline and builds a CP-SAT model of those ops alone (placer.formulations.cpsat_model's
pieces): the ops that started before `lo` stay where and when they are (their ends release
the window's ops, those still running occupy their devices), the ops that start at `hi` or
later keep their devices and per-device order and enter the model only as tails: the longest
path from each of them to the end of the incumbent. The model minimises the window's exit,
max(end + transfer + tail), and places the window's groups (those with every op inside it)
on any device their memory and pins allow. The answer's order (before, window, after, per
device) is re-timed; it replaces the incumbent when no longer.

Why windows of time: every edge and every device order runs forward in time, so the three
parts never contradict each other and the merged order is always a valid order. Steps cost
10-700 ms (windows of 20-400 ops) where a copy of the whole model costs seconds to presolve
(placer.neighbourhood), so the search makes hundreds of them. Windows sit on the incumbent's
critical path (what sets the makespan), span a critical op's whole colocation group (so that
the group may change device; a group whose ops lie far apart gets a stretch around each
cluster of them, the ops between frozen in place and time), or lie anywhere at random; the
kind is drawn by its gain so far. Their size adapts as in CP-SAT's own LNS: a window proven
optimal makes the next one larger, one that is not makes it smaller.
"""
from __future__ import annotations

import bisect
import itertools
import math
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from placer.budget import Budget
from placer.formulations.cpsat_model import add_no_overlap, add_op, add_placement, add_precedence, pair_delays
from placer.model import Problem
from placer.neighbourhood import critical_path
from placer.schedule import Schedule, Solution, retime, solution_from_starts
from solvers import SolveStatus

__all__ = ["WindowOptions", "improve_by_windows", "tails_ms"]

KINDS = ("critical", "group", "random")
_TICKS = 100_000  # resolution of a window's horizon


@dataclass(frozen=True)
class WindowOptions:
    """Sizes and limits of the window search (the engine's Strategy holds its copy)."""

    initial_ops: int = 60   # ops in the first window
    min_ops: int = 8
    max_ops: int = 400
    grow: float = 1.25      # a window solved to optimality makes the next one this much larger
    step_s: float = 1.0     # limit of one sub-solve
    max_steps: int = 100_000  # bounds deterministic runs too
    patience: float = 0.25  # the search stops when this share of its time went by without a gain (a
                            # threshold of 0.2% per stretch stopped it early on msr Inception-V3, 4 GPUs,
                            # deterministic: 364.9 ms instead of 319.8)


@dataclass(frozen=True)
class _Incumbent:
    """What every window of one incumbent needs, computed once per incumbent (most steps
    leave it as it is)."""

    schedule: Schedule
    starts: list[float]    # every op's start, sorted
    critical: list[int]    # its critical path (placer.neighbourhood.critical_path)
    tail: list[float]      # tails_ms

    @classmethod
    def of(cls, problem: Problem, schedule: Schedule) -> _Incumbent:
        return cls(schedule, sorted(schedule.start_ms), critical_path(problem, schedule), tails_ms(problem, schedule))


def improve_by_windows(problem: Problem, incumbent: Schedule, budget: Budget, seconds: float, seed: int,
                       offer: Callable[[Schedule, str], Schedule | None], done: Callable[[Schedule], bool],
                       options: WindowOptions | None = None) -> dict[str, int]:
    """Improve `incumbent` for about `seconds` of `budget`; returns counts for the stats.

    `offer(schedule, source)` checks an improvement and returns it (None when rejected);
    `done(schedule)` says when the gap is closed."""
    options = options or WindowOptions()
    rng = random.Random(seed)
    stop_at = budget.spent() + seconds
    size = float(min(options.initial_ops, problem.n_ops))
    current = _Incumbent.of(problem, incumbent)
    counts = {"steps": 0, "improved": 0, "closed": 0, "no_answer": 0}
    tried = dict.fromkeys(KINDS, 0)
    gained = dict.fromkeys(KINDS, 0.0)
    last_gain = budget.spent()
    while not done(current.schedule) and counts["steps"] < options.max_steps \
            and budget.spent() - last_gain <= options.patience * seconds:
        left = min(stop_at - budget.spent(), budget.remaining())
        if left < 0.02:
            break
        kind = _next_kind(tried, gained, rng)
        tried[kind] += 1
        window = _window(problem, current, kind, max(options.min_ops, int(size)), options.max_ops, rng)
        counts["steps"] += 1
        answer = _solve_window(problem, current, window, budget, min(options.step_s, left))
        if answer is None:
            counts["no_answer"] += 1
            size = max(options.min_ops, size / options.grow)
            continue
        candidate, closed = answer
        counts["closed"] += closed
        size = min(options.max_ops, problem.n_ops, size * options.grow) if closed \
            else max(options.min_ops, size / options.grow)
        makespan_ms = current.schedule.makespan_ms
        if candidate.makespan_ms < makespan_ms * (1 - 1e-12):
            accepted = offer(candidate, f"windows ({kind})")
            if accepted is not None:
                counts["improved"] += 1
                gained[kind] += 1 - accepted.makespan_ms / makespan_ms
                current, last_gain = _Incumbent.of(problem, accepted), budget.spent()
        elif candidate.makespan_ms <= makespan_ms * (1 + 1e-12):
            current = _Incumbent.of(problem, candidate)  # a sideways move: the next windows see another order
    return counts


def _next_kind(tried: dict[str, int], gained: dict[str, float], rng: random.Random) -> str:
    """Each kind once, then a kind drawn by its gain per step so far (with a prior of 0.1%
    per step, so that none is dropped for good): which kind gains depends on the graph (on
    msr Inception-V3, 4 V100s, 20 s from one incumbent: random windows 3.8%, critical 1.5%;
    on separated Inception-V3: group windows 1.2%, random 0%)."""
    untried = [kind for kind in KINDS if tried[kind] == 0]
    if untried:
        return untried[0]
    return rng.choices(KINDS, weights=[(gained[k] + 1e-3) / tried[k] for k in KINDS])[0]


def _window(problem: Problem, current: _Incumbent, kind: str, size: int, max_ops: int,
            rng: random.Random) -> list[tuple[float, float]]:
    """Stretches [lo, hi) in ms, in time order, holding about `size` op starts: around an op of
    the incumbent's critical path ("critical"), around every op of such an op's group, so that
    the group may move to another device ("group"), or anywhere ("random").

    A group's ops may lie far apart in time (a layer's forward and backward ops, one colocation
    group in a training graph whose forward and backward parts are separate components): then
    the window is one stretch around each cluster of them, the time between them frozen. One
    stretch from the first to the last would hold most of the graph, and the group could never
    move (separated Inception-V3 on 4 V100s, 20 s of group windows from the engine's answer:
    42.56 -> 42.06 ms; critical-path windows 42.42, random ones nothing)."""
    starts, start_ms = current.starts, current.schedule.start_ms
    n = len(starts)
    if kind == "random":
        first = rng.randrange(max(1, n - size + 1))
        return [_stretch(starts, first, min(n, first + size))]
    k = rng.choice(current.critical)
    if kind == "group":
        times = sorted(start_ms[x] for x in problem.groups[problem.group[k]])
        clusters = [[bisect.bisect_left(starts, times[0]), bisect.bisect_right(starts, times[0])]]
        for t in times[1:]:
            first, last = bisect.bisect_left(starts, t), bisect.bisect_right(starts, t)
            if first - clusters[-1][1] <= size:
                clusters[-1][1] = last
            else:
                clusters.append([first, last])
        each = size // len(clusters)
        stretches = [_around(n, first, last, each) for first, last in clusters]
        if sum(last - first for first, last in stretches) <= max_ops:
            return _merged(starts, stretches)
    first = bisect.bisect_left(starts, start_ms[k])
    return [_stretch(starts, *_around(n, first, first, size))]


def _around(n: int, first: int, last: int, size: int) -> tuple[int, int]:
    """Positions [first, last) widened on both sides to hold at least `size` of the n starts."""
    extra = max(0, size - (last - first))
    first = max(0, min(first - extra // 2, n - max(size, last - first)))
    return first, min(n, max(last, first + size))


def _stretch(starts: list[float], first: int, last: int) -> tuple[float, float]:
    return starts[first], starts[last] if last < len(starts) else math.inf


def _merged(starts: list[float], stretches: list[tuple[int, int]]) -> list[tuple[float, float]]:
    """Positions' stretches as times, overlapping ones joined."""
    out: list[tuple[int, int]] = []
    for first, last in sorted(stretches):
        if out and first <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], last))
        else:
            out.append((first, last))
    return [_stretch(starts, first, last) for first, last in out]


def tails_ms(problem: Problem, schedule: Schedule) -> list[float]:
    """Per op, the longest path from its start to the schedule's end through the graph's
    edges (with their transfers) and the per-device orders: how far the makespan moves
    when the op starts a millisecond later."""
    n = problem.n_ops
    device_succ = [-1] * n
    for seq in schedule.solution.order:
        for a, b in itertools.pairwise(seq):
            device_succ[a] = b
    transfer = {t.edge: t.end_ms - t.start_ms for t in schedule.transfers}
    following = [len(problem.succs[k]) + (device_succ[k] >= 0) for k in range(n)]
    preceding: list[list[int]] = [[problem.edges[i].src for i in problem.preds[k]] for k in range(n)]
    for a, b in enumerate(device_succ):
        if b >= 0:
            preceding[b].append(a)
    tail = [0.0] * n
    ready = deque(k for k in range(n) if following[k] == 0)
    while ready:
        k = ready.popleft()
        after = tail[device_succ[k]] if device_succ[k] >= 0 else 0.0
        for i in problem.succs[k]:
            after = max(after, transfer.get(i, 0.0) + tail[problem.edges[i].dst])
        tail[k] = schedule.end_ms[k] - schedule.start_ms[k] + after
        for u in preceding[k]:
            following[u] -= 1
            if following[u] == 0:
                ready.append(u)
    return tail


def _hint_ticks(problem: Problem, current: Schedule, inside: list[int], lo: float, up: Callable[[float], int],
                delay: Callable[[int, int, int], float]) -> dict[int, int]:
    """The incumbent's starts of the window's ops in ticks, each pushed past its inputs and its
    device predecessor as the model rounds them (durations and delays rounded up): a hint
    the model accepts as it is. Rounding each start alone breaks chains by a tick per op (on
    separated Inception-V3, DGX-1, 5 of 34 group windows ended with no solution; 0 of 39 now)."""
    device = current.solution.device
    in_window = set(inside)
    before: dict[int, list[tuple[int, int]]] = {k: [] for k in inside}  # op -> (earlier op, ticks between)
    for k in inside:
        for i in problem.preds[k]:
            u = problem.edges[i].src
            if u in in_window:
                before[k].append((u, up(problem.time_ms[u][device[u]]) + up(delay(i, device[u], device[k]))))
    for seq in current.solution.order:
        mine = [k for k in seq if k in in_window]
        for u, k in itertools.pairwise(mine):
            before[k].append((u, max(1, up(problem.time_ms[u][device[u]]))))
    after: dict[int, list[int]] = {k: [] for k in inside}
    for k, earlier in before.items():
        for u, _ in earlier:
            after[u].append(k)
    waiting = {k: len(earlier) for k, earlier in before.items()}
    ready = deque(k for k in inside if waiting[k] == 0)
    ticks: dict[int, int] = {}
    while ready:
        k = ready.popleft()
        ticks[k] = max([up(current.start_ms[k] - lo)] + [ticks[u] + gap for u, gap in before[k]])
        for v in after[k]:
            waiting[v] -= 1
            if waiting[v] == 0:
                ready.append(v)
    return ticks


def _solve_window(problem: Problem, incumbent: _Incumbent, window: list[tuple[float, float]], budget: Budget,
                  seconds: float) -> tuple[Schedule, bool] | None:
    """The re-timed incumbent with the window re-optimised, and whether CP-SAT proved the
    window optimal; None when it found nothing.

    Ops between the window's stretches ("frozen") keep their devices and times: they hold
    their devices then, and their inputs from the window must arrive by their starts."""
    from ortools.sat.python import cp_model

    lo, hi = window[0][0], window[-1][1]
    current, tail = incumbent.schedule, incumbent.tail
    device, start, end = current.solution.device, current.start_ms, current.end_ms
    inside = [k for k in range(problem.n_ops) if any(a <= start[k] < b for a, b in window)]
    if len(inside) < 2:
        return None
    in_window = set(inside)
    frozen = {k for k in range(problem.n_ops) if lo <= start[k] < hi and k not in in_window}
    free = sorted({problem.group[k] for k in inside
                   if all(x in in_window for x in problem.groups[problem.group[k]])})
    first_after: dict[int, int] = {}
    for d, seq in enumerate(current.solution.order):
        later = [k for k in seq if start[k] >= hi]
        if later:
            first_after[d] = later[0]
    delays = {i: pair_delays(problem, problem.edges[i]) for k in inside for i in problem.preds[k] + problem.succs[k]}

    def delay(i: int, a: int, b: int) -> float:
        return delays[i].get((a, b), 0.0) if a != b else 0.0

    horizon_ms = current.makespan_ms - lo
    tick = max(horizon_ms, 1e-9) / _TICKS

    def up(ms: float) -> int:
        return max(0, math.ceil(ms / tick - 1e-9))

    m = cp_model.CpModel()
    presence = add_placement(m, problem, free)
    for k in inside:
        g = problem.group[k]
        if g not in presence:
            presence[g] = {device[k]: m.new_constant(1)}
    # per op and device it may use: when its inputs from before the window arrive there
    ready = {k: {d: max((end[u] - lo + delay(i, device[u], d) for i in problem.preds[k]
                         if (u := problem.edges[i].src) not in in_window), default=0.0)
                 for d in presence[problem.group[k]]} for k in inside}
    longest = sum(max(up(problem.time_ms[k][d]) for d in presence[problem.group[k]]) for k in inside)
    release_ms = max(max(by_device.values()) for by_device in ready.values())
    horizon = up(max(horizon_ms, release_ms)) + longest + sum(
        up(max(pairs.values(), default=0.0)) for pairs in delays.values()) + 1
    per_device: list[list[Any]] = [[] for _ in problem.devices]
    s: dict[int, Any] = {}
    e: dict[int, Any] = {}
    for k in inside:
        lits = presence[problem.group[k]]
        s[k], e[k] = add_op(m, lits, {d: up(problem.time_ms[k][d]) for d in lits}, horizon, str(k), per_device)
    for k in range(problem.n_ops):  # ops still running when the window opens hold their devices
        if start[k] < lo < end[k]:
            per_device[device[k]].append(m.new_fixed_size_interval_var(0, up(end[k] - lo), f"busy_{k}"))
    # Durations rounded up drift a chain of the window's ops up to a tick per op past the
    # incumbent's times: frozen ops' intervals start, and their inputs are due, that much later
    # (else the model can be infeasible); re-timing the answer gives the true times.
    drift = len(inside) + 2
    for k in frozen:
        first, last = up(start[k] - lo) + drift, up(end[k] - lo) - 2
        if last > first:
            per_device[device[k]].append(m.new_fixed_size_interval_var(first, last - first, f"frozen_{k}"))
    add_no_overlap(m, per_device)
    cmax = m.new_int_var(0, horizon + up(max(tail)), "cmax")
    for k in inside:
        lits = presence[problem.group[k]]
        for d, lit in lits.items():
            exit_ms = tail[first_after[d]] if d in first_after else 0.0
            for i in problem.succs[k]:
                v = problem.edges[i].dst
                if v in frozen:
                    m.add(e[k] + up(delay(i, d, device[v])) <= up(start[v] - lo) + drift).only_enforce_if(lit)
                elif v not in in_window:
                    exit_ms = max(exit_ms, delay(i, d, device[v]) + tail[v])
            m.add(s[k] >= up(ready[k][d])).only_enforce_if(lit)
            m.add(cmax >= e[k] + up(exit_ms)).only_enforce_if(lit)
        for i in problem.succs[k]:
            v = problem.edges[i].dst
            if v in in_window:
                ticks = {pair: up(x) for pair, x in delays[i].items()}
                add_precedence(m, s[v], e[k], lits, presence[problem.group[v]], ticks)
    held = current.memory_bytes(problem)  # by the groups that stay where they are:
    for g in free:
        held[device[problem.groups[g][0]]] -= problem.group_memory_bytes(g)
    for d, cap in enumerate(problem.capacity_bytes):
        if cap is None:
            continue
        demand = [(problem.group_memory_bytes(g), presence[g][d]) for g in free if d in presence[g]]
        if sum(mem for mem, _ in demand) > cap - held[d]:
            m.add(sum(mem * lit for mem, lit in demand if mem) <= cap - held[d])
    for k, ticks in _hint_ticks(problem, current, inside, lo, up, delay).items():
        m.add_hint(s[k], ticks)
    for g in free:
        for d, lit in presence[g].items():
            m.add_hint(lit, d == device[problem.groups[g][0]])
    m.minimize(cmax)
    # without the LP relaxation: on windows dumped from deterministic runs (one worker, their own
    # limits), 59 of 77 proven instead of 41 and 26 answers shorter, 1 longer, in 60% of the wall
    # time (msr Inception-V3, DGX-1); 30 of 43 instead of 26 (GNMT in msr form, DGX-1)
    run, solver = budget.solve_cpsat(m, seconds, presolve=False, linear_relaxation=False)
    if not run.has_solution:
        return None

    new_device = list(device)
    for g in free:
        chosen = next(d for d, lit in presence[g].items() if solver.value(lit))
        for k in problem.groups[g]:
            new_device[k] = chosen
    times = list(start)
    window_end = lo
    for k in inside:
        times[k] = lo + solver.value(s[k]) * tick
        window_end = max(window_end, times[k] + problem.time_ms[k][new_device[k]])
    shift = max(0.0, window_end - hi) + 1.0 if hi < math.inf else 0.0
    for k in range(problem.n_ops):
        if start[k] >= hi:
            times[k] = start[k] + shift  # after the window on every device, in their order
    solution: Solution = solution_from_starts(problem, new_device, times)
    return retime(problem, solution), run.status is SolveStatus.OPTIMAL
