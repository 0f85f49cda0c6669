"""Lower bounds on the makespan that hold for every valid placement.

`bound_breakdown` names each bound, `lower_bound_ms` is the largest. The solvers improve
on them with what they prove; a result's `gap` is measured against the best bound known.

Shared ingredients, each a lower bound whatever the placement: an op's fastest time on
a device its group may use; an edge's cheapest delay over device pairs its two groups may
use (no pair: the ends always share a device); per op a head (earliest start) and a tail
(time from its end to the makespan) that charge communication where parallelism needs it.

The named bounds:

- critical_path: the longest path, no communication.
- communication: head + op + tail, maximised over ops (`_releases`).
- work, largest_group, pinned: total work / devices, the heaviest group, the pinned load.
- group_packing: groups as indivisible jobs on the devices.
- group_machine: each group's ops on one machine, with their heads and tails.
- path_blocks: the critical path split into runs on one device; each run's device also
  runs the rest of the run's groups (inside the run, those between two of its path ops),
  each split pays a transfer, and splits between the same two groups (a layer's forward
  and backward) come together; a run also lasts what the branches beside it add.
- paired_chains: two chains through the same groups (a layer's forward and backward
  copies) as a two-job shop over those runs.
- switch_cover: the critical path pays either a device switch between two of its groups
  (at every place it passes between them) or the ops its device must run inside it; the
  cheapest choice is a small set cover, solved by CP-SAT.

`head_tail_bounds_ms` recomputes the bounds that rest on heads and tails from raised ones
(placer.cone_bounds raises them by exact sub-solves, through the `raise_at` hook of
`_releases`).
"""
from __future__ import annotations

import bisect
import heapq
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from ortools.sat.python import cp_model

from placer.model import Problem

RaiseRelease = Callable[[int, list[float]], float]

__all__ = [
    "Costs",
    "RaiseRelease",
    "SwitchCover",
    "bound_breakdown",
    "bounds_and_switch_cover",
    "communication_bound_ms",
    "critical_path_ms",
    "head_tail_bounds_ms",
    "longest_path",
    "lower_bound_ms",
    "work_bound_ms",
]

_MAX_FRONT = 32  # exit pairs kept per block end in the paired-chains dynamic programme
_MAX_STATES = 200_000  # states it may visit per target: beyond, it gives up (no bound, never a wrong one)
_MIN_PAIRED_SHARE = 0.05  # mates lighter than this share of the path's work hardly matter: skipped
_MAX_PAIRED_PATH = 3000  # longer paths are skipped (its block table grows with the square)
_MAX_SIDE_CHAIN = 1500  # longer chains count no side ops (their table, a square of floats per level)
_SIDE_LEVELS = 8  # wait levels of the side ops' table
_COVER_TICKS_PER_MS = 10_000  # the switch cover's integer costs (rounded down, so still a bound)
_COVER_WORK = 2.0  # CP-SAT's deterministic time for the switch cover (it takes 0.02-0.8 s on 2,500 ops)


def bound_breakdown(problem: Problem) -> dict[str, float]:
    """Every named lower bound (ms); each holds on its own, the largest is the bound."""
    return bounds_and_switch_cover(problem)[0]


def bounds_and_switch_cover(problem: Problem, c: Costs | None = None) -> tuple[dict[str, float], SwitchCover]:
    """`bound_breakdown` and the switch cover's answer, from one solve of the cover (the
    engine starts a placement from that answer: placer.heuristics.switch_cover_start);
    `c`: the problem's `Costs.of`, when the caller has them already."""
    if problem.n_ops == 0:
        return {"critical_path": 0.0}, SwitchCover(0.0, [], [])
    c = c or Costs.of(problem)
    named = {
        "critical_path": _longest_path_ms(problem, c.fastest),
        "work": sum(c.fastest) / problem.n_devices,
        "largest_group": max(_group_work_ms(problem, g) for g in range(len(problem.groups))),
        "pinned": _pinned_ms(problem),
        "group_packing": _group_packing_ms(problem),
        **head_tail_bounds_ms(problem, c),
    }
    named["paired_chains"] = _paired_chains_ms(problem, c, max(named.values()))
    cover = _switch_cover(problem, c, longest_path(problem, c.fastest))
    named["switch_cover"] = cover.bound_ms
    return {k: (v if math.isfinite(v) else 0.0) for k, v in named.items()}, cover


def head_tail_bounds_ms(problem: Problem, c: Costs) -> dict[str, float]:
    """The bounds that rest on heads and tails, from `c` (e.g. heads and tails raised by
    placer.cone_bounds): communication, group_machine, path_blocks."""
    if problem.n_ops == 0:
        return {}
    return {
        "communication": max(h + p + t for h, p, t in zip(c.head, c.fastest, c.tail)),
        "group_machine": _group_machine_ms(problem, c),
        "path_blocks": _path_blocks_ms(problem, c, longest_path(problem, c.fastest)),
    }


def lower_bound_ms(problem: Problem) -> float:
    """The largest of `bound_breakdown`."""
    return max(bound_breakdown(problem).values())


def critical_path_ms(problem: Problem) -> float:
    """Longest path with every op at its fastest allowed time and no communication."""
    return _longest_path_ms(problem, [problem.min_time_ms(k) for k in range(problem.n_ops)])


def work_bound_ms(problem: Problem) -> float:
    """Total work spread perfectly over the devices, the biggest single group, the pinned load."""
    if problem.n_ops == 0:
        return 0.0
    total = sum(problem.min_time_ms(k) for k in range(problem.n_ops))
    biggest = max(_group_work_ms(problem, g) for g in range(len(problem.groups)))
    return max(total / problem.n_devices, biggest, _pinned_ms(problem))


def communication_bound_ms(problem: Problem) -> float:
    """max over ops of (earliest start + op + time after it), both communication-aware."""
    if problem.n_ops == 0:
        return 0.0
    c = Costs.of(problem)
    return max(h + p + t for h, p, t in zip(c.head, c.fastest, c.tail))


# --- shared ingredients ---------------------------------------------------------------


