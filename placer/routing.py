"""Routes between devices: the minimum-delay path for a transfer of a given size.

A transfer of D bytes over links l costs sum_l (D / B(l) + L(l)) (paper eq. 11,
store-and-forward). The best path depends on D: few fat hops win for big tensors,
few short-latency hops for small ones. Every candidate is a Pareto-optimal pair
(sum of 1/B, sum of L); we keep those per device pair, so any size is answered
exactly without a shortest-path search per size.

Routes are computed when first asked, one source device at a time (one label-setting
search answers every destination), and kept in the Router instance: a solve that only
touches a few devices of a 256-GPU machine pays for those few, and building a problem
(as request validation does) computes no route at all.

Label sets are bounded by three rules, applied whenever a path reaches a node:

1. Pareto dominance: a path no better in both costs than one already kept is dropped.
2. Lower envelope: a path that is worse, at every transfer size, by at least a factor
   1 + 1e-9 than one of its two neighbours on the front is dropped. It is never the
   minimum for any size, and neither is any extension of it, so delays and routes are
   unchanged (exact). What remains is the lower convex hull of the front.
3. A cap of `max_labels` paths per node (default 16). Beyond it, the path that is the
   minimum on the narrowest range of sizes (ratio of the range's ends) is dropped; the
   two ends (least latency, least time per byte) are always kept, so tiny and huge
   transfers stay exact. Delays remain those of real routes, but for sizes in a dropped
   range they may exceed the minimum. The presets and uniform meshes keep 1-2 paths per
   node, far below the cap; random meshes of 32 GPUs with mixed links keep at most 9.

For a full mesh of n devices one search still looks at n^2 extensions; they are screened
in bulk (numpy) against the two ends of each node's front, which answers most of them.
"""
from __future__ import annotations

import heapq
import math
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from typing import NamedTuple

import numpy as np

from placer.schema import HardwareSpec

__all__ = ["DEFAULT_MAX_LABELS", "Link", "Router", "route_delay_ms"]

_MS_PER_S = 1e3
_ENVELOPE_MARGIN = 1e-9
DEFAULT_MAX_LABELS = 16


@dataclass(frozen=True, slots=True)
class Link:
    """One physical link, in the units the formulas use."""

    a: str
    b: str
    seconds_per_byte: float  # 1 / bandwidth
    latency_ms: float

    def delay_ms(self, size_bytes: float) -> float:
        return size_bytes * self.seconds_per_byte * _MS_PER_S + self.latency_ms


@dataclass(frozen=True, slots=True, eq=False)
class _Label:
    """A simple path and its two additive costs."""

    ms_per_byte: float
    latency_ms: float
    path: tuple[str, ...]

    def delay_ms(self, size_bytes: float) -> float:
        return size_bytes * self.ms_per_byte + self.latency_ms


def _clearly_above(x: _Label, y: _Label, z: _Label) -> bool:
    """True when x (between y and z on a Pareto front: y cheaper per byte, z lower latency)
    is worse than min(y, z) by a factor 1 + margin at every size D >= 0. x - min(y, z) is
    convex in D, so checking D = 0, the crossing of y and z, and D -> infinity suffices."""
    grow = 1.0 + _ENVELOPE_MARGIN
    if x.latency_ms < grow * z.latency_ms or x.ms_per_byte < grow * y.ms_per_byte:
        return False
    crossing = (y.latency_ms - z.latency_ms) / (z.ms_per_byte - y.ms_per_byte)
    return x.delay_ms(crossing) >= grow * y.delay_ms(crossing)


def _narrowest_interior(front: list[_Label]) -> int:
    """Index of the interior label that is the minimum on the narrowest range of sizes."""
    crossings = [(a.latency_ms - b.latency_ms) / (b.ms_per_byte - a.ms_per_byte) for a, b in pairwise(front)]
    # label i wins for D in [crossings[i], crossings[i - 1]] (front sorted by ms per byte)
    return min(range(1, len(front) - 1),
               key=lambda i: (math.log(crossings[i - 1] / crossings[i]) if crossings[i] > 0 else math.inf, i))


