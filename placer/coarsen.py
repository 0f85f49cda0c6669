"""Coarsening: contract a big graph into super-ops, solve the small one, expand the answer.

A 2,000-op training step is too big for the exact models, but much of its freedom is
spurious: a chain runs back to back anyway, a tiny element-wise op is not worth a
transfer, the ops of one colocation group share a device anyway. `coarsen` contracts
ops into *super-ops* until at most `max_ops` remain. `Coarsening.coarse` is an ordinary
`Problem` that every algorithm accepts; `Coarsening.expand` maps its answer back to
every original op, to be re-timed and validated on the original problem.

Two ways to choose what to contract:

- **by structure** (no guide): contract pairs, by priority: (0) chains, u -> v where u
  has one successor and v one predecessor; (1) tiny ops (lighter than `tiny_fraction`
  of the mean op) into their only predecessor or only successor; (2) two super-ops of
  one colocation class, joined by an edge or next to each other in time (they share a
  device anyway); (3) the edge with the most bytes per millisecond of the merged
  super-op. Ahead of the rule comes the estimated damage of the merge: how much it
  lengthens the longest compute path beyond the per-device load (a super-op starts when
  all its members' inputs are there and its outputs leave when it ends), plus, when two
  colocation classes are joined, how long they would both be busy at once.
- **by a schedule** (`guide`, e.g. the HEFT answer): contract only ops that run one after
  the other on one device in that schedule, least delaying first. Every contraction
  keeps the guide expressible, so `Coarsening.project(guide)` is a coarse solution
  whose expansion is the guide itself: an exact solver on the coarse problem starts
  from it and can only improve.

Every merge keeps the coarse graph acyclic. Contracting u and v creates a cycle exactly
when another path of two or more arcs joins them (a forward op and its backward op,
linked through the rest of the network, are never merged). Transitive closures kept as
bit matrices (n^2 / 8 bytes each) make that test a few bit reads and each merge two
vectorised row updates. Soft caps keep super-ops balanced (a super-op at most twice the
mean weight of `max_ops` ops, a colocation class at most one device's fair share of the
work) and double whenever nothing else can merge. Hard limits never relax: pins must
intersect, and a merged class's memory must fit in `memory_fraction` of the largest
device it may use.

Why an expanded answer is valid: a super-op's members are listed in the original
topological order, so edges inside it go forward; an edge between super-ops is a coarse
edge, which the coarse solution orders. A cycle of edges and device order in the
expanded answer would project onto a cycle of the coarse answer. Colocation groups and
pins hold because every original group lies inside one coarse group (the closure of
the original groups and the super-ops), whose allowed devices are the intersection of
its members'; memory per device is unchanged.

Timing: a coarse edge carries the largest of the tensors it stands for, and pays one
latency. In the engine's model transfers do not share links (no contention), so under
the coarse schedule every original tensor still arrives in time: the coarse makespan is
an upper bound on the re-timed expansion. The reported numbers always come from
re-timing the expansion on the original problem.
"""
from __future__ import annotations

import heapq
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal

import numpy as np

from placer.errors import InputError, SolutionCheckError
from placer.model import Edge, Problem
from placer.schedule import Schedule, Solution, retime
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
_REFRESH_FRACTION = 0.15 # recompute estimates each time the graph shrank by this fraction
_ONE = np.uint64(1)


