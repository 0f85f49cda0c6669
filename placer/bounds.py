"""Lower bounds on the makespan that hold for every valid placement.

`bound_breakdown` names each bound, `lower_bound_ms` is the largest. The solvers improve
on them with what they prove; a result's `gap` is measured against the best bound known.

Shared ingredients, each a lower bound whatever the placement: an op's fastest time on
a device its group may use; an edge's cheapest delay over device pairs its two groups may
use (no pair: the ends always share a device); per op a head (earliest start) and a tail
(time from its end to the makespan) that charge communication where parallelism needs it.
"""
from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from placer.model import Problem

__all__ = [
    "lower_bound_ms", "bound_breakdown", "critical_path_ms", "communication_bound_ms", "work_bound_ms",
]

_MAX_FRONT = 256  # points kept per state of the paired-chains dynamic programme


def bound_breakdown(problem: Problem) -> dict[str, float]:
    """Every named lower bound (ms); each holds on its own, the largest is the bound."""
    if problem.n_ops == 0:
        return {"critical_path": 0.0}
    c = _Costs.of(problem)
    path = _critical_path(problem, c.fastest)
    named = {
        "critical_path": _longest_path_ms(problem, c.fastest),
        "communication": max(h + p + t for h, p, t in zip(c.head, c.fastest, c.tail)),
        "work": sum(c.fastest) / problem.n_devices,
        "largest_group": max(_group_work_ms(problem, g) for g in range(len(problem.groups))),
        "pinned": _pinned_ms(problem),
        "group_packing": _group_packing_ms(problem),
        "group_machine": _group_machine_ms(problem, c),
        "path_blocks": _path_blocks_ms(problem, c, path),
        "paired_chains": _paired_chains_ms(problem, c),
    }
    return {k: (v if math.isfinite(v) else 0.0) for k, v in named.items()}


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
    c = _Costs.of(problem)
    return max(h + p + t for h, p, t in zip(c.head, c.fastest, c.tail))


# --- shared ingredients ---------------------------------------------------------------


@dataclass(frozen=True)
class _Costs:
    """Per-op fastest times, per-edge cheapest delays, per-op heads and tails."""

    fastest: list[float]
    delay: list[float]  # math.inf: the edge's ends always share a device
    head: list[float]
    tail: list[float]

    @classmethod
    def of(cls, problem: Problem) -> _Costs:
        fastest = [problem.min_time_ms(k) for k in range(problem.n_ops)]
        delay = _cheapest_delays(problem)
        head = _releases(problem, fastest, delay, reverse=False)
        tail = _releases(problem, fastest, delay, reverse=True)
        return cls(fastest, delay, head, tail)


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
            cache[key] = min((problem.delay_ms(e, a, b) for a in problem.allowed[gu]
                              for b in problem.allowed[gv] if a != b), default=math.inf)
        out.append(cache[key])
    return out


def _one_machine_ms(jobs: list[tuple[float, float]]) -> float:
    """Completion of (release, duration) jobs on one machine: earliest release first is optimal."""
    t = 0.0
    for r, d in sorted(jobs):
        t = max(t, r) + d
    return t


