"""The best-connected half of a machine: where a component's first answers come sooner.

On eight GPUs of a DGX-1 the component models of a series decomposition (placer.decompose)
search twice the devices of its NVLink quad, and in the same time they find worse answers:
the zoo's Inception-V3, ten distinct components with 2 work units each, adds up to 12.17 ms
on the eight GPUs and 11.45 ms on the quad. Any answer on some of the devices is an answer
on all of them, so a component's first solve starts on the best-connected half and hands
its answer as the hint of the solve on the whole machine (whose bound alone counts).
"""
from __future__ import annotations

import itertools
import statistics

from placer.model import Problem

__all__ = ["MIN_DEVICES", "sub_machine"]

MIN_DEVICES = 8  # smaller machines: the whole machine's search is as quick
_MAX_SUBSETS = 20_000  # halves compared at most (a 16-GPU machine has 6,435 holding a given device)


def sub_machine(problem: Problem, anchor: int) -> list[int] | None:
    """The half of the devices, `anchor` among them, whose pairs exchange a tensor of the
    graph's median size fastest in all; None where it cannot help: fewer than MIN_DEVICES
    devices, pinned ops, devices of different speeds, or devices that are interchangeable
    (symmetry breaking already searches their first few)."""
    n = problem.n_devices
    if n < MIN_DEVICES or not problem.uniform_time or any(len(a) < n for a in problem.allowed):
        return None
    if any(len(cls) > 1 for cls in problem.interchangeable_devices):
        return None
    sizes = [e.size_bytes for e in problem.edges if e.size_bytes > 0]
    size = int(statistics.median(sizes)) if sizes else 1
    delay = [[problem.router.delay_ms(size, problem.devices[a], problem.devices[b]) if a != b else 0.0
              for b in range(n)] for a in range(n)]
    others = [d for d in range(n) if d != anchor]
    best: tuple[float, list[int]] | None = None
    for rest in itertools.islice(itertools.combinations(others, n // 2 - 1), _MAX_SUBSETS):
        half = sorted((anchor, *rest))
        cost = sum(delay[a][b] for a, b in itertools.combinations(half, 2))
        if best is None or cost < best[0] - 1e-12:
            best = (cost, half)
    return best[1] if best is not None else None