class _Front:
    """The labels kept at one node, sorted by ms per byte (so by decreasing latency)."""

    __slots__ = ("keys", "labels")

    def __init__(self) -> None:
        self.labels: list[_Label] = []
        self.keys: list[float] = []

    def add(self, cand: _Label, max_labels: int) -> bool:
        """Insert cand unless a kept label is as good; apply the envelope rule and the cap.
        Returns whether cand was kept."""
        labels, keys = self.labels, self.keys
        i = bisect_left(keys, cand.ms_per_byte)
        if i > 0 and labels[i - 1].latency_ms <= cand.latency_ms:
            return False
        if i < len(labels) and keys[i] == cand.ms_per_byte and labels[i].latency_ms <= cand.latency_ms:
            return False
        j = i
        while j < len(labels) and labels[j].latency_ms >= cand.latency_ms:
            j += 1
        labels[i:j] = [cand]
        keys[i:j] = [cand.ms_per_byte]
        if 0 < i < len(labels) - 1 and _clearly_above(cand, labels[i - 1], labels[i + 1]):
            del labels[i], keys[i]
            return False
        while i >= 2 and _clearly_above(labels[i - 1], labels[i - 2], labels[i]):
            del labels[i - 1], keys[i - 1]
            i -= 1
        while i + 2 < len(labels) and _clearly_above(labels[i + 1], labels[i], labels[i + 2]):
            del labels[i + 1], keys[i + 1]
        kept = True
        if len(labels) > max_labels:
            drop = _narrowest_interior(labels)
            kept = labels[drop] is not cand
            del labels[drop], keys[drop]
        return kept

    def holds(self, label: _Label) -> bool:
        return any(x is label for x in self.labels)


class _Arcs(NamedTuple):
    targets: np.ndarray
    ms_per_byte: np.ndarray
    latency_ms: np.ndarray
    out: list[tuple[int, str, float, float]]