def _releases(problem: Problem, fastest: list[float], delay: list[float], reverse: bool) -> list[float]:
    """Per op, a lower bound on its earliest start (or, reversed, on the time from its end
    to the makespan) that charges communication where parallelism needs it.

    The inputs of v come from colocation groups. A group is local (on v's device) or
    remote. Local inputs run one at a time on v's device before v. A remote group's
    inputs run one at a time on its own device and then pay at least the cheapest delay,
    so they arrive no earlier than max(each input's finish + its delay, one-machine
    completion of all of them + their least delay). With S the local groups,
    start(v) >= max(latest remote arrival, one-machine completion of the local inputs);
    making a group local only adds local work, so the best S is always the groups with
    the latest arrivals, and |S| = 0..#groups is tried. v's own group is always local.
    """
    n = problem.n_ops
    release = [0.0] * n
    for v in (range(n - 1, -1, -1) if reverse else range(n)):
        local: dict[int, None] = {}
        remote: dict[int, dict[int, float]] = {}
        for i in (problem.succs[v] if reverse else problem.preds[v]):
            e = problem.edges[i]
            u = e.dst if reverse else e.src
            if delay[i] == math.inf:
                local[u] = None
            else:
                ops = remote.setdefault(problem.group[u], {})
                ops[u] = max(ops.get(u, 0.0), delay[i])
        if not local and not remote:
            continue
        units = []
        for ops in remote.values():
            jobs = [(release[u], fastest[u]) for u in ops]
            arrive = max(max(release[u] + fastest[u] + d for u, d in ops.items()),
                         _one_machine_ms(jobs) + min(ops.values()))
            units.append((arrive, jobs))
        units.sort(key=lambda x: -x[0])
        jobs = [(release[u], fastest[u]) for u in local]
        best = math.inf
        for k in range(len(units) + 1):
            latest_remote = units[k][0] if k < len(units) else 0.0
            best = min(best, max(latest_remote, _one_machine_ms(jobs)))
            if k < len(units):
                jobs += units[k][1]
        release[v] = best
    return release


def _longest_path_ms(problem: Problem, time_ms: Sequence[float]) -> float:
    finish = [0.0] * problem.n_ops
    for k in range(problem.n_ops):
        finish[k] = max((finish[problem.edges[i].src] for i in problem.preds[k]), default=0.0) + time_ms[k]
    return max(finish, default=0.0)


def _critical_path(problem: Problem, time_ms: Sequence[float]) -> list[int]:
    """The ops of one longest path, in order."""
    finish = [0.0] * problem.n_ops
    via = [-1] * problem.n_ops
    for k in range(problem.n_ops):
        for i in problem.preds[k]:
            u = problem.edges[i].src
            if finish[u] > finish[k]:
                finish[k], via[k] = finish[u], u
        finish[k] += time_ms[k]
    k = max(range(problem.n_ops), key=finish.__getitem__)
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


def _group_machine_ms(problem: Problem, c: _Costs) -> float:
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

    def blocks_from(self, i: int, capacity: float) -> np.ndarray:
        """Mask over k >= i: may p_i..p_k form a block, i.e. share a device while p_{i-1} and
        p_{k+1} sit elsewhere? Their groups may not recur inside it, and the block's groups
        must fit on one device they may all use."""
        n = len(self.ops)
        ks = np.arange(i, n)
        first = self.prev_same[i:] < i
        ok = np.cumsum(np.where(first, self.memory[i:], 0.0)) <= capacity
        ok &= np.bitwise_and.accumulate(np.where(self.devices[i:] == 0, -1, self.devices[i:])) != 0
        if i > 0:
            ok &= ks < self.next_same[i - 1]
        following = np.append(self.prev_same[i + 1:], -1)
        ok &= following < i
        return ok


def _largest_capacity(problem: Problem) -> float:
    return max(math.inf if c is None else float(c) for c in problem.capacity_bytes)


def _edge_delay(problem: Problem, c: _Costs, u: int, v: int) -> float:
    """Least delay u -> v when the two sit on different devices (0 if there is no edge)."""
    return max((c.delay[i] for i in problem.succs[u] if problem.edges[i].dst == v), default=0.0)


def _last_path_ancestor(problem: Problem, position: dict[int, int]) -> list[int]:
    """Per op x, the last path position i with p_i a strict ancestor of x (-1 if none).
    On a path, p_j is an ancestor of x exactly when j <= that position."""
    last = [-1] * problem.n_ops
    for x in range(problem.n_ops):
        for i in problem.preds[x]:
            u = problem.edges[i].src
            last[x] = max(last[x], last[u], position.get(u, -1))
    return last


