"""Routes between devices: the minimum-delay path for a transfer of a given size.

A transfer of D bytes over links l costs sum_l (D / B(l) + L(l)) (paper eq. 11,
store-and-forward). The best path depends on D: few fat hops win for big tensors,
few short-latency hops for small ones. Every candidate is a Pareto-optimal pair
(sum of 1/B, sum of L); we keep those per device pair, so any size is answered
exactly without a shortest-path search per size.
"""
from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from placer.schema import HardwareSpec

__all__ = ["Link", "Router", "route_delay_ms"]

_MS_PER_S = 1e3


@dataclass(frozen=True, slots=True)
class Link:
    """One physical link, in the units the formulas use."""

    a: str
    b: str
    seconds_per_byte: float  # 1 / bandwidth
    latency_ms: float

    def delay_ms(self, size_bytes: float) -> float:
        return size_bytes * self.seconds_per_byte * _MS_PER_S + self.latency_ms


@dataclass(frozen=True, slots=True)
class _Label:
    """A simple path and its two additive costs."""

    ms_per_byte: float
    latency_ms: float
    path: tuple[str, ...]

    def delay_ms(self, size_bytes: float) -> float:
        return size_bytes * self.ms_per_byte + self.latency_ms


def _dominates(x: _Label, y: _Label) -> bool:
    return x.ms_per_byte <= y.ms_per_byte and x.latency_ms <= y.latency_ms


class Router:
    """Minimum-delay routes between every pair of devices of one hardware graph.

    Paths may pass through switches and through other devices (which forward, as
    NVLink-connected GPUs do).
    """

    def __init__(self, hardware: HardwareSpec) -> None:
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
        self._fronts = {src: self._pareto_from(src) for src in self.devices}
        self.delay_ms = lru_cache(maxsize=None)(self._delay_ms)
        self.route = lru_cache(maxsize=None)(self._route)

    def link(self, a: str, b: str) -> Link:
        return self.links[frozenset((a, b))]

    def _pareto_from(self, src: str) -> dict[str, list[_Label]]:
        """Pareto-optimal simple paths from src to every node (bicriteria label setting)."""
        fronts: dict[str, list[_Label]] = {n: [] for n in self.adjacent}
        start = _Label(0.0, 0.0, (src,))
        fronts[src].append(start)
        heap: list[tuple[float, float, int, tuple[str, ...]]] = [(0.0, 0.0, 1, (src,))]
        while heap:
            mpb, lat, _, path = heapq.heappop(heap)
            label = _Label(mpb, lat, path)
            if label not in fronts[path[-1]]:
                continue  # dominated after it was queued
            for nxt in self.adjacent[path[-1]]:
                if nxt in path:
                    continue
                link = self.link(path[-1], nxt)
                cand = _Label(mpb + link.seconds_per_byte * _MS_PER_S, lat + link.latency_ms, path + (nxt,))
                front = fronts[nxt]
                if any(_dominates(old, cand) for old in front):
                    continue
                front[:] = [old for old in front if not _dominates(cand, old)]
                front.append(cand)
                heapq.heappush(heap, (cand.ms_per_byte, cand.latency_ms, len(cand.path), cand.path))
        return fronts

    def _best(self, size_bytes: float, a: str, b: str) -> _Label:
        return min(self._fronts[a][b], key=lambda lab: (lab.delay_ms(size_bytes), len(lab.path), lab.path))

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

    def cost_profile(self, a: str, b: str) -> frozenset[tuple[float, float]]:
        """The Pareto (ms per byte, latency) pairs from a to b: equal profiles mean equal delays at any size."""
        return frozenset((round(x.ms_per_byte, 15), round(x.latency_ms, 12)) for x in self._fronts[a][b])


def route_delay_ms(router: Router, route: Sequence[str], size_bytes: float) -> float:
    """Delay of a transfer over an explicit route (paper eq. 11)."""
    return sum(router.link(u, v).delay_ms(size_bytes) for u, v in zip(route, route[1:]))
