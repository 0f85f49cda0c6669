"""Coarsening: contract a big graph into super-ops, solve the small one, expand the answer.

A 2,000-op training step is too big for the exact models, but most of its freedom is
spurious: a chain of ops runs back to back anyway, a tiny element-wise op is not worth
a transfer, the ops of one colocation group share a device anyway. `coarsen` contracts
such ops into *super-ops* until at most `max_ops` remain, `Coarsening.coarse` is an
ordinary `Problem` every algorithm accepts, and `Coarsening.expand` maps its answer back
to every original op, to be re-timed and validated on the original problem.

Contraction rules, by priority (a heap; every merge re-queues the edges it changed):

0. chains: u -> v where u has one successor and v one predecessor;
1. tiny ops: an op lighter than `tiny_fraction` of the mean op, into its only
   predecessor or only successor;
2. groups: two super-ops of one colocation class joined by an edge;
3. the rest: the edge with the most bytes per millisecond of the merged super-op.

Every merge keeps the coarse graph acyclic. Contracting u and v creates a cycle exactly
when a path of two or more edges joins them (a forward op and its backward op, linked
through the rest of the network, are never merged); transitive closures kept as bit
matrices make that test a few bit reads and each merge two vectorised updates. Soft caps
keep super-ops balanced (a super-op at most twice the mean weight of `max_ops` ops, a
colocation class at most one device's fair share of the work); they double whenever
nothing else can merge. Hard limits never relax: pins must intersect and a merged
class's memory must fit in `memory_fraction` of the largest device it may use.

Why an expanded answer is valid: a super-op's members are listed in the original
topological order, so edges inside it go forward; an edge between super-ops is a coarse
edge, which the coarse solution orders. A cycle of edges and device order in the
expanded answer would therefore project onto a cycle of the coarse answer. Colocation
groups and pins hold because every original group lies inside one coarse class, whose
allowed devices are the intersection of its members'; memory per device is unchanged.

The coarse problem charges each coarse edge once, with the summed bytes of the original
edges it stands for (one latency instead of several): its makespan is an estimate. The
reported numbers come from re-timing the expanded answer on the original problem, which
is exact, and can only be shorter than the coarse schedule when the coarse edges are
charged no less than the original ones.
"""
from __future__ import annotations

import heapq
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from placer.errors import InputError, SolutionCheckError
from placer.model import Edge, Problem
from placer.schedule import Solution
from placer.schema import GraphSpec

__all__ = [
    "AUTO_THRESHOLD_OPS",
    "DEFAULT_MAX_OPS",
    "CoarsenMode",
    "Coarsening",
    "coarsen",
    "coarsen_for",
]

AUTO_THRESHOLD_OPS = 600   # "auto" coarsens graphs with more ops than this
DEFAULT_MAX_OPS = 300      # ... down to this many super-ops
CoarsenMode = Literal["off", "auto", "force"]

_CHAIN, _TINY, _GROUP, _RATIO = range(4)
_ID_MAX_CHARS = 64
_REFRESH_FRACTION = 0.1  # recompute levels each time the graph shrank by this fraction
_ONE = np.uint64(1)


@dataclass
class Coarsening:
    """A coarse problem of super-ops and the map back to the original ops.

    Attributes
    ----------
    original, coarse : the problems before and after contraction.
    members : members[s] lists super-op s's original ops in topological order.
    super_of : super_of[k] is the super-op holding original op k.
    seconds : wall time of the contraction.
    """

    original: Problem
    coarse: Problem
    members: list[list[int]]
    super_of: list[int]
    seconds: float

    def expand(self, solution: Solution) -> Solution:
        """The original-problem solution of a coarse one.

        Each op runs on its super-op's device; each device's order is the coarse order
        with every super-op replaced by its members. A coarse route is kept for every
        original edge between two super-ops (same devices); other edges get the
        minimum-delay route when re-timed.
        """
        coarse, original = self.coarse, self.original
        if len(solution.device) != coarse.n_ops or len(solution.order) != coarse.n_devices:
            raise SolutionCheckError(
                f"coarse solution has {len(solution.device)} ops on {len(solution.order)} devices; "
                f"the coarse problem has {coarse.n_ops} ops on {coarse.n_devices} devices"
            )
        device = [solution.device[s] for s in self.super_of]
        order = [[k for s in seq for k in self.members[s]] for seq in solution.order]
        routes: dict[int, tuple[str, ...]] = {}
        if solution.routes:
            coarse_edge = {(e.src, e.dst): i for i, e in enumerate(coarse.edges)}
            for i, e in enumerate(original.edges):
                su, sv = self.super_of[e.src], self.super_of[e.dst]
                route = solution.routes.get(coarse_edge.get((su, sv), -1))
                if su != sv and route:
                    routes[i] = route
        return Solution(device=device, order=order, routes=routes)

    def stats(self) -> dict[str, float | int]:
        """What a result's `stats` reports about the contraction."""
        return {
            "original_ops": self.original.n_ops,
            "coarse_ops": self.coarse.n_ops,
            "original_edges": len(self.original.edges),
            "coarse_edges": len(self.coarse.edges),
            "coarse_groups": len(self.coarse.groups),
            "coarsen_s": self.seconds,
        }