def _path_blocks_ms(problem: Problem, c: _Costs, ops: list[int]) -> float:
    """Split the critical path into blocks, the maximal runs of path ops on one device.

    The device D of a block p_i..p_k runs every op of the block's groups, and those that
    descend from p_{i-1} only after p_{i-1} ends; between blocks the path pays the edge's
    cheapest delay. So with V(j) a bound on (makespan - end(p_j)) when p_{j+1} starts a
    new block: V(j) = max(tail(p_j), min over blocks p_{j+1}..p_k of
    max(delay + ops of the block + V(k), work D must do after end(p_j))). The first block
    either is the whole path (one device runs all its groups) or is followed by V.
    Blocks whose groups recur in a neighbour, or that fit on no device, are impossible.
    Reusing a device for a later block is not charged: that only weakens the bound.
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
    capacity = _largest_capacity(problem)
    after = np.zeros(len(problem.groups))  # per group: work of its ops that descend from p_j
    for x in by_last.get(n - 1, []):
        after[problem.group[x]] += c.fastest[x]
    value = np.zeros(n)
    value[n - 1] = c.tail[ops[-1]]
    for j in range(n - 2, -1, -1):
        for x in by_last.get(j, []):
            after[problem.group[x]] += c.fastest[x]
        ks = np.arange(j + 1, n)
        first = p.prev_same[j + 1:] <= j
        work_after = np.cumsum(np.where(first, after[p.group[j + 1:]], 0.0))
        options = np.maximum(delay[j] + chain[ks + 1] - chain[j + 1] + value[ks], work_after)
        options[~p.blocks_from(j + 1, capacity)] = np.inf
        value[j] = max(options.min(), c.tail[ops[j]])
    ks = np.arange(n)
    group_work = np.array([_group_work_ms(problem, g) for g in range(len(problem.groups))])
    total = np.cumsum(np.where(p.prev_same < 0, group_work[p.group], 0.0))
    reach = np.maximum(c.head[ops[0]] + chain[1:], np.array([c.head[k] for k in ops]) + fastest)
    options = np.maximum(reach + value, total)
    options[~p.blocks_from(0, capacity)] = np.inf
    return float(options.min())


# --- two chains through the same groups ---------------------------------------------------


def _paired_chains_ms(problem: Problem, c: _Costs) -> float:
    """The best paired-chains bound over a few candidate paths (see `_pair_bound_ms`)."""
    mate = _heaviest_mates(problem, c)
    if all(m < 0 for m in mate):
        return 0.0
    merged = [c.fastest[k] + (c.fastest[mate[k]] if mate[k] >= 0 else 0.0) for k in range(problem.n_ops)]
    return max(_pair_bound_ms(problem, c, _critical_path(problem, w), mate) for w in (c.fastest, merged))


def _heaviest_mates(problem: Problem, c: _Costs) -> list[int]:
    """Per op, the longest other op of its group, -1 when alone."""
    mate = [-1] * problem.n_ops
    for ops in problem.groups:
        for k in ops:
            others = [x for x in ops if x != k]
            if others:
                mate[k] = max(others, key=lambda x: (c.fastest[x], -x))
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


def _pair_bound_ms(problem: Problem, c: _Costs, ops: list[int], mate: list[int]) -> float:
    """Two chains through the same groups: a path p_0..p_{L-1} and a chain of mates m_i in
    p_i's group (same device as p_i). Relax everything else away: a two-job shop whose
    machines are the blocks of consecutive path positions on one device (see
    `_path_blocks_ms`); between blocks each chain pays its edge's cheapest delay.

    In a block entered by the chains at eA and eB with work A and B, each leaves no earlier
    than its entry plus its work, and one device does both, so the later one leaves no
    earlier than the one-machine completion (preemption allowed, which only helps). Of
    the exit pairs (xA, xB), only the two corners of that L-shaped region are kept; a
    dynamic programme over block ends keeps a Pareto front of exit pairs, merging
    neighbours into their componentwise minimum when it grows (a lower point: still
    valid). Entries are also at least the ops' heads, and the end adds the tails.
    """
    chain = _mate_chain(problem, ops, mate)
    if all(m < 0 for m in chain):
        return 0.0
    n = len(ops)
    p = _Path.of(problem, ops)
    capacity = _largest_capacity(problem)
    a = np.array([c.fastest[k] for k in ops])
    b = np.array([c.fastest[m] if m >= 0 else 0.0 for m in chain])
    cum_a = np.concatenate([[0.0], np.cumsum(a)])
    cum_b = np.concatenate([[0.0], np.cumsum(b)])
    head_a = np.array([c.head[k] for k in ops])
    head_b = np.array([c.head[m] if m >= 0 else 0.0 for m in chain])
    # delays into position i when a block starts there (mates: only from a mate at i - 1,
    # the one certainly in the neighbouring block)
    delay_a = np.array([0.0] + [_edge_delay(problem, c, ops[i - 1], ops[i]) for i in range(1, n)])
    delay_b = np.array([0.0] + [_edge_delay(problem, c, chain[i - 1], chain[i]) if min(chain[i - 1], chain[i]) >= 0
                                else 0.0 for i in range(1, n)])
    delay_a[~np.isfinite(delay_a)] = 0.0
    delay_b[~np.isfinite(delay_b)] = 0.0
    feasible = np.zeros((n + 1, n), dtype=bool)  # feasible[i, k]: p_i..p_k may form a block
    for i in range(n):
        feasible[i, i:] = p.blocks_from(i, capacity)
    # states: exit pairs after a block that ends at position end - 1; start with "nothing done"
    xa, xb, start = np.array([0.0]), np.array([0.0]), np.array([0], dtype=np.int64)
    front: list[tuple[np.ndarray, np.ndarray]] = []
    for end in range(1, n + 1):
        ok = feasible[start, end - 1]
        i, fa, fb = start[ok], xa[ok], xb[ok]
        ea = np.maximum(fa + np.where(i > 0, delay_a[i], 0.0), head_a[i])
        eb = np.maximum(fb + np.where(i > 0, delay_b[i], 0.0), head_b[i])
        work_a = cum_a[end] - cum_a[i]
        work_b = cum_b[end] - cum_b[i]
        both = np.where(ea <= eb, np.maximum(ea + work_a + work_b, eb + work_b),
                        np.maximum(eb + work_a + work_b, ea + work_a))
        pa = np.concatenate([ea + work_a, np.maximum(both, ea + work_a)])
        pb = np.concatenate([np.maximum(both, eb + work_b), eb + work_b])
        pa, pb = _pareto(pa, pb)
        front.append((pa, pb))
        xa = np.concatenate([xa, pa])
        xb = np.concatenate([xb, pb])
        start = np.concatenate([start, np.full(len(pa), end, dtype=np.int64)])
    last_mate = max(i for i, m in enumerate(chain) if m >= 0)
    fa, fb = front[-1]
    if not len(fa):
        return 0.0
    return float(np.min(np.maximum(fa + c.tail[ops[-1]], fb + c.tail[chain[last_mate]])))


def _pareto(xa: np.ndarray, xb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The minimal points of a set of pairs, at most _MAX_FRONT of them: when more, runs
    of neighbours are replaced by their componentwise minimum (a point below them all)."""
    if not len(xa):
        return xa, xb
    order = np.lexsort((xb, xa))
    xa, xb = xa[order], xb[order]
    keep = xb < np.concatenate([[np.inf], np.minimum.accumulate(xb)[:-1]])
    xa, xb = xa[keep], xb[keep]
    if len(xa) > _MAX_FRONT:
        cuts = np.linspace(0, len(xa), _MAX_FRONT + 1).astype(int)[:-1]
        xa, xb = np.minimum.reduceat(xa, cuts), np.minimum.reduceat(xb, cuts)
    return xa, xb
