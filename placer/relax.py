"""A symmetric relaxation of a placement problem: every device pair as fast as the fastest.

On a machine whose links differ (a DGX-1's hybrid cube-mesh: double and single NVLinks,
pairs that go through PCIe) few device permutations keep the delays, so CP-SAT gets
almost no symmetry breaking and proves little: on a transformer layer of per-head ops
(144 ops, 8 GPUs) 30 s proved 0.59 ms against a 1.135 ms answer. Giving every tensor the
smallest delay any device pair has (and every device the largest memory) only weakens
constraints, so the relaxed optimum is a lower bound of the true one; and with equal
GPUs every device is then interchangeable, so full symmetry breaking applies: 30 s prove
1.086 ms on the same layer. Where links matter more the relaxed optimum is further
below (Inception blocks on a DGX-1 quad: 5-11%).
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from functools import cached_property

from placer.model import Edge, Problem

__all__ = ["FastestPairs", "fastest_delay_ms", "symmetric_relaxation"]


def fastest_delay_ms(problem: Problem, size_bytes: int) -> float:
    """The smallest delay of a tensor of `size_bytes` between any two distinct devices."""
    return min(problem.router.delay_ms(size_bytes, x, y)
               for x in problem.devices for y in problem.devices if x != y)


@dataclass(eq=False)
class FastestPairs(Problem):
    """`Problem` with every device pair's delay the fastest pair's (see the module docstring)."""

    fastest_ms: dict[int, float] = field(default_factory=dict)   # tensor size -> smallest delay

    def delay_ms(self, edge: Edge, a: int, b: int) -> float:
        if a == b:
            return 0.0
        size = edge.size_bytes
        if size not in self.fastest_ms:
            self.fastest_ms[size] = fastest_delay_ms(self, size)
        return self.fastest_ms[size]

    @cached_property
    def interchangeable_devices(self) -> list[list[int]]:
        return [list(range(self.n_devices))]


def symmetric_relaxation(problem: Problem) -> FastestPairs | None:
    """The relaxation, where it makes every device interchangeable and the problem is not
    already so: no pins, every op as fast on every device. None otherwise."""
    n = problem.n_devices
    if n < 2 or any(len(allowed) < n for allowed in problem.allowed) or not problem.uniform_time:
        return None
    if problem.interchangeable_devices == [list(range(n))]:
        return None
    capacities = problem.capacity_bytes
    largest = None if any(c is None for c in capacities) else max(c for c in capacities if c is not None)
    values = {f.name: getattr(problem, f.name) for f in fields(Problem)}
    values["capacity_bytes"] = [largest] * n
    return FastestPairs(**values)