@dataclass
class Coarsening:
    """A coarse problem of super-ops and the map back to the original ops.

    Attributes
    ----------
    original, coarse : the problems before and after contraction.
    members : members[s] lists super-op s's original ops in a topological order (the
        guide's order when guided).
    super_of : super_of[k] is the super-op holding original op k.
    guided : True when contracted along a guide schedule.
    seconds : wall time of the contraction.
    """

    original: Problem
    coarse: Problem
    members: list[list[int]]
    super_of: list[int]
    guided: bool
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

    def project(self, solution: Solution) -> Solution | None:
        """The coarse solution of an original one, when it has one: every super-op's
        members on one device, super-ops ordered by their earliest member, and that order
        consistent with the coarse edges. Always exists for the guide of a guided run."""
        device = []
        for ms in self.members:
            where = {solution.device[k] for k in ms}
            if len(where) != 1:
                return None
            device.append(where.pop())
        position = {k: i for seq in solution.order for i, k in enumerate(seq)}
        order: list[list[int]] = [[] for _ in self.coarse.devices]
        first = [min(position[k] for k in ms) for ms in self.members]
        for s in sorted(range(self.coarse.n_ops), key=lambda s: (first[s], s)):
            order[device[s]].append(s)
        projected = Solution(device=device, order=order)
        try:
            retime(self.coarse, projected)
        except SolutionCheckError:
            return None
        return projected

    def stats(self) -> dict[str, float | int | bool]:
        """What a result's `stats` reports about the contraction."""
        return {
            "original_ops": self.original.n_ops,
            "coarse_ops": self.coarse.n_ops,
            "original_edges": len(self.original.edges),
            "coarse_edges": len(self.coarse.edges),
            "coarse_groups": len(self.coarse.groups),
            "coarsen_guided": self.guided,
            "coarsen_s": self.seconds,
        }


def coarsen_for(
    problem: Problem,
    mode: CoarsenMode,
    threshold_ops: int = AUTO_THRESHOLD_OPS,
    max_ops: int = DEFAULT_MAX_OPS,
    guide: Schedule | None = None,
) -> Coarsening | None:
    """The coarsening a run should use: None for "off", and for "auto" on graphs of at
    most `threshold_ops` ops (small graphs solve exactly as they are)."""
    if mode not in ("off", "auto", "force"):
        raise InputError(f"coarsen: expected 'off', 'auto' or 'force', got {mode!r}")
    if mode == "off" or (mode == "auto" and problem.n_ops <= threshold_ops):
        return None
    return coarsen(problem, max_ops, guide=guide)


def coarsen(
    problem: Problem,
    max_ops: int,
    *,
    guide: Schedule | None = None,
    tiny_fraction: float = 0.1,
    memory_fraction: float = 0.5,
) -> Coarsening:
    """Contract `problem` into at most `max_ops` super-ops, or as few as the rules allow.

    Parameters
    ----------
    problem : the original problem (not changed).
    max_ops : target number of super-ops (>= 1); contraction stops there.
    guide : a valid schedule of `problem`; when given, only ops that run one after the
        other on one of its devices are contracted (see the module docstring).
    tiny_fraction : ops lighter than this fraction of the mean op weight are "tiny".
    memory_fraction : a merged colocation class may hold at most this fraction of the
        memory of the largest device it may use (keeps the coarse problem packable).

    Raises
    ------
    InputError : max_ops < 1, a fraction outside (0, 1], or a guide of another problem.
    """
    if max_ops < 1:
        raise InputError(f"coarsen: max_ops must be >= 1, got {max_ops}")
    for name, value in (("tiny_fraction", tiny_fraction), ("memory_fraction", memory_fraction)):
        if not 0 < value <= 1:
            raise InputError(f"coarsen: {name} must be in (0, 1], got {value}")
    if guide is not None and (len(guide.solution.device) != problem.n_ops
                              or len(guide.solution.order) != problem.n_devices):
        raise InputError(
            f"coarsen: the guide places {len(guide.solution.device)} ops on {len(guide.solution.order)} "
            f"devices; the problem has {problem.n_ops} ops and {problem.n_devices} devices"
        )
    began = time.perf_counter()
    contractor: _Contractor
    if guide is None:
        contractor = _EdgeContractor(problem, max_ops, tiny_fraction, memory_fraction)
    else:
        contractor = _TimelineContractor(problem, max_ops, tiny_fraction, memory_fraction, guide)
    contractor.run()
    coarse, members, super_of = contractor.build()
    return Coarsening(problem, coarse, members, super_of, guide is not None, time.perf_counter() - began)