def coarsen_for(
    problem: Problem,
    mode: CoarsenMode,
    threshold_ops: int = AUTO_THRESHOLD_OPS,
    max_ops: int = DEFAULT_MAX_OPS,
) -> Coarsening | None:
    """The coarsening a run should use: None for "off", and for "auto" on graphs of at
    most `threshold_ops` ops (small graphs solve exactly as they are)."""
    if mode not in ("off", "auto", "force"):
        raise InputError(f"coarsen: expected 'off', 'auto' or 'force', got {mode!r}")
    if mode == "off" or (mode == "auto" and problem.n_ops <= threshold_ops):
        return None
    return coarsen(problem, max_ops)


def coarsen(
    problem: Problem,
    max_ops: int,
    *,
    tiny_fraction: float = 0.1,
    memory_fraction: float = 0.5,
    guide: Solution | None = None,
) -> Coarsening:
    """Contract `problem` into at most `max_ops` super-ops, or as few as the rules allow.

    Parameters
    ----------
    problem : the original problem (not changed).
    max_ops : target number of super-ops (>= 1); contraction stops there.
    tiny_fraction : ops lighter than this fraction of the mean op weight are "tiny".
    memory_fraction : a merged colocation class may hold at most this fraction of the
        memory of the largest device it may use (keeps the coarse problem packable).

    Raises
    ------
    InputError : max_ops < 1 or a fraction outside (0, 1].
    """
    if max_ops < 1:
        raise InputError(f"coarsen: max_ops must be >= 1, got {max_ops}")
    for name, value in (("tiny_fraction", tiny_fraction), ("memory_fraction", memory_fraction)):
        if not 0 < value <= 1:
            raise InputError(f"coarsen: {name} must be in (0, 1], got {value}")
    began = time.perf_counter()
    if guide is not None and len(guide.device) != problem.n_ops:
        raise InputError(f"coarsen: guide places {len(guide.device)} ops, the problem has {problem.n_ops}")
    contractor = _Contractor(problem, max_ops, tiny_fraction, memory_fraction, guide)
    contractor.run()
    coarse, members, super_of = contractor.build()
    return Coarsening(problem, coarse, members, super_of, time.perf_counter() - began)