@dataclass(frozen=True)
class Costs:
    """Per-op fastest times, per-edge cheapest delays, per-op heads and tails: each a lower
    bound whatever the placement."""

    fastest: list[float]
    delay: list[float]  # math.inf: the edge's ends always share a device
    head: list[float]
    tail: list[float]
    apart: list[bool]   # the edge's ends never share a device (their groups fit on none together)

    @classmethod
    def of(cls, problem: Problem) -> Costs:
        fastest = [problem.min_time_ms(k) for k in range(problem.n_ops)]
        delay = _cheapest_delays(problem)
        apart = _apart_edges(problem)
        head = _releases(problem, fastest, delay, apart, reverse=False)
        tail = _releases(problem, fastest, delay, apart, reverse=True)
        return cls(fastest, delay, head, tail, apart)

    def raised(self, problem: Problem, raise_at: RaiseRelease, tails: bool = False) -> Costs:
        """The heads (or tails) again, each op's raised by `raise_at` (see `_releases`)."""
        release = _releases(problem, self.fastest, self.delay, self.apart, tails, raise_at)
        return replace(self, tail=release) if tails else replace(self, head=release)

    def combined(self, other: Costs) -> Costs:
        """Per op the larger head and the larger tail of two raises of the same costs (each holds)."""
        return replace(self, head=[max(a, b) for a, b in zip(self.head, other.head)],
                       tail=[max(a, b) for a, b in zip(self.tail, other.tail)])


def _cheapest_delays(problem: Problem) -> list[float]:
    """Per edge, the least delay over device pairs a != b its groups may use; inf if none."""
    cache: dict[tuple[int, int, int], float] = {}
    out = []
    for e in problem.edges:
        gu, gv = problem.group[e.src], problem.group[e.dst]
        if gu == gv:
            out.append(math.inf)
            continue
        key = (e.size_bytes, gu if len(problem.allowed[gu]) < problem.n_devices else -1,
               gv if len(problem.allowed[gv]) < problem.n_devices else -1)
        if key not in cache:
            targets = np.array(problem.allowed[gv], dtype=np.intp)
            least = math.inf
            for a in problem.allowed[gu]:
                row = problem.router.delays_ms(e.size_bytes, problem.devices[a])[targets[targets != a]]
                if row.size:
                    least = min(least, float(row.min()))
            cache[key] = least
        out.append(cache[key])
    return out


def _apart_edges(problem: Problem) -> list[bool]:
    """Per edge, whether memory or pins keep its ends' groups on different devices in every
    valid placement (then its tensor always crosses: GPT per head on a memory-tight DGX-1,
    the language-model head's 412 MB of logits to the loss)."""
    cache: dict[tuple[int, int], bool] = {}
    out = []
    for e in problem.edges:
        key = (problem.group[e.src], problem.group[e.dst])
        if key not in cache:
            cache[key] = key[0] != key[1] and not problem.fit_together(set(key))
        out.append(cache[key])
    return out


def _one_machine_ms(jobs: list[tuple[float, float]]) -> float:
    """Completion of (release, duration) jobs on one machine: earliest release first is optimal."""
    t = 0.0
    for r, d in sorted(jobs):
        t = max(t, r) + d
    return t


def _releases(problem: Problem, fastest: list[float], delay: list[float], apart: list[bool], reverse: bool,
              raise_at: RaiseRelease | None = None) -> list[float]:
    """Per op, a lower bound on its earliest start (or, reversed, on the time from its end
    to the makespan) that charges communication where parallelism needs it.

    `raise_at(v, release)`, when given, is asked for a better bound on op v once the
    releases of every op before v (in the pass's order) are final; what it returns must
    hold for every valid placement (placer.cone_bounds proves it), and it flows on to
    v's descendants.

    The inputs of v come from colocation groups. A group is local (on v's device) or
    remote. Local inputs run one at a time on v's device before v. A remote group's
    inputs run one at a time on its own device and then pay at least the cheapest delay,
    so they arrive no earlier than max(each input's finish + its delay, one-machine
    completion of all of them + their least delay). With S the local groups,
    start(v) >= max(latest remote arrival, one-machine completion of the local inputs);
    making a group local only adds local work, so the best S is always the groups with
    the latest arrivals, and |S| = 0..#groups is tried. v's own group is always local; a
    group `apart` from it always remote.
    """
    n = problem.n_ops
    release = [0.0] * n
    for v in (range(n - 1, -1, -1) if reverse else range(n)):
        local: dict[int, None] = {}
        remote: dict[int, dict[int, float]] = {}
        forced: set[int] = set()
        for i in (problem.succs[v] if reverse else problem.preds[v]):
            e = problem.edges[i]
            u = e.dst if reverse else e.src
            if delay[i] == math.inf:
                local[u] = None
            else:
                ops = remote.setdefault(problem.group[u], {})
                ops[u] = max(ops.get(u, 0.0), delay[i])
                if apart[i]:
                    forced.add(problem.group[u])
        if not local and not remote:
            continue
        release[v] = _join_release(release, fastest, local, remote, forced)
        if raise_at is not None:
            release[v] = max(release[v], raise_at(v, release))
    return release


def _join_release(release: list[float], fastest: list[float], local: dict[int, None],
                  remote: dict[int, dict[int, float]], forced: set[int]) -> float:
    """`_releases` at one op: its local inputs and its remote groups' inputs (op -> delay);
    the groups in `forced` are never made local."""
    units = []
    floor = 0.0  # the latest arrival of a group that must stay remote
    for g, ops in remote.items():
        jobs = [(release[u], fastest[u]) for u in ops]
        arrive = max(max(release[u] + fastest[u] + d for u, d in ops.items()),
                     _one_machine_ms(jobs) + min(ops.values()))
        if g in forced:
            floor = max(floor, arrive)
        else:
            units.append((arrive, jobs))
    units.sort(key=lambda x: -x[0])
    jobs = [(release[u], fastest[u]) for u in local]
    best = math.inf
    for k in range(len(units) + 1):
        latest_remote = units[k][0] if k < len(units) else 0.0
        best = min(best, max(floor, latest_remote, _one_machine_ms(jobs)))
        if k < len(units):
            jobs += units[k][1]
    return best