class _Closure:
    """Strict descendants and ancestors of every node of a DAG as packed bit rows."""

    def __init__(self, successors: list[list[int]], order: list[int]) -> None:
        """`order` is a topological order of the nodes 0..n-1 under `successors`."""
        n = len(successors)
        words = max(1, (n + 63) // 64)
        self.desc = np.zeros((n, words), dtype="<u8")
        for k in reversed(order):
            for v in successors[k]:
                self.desc[k] |= self.desc[v]
                self.desc[k, v >> 6] |= _ONE << np.uint64(v & 63)
        self.anc = np.zeros((n, words), dtype="<u8")
        for k in order:
            for v in successors[k]:
                self.anc[v] |= self.anc[k]
                self.anc[v, k >> 6] |= _ONE << np.uint64(k & 63)

    def reaches(self, x: int, y: int) -> bool:
        """True when a path of at least one arc leads from x to y."""
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
        for rows, targets, extra in ((self.desc, _bits(above), below), (self.anc, _bits(below), above)):
            if len(targets):
                rows[targets] |= extra
                rows[targets, wa] |= ma
                rows[targets, wb] &= mb
        self.desc[a], self.anc[a] = below, above
        self.desc[b] = 0
        self.anc[b] = 0


def _bits(row: np.ndarray) -> np.ndarray:
    """Indices of the set bits of a packed row."""
    return np.flatnonzero(np.unpackbits(row.view(np.uint8), bitorder="little"))


class _Contractor:
    """Contraction state shared by both ways of choosing merges.

    Super-ops live in slots (a slot is its lowest member's index); `succ[x][y]` holds
    [summed bytes, largest bytes] of the edges from x to y. Colocation classes are a
    union-find over the original groups.
    """

    def __init__(self, problem: Problem, max_ops: int, tiny_fraction: float, memory_fraction: float) -> None:
        self.p = problem
        self.max_ops = max_ops
        self.memory_fraction = memory_fraction
        n = problem.n_ops
        self.alive = n
        self.version = [0] * n
        self.dead = [False] * n
        self.members: list[list[int]] = [[k] for k in range(n)]
        self.rank = list(range(n))  # members are listed by rank: a topological order
        self.time_ms: list[list[float]] = [list(row) for row in problem.time_ms]
        self.memory: list[int] = list(problem.memory_bytes)
        self.weight: list[float] = [_mean_time_ms(problem, k) for k in range(n)]
        self.succ: list[dict[int, list[int]]] = [{} for _ in range(n)]
        self.pred: list[dict[int, list[int]]] = [{} for _ in range(n)]
        for e in problem.edges:
            self.succ[e.src][e.dst] = self.pred[e.dst][e.src] = [e.size_bytes, e.size_bytes]
        self.parent = list(range(len(problem.groups)))
        self.class_allowed = [frozenset(a) for a in problem.allowed]
        self.class_memory = [problem.group_memory_bytes(g) for g in range(len(problem.groups))]
        self.class_weight = [sum(self.weight[k] for k in ops) for ops in problem.groups]
        self.class_slots: list[set[int]] = [set(ops) for ops in problem.groups]

        total = sum(self.weight)
        self.tiny_ms = tiny_fraction * total / n
        self.super_cap_ms = 2.0 * total / max_ops
        self.load_ms = total / problem.n_devices
        self.scale = 1.0
        self.heap: list[tuple] = []
        self.deferred: list[tuple[int, int]] = []
        self.closure: _Closure

    # ---------------------------------------------------------------- hooks

    def pairs(self, x: int) -> Iterator[tuple[int, int]]:
        """The candidate merges (a, b) that involve super-op x."""
        raise NotImplementedError

    def is_pair(self, a: int, b: int) -> bool:
        raise NotImplementedError

    def key(self, a: int, b: int) -> tuple:
        raise NotImplementedError

    def arcs(self, x: int) -> Iterable[int]:
        """Successors of x in the graph whose contraction must stay acyclic."""
        raise NotImplementedError

    def refresh(self) -> None:
        """Recompute the estimates the keys use (the graph shrank)."""

    def merged(self, keep: int, gone: int) -> None:
        """Update the mode's own state after `gone` was merged into `keep`."""

    # ---------------------------------------------------------------- classes

    def find(self, g: int) -> int:
        while self.parent[g] != g:
            self.parent[g] = self.parent[self.parent[g]]
            g = self.parent[g]
        return g

    def class_of(self, slot: int) -> int:
        return self.find(self.p.group[self.members[slot][0]])

    def union(self, ca: int, cb: int) -> int:
        """Join two classes (the bigger absorbs the smaller); returns the root."""
        if (len(self.class_slots[ca]), cb) < (len(self.class_slots[cb]), ca):
            ca, cb = cb, ca
        self.parent[cb] = ca
        self.class_allowed[ca] &= self.class_allowed[cb]
        self.class_memory[ca] += self.class_memory[cb]
        self.class_weight[ca] += self.class_weight[cb]
        self.class_slots[ca] |= self.class_slots[cb]
        self.class_slots[cb] = set()
        return ca

    # ---------------------------------------------------------------- the loop

    def push(self, a: int, b: int) -> None:
        heapq.heappush(self.heap, (*self.key(a, b), a, b, self.version[a], self.version[b]))

    def blocked(self, a: int, b: int) -> bool:
        """Hard limits, which only tighten as merges proceed: pins, memory, acyclicity."""
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
        reaches = self.closure.reaches
        return any(s != b and reaches(s, b) for s in self.arcs(a)) or any(
            s != a and reaches(s, a) for s in self.arcs(b))

    def too_big(self, a: int, b: int) -> bool:
        """Soft caps that keep super-ops and classes balanced."""
        if self.weight[a] + self.weight[b] > self.scale * self.super_cap_ms:
            return True
        ca, cb = self.class_of(a), self.class_of(b)
        return ca != cb and self.class_weight[ca] + self.class_weight[cb] > self.scale * self.load_ms

    def run(self) -> None:
        refresh_at = self.alive
        while self.alive > self.max_ops:
            if self.alive <= refresh_at:
                self.refresh()
                self.heap = []
                for x in range(self.p.n_ops):
                    if not self.dead[x]:
                        for a, b in self.pairs(x):
                            if a == x:
                                self.push(a, b)
                refresh_at = self.alive - max(1, int(_REFRESH_FRACTION * self.alive))
            if not self.heap:
                if not self.deferred:
                    return
                self.scale *= 2.0
                waiting, self.deferred = self.deferred, []
                for a, b in waiting:
                    if not (self.dead[a] or self.dead[b]) and self.is_pair(a, b):
                        self.push(a, b)
                continue
            *key, a, b, va, vb = heapq.heappop(self.heap)
            if self.dead[a] or self.dead[b] or self.version[a] != va or self.version[b] != vb:
                continue
            if not self.is_pair(a, b):
                continue
            if tuple(key) != self.key(a, b):
                self.push(a, b)
                continue
            if self.blocked(a, b):
                continue
            if self.too_big(a, b):
                self.deferred.append((a, b))
                continue
            self.merge(a, b)

    def merge(self, a: int, b: int) -> None:
        """Contract a and b into the slot with the lower index."""
        keep, gone = min(a, b), max(a, b)
        ca, cb = self.class_of(keep), self.class_of(gone)
        self.closure.contract(keep, gone)
        self.members[keep] = sorted(self.members[keep] + self.members[gone], key=self.rank.__getitem__)
        self.time_ms[keep] = [x + y for x, y in zip(self.time_ms[keep], self.time_ms[gone])]
        self.memory[keep] += self.memory[gone]
        self.weight[keep] += self.weight[gone]
        for out, back in ((self.succ, self.pred), (self.pred, self.succ)):
            for y, (total, largest) in out[gone].items():
                back[y].pop(gone, None)
                if y == keep:
                    continue
                known = out[keep].get(y)
                joined = [total, largest] if known is None else [known[0] + total, max(known[1], largest)]
                out[keep][y] = back[y][keep] = joined
            out[gone] = {}
            out[keep].pop(gone, None)
        self.dead[gone] = True
        self.version[keep] += 1
        self.version[gone] += 1
        self.alive -= 1
        self.class_slots[cb].discard(gone)
        self.merged(keep, gone)
        touched = [keep]
        if ca != cb:
            # pairs between the two classes now lie inside one: re-queue the smaller side's
            small = min((ca, cb), key=lambda c: (len(self.class_slots[c]), c))
            touched += sorted(self.class_slots[small] - {keep})
            self.union(ca, cb)
        for x in touched:
            for pair in self.pairs(x):
                self.push(*pair)

    # ---------------------------------------------------------------- the coarse problem

    def build(self) -> tuple[Problem, list[list[int]], list[int]]:
        p = self.p
        order = _topological([s for s in range(p.n_ops) if not self.dead[s]], self.succ, self.pred)
        index = {s: i for i, s in enumerate(order)}
        members = [self.members[s] for s in order]
        super_of = [0] * p.n_ops
        for i, ms in enumerate(members):
            for k in ms:
                super_of[k] = i

        class_index: dict[int, int] = {}
        group = [class_index.setdefault(self.class_of(s), len(class_index)) for s in order]
        groups: list[list[int]] = [[] for _ in class_index]
        for i, g in enumerate(group):
            groups[g].append(i)
        roots = sorted(class_index, key=class_index.__getitem__)
        allowed = [sorted(self.class_allowed[r]) for r in roots]
        names: dict[int, list[str]] = {}
        for g, name in enumerate(p.group_names):
            if name is not None:
                names.setdefault(self.find(g), []).append(name)
        group_names = _unique_names([_class_name(r, sorted(names.get(r, [])), len(ops))
                                     for r, ops in zip(roots, groups)])

        edges = [Edge(index[s], index[t], largest) for s in order for t, (_, largest) in self.succ[s].items()]
        edges.sort(key=lambda e: (e.src, e.dst))
        preds: list[list[int]] = [[] for _ in order]
        succs: list[list[int]] = [[] for _ in order]
        for i, e in enumerate(edges):
            succs[e.src].append(i)
            preds[e.dst].append(i)
        ops = [n for n in _unique_names(self._op_name(i, ms) for i, ms in enumerate(members)) if n]
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
        joined = "+".join(self.p.ops[k] for k in members)
        return joined if len(members) == 1 or len(joined) <= _ID_MAX_CHARS else f"super{i}"


class _EdgeContractor(_Contractor):
    """Contract edges of the coarse graph, least damaging first, then by rule."""

    def __init__(self, problem: Problem, max_ops: int, tiny_fraction: float, memory_fraction: float) -> None:
        super().__init__(problem, max_ops, tiny_fraction, memory_fraction)
        n = problem.n_ops
        self.closure = _Closure([sorted(self.succ[k]) for k in range(n)], list(range(n)))
        self.top = [0.0] * n
        self.bottom = [0.0] * n
        self.reference_ms = 0.0
        self.class_busy: list[list[tuple[float, float]]] = [[] for _ in problem.groups]

    def pairs(self, x: int) -> Iterator[tuple[int, int]]:
        """Edges at x, and x's neighbours by level among the super-ops of its class (two
        ops of one class share a device anyway: contracting them loses little)."""
        for y in self.succ[x]:
            yield x, y
        for y in self.pred[x]:
            yield y, x
        mine = (self.top[x], x)
        before = after = None
        for y in self.class_slots[self.class_of(x)]:
            theirs = (self.top[y], y)
            if theirs < mine and (before is None or theirs > before):
                before = theirs
            elif theirs > mine and (after is None or theirs < after):
                after = theirs
        if before is not None and before[1] not in self.pred[x]:
            yield before[1], x
        if after is not None and after[1] not in self.succ[x]:
            yield x, after[1]

    def is_pair(self, a: int, b: int) -> bool:
        return b in self.succ[a] or self.class_of(a) == self.class_of(b)

    def arcs(self, x: int) -> Iterable[int]:
        return self.succ[x]

    def refresh(self) -> None:
        """Compute levels (longest compute paths) and the classes' one-device timelines."""
        order = _topological([s for s in range(self.p.n_ops) if not self.dead[s]], self.succ, self.pred)
        for x in order:
            self.top[x] = max((self.top[p] + self.weight[p] for p in self.pred[x]), default=0.0)
        for x in reversed(order):
            self.bottom[x] = self.weight[x] + max((self.bottom[y] for y in self.succ[x]), default=0.0)
        longest = max((self.top[x] + self.bottom[x] for x in order), default=0.0)
        self.reference_ms = max(longest, self.load_ms)
        for root, slots in enumerate(self.class_slots):
            self.class_busy[root] = self._timeline(slots)

    def _timeline(self, slots: Iterable[int]) -> list[tuple[float, float]]:
        """When a class is busy if its super-ops run on one device as early as their levels allow."""
        busy: list[tuple[float, float]] = []
        for x in sorted(slots, key=lambda x: (self.top[x], x)):
            start = max(self.top[x], busy[-1][1]) if busy else self.top[x]
            if busy and start <= busy[-1][1]:
                busy[-1] = (busy[-1][0], start + self.weight[x])
            else:
                busy.append((start, start + self.weight[x]))
        return busy

    def _through(self, a: int, b: int) -> tuple[float, float]:
        """Top and bottom level of the super-op contracting a and b, from the current levels."""
        top = tail = 0.0
        for x, other in ((a, b), (b, a)):
            if other in self.pred[x]:
                for p in self.pred[x]:
                    if p != other and self.top[p] + self.weight[p] > top:
                        top = self.top[p] + self.weight[p]
            elif self.top[x] > top:
                top = self.top[x]
            for y in self.succ[x]:
                if y != other and self.bottom[y] > tail:
                    tail = self.bottom[y]
        return top, self.weight[a] + self.weight[b] + tail

    def key(self, a: int, b: int) -> tuple[float, int, float]:
        """(estimated damage, rule, tie-break): the damage is how far the longest path
        through the merged super-op exceeds max(longest path, per-device load), plus the
        time two joined classes would be busy at once."""
        top, bottom = self._through(a, b)
        damage_ms = max(0.0, top + bottom - self.reference_ms)
        ca, cb = self.class_of(a), self.class_of(b)
        if ca != cb:
            damage_ms += _overlap_ms(self.class_busy[ca], self.class_busy[cb])
        merged_ms = self.weight[a] + self.weight[b]
        edge = self.succ[a].get(b)
        if edge is not None and len(self.succ[a]) == 1 and len(self.pred[b]) == 1:
            return damage_ms, _CHAIN, merged_ms
        if edge is not None and ((self.weight[b] < self.tiny_ms and len(self.pred[b]) == 1) or (
                self.weight[a] < self.tiny_ms and len(self.succ[a]) == 1)):
            return damage_ms, _TINY, merged_ms
        if ca == cb or edge is None:
            return damage_ms, _GROUP, merged_ms
        return damage_ms, _RATIO, -edge[0] / (merged_ms + 1e-12)

    def merge(self, a: int, b: int) -> None:
        top, bottom = self._through(a, b)
        super().merge(a, b)
        keep = min(a, b)
        self.top[keep], self.bottom[keep] = top, bottom

    def union(self, ca: int, cb: int) -> int:
        root = super().union(ca, cb)
        self.class_busy[root] = self._timeline(self.class_slots[root])
        return root


class _TimelineContractor(_Contractor):
    """Contract ops that run one after the other on one device of a guide schedule.

    The graph that must stay acyclic is the guide's: edges plus each device's order, so
    the guide stays a solution of the coarse problem. Merges that delay the guide least
    (the merged super-op starts when all its inputs arrived, its outputs leave when it
    ends) come first; the delays are re-evaluated on the projected guide periodically.
    """

    def __init__(self, problem: Problem, max_ops: int, tiny_fraction: float, memory_fraction: float,
                 guide: Schedule) -> None:
        super().__init__(problem, max_ops, tiny_fraction, memory_fraction)
        n = problem.n_ops
        self.device = list(guide.solution.device)
        self.next = [-1] * n
        self.prev = [-1] * n
        for seq in guide.solution.order:
            for x, y in pairwise(seq):
                self.next[x], self.prev[y] = y, x
        arcs = [sorted(set(self.succ[k]) | {self.next[k]} - {-1}) for k in range(n)]
        preds: list[dict[int, None]] = [{} for _ in range(n)]
        for k, ys in enumerate(arcs):
            for y in ys:
                preds[y][k] = None
        try:
            order = _topological(list(range(n)), [dict.fromkeys(ys) for ys in arcs], preds)
        except SolutionCheckError:
            raise InputError("coarsen: the guide's device order contradicts the graph's edges") from None
        for position, k in enumerate(order):
            self.rank[k] = position  # the guide's order inside every super-op
        self.closure = _Closure(arcs, order)
        self.start = list(guide.start_ms)
        self.end = list(guide.end_ms)

    def pairs(self, x: int) -> Iterator[tuple[int, int]]:
        if self.next[x] >= 0:
            yield x, self.next[x]
        if self.prev[x] >= 0:
            yield self.prev[x], x

    def is_pair(self, a: int, b: int) -> bool:
        return self.next[a] == b

    def arcs(self, x: int) -> Iterable[int]:
        if self.next[x] >= 0:
            yield self.next[x]
        yield from self.succ[x]

    def _delay_ms(self, size_bytes: int, x: int, y: int) -> float:
        devices = self.p.devices
        return self.p.router.delay_ms(size_bytes, devices[self.device[x]], devices[self.device[y]])

    def key(self, a: int, b: int) -> tuple[float, int, float]:
        """(delay of the guide, joins classes, merged weight)."""
        d = self.device[a]
        start = self.start[a]
        for x in (a, b):
            for p, (_, largest) in self.pred[x].items():
                if p != a and p != b:
                    start = max(start, self.end[p] + self._delay_ms(largest, p, a))
        end = start + self.time_ms[a][d] + self.time_ms[b][d]
        late = max(0.0, end - self.end[b])
        for x in (a, b):
            for y, (_, largest) in self.succ[x].items():
                if y != a and y != b:
                    late = max(late, end + self._delay_ms(largest, a, y) - self.start[y])
        joins = int(self.class_of(a) != self.class_of(b))
        return late, joins, self.weight[a] + self.weight[b]

    def merged(self, keep: int, gone: int) -> None:
        first, last = (keep, gone) if self.next[keep] == gone else (gone, keep)
        d = self.device[keep]
        start = self.start[first]
        for p, (_, largest) in self.pred[keep].items():
            start = max(start, self.end[p] + self._delay_ms(largest, p, keep))
        self.start[keep] = start
        self.end[keep] = start + self.time_ms[keep][d]
        before, after = self.prev[first], self.next[last]
        self.prev[keep], self.next[keep] = before, after
        if before >= 0:
            self.next[before] = keep
        if after >= 0:
            self.prev[after] = keep
        self.next[gone] = self.prev[gone] = -1

    def refresh(self) -> None:
        """Re-time the guide as the coarse problem sees it (super-ops atomic)."""
        slots = [s for s in range(self.p.n_ops) if not self.dead[s]]
        waiting = {s: len(self.pred[s]) + (self.prev[s] >= 0) for s in slots}
        ready = [s for s in slots if waiting[s] == 0]
        while ready:
            s = ready.pop()
            t = self.end[self.prev[s]] if self.prev[s] >= 0 else 0.0
            for p, (_, largest) in self.pred[s].items():
                t = max(t, self.end[p] + self._delay_ms(largest, p, s))
            self.start[s] = t
            self.end[s] = t + self.time_ms[s][self.device[s]]
            for y in list(self.succ[s]) + ([self.next[s]] if self.next[s] >= 0 else []):
                waiting[y] -= 1
                if waiting[y] == 0:
                    ready.append(y)


def _class_name(root: int, names: list[str], n_ops: int) -> str | None:
    """A coarse group's name: its original groups' names joined, else "class<root>"; None
    for a lone op of no named group (as build_problem does)."""
    if not names and n_ops == 1:
        return None
    joined = "+".join(names)
    return joined if names and len(joined) <= _ID_MAX_CHARS else f"class{root}"


def _mean_time_ms(problem: Problem, k: int) -> float:
    allowed = problem.allowed[problem.group[k]]
    return sum(problem.time_ms[k][d] for d in allowed) / len(allowed)


def _overlap_ms(x: list[tuple[float, float]], y: list[tuple[float, float]]) -> float:
    """Length of the intersection of two sorted lists of disjoint intervals."""
    i = j = 0
    total = 0.0
    while i < len(x) and j < len(y):
        total += max(0.0, min(x[i][1], y[j][1]) - max(x[i][0], y[j][0]))
        if x[i][1] < y[j][1]:
            i += 1
        else:
            j += 1
    return total


def _topological(slots: list[int], succ: list[dict], pred: list[dict]) -> list[int]:
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
        raise SolutionCheckError("a cycle among the super-ops: contraction must keep the graph acyclic")
    return order


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

    Its `time_ms` is the mean over devices (exact on identical devices); the coarse
    Problem's per-device times are authoritative. Validating it re-checks acyclicity.
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