class Router:
    """Minimum-delay routes between devices of one hardware graph, computed on demand.

    Paths may pass through switches and through other devices (which forward, as
    NVLink-connected GPUs do). Each instance caches what it computed; nothing is shared
    between instances.
    """

    def __init__(self, hardware: HardwareSpec, max_labels: int = DEFAULT_MAX_LABELS) -> None:
        if max_labels < 2:
            raise ValueError("max_labels must be at least 2 (the two ends of a front)")
        self.max_labels = max_labels
        self.devices: tuple[str, ...] = tuple(d.id for d in hardware.devices)
        self.links: dict[frozenset[str], Link] = {}
        self.adjacent: dict[str, list[str]] = {d.id: [] for d in hardware.devices}
        self.adjacent.update({s.id: [] for s in hardware.switches})
        for spec in hardware.links:
            link = Link(spec.a, spec.b, 1.0 / (spec.bandwidth_gb_per_s * 1e9), spec.latency_us * 1e-3)
            self.links[frozenset((spec.a, spec.b))] = link
            self.adjacent[spec.a].append(spec.b)
            self.adjacent[spec.b].append(spec.a)
        for node in self.adjacent:
            self.adjacent[node].sort()
        self._nodes = list(self.adjacent)
        self._index = {n: i for i, n in enumerate(self._nodes)}
        self._arc_table: list[_Arcs] | None = None
        self._fronts: dict[str, list[_Front]] = {}
        self._label_arrays: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._cache_calls()

    def _cache_calls(self) -> None:
        self.delay_ms = lru_cache(maxsize=None)(self._delay_ms)
        self.route = lru_cache(maxsize=None)(self._route)
        self.cost_profile = lru_cache(maxsize=None)(self._cost_profile)
        self.delays_ms = lru_cache(maxsize=None)(self._delays_ms)
        self.transfer = lru_cache(maxsize=None)(self._transfer)

    _CACHED_CALLS = ("delay_ms", "route", "cost_profile", "delays_ms", "transfer")

    def __getstate__(self) -> dict[str, object]:
        """Pickled without its call caches (a problem sent to a sub-solve's process or Ray
        task, placer.parallel); the copy starts them afresh."""
        return {k: v for k, v in self.__dict__.items() if k not in self._CACHED_CALLS}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._cache_calls()

    def link(self, a: str, b: str) -> Link:
        return self.links[frozenset((a, b))]

    @property
    def sources_computed(self) -> int:
        """How many source devices have had their routes computed so far."""
        return len(self._fronts)

    def _arcs(self) -> list[_Arcs]:
        """Per node, its links out as (index, id, ms per byte, latency) and as numpy columns;
        built with the first route, not with the Router."""
        if self._arc_table is None:
            table = []
            for node in self._nodes:
                out = []
                for nxt in self.adjacent[node]:
                    link = self.link(node, nxt)
                    out.append((self._index[nxt], nxt, link.seconds_per_byte * _MS_PER_S, link.latency_ms))
                columns = np.array([(w, m, lat) for w, _, m, lat in out], dtype=np.float64).reshape(-1, 3)
                table.append(_Arcs(columns[:, 0].astype(np.intp), columns[:, 1].copy(), columns[:, 2].copy(), out))
            self._arc_table = table
        return self._arc_table

    def _front(self, a: str, b: str) -> list[_Label]:
        fronts = self._fronts.get(a)
        if fronts is None:
            fronts = self._fronts[a] = self._pareto_from(a)
        return fronts[self._index[b]].labels

    def _pareto_from(self, src: str) -> list[_Front]:
        """The kept simple paths from src to every node (bicriteria label setting)."""
        n = len(self._nodes)
        fronts = [_Front() for _ in range(n)]
        # the two ends of each node's front, for the bulk screen: least ms/byte, least latency
        lo_m = np.full(n, np.inf)
        lo_m_lat = np.full(n, np.inf)
        lo_l_m = np.full(n, np.inf)
        lo_l = np.full(n, np.inf)

        def ends_changed(w: int) -> None:
            labels = fronts[w].labels
            if labels:
                lo_m[w], lo_m_lat[w] = labels[0].ms_per_byte, labels[0].latency_ms
                lo_l_m[w], lo_l[w] = labels[-1].ms_per_byte, labels[-1].latency_ms
            else:
                lo_m[w] = lo_m_lat[w] = lo_l_m[w] = lo_l[w] = np.inf

        arcs = self._arcs()
        s = self._index[src]
        start = _Label(0.0, 0.0, (src,))
        fronts[s].add(start, self.max_labels)
        ends_changed(s)
        heap: list[tuple[float, float, int, tuple[str, ...], int, _Label]] = [(0.0, 0.0, 1, (src,), s, start)]
        while heap:
            mpb, lat, _, path, v, label = heapq.heappop(heap)
            if not fronts[v].holds(label):
                continue  # dropped after it was queued
            targets, arc_m, arc_l, out = arcs[v]
            if not out:
                continue
            cand_m = mpb + arc_m
            cand_l = lat + arc_l
            beaten = ((lo_m[targets] <= cand_m) & (lo_m_lat[targets] <= cand_l)) | (
                (lo_l_m[targets] <= cand_m) & (lo_l[targets] <= cand_l))
            for k in np.flatnonzero(~beaten).tolist():
                w, nxt, m, lt = out[k]
                if nxt in path:
                    continue
                cand = _Label(mpb + m, lat + lt, path + (nxt,))
                if fronts[w].add(cand, self.max_labels):
                    heapq.heappush(heap, (cand.ms_per_byte, cand.latency_ms, len(cand.path), cand.path, w,
                                          cand))
                ends_changed(w)
        return fronts

    def _best(self, size_bytes: float, a: str, b: str) -> _Label:
        return min(self._front(a, b), key=lambda lab: (lab.delay_ms(size_bytes), len(lab.path), lab.path))

    def _delay_ms(self, size_bytes: float, a: str, b: str) -> float:
        """Minimum delay of a transfer of size_bytes from device a to device b (0 when a == b)."""
        if a == b:
            return 0.0
        return self._best(size_bytes, a, b).delay_ms(size_bytes)

    def _route(self, size_bytes: float, a: str, b: str) -> tuple[str, ...]:
        """The hardware nodes of the minimum-delay route from a to b, both ends included."""
        if a == b:
            return (a,)
        return self._best(size_bytes, a, b).path

    def _transfer(self, size_bytes: float, a: str, b: str) -> tuple[tuple[str, ...], float]:
        """The route `route` gives and the delay over it as `route_delay_ms` sums it: what
        re-timing needs per transfer, looked up once per (size, pair) instead of per schedule."""
        path = self.route(size_bytes, a, b)
        return path, route_delay_ms(self, path, size_bytes)

    def _delays_ms(self, size_bytes: float, a: str) -> np.ndarray:
        """Minimum delay from device a to every device, in device order (0 to a itself): the
        values delay_ms gives, computed at once for bounds and averages over many pairs."""
        arrays = self._label_arrays.get(a)
        if arrays is None:
            owner, m, lat = [], [], []
            for d, b in enumerate(self.devices):
                for label in self._front(a, b):
                    owner.append(d)
                    m.append(label.ms_per_byte)
                    lat.append(label.latency_ms)
            arrays = self._label_arrays[a] = (np.array(owner, dtype=np.intp), np.array(m), np.array(lat))
        owner_of, m_arr, lat_arr = arrays
        out = np.full(len(self.devices), np.inf)
        np.minimum.at(out, owner_of, size_bytes * m_arr + lat_arr)
        out[self.devices.index(a)] = 0.0
        out.flags.writeable = False
        return out

    def _cost_profile(self, a: str, b: str) -> frozenset[tuple[float, float]]:
        """The kept (ms per byte, latency) pairs from a to b: equal profiles mean equal delays at any size."""
        return frozenset((round(x.ms_per_byte, 15), round(x.latency_ms, 12)) for x in self._front(a, b))


def route_delay_ms(router: Router, route: Sequence[str], size_bytes: float) -> float:
    """Delay of a transfer over an explicit route (paper eq. 11)."""
    return sum(router.link(u, v).delay_ms(size_bytes) for u, v in pairwise(route))