def _longest_path_ms(problem: Problem, time_ms: Sequence[float]) -> float:
    finish = [0.0] * problem.n_ops
    for k in range(problem.n_ops):
        finish[k] = max((finish[problem.edges[i].src] for i in problem.preds[k]), default=0.0) + time_ms[k]
    return max(finish, default=0.0)


def longest_path(problem: Problem, time_ms: Sequence[float], skip: Sequence[bool] | None = None,
                 by_count: bool = False) -> list[int]:
    """The ops of one longest path with these op times (no communication), in order, among
    the ops `skip` does not mark. With `by_count`, ties go to the path of more ops: one that
    passes every time cut (a path that jumps over a cut by an edge has fewer)."""
    length = [(0.0, 0)] * problem.n_ops  # (time, ops) of the longest path ending at each op
    via = [-1] * problem.n_ops
    for k in range(problem.n_ops):
        if skip is not None and skip[k]:
            continue
        best = (0.0, 0)
        for i in problem.preds[k]:
            u = problem.edges[i].src
            key = length[u] if by_count else (length[u][0], 0)
            if key > best and (skip is None or not skip[u]):
                best, via[k] = key, u
        length[k] = (best[0] + time_ms[k], length[via[k]][1] + 1 if via[k] >= 0 else 1)
    kept = [k for k in range(problem.n_ops) if skip is None or not skip[k]]
    if not kept:
        return []
    k = max(kept, key=length.__getitem__ if by_count else lambda k: length[k][0])
    path = []
    while k >= 0:
        path.append(k)
        k = via[k]
    return path[::-1]


def _group_work_ms(problem: Problem, g: int) -> float:
    return min(sum(problem.time_ms[k][d] for k in problem.groups[g]) for d in problem.allowed[g])


# --- loads ------------------------------------------------------------------------------


def _pinned_ms(problem: Problem) -> float:
    """The load of the groups pinned to one device."""
    pinned = [0.0] * problem.n_devices
    for g, allowed in enumerate(problem.allowed):
        if len(allowed) == 1:
            pinned[allowed[0]] += sum(problem.time_ms[k][allowed[0]] for k in problem.groups[g])
    return max(pinned)


def _group_packing_ms(problem: Problem) -> float:
    """Groups are indivisible jobs on m devices: among the k*m + 1 largest, some device gets
    k + 1, so it carries at least the k + 1 smallest of them."""
    m = problem.n_devices
    w = sorted((_group_work_ms(problem, g) for g in range(len(problem.groups))), reverse=True)
    best = 0.0
    k = 1
    while k * m < len(w):
        best = max(best, sum(w[k * m - k: k * m + 1]))
        k += 1
    return best


def _preemptive_one_machine_ms(jobs: list[tuple[float, float, float]]) -> float:
    """Jackson's preemptive schedule for (head, duration, tail) jobs: the optimum of the
    preemptive one-machine problem, so a lower bound on the non-preemptive one."""
    jobs = sorted(jobs)
    heap: list[tuple[float, float]] = []
    t = best = 0.0
    i = 0
    while i < len(jobs) or heap:
        if not heap:
            t = max(t, jobs[i][0])
        while i < len(jobs) and jobs[i][0] <= t:
            heapq.heappush(heap, (-jobs[i][2], jobs[i][1]))
            i += 1
        neg_tail, left = heapq.heappop(heap)
        next_release = jobs[i][0] if i < len(jobs) else math.inf
        if t + left <= next_release:
            t += left
            best = max(best, t - neg_tail)
        else:
            heapq.heappush(heap, (neg_tail, left - (next_release - t)))
            t = next_release
    return best


def _group_machine_ms(problem: Problem, c: Costs) -> float:
    """A group's ops share one device: a one-machine problem with the ops' heads and tails,
    at the times of the best device the group may use."""
    best = 0.0
    for g, ops in enumerate(problem.groups):
        if len(ops) < 2:
            continue
        times = {tuple(problem.time_ms[k][d] for k in ops) for d in problem.allowed[g]}
        best = max(best, min(_preemptive_one_machine_ms([(c.head[k], t, c.tail[k]) for k, t in zip(ops, ts)])
                             for ts in times))
    return best


# --- paths split into blocks ----------------------------------------------------------------


@dataclass(frozen=True)
class _Path:
    """A path p_0..p_{L-1} with what its splits into blocks need (numpy arrays)."""

    ops: list[int]
    group: np.ndarray       # group of p_i
    prev_same: np.ndarray   # previous position of p_i's group on the path, -1 if none
    next_same: np.ndarray   # next position of p_i's group on the path, L if none
    memory: np.ndarray      # memory of p_i's group
    devices: np.ndarray     # bit mask of the devices p_i's group may use (0: not tracked)

    @classmethod
    def of(cls, problem: Problem, ops: list[int]) -> _Path:
        n = len(ops)
        group = np.array([problem.group[k] for k in ops], dtype=np.int64)
        prev_same = np.full(n, -1, dtype=np.int64)
        next_same = np.full(n, n, dtype=np.int64)
        last: dict[int, int] = {}
        for i, g in enumerate(group.tolist()):
            if g in last:
                prev_same[i] = last[g]
                next_same[last[g]] = i
            last[g] = i
        memory = np.array([problem.group_memory_bytes(g) for g in group.tolist()], dtype=float)
        track = problem.n_devices <= 62
        devices = np.array([sum(1 << d for d in problem.allowed[g]) if track else 0 for g in group.tolist()],
                           dtype=np.int64)
        return cls(ops, group, prev_same, next_same, memory, devices)

    def blocks_from(self, i: int, capacity: float) -> tuple[np.ndarray, np.ndarray]:
        """Masks over k >= i: may p_i..p_k form a block, i.e. share a device while p_{i-1}
        and p_{k+1} sit elsewhere? Their groups may not recur inside it, and the block's
        groups must fit on one device they may all use. Second mask: the conditions that,
        once broken, stay broken for every longer block."""
        n = len(self.ops)
        ks = np.arange(i, n)
        first = self.prev_same[i:] < i
        lasting = np.cumsum(np.where(first, self.memory[i:], 0.0)) <= capacity
        lasting &= np.bitwise_and.accumulate(np.where(self.devices[i:] == 0, -1, self.devices[i:])) != 0
        if i > 0:
            lasting &= ks < self.next_same[i - 1]
        following = np.append(self.prev_same[i + 1:], -1)
        return lasting & (following < i), lasting