class _Closure:
    """Strict descendants and ancestors of every node as packed bit rows (uint64 words)."""

    def __init__(self, problem: Problem) -> None:
        n = problem.n_ops
        words = max(1, (n + 63) // 64)
        self.desc = np.zeros((n, words), dtype="<u8")
        self.anc = np.zeros((n, words), dtype="<u8")
        for k in reversed(range(n)):
            for i in problem.succs[k]:
                v = problem.edges[i].dst
                self.desc[k] |= self.desc[v]
                self._set(self.desc, k, v)
        for k in range(n):
            for i in problem.preds[k]:
                u = problem.edges[i].src
                self.anc[k] |= self.anc[u]
                self._set(self.anc, k, u)

    @staticmethod
    def _set(rows: np.ndarray, row: int, col: int) -> None:
        rows[row, col >> 6] |= _ONE << np.uint64(col & 63)

    @staticmethod
    def _indices(row: np.ndarray) -> np.ndarray:
        return np.flatnonzero(np.unpackbits(row.view(np.uint8), bitorder="little"))

    def reaches(self, x: int, y: int) -> bool:
        """True when a path of at least one edge leads from x to y."""
        return bool(int(self.desc[x, y >> 6]) >> (y & 63) & 1)

    def contract(self, a: int, b: int) -> None:
        """Record that b is merged into a (the merge must keep the graph acyclic)."""
        keep = np.full(self.desc.shape[1], np.iinfo(np.uint64).max, dtype="<u8")
        for x in (a, b):
            keep[x >> 6] &= ~(_ONE << np.uint64(x & 63))
        below = (self.desc[a] | self.desc[b]) & keep
        above = (self.anc[a] | self.anc[b]) & keep
        wa, ma = a >> 6, _ONE << np.uint64(a & 63)
        wb, mb = b >> 6, ~(_ONE << np.uint64(b & 63))
        for rows, targets, extra in ((self.desc, self._indices(above), below),
                                     (self.anc, self._indices(below), above)):
            if len(targets):
                rows[targets] |= extra
                rows[targets, wa] |= ma
                rows[targets, wb] &= mb
        self.desc[a], self.anc[a] = below, above
        self.desc[b] = 0
        self.anc[b] = 0


class _Contractor:
    """The contraction state: super-ops in slots (slot = its first op), classes by root group."""

    def __init__(self, problem: Problem, max_ops: int, tiny_fraction: float, memory_fraction: float,
                 guide: Solution | None) -> None:
        self.p = problem
        self.guide = guide.device if guide is not None else None
        self.max_ops = max_ops
        self.memory_fraction = memory_fraction
        n = problem.n_ops
        self.alive = n
        self.version = [0] * n
        self.dead = [False] * n
        self.members: list[list[int]] = [[k] for k in range(n)]
        self.time_ms: list[list[float]] = [list(row) for row in problem.time_ms]
        self.memory: list[int] = list(problem.memory_bytes)
        self.weight: list[float] = [_mean_time_ms(problem, k) for k in range(n)]
        self.succ: list[dict[int, int]] = [{} for _ in range(n)]
        self.pred: list[dict[int, int]] = [{} for _ in range(n)]
        for e in problem.edges:
            self.succ[e.src][e.dst] = self.succ[e.src].get(e.dst, 0) + e.size_bytes
            self.pred[e.dst][e.src] = self.pred[e.dst].get(e.src, 0) + e.size_bytes
        # colocation classes: union-find over the original groups
        self.parent = list(range(len(problem.groups)))
        self.class_allowed = [frozenset(a) for a in problem.allowed]
        self.class_memory = [problem.group_memory_bytes(g) for g in range(len(problem.groups))]
        self.class_weight = [sum(self.weight[k] for k in ops) for ops in problem.groups]
        self.class_slots: list[set[int]] = [set(ops) for ops in problem.groups]
        self.class_busy: list[list[tuple[float, float]]] = [[] for _ in problem.groups]
        self.closure = _Closure(problem)

        total = sum(self.weight)
        mean = total / n if n else 0.0
        self.tiny_ms = tiny_fraction * mean
        self.super_cap_ms = 2.0 * total / max_ops
        self.class_cap_ms = total / max(1, problem.n_devices)
        self.load_ms = total / max(1, problem.n_devices)
        self.scale = 1.0
        self.latency_ms, self.ms_per_byte = _mean_link(problem)
        self.top = [0.0] * n
        self.bottom = [0.0] * n
        self.reference_ms = 0.0
        self.heap: list[tuple[float, int, float, int, int, int, int]] = []
        self.deferred: list[tuple[int, int]] = []

    # ---------------------------------------------------------------- classes

    def find(self, g: int) -> int:
        while self.parent[g] != g:
            self.parent[g] = self.parent[self.parent[g]]
            g = self.parent[g]
        return g

    def class_of(self, slot: int) -> int:
        return self.find(self.p.group[self.members[slot][0]])

    def _union(self, ca: int, cb: int) -> None:
        """Join two classes; re-queue the edges that now lie inside one class."""
        if len(self.class_slots[ca]) < len(self.class_slots[cb]):
            ca, cb = cb, ca
        self.parent[cb] = ca
        self.class_allowed[ca] &= self.class_allowed[cb]
        self.class_memory[ca] += self.class_memory[cb]
        self.class_weight[ca] += self.class_weight[cb]
        small = self.class_slots[cb]
        self.class_slots[ca] |= small
        self.class_busy[ca] = _union_intervals(self.class_busy[ca] + self.class_busy[cb])
        self.class_busy[cb] = []
        self.class_slots[cb] = set()
        for x in small:
            self._push_edges(x, only=self.class_slots[ca])

    # ---------------------------------------------------------------- levels

    def _delay_ms(self, size_bytes: int) -> float:
        return self.latency_ms + size_bytes * self.ms_per_byte

    def _refresh_levels(self) -> None:
        """Top and bottom levels (longest paths with mean link costs) of the current graph."""
        order = _topological([s for s in range(self.p.n_ops) if not self.dead[s]], self.succ, self.pred)
        for x in order:
            self.top[x] = max((self.top[p] + self.weight[p] + self._delay_ms(size)
                               for p, size in self.pred[x].items()), default=0.0)
        for x in reversed(order):
            self.bottom[x] = self.weight[x] + max((self._delay_ms(size) + self.bottom[y]
                                                   for y, size in self.succ[x].items()), default=0.0)
        longest = max((self.top[x] + self.bottom[x] for x in order), default=0.0)
        self.reference_ms = max(longest, self.load_ms)
        for root, slots in enumerate(self.class_slots):
            self.class_busy[root] = _union_intervals([(self.top[x], self.top[x] + self.weight[x]) for x in slots])

    def _through(self, a: int, b: int) -> tuple[float, float]:
        """Top and bottom level of the super-op contracting a -> b, from the current levels."""
        top = max([self.top[a]] + [self.top[p] + self.weight[p] + self._delay_ms(size)
                                   for p, size in self.pred[b].items() if p != a])
        tail = max([self._delay_ms(size) + self.bottom[y] for y, size in self.succ[a].items() if y != b]
                   + [self._delay_ms(size) + self.bottom[y] for y, size in self.succ[b].items()], default=0.0)
        return top, self.weight[a] + self.weight[b] + tail

    # ---------------------------------------------------------------- candidates

    def _key(self, a: int, b: int) -> tuple[float, int, float]:
        """Priority of contracting edge a -> b, smallest first: how much it lengthens the
        longest path (beyond the per-device load), then the rule, then balance or bytes."""
        top, bottom = self._through(a, b)
        growth_ms = max(0.0, top + bottom - self.reference_ms)
        ca, cb = self.class_of(a), self.class_of(b)
        if ca != cb:
            # joined classes share a device: work they would do at the same time is serialised
            growth_ms += _overlap_ms(self.class_busy[ca], self.class_busy[cb])
        merged_ms = self.weight[a] + self.weight[b]
        if len(self.succ[a]) == 1 and len(self.pred[b]) == 1:
            return growth_ms, _CHAIN, merged_ms
        if (self.weight[b] < self.tiny_ms and len(self.pred[b]) == 1) or (
                self.weight[a] < self.tiny_ms and len(self.succ[a]) == 1):
            return growth_ms, _TINY, merged_ms
        if ca == cb:
            return growth_ms, _GROUP, merged_ms
        return growth_ms, _RATIO, -self.succ[a][b] / (merged_ms + 1e-12)

    def _push(self, a: int, b: int) -> None:
        heapq.heappush(self.heap, (*self._key(a, b), a, b, self.version[a], self.version[b]))

    def _push_edges(self, x: int, only: set[int] | None = None) -> None:
        for y in self.succ[x]:
            if only is None or y in only:
                self._push(x, y)
        for y in self.pred[x]:
            if only is None or y in only:
                self._push(y, x)

    def _blocked(self, a: int, b: int) -> bool:
        """Hard limits (never relaxed): the guide's devices, pins, memory, acyclicity."""
        if self.guide is not None and self.guide[self.members[a][0]] != self.guide[self.members[b][0]]:
            return True
        ca, cb = self.class_of(a), self.class_of(b)
        if ca != cb:
            allowed = self.class_allowed[ca] & self.class_allowed[cb]
            if not allowed:
                return True
            capacities = [self.p.capacity_bytes[d] for d in allowed]
            if all(c is not None for c in capacities):
                limit = self.memory_fraction * max(c for c in capacities if c is not None)
                if self.class_memory[ca] + self.class_memory[cb] > limit:
                    return True
        return self._creates_cycle(a, b)

    def _creates_cycle(self, a: int, b: int) -> bool:
        reaches = self.closure.reaches
        return any(s != b and reaches(s, b) for s in self.succ[a]) or any(
            s != a and reaches(s, a) for s in self.succ[b])

    def _too_big(self, a: int, b: int) -> bool:
        """Soft caps that keep super-ops and classes balanced."""
        if self.weight[a] + self.weight[b] > self.scale * self.super_cap_ms:
            return True
        ca, cb = self.class_of(a), self.class_of(b)
        return ca != cb and self.class_weight[ca] + self.class_weight[cb] > self.scale * self.class_cap_ms

    # ---------------------------------------------------------------- contraction

    def run(self) -> None:
        refresh_at = self.alive
        while self.alive > self.max_ops:
            if self.alive <= refresh_at:
                # levels drift as merges proceed: recompute them and re-key every edge
                self._refresh_levels()
                self.heap = []
                for x in range(self.p.n_ops):
                    if not self.dead[x]:
                        for y in self.succ[x]:
                            self._push(x, y)
                refresh_at = self.alive - max(1, int(_REFRESH_FRACTION * self.alive))
            if not self.heap:
                if not self.deferred:
                    return
                self.scale *= 2.0
                waiting, self.deferred = self.deferred, []
                for a, b in waiting:
                    if not (self.dead[a] or self.dead[b]) and b in self.succ[a]:
                        self._push(a, b)
                continue
            *key, a, b, va, vb = heapq.heappop(self.heap)
            if self.dead[a] or self.dead[b] or self.version[a] != va or self.version[b] != vb:
                continue
            if b not in self.succ[a]:
                continue
            if tuple(key) != self._key(a, b):
                self._push(a, b)
                continue
            if self._blocked(a, b):
                continue  # hard limits only tighten as merges proceed
            if self._too_big(a, b):
                self.deferred.append((a, b))
                continue
            self._merge(a, b)

    def _merge(self, a: int, b: int) -> None:
        """Contract b into a (or a into b: the survivor is the slot with the lower index)."""
        top, bottom = self._through(a, b)
        if b < a:
            a, b = b, a
        self.top[a], self.bottom[a] = top, bottom
        self.closure.contract(a, b)
        ca, cb = self.class_of(a), self.class_of(b)
        self.members[a] = sorted(self.members[a] + self.members[b])
        self.time_ms[a] = [x + y for x, y in zip(self.time_ms[a], self.time_ms[b])]
        self.memory[a] += self.memory[b]
        self.weight[a] += self.weight[b]
        for out, back in ((self.succ, self.pred), (self.pred, self.succ)):
            for y, size in out[b].items():
                back[y].pop(b, None)
                if y == a:
                    continue
                out[a][y] = out[a].get(y, 0) + size
                back[y][a] = back[y].get(a, 0) + size
            out[b] = {}
            out[a].pop(b, None)
        self.dead[b] = True
        self.version[a] += 1
        self.version[b] += 1
        self.alive -= 1
        self.class_slots[cb].discard(b)
        if ca != cb:
            self._union(ca, cb)
        self._push_edges(a)

    # ---------------------------------------------------------------- the coarse problem

    def build(self) -> tuple[Problem, list[list[int]], list[int]]:
        p = self.p
        slots = [s for s in range(p.n_ops) if not self.dead[s]]
        order = _topological(slots, self.succ, self.pred)
        index = {s: i for i, s in enumerate(order)}
        members = [self.members[s] for s in order]
        super_of = [0] * p.n_ops
        for i, ms in enumerate(members):
            for k in ms:
                super_of[k] = i

        class_index: dict[int, int] = {}
        group: list[int] = []
        for s in order:
            group.append(class_index.setdefault(self.class_of(s), len(class_index)))
        groups: list[list[int]] = [[] for _ in class_index]
        for i, g in enumerate(group):
            groups[g].append(i)
        roots = sorted(class_index, key=class_index.__getitem__)
        allowed = [sorted(self.class_allowed[r]) for r in roots]
        group_names = _unique_names([self._class_name(r, ops) for r, ops in zip(roots, groups)])

        edges = sorted((Edge(index[s], index[t], size) for s in order for t, size in self.succ[s].items()),
                       key=lambda e: (e.src, e.dst))
        preds: list[list[int]] = [[] for _ in order]
        succs: list[list[int]] = [[] for _ in order]
        for i, e in enumerate(edges):
            succs[e.src].append(i)
            preds[e.dst].append(i)
        ops = _unique_ids([self._op_name(i, ms) for i, ms in enumerate(members)])
        time_ms = [self.time_ms[s] for s in order]
        memory = [self.memory[s] for s in order]
        graph = _coarse_graph(p, ops, time_ms, memory, edges, group, group_names, allowed)
        coarse = Problem(
            graph=graph, hardware=p.hardware, ops=ops, devices=list(p.devices), time_ms=time_ms,
            memory_bytes=memory, capacity_bytes=list(p.capacity_bytes), edges=edges, preds=preds,
            succs=succs, group=group, groups=groups, group_names=group_names, allowed=allowed,
            router=p.router, op_index={o: i for i, o in enumerate(ops)}, device_index=dict(p.device_index),
        )
        return coarse, members, super_of

    def _op_name(self, i: int, members: list[int]) -> str:
        names = [self.p.ops[k] for k in members]
        joined = "+".join(names)
        if len(names) == 1 or len(joined) <= _ID_MAX_CHARS:
            return joined
        return f"super{i}"

    def _class_name(self, root: int, slots: list[int]) -> str | None:
        names = sorted({self.p.group_names[g] for g in range(len(self.p.groups))
                        if self.find(g) == root and self.p.group_names[g] is not None})
        if not names and len(slots) == 1:
            return None
        joined = "+".join(names)
        return joined if names and len(joined) <= _ID_MAX_CHARS else f"class{root}"


def _mean_time_ms(problem: Problem, k: int) -> float:
    allowed = problem.allowed[problem.group[k]]
    return sum(problem.time_ms[k][d] for d in allowed) / len(allowed)


def _union_intervals(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Sorted disjoint intervals covering the same time as `intervals`."""
    out: list[tuple[float, float]] = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            if end > out[-1][1]:
                out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


def _overlap_ms(x: list[tuple[float, float]], y: list[tuple[float, float]]) -> float:
    """Length of the intersection of two sorted disjoint interval lists."""
    i = j = 0
    total = 0.0
    while i < len(x) and j < len(y):
        total += max(0.0, min(x[i][1], y[j][1]) - max(x[i][0], y[j][0]))
        if x[i][1] < y[j][1]:
            i += 1
        else:
            j += 1
    return total


def _mean_link(problem: Problem) -> tuple[float, float]:
    """Mean (latency_ms, ms_per_byte) of the fastest routes over device pairs: a linear
    stand-in for the mean transfer delay, used only to rank merges."""
    pairs = [(a, b) for a in problem.devices for b in problem.devices if a != b]
    if not pairs:
        return 0.0, 0.0
    profiles = [problem.router.cost_profile(a, b) for a, b in pairs]
    latency = sum(min(lat for _, lat in prof) for prof in profiles) / len(pairs)
    per_byte = sum(min(x for x, _ in prof) for prof in profiles) / len(pairs)
    return latency, per_byte


def _topological(slots: list[int], succ: list[dict[int, int]], pred: list[dict[int, int]]) -> list[int]:
    """Kahn's order, the lowest slot (earliest first member) first; raises on a cycle."""
    waiting = {s: len(pred[s]) for s in slots}
    ready = [s for s in slots if waiting[s] == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        s = heapq.heappop(ready)
        order.append(s)
        for t in succ[s]:
            waiting[t] -= 1
            if waiting[t] == 0:
                heapq.heappush(ready, t)
    if len(order) != len(slots):
        raise SolutionCheckError("coarsening produced a cycle (a bug): contraction must keep the graph acyclic")
    return order


def _unique_ids(names: Iterable[str]) -> list[str]:
    return [n for n in _unique_names(names) if n is not None]


def _unique_names(names: Iterable[str | None]) -> list[str | None]:
    """The names, each None kept and each repeat suffixed "#2", "#3", ... ."""
    seen: set[str] = set()
    out: list[str | None] = []
    for name in names:
        if name is None:
            out.append(None)
            continue
        candidate, n = name, 1
        while candidate in seen:
            n += 1
            candidate = f"{name}#{n}"
        seen.add(candidate)
        out.append(candidate)
    return out


def _coarse_graph(problem: Problem, ops: list[str], time_ms: list[list[float]], memory: list[int],
                  edges: list[Edge], group: list[int], group_names: list[str | None],
                  allowed: list[list[int]]) -> GraphSpec:
    """The coarse graph as a placer.graph/v1 document, for inspection and export.

    `time_ms` is the mean over devices (exact on identical devices); the coarse Problem's
    per-device times are authoritative. Validating the document re-checks acyclicity.
    """
    docs = []
    for i, o in enumerate(ops):
        g = group[i]
        docs.append({
            "id": o, "time_ms": sum(time_ms[i]) / len(time_ms[i]), "memory_bytes": memory[i],
            "group": group_names[g],
            "device": problem.devices[allowed[g][0]] if len(allowed[g]) == 1 < problem.n_devices else None,
        })
    return GraphSpec.model_validate({
        "name": f"{problem.graph.name}-coarse",
        "ops": docs,
        "edges": [{"src": ops[e.src], "dst": ops[e.dst], "bytes": e.size_bytes} for e in edges],
    })