def _largest_capacity(problem: Problem) -> float:
    return max(math.inf if c is None else float(c) for c in problem.capacity_bytes)


def _edge_delay(problem: Problem, c: Costs, u: int, v: int) -> float:
    """Least delay u -> v when the two sit on different devices (0 if there is no edge)."""
    return max((c.delay[i] for i in problem.edges_between(u, v)), default=0.0)


def _last_path_ancestor(problem: Problem, position: dict[int, int]) -> list[int]:
    """Per op x, the last path position i with p_i a strict ancestor of x (-1 if none).
    On a path, p_j is an ancestor of x exactly when j <= that position."""
    last = [-1] * problem.n_ops
    for x in range(problem.n_ops):
        for i in problem.preds[x]:
            u = problem.edges[i].src
            last[x] = max(last[x], last[u], position.get(u, -1))
    return last


def _first_path_descendant(problem: Problem, position: dict[int, int], length: int | None = None) -> list[int]:
    """Per op x, the first path position i with p_i a strict descendant of x (the path's
    length, or `length` for a chain with empty positions, if none); the mirror of
    `_last_path_ancestor`."""
    first = [len(position) if length is None else length] * problem.n_ops
    for x in range(problem.n_ops - 1, -1, -1):  # ops are indexed in topological order
        for i in problem.succs[x]:
            y = problem.edges[i].dst
            first[x] = min(first[x], position.get(y, first[y]))
    return first


def _path_blocks_ms(problem: Problem, c: Costs, ops: list[int]) -> float:
    """Split the critical path into blocks, the maximal runs of path ops on one device.

    The device D of a block p_i..p_k runs every op of the block's groups, and those that
    descend from p_{i-1} only after p_{i-1} ends; between blocks the path pays the edge's
    cheapest delay. Off-path ops of the block's groups that descend from p_{i-1} and lead
    to p_k run on D inside the block, between the end of p_{i-1} and the start of p_k (a
    residual block's shortcut copy that shares a group with the path: on D either it waits
    for the path or the path leaves D). Those that descend from p_j may run while p_{j+1}
    waits for its transfer, those that descend from a path op of the block only after it
    starts. So with V(j) a bound on (makespan - end(p_j)) when p_{j+1} starts a new block:
    V(j) = max(tail(p_j), min over blocks p_{j+1}..p_k of max(max(delay, ops from p_j) +
    ops from the block + path ops of the block + V(k), work D must do after end(p_j))).
    The first block either is the whole path (one device runs all its groups) or is
    followed by V; it also runs its groups' ops that lead to p_k before p_k.
    Blocks whose groups recur in a neighbour, or that fit on no device, are impossible.
    Reusing a device for a later block is not charged: that only weakens the bound.
    A block also lasts at least the delay into it, its path ops and what the side ops
    between two of its path ops add (`_side_ms`), whichever groups they are in: the larger
    of the two charges holds (zoo ResNet-50's shortcut branches: 28.63 -> 29.85 ms).
    """
    p = _Path.of(problem, ops)
    n = len(ops)
    position = {k: i for i, k in enumerate(ops)}
    last = _last_path_ancestor(problem, position)
    by_last: dict[int, list[int]] = {}
    for x, j in enumerate(last):
        by_last.setdefault(j, []).append(x)
    fastest = np.array([c.fastest[k] for k in ops])
    chain = np.concatenate([[0.0], np.cumsum(fastest)])  # chain[b + 1] - chain[a]: p_a..p_b
    delay = np.array([_edge_delay(problem, c, ops[i], ops[i + 1]) for i in range(n - 1)] + [0.0])
    # two charges of the boundaries, each a bound: as they come, and deferred (see
    # _switches_deferred), which is higher on training graphs but not always
    moved, deferred = (np.stack([np.zeros(n), x]) for x in _switches_deferred(p, delay))
    capacity = _largest_capacity(problem)
    after = np.zeros(len(problem.groups))  # per group: work of its ops that descend from p_j
    for x in by_last.get(n - 1, []):
        after[problem.group[x]] += c.fastest[x]
    mates = _Sandwiched.of(problem, c, position, last)
    side = _side_ms(problem, c, ops, set(ops))  # side[i, k]: what the side ops add to block p_i..p_k
    first_on_path = np.full(len(problem.groups), n, dtype=np.int64)  # per group: its first position > j
    first_on_path[p.group[n - 1]] = n - 1
    value = np.zeros((2, n))
    value[:, n - 1] = c.tail[ops[-1]]
    for j in range(n - 2, -1, -1):
        for x in by_last.get(j, []):
            after[problem.group[x]] += c.fastest[x]
        first_on_path[p.group[j + 1]] = j + 1
        ks = np.arange(j + 1, n)
        first = p.prev_same[j + 1:] <= j
        work_after = np.cumsum(np.where(first, after[p.group[j + 1:]], 0.0))
        at_j, after_j = mates.work_in_blocks(j, first_on_path)
        inside = (np.maximum(np.maximum(delay[j], at_j) + after_j, delay[j] + side[j + 1, j + 1:])
                  - moved[:, j:j + 1] + deferred[:, j:j + 1])
        options = np.maximum(inside + chain[ks + 1] - chain[j + 1] + value[:, ks], work_after)
        options[:, ~p.blocks_from(j + 1, capacity)[0]] = np.inf
        value[:, j] = np.maximum(options.min(axis=1), c.tail[ops[j]])
    first_on_path[p.group[0]] = 0
    group_work = np.array([_group_work_ms(problem, g) for g in range(len(problem.groups))])
    total = np.cumsum(np.where(p.prev_same < 0, group_work[p.group], 0.0))
    reach = np.maximum(c.head[ops[0]] + chain[1:], np.array([c.head[k] for k in ops]) + fastest)
    at_start, after_start = mates.work_in_blocks(-1, first_on_path)
    reach = np.maximum(reach, np.maximum(c.head[ops[0]], at_start) + chain[1:] + after_start)
    reach = np.maximum(reach, c.head[ops[0]] + chain[1:] + side[0])
    options = np.maximum(reach + value, total)
    options[:, ~p.blocks_from(0, capacity)[0]] = np.inf
    return float(options.min(axis=1).max())


def _switches_deferred(p: _Path, delay: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The delays of the path's block boundaries moved to the last boundary between the
    same two groups: (what each boundary gives away, what it takes on).

    A boundary between p_j and p_{j+1} is a change of device, so between their groups;
    then every boundary between those two groups is one (a layer's forward and backward
    ops sit at both ends of a training graph's path, in opposite order). A block entered
    at boundary j lasts its path ops plus max(delay, ops inside it); an earlier boundary
    of the pair keeps only max(delay, ops inside) - delay and the last one adds the
    delays it was given. Where all of them are boundaries, the sum is unchanged; where
    the last one is not, neither is any other, so the moved delays are never lost."""
    moved, deferred = np.zeros(len(delay)), np.zeros(len(delay))
    last: dict[tuple[int, int], int] = {}
    for j in range(len(delay) - 1):
        a, b = int(p.group[j]), int(p.group[j + 1])
        if a == b or not math.isfinite(delay[j]):
            continue
        pair = (min(a, b), max(a, b))
        if pair in last:
            earlier = last[pair]
            moved[earlier] = delay[earlier]
            deferred[j] = deferred[earlier] + delay[earlier]
            deferred[earlier] = 0.0
        last[pair] = j
    return moved, deferred


@dataclass(frozen=True)
class _Sandwiched:
    """Off-path ops of the path's groups that lead to a path op: each descends from p_last
    (-1: from none) and is an ancestor of p_next. Sorted by `last`, decreasing, so that
    those descending from p_j are a prefix."""

    last: np.ndarray
    next: np.ndarray
    group: np.ndarray
    work: np.ndarray

    path_length: int

    @classmethod
    def of(cls, problem: Problem, c: Costs, position: dict[int, int], last: list[int]) -> _Sandwiched:
        n = len(position)
        following = _first_path_descendant(problem, position)
        on_path_groups = {problem.group[k] for k in position}
        ops = [x for x in range(problem.n_ops) if x not in position and c.fastest[x] > 0
               and problem.group[x] in on_path_groups and following[x] < n]
        ops.sort(key=lambda x: -last[x])
        return cls(np.array([last[x] for x in ops], dtype=np.int64),
                   np.array([following[x] for x in ops], dtype=np.int64),
                   np.array([problem.group[x] for x in ops], dtype=np.int64),
                   np.array([c.fastest[x] for x in ops]), n)

    def work_in_blocks(self, j: int, first_on_path: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per k > j, the work of these ops that the device of a block p_{j+1}..p_k must run
        inside it (their group is on the block's device, and they start after p_j ends and
        end before p_k starts), split into those that descend from p_j (they may run while
        the path waits for p_j's transfer) and those that descend from a path op of the
        block (they run after p_{j+1} starts: on top of any wait)."""
        n = self.path_length
        later = int(np.searchsorted(-self.last, -j, side="left"))  # those with last > j
        count = int(np.searchsorted(-self.last, -j, side="right"))  # those with last >= j
        enters = np.maximum(self.next[:count], first_on_path[self.group[:count]])
        split = [np.cumsum(np.bincount(enters[a:b], weights=self.work[a:b], minlength=n + 1)[j + 1:n])
                 for a, b in ((later, count), (0, later))]
        return split[0], split[1]


# --- switches against the ops inside the path ---------------------------------------------


@dataclass(frozen=True)
class SwitchCover:
    """The switch cover's bound and its best answer: the pairs of the critical path's
    neighbouring groups it keeps apart (on different devices) and together."""

    bound_ms: float
    apart: list[tuple[int, int]]
    together: list[tuple[int, int]]


def _switch_cover(problem: Problem, c: Costs, ops: list[int]) -> SwitchCover:
    """head + path + tail + the cheapest way to pay for the path's groups: switches or the
    ops their devices run inside the path.

    If two groups sit on different devices, the path switches device (and pays the edge's
    cheapest delay) at every place it passes between them: in a training graph a layer's
    forward and its backward both. An off-path op s of a path group that descends from p_a
    and leads to p_b runs inside the path (between p_a's end and p_b's start, on the path's
    device) unless the path switches device between p_a and p_b, or both between them and
    the nearest path op of s's group before and between them and the nearest one after
    (else that op, hence s, is on the path's device).
    Inside a stretch without a switch those ops run one after another beside the path, so
    the path's gaps hold the switches' delays plus the work of every op not excused by a
    switch. Which pairs of groups differ is the cover's choice (with the triangle rule: a
    group apart from one of two groups that share a device is apart from the other); its
    optimum, or CP-SAT's proven bound on it, is a bound. Pins that keep two groups apart or
    together fix their pair. Device count and memory are dropped: that only weakens it.
    """
    n = len(ops)
    base = c.head[ops[0]] + sum(c.fastest[k] for k in ops) + c.tail[ops[-1]]
    position = {k: i for i, k in enumerate(ops)}
    mates = _Sandwiched.of(problem, c, position, _last_path_ancestor(problem, position))
    spans = _excusing_spans(problem, ops, mates)
    if not spans:
        return SwitchCover(base, [], [])
    switch_ms: dict[tuple[int, int], float] = {}  # pair of groups -> delays of its switches
    pair_at: list[tuple[int, int] | None] = [None] * (n - 1)
    for j in range(n - 1):
        a, b = problem.group[ops[j]], problem.group[ops[j + 1]]
        if a != b:
            pair_at[j] = (min(a, b), max(a, b))
            switch_ms[pair_at[j]] = switch_ms.get(pair_at[j], 0.0) + _edge_delay(problem, c, ops[j], ops[j + 1])
    model = cp_model.CpModel()
    apart = {pair: model.new_bool_var(f"apart{pair}") for pair in switch_ms}
    for (a, b), var in apart.items():
        allowed_a, allowed_b = set(problem.allowed[a]), set(problem.allowed[b])
        if not allowed_a & allowed_b:
            model.add(var == 1)
        elif not math.isfinite(switch_ms[a, b]):  # no two devices they may use: always together
            model.add(var == 0)
    _add_triangles(model, apart)
    cost = [math.floor(ms * _COVER_TICKS_PER_MS) * apart[pair] for pair, ms in switch_ms.items() if math.isfinite(ms)]
    excused: dict[frozenset[frozenset[tuple[int, int]]], float] = {}  # what excuses ops -> their work
    for work, stretches in spans:
        need = frozenset(frozenset(pair_at[j] for j in range(first, last) if pair_at[j] is not None)
                         for first, last in stretches)
        if all(switch_ms[pair] * _COVER_TICKS_PER_MS >= 1 for pairs in need for pair in pairs):
            excused[need] = excused.get(need, 0.0) + work  # (a free switch excuses at no cost: dropped)
    for need, work in excused.items():
        paid = model.new_bool_var("")
        for pairs in need:  # excused only with a switch in every stretch
            model.add_bool_or([paid, *(apart[pair] for pair in pairs)])
        cost.append(math.floor(work * _COVER_TICKS_PER_MS) * paid)
    model.minimize(sum(cost))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1  # with a deterministic limit: the same bound on any load
    solver.parameters.max_deterministic_time = _COVER_WORK
    solver.parameters.symmetry_level = 0
    solver.parameters.linearization_level = 2  # the LP closes set covers at once; search alone does not
    status = solver.solve(model)
    bound_ms = base + max(0.0, solver.best_objective_bound) / _COVER_TICKS_PER_MS
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return SwitchCover(bound_ms, [], [])
    chosen = {pair: bool(solver.value(var)) for pair, var in apart.items()}
    return SwitchCover(bound_ms, [pair for pair, a in chosen.items() if a], [pair for pair, a in chosen.items() if not a])


def _excusing_spans(problem: Problem, ops: list[int], mates: _Sandwiched
                    ) -> list[tuple[float, list[tuple[int, int]]]]:
    """Per op of `mates` that descends from a path op, its work and the stretches of path
    positions [first, last) that must each hold a switch to excuse it from running inside
    the path: from the op's last path ancestor to its first path descendant when a path
    op of its group lies between; else that stretch extended to the nearest path op of its
    group before it, and the one extended to the nearest after it (with no switch in
    either, the group is on the path's device)."""
    on_path: dict[int, list[int]] = {}
    for i, k in enumerate(ops):
        on_path.setdefault(problem.group[k], []).append(i)
    spans = []
    for lo, hi, g, work in zip(mates.last.tolist(), mates.next.tolist(), mates.group.tolist(), mates.work.tolist()):
        if lo < 0:
            continue
        at = on_path[g]
        i = bisect.bisect_left(at, lo)
        if i < len(at) and at[i] <= hi:
            spans.append((work, [(lo, hi)]))
        else:
            before = [(at[i - 1], hi)] if i > 0 else []
            spans.append((work, before + ([(lo, at[i])] if i < len(at) else [])))
    return spans


def _add_triangles(model: cp_model.CpModel, apart: dict[tuple[int, int], cp_model.IntVar]) -> None:
    """For groups a, b, z pairwise in `apart`: a apart from b means z is apart from one of them."""
    near: dict[int, set[int]] = {}
    for a, b in apart:
        near.setdefault(a, set()).add(b)
        near.setdefault(b, set()).add(a)
    for a, b in apart:
        for z in near[a] & near[b]:
            if z > b:
                ab, az, bz = apart[a, b], apart[min(a, z), max(a, z)], apart[min(b, z), max(b, z)]
                model.add_bool_or([ab.Not(), az, bz])
                model.add_bool_or([az.Not(), ab, bz])
                model.add_bool_or([bz.Not(), ab, az])


# --- two chains through the same groups ---------------------------------------------------


def _paired_chains_ms(problem: Problem, c: Costs, known_ms: float) -> float:
    """The best paired-chains bound (see `_Pair.bound_ms`) over two candidate paths: the
    critical path, and the longest path when each op also counts its heaviest mate."""
    mate = _heaviest_mates(problem, c)
    if all(m < 0 for m in mate):
        return 0.0
    merged = [c.fastest[k] + (c.fastest[mate[k]] if mate[k] >= 0 else 0.0) for k in range(problem.n_ops)]
    best = 0.0
    for weights in (c.fastest, merged):
        pair = _Pair.of(problem, c, longest_path(problem, weights), mate)
        if pair is None:
            continue
        for slack in _SLACKS:  # a low target prunes most states; raise it while it binds
            target = max(known_ms, best) * (1 + slack)
            value = pair.bound_ms(target)
            if value < target:
                break
        best = max(best, value)
        # the programme's value falls as its target rises (fewer states pruned, more merged):
        # between the value and the target that did not bind, a lower target may still bind
        low, high = best, target
        for _ in range(_BISECTIONS if high > low else 0):
            middle = (low + high) / 2
            value = pair.bound_ms(middle)
            best = max(best, value)
            low, high = (middle, high) if value >= middle else (low, middle)
    return best


_SLACKS = (0.02, 0.1, 0.5)
_BISECTIONS = 8  # targets tried between them (msr Inception-V3 on the DGX-1: 257.11 -> 258.39 ms)


def _heaviest_mates(problem: Problem, c: Costs) -> list[int]:
    """Per op, the longest other op of its group, -1 when alone."""
    mate = [-1] * problem.n_ops
    for ops in problem.groups:
        if len(ops) < 2:
            continue
        ranked = sorted(ops, key=lambda x: (-c.fastest[x], x))
        for k in ops:
            mate[k] = ranked[1] if k == ranked[0] else ranked[0]
    return mate


def _mate_chain(problem: Problem, ops: list[int], mate: list[int]) -> list[int]:
    """Mates of the path's ops that form a chain in the path's order (each one descends
    from the previous kept one), -1 where none is kept. Mates on the path are dropped."""
    on_path = set(ops)
    kept = [-1] * len(ops)
    last = -1
    for i, k in enumerate(ops):
        m = mate[k]
        if m < 0 or m in on_path or (last >= 0 and not problem.descendants[last] >> m & 1):
            continue
        kept[i] = last = m
    return kept


@dataclass(frozen=True)
class _Pair:
    """Two chains through the same groups: a path p_0..p_{L-1} (job A) and a chain of
    mates m_i in p_i's group (job B), with what `bound_ms` needs as numpy arrays."""

    work_a: np.ndarray    # prefix sums of the durations, L + 1 entries
    work_b: np.ndarray
    head_a: np.ndarray    # head of the op at position i (0 where B has no op)
    head_b: np.ndarray
    delay_a: np.ndarray   # into position i when a block starts there
    delay_b: np.ndarray
    tail_a: float         # tail of each job's last op
    tail_b: float
    feasible: np.ndarray  # feasible[i, k]: positions i..k may form a block
    lasting: np.ndarray   # lasting[i]: the first block end k at which i..k and every longer block fail
    side_a: np.ndarray    # side_a[i, k]: what job A's side ops add to its time in block i..k (`_side_ms`)
    side_b: np.ndarray

    @classmethod
    def of(cls, problem: Problem, c: Costs, ops: list[int], mate: list[int]) -> _Pair | None:
        if len(ops) > _MAX_PAIRED_PATH:
            return None
        chain = _mate_chain(problem, ops, mate)
        paired_ms = sum(c.fastest[m] for m in chain if m >= 0)
        if paired_ms <= _MIN_PAIRED_SHARE * sum(c.fastest[k] for k in ops):
            return None
        n = len(ops)
        path = _Path.of(problem, ops)
        capacity = _largest_capacity(problem)
        feasible = np.zeros((n, n), dtype=bool)
        lasting = np.full(n, n, dtype=np.int64)
        for i in range(n):
            feasible[i, i:], fits = path.blocks_from(i, capacity)
            broken = np.flatnonzero(~fits)
            lasting[i] = i + broken[0] if len(broken) else n
        # a block starting at i follows one that ends at i - 1: each chain pays its edge's
        # cheapest delay (for B only from a mate at i - 1, the one surely next door)
        delay_a = [0.0] + [_edge_delay(problem, c, ops[i - 1], ops[i]) for i in range(1, n)]
        delay_b = [0.0] + [_edge_delay(problem, c, chain[i - 1], chain[i]) if min(chain[i - 1], chain[i]) >= 0
                           else 0.0 for i in range(1, n)]
        last_mate = [m for m in chain if m >= 0][-1]
        members = set(ops) | {m for m in chain if m >= 0}
        return cls(
            work_a=np.concatenate([[0.0], np.cumsum([c.fastest[k] for k in ops])]),
            work_b=np.concatenate([[0.0], np.cumsum([c.fastest[m] if m >= 0 else 0.0 for m in chain])]),
            head_a=np.array([c.head[k] for k in ops]),
            head_b=np.array([c.head[m] if m >= 0 else 0.0 for m in chain]),
            delay_a=np.nan_to_num(np.array(delay_a), posinf=0.0),
            delay_b=np.nan_to_num(np.array(delay_b), posinf=0.0),
            tail_a=c.tail[ops[-1]], tail_b=c.tail[last_mate], feasible=feasible, lasting=lasting,
            side_a=_side_ms(problem, c, ops, members), side_b=_side_ms(problem, c, chain, members),
        )

    def bound_ms(self, target_ms: float) -> float:
        """min(target, the two-job shop bound); states that cannot end below the target are
        dropped, which is what keeps long chains fast.

        Relax everything but the two chains: a two-job shop whose machines are the blocks of
        consecutive positions on one device (see `_path_blocks_ms`); between blocks each
        chain pays its edge's cheapest delay. A block entered at eA and eB with work wA and
        wB is left no earlier than eA + wA and eB + wB, and as one device does both, the
        later leaves no earlier than their one-machine completion (preemption allowed,
        which only helps). Of that L-shaped region of exit pairs only its two corners are
        kept. A dynamic programme over block ends keeps a Pareto front of exit pairs; when
        the front grows, neighbours merge into their componentwise minimum (a point below
        them: still valid). Entries are at least the ops' heads, the end adds the tails.
        A state's exits plus the rest of each chain plus its tail only grow as its block
        grows, so once both corners reach the target the state is dropped; every
        completion through it would end at or above the target, hence the min.
        A job's exit also counts what its side ops add to its stay (`_side_ms`).
        """
        n = len(self.head_a)
        wa, wb = self.work_a, self.work_b
        rest_a, rest_b = wa[-1] + self.tail_a, wb[-1] + self.tail_b
        start = np.zeros(1, dtype=np.int64)  # pool of blocks being grown: start, entries
        ea = np.array([self.head_a[0]])
        eb = np.array([self.head_b[0]])
        front = max(4, min(_MAX_FRONT, 4000 // n))
        visited = 0
        for end in range(1, n + 1):
            visited += len(start)
            if visited > _MAX_STATES:
                return 0.0
            ok = self.feasible[start, end - 1]
            s, a, b = start[ok], ea[ok], eb[ok]
            block_a, block_b = wa[end] - wa[s], wb[end] - wb[s]
            both = np.where(a <= b, np.maximum(a + block_a + block_b, b + block_b),
                            np.maximum(b + block_a + block_b, a + block_a))
            # each job stays in the block at least its work plus what its side ops add; the
            # device's one-machine completion counts the work only (the side ops may run elsewhere)
            span_a, span_b = block_a + self.side_a[s, end - 1], block_b + self.side_b[s, end - 1]
            xa = np.concatenate([a + span_a, np.maximum(both, a + span_a)])
            xb = np.concatenate([np.maximum(both, b + span_b), b + span_b])
            if end == n:
                return float(min(target_ms, np.min(np.maximum(xa + self.tail_a, xb + self.tail_b), initial=np.inf)))
            # drop states that cannot end below the target, then add those entering the next block
            a_done, b_done = ea + wa[-1] - wa[start], eb + wb[-1] - wb[start]
            block_a, block_b = wa[end] - wa[start], wb[end] - wb[start]
            both = np.where(ea <= eb, np.maximum(ea + block_a + block_b, eb + block_b),
                            np.maximum(eb + block_a + block_b, ea + block_a))
            a_first = np.maximum(a_done + self.tail_a, np.maximum(both + rest_b - wb[end], b_done + self.tail_b))
            b_first = np.maximum(np.maximum(both + rest_a - wa[end], a_done + self.tail_a), b_done + self.tail_b)
            keep = (np.minimum(a_first, b_first) < target_ms) & (self.lasting[start] > end)
            xa, xb = _pareto(*_below(xa, xb, rest_a - wa[end], rest_b - wb[end], target_ms), front)
            start = np.concatenate([start[keep], np.full(len(xa), end, dtype=np.int64)])
            ea = np.concatenate([ea[keep], np.maximum(xa + self.delay_a[end], self.head_a[end])])
            eb = np.concatenate([eb[keep], np.maximum(xb + self.delay_b[end], self.head_b[end])])
        return target_ms


def _side_ms(problem: Problem, c: Costs, chain: list[int], members: set[int]) -> np.ndarray:
    """Per block i..k of a chain (ops by position, -1 where none), a lower bound on the time
    its side ops add to the chain's stay in the block; zeros for chains longer than
    _MAX_SIDE_CHAIN.

    A side op x (on neither chain) that descends from the chain's op at position l and leads
    to the one at f, both in the block, runs on the block's device D or elsewhere. On D it
    runs between them, so the chain stays there its work plus x's time. Elsewhere, the
    tensors cross twice: the op at f starts no earlier than the end of the one at l plus
    the least delays in and out (`_side_routes`) and x's time, and past the chain's own work
    between them that is a wait, e(x). With the side ops kept on D, S, and the largest wait
    of those sent away, t, the stay grows by at least max(sum of S's times, t), and every op
    with e(x) > t is in S. So for levels 0 = L_0 < L_1 < ... the stay grows by at least
    min over j of max(L_j, the time of the side ops with e(x) >= L_{j+1}): the ResNet
    shortcut branches of msr-fiddle's layer graphs, which run beside a block at the cost of
    two transfers of a 200 MB activation or inside it."""
    n = len(chain)
    zeros = np.broadcast_to(0.0, (n, n))  # (read-only: no table allocated)
    if n > _MAX_SIDE_CHAIN:
        return zeros
    position = {k: i for i, k in enumerate(chain) if k >= 0}
    before, wait_in = _side_routes(problem, c, chain, position, members, reverse=False)
    after, wait_out = _side_routes(problem, c, chain, position, members, reverse=True)
    work = np.concatenate([[0.0], np.cumsum([c.fastest[k] if k >= 0 else 0.0 for k in chain])])
    side = [(before[x], after[x], c.fastest[x],
             max(0.0, wait_in[x] + c.fastest[x] + wait_out[x] - (work[after[x]] - work[before[x] + 1])))
            for x in range(problem.n_ops)
            if x not in members and before[x] >= 0 and after[x] < n and c.fastest[x] > 0]
    if not side:
        return zeros
    waits = sorted({e for *_, e in side})
    levels = [0.0] + [w for w in (waits[round(q * (len(waits) - 1) / (_SIDE_LEVELS - 1))]
                                  for q in range(_SIDE_LEVELS)) if w > 0]
    levels = sorted(set(levels)) + [math.inf]
    lo, hi = np.array([x[0] for x in side]), np.array([x[1] for x in side])
    time_ms, wait = np.array([x[2] for x in side]), np.array([x[3] for x in side])
    out = np.full((n, n), math.inf)
    for level, above in itertools.pairwise(levels):
        kept = np.zeros((n, n))
        np.add.at(kept, (lo, hi), np.where(wait >= above, time_ms, 0.0))
        inside = kept[::-1].cumsum(axis=0)[::-1].cumsum(axis=1)  # side ops with lo >= i and hi <= k
        np.minimum(out, np.maximum(level, inside), out=out)
    return out


def _side_routes(problem: Problem, c: Costs, chain: list[int], position: dict[int, int], members: set[int],
                 reverse: bool) -> tuple[list[int], list[float]]:
    """Per op, the last chain position that is a strict ancestor of it (-1 if none) and the
    least time from that op's end to its start when it runs off that op's device; reversed,
    the first position that descends from it (the chain's length if none) and the least time
    from its end to that op's start. Only routes through side ops that share the same chain
    op count (the others: 0): on such a route the tensor crosses off the device on its edge
    out of the chain op or further on."""
    none = len(chain) if reverse else -1
    reach = _first_path_descendant(problem, position, none) if reverse else _last_path_ancestor(problem, position)
    edges = problem.succs if reverse else problem.preds
    wait = [0.0] * problem.n_ops
    for x in (range(problem.n_ops - 1, -1, -1) if reverse else range(problem.n_ops)):  # topological order
        if x in members or reach[x] == none:
            continue
        for i in edges[x]:
            u, delay = problem.edges[i].dst if reverse else problem.edges[i].src, c.delay[i]
            if u == chain[reach[x]]:
                wait[x] = max(wait[x], delay)
            elif u not in members and reach[u] == reach[x]:
                wait[x] = max(wait[x], min(delay, wait[u] + c.fastest[u]))
    return reach, wait


def _below(xa: np.ndarray, xb: np.ndarray, rest_a: float, rest_b: float, target_ms: float
           ) -> tuple[np.ndarray, np.ndarray]:
    """Exit pairs from which the rest of both chains can still end below the target."""
    keep = np.maximum(xa + rest_a, xb + rest_b) < target_ms
    return xa[keep], xb[keep]


def _pareto(xa: np.ndarray, xb: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The minimal points of a set of pairs, at most `size` of them: when more, runs of
    neighbours are replaced by their componentwise minimum (a point below them all)."""
    if not len(xa):
        return xa, xb
    order = np.lexsort((xb, xa))
    xa, xb = xa[order], xb[order]
    keep = xb < np.concatenate([[np.inf], np.minimum.accumulate(xb)[:-1]])
    xa, xb = xa[keep], xb[keep]
    if len(xa) > size:  # runs of equal length along the staircase, so no merge loses much
        along = (xa - xa[0]) + (xb[0] - xb)
        bins = np.minimum((along * (size / along[-1])).astype(np.int64), size - 1)
        cuts = np.flatnonzero(np.diff(bins, prepend=-1))
        xa, xb = np.minimum.reduceat(xa, cuts), np.minimum.reduceat(xb, cuts)
    return xa, xb
