"""An exhaustive, independent reference optimum for tiny instances.

Enumerates every placement and, per placement, every per-device order that respects
the graph, and computes earliest start times directly. Shares no code with placer:
costs come from plain tables the tests build.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence


def _linear_extensions(ops: list[int], before: Callable[[int, int], bool]) -> list[list[int]]:
    out: list[list[int]] = []
    for perm in itertools.permutations(ops):
        if all(not before(perm[j], perm[i]) for i in range(len(perm)) for j in range(i + 1, len(perm))):
            out.append(list(perm))
    return out


def brute_force_makespan(
    times: Sequence[Sequence[float]],            # times[k][d]
    edges: Sequence[tuple[int, int, float]],     # (u, v, bytes); ops are numbered topologically
    delay: Callable[[float, int, int], float],   # delay(bytes, a, b) for a != b
    memory: Sequence[int] = (),
    capacity: Sequence[int | None] = (),
    groups: Sequence[Sequence[int]] = (),
) -> float | None:
    """The optimal makespan, or None when no placement fits memory."""
    n, m = len(times), len(times[0])
    reach = [[False] * n for _ in range(n)]
    for u, v, _ in sorted(edges, key=lambda e: -e[0]):
        reach[u][v] = True
    for k in reversed(range(n)):
        for u, v, _ in edges:
            if u == k:
                for w in range(n):
                    reach[k][w] = reach[k][w] or reach[v][w]
    best: float | None = None
    for placement in itertools.product(range(m), repeat=n):
        if any(len({placement[k] for k in g}) > 1 for g in groups):
            continue
        if memory and capacity:
            used = [0] * m
            for k, d in enumerate(placement):
                used[d] += memory[k]
            if any(c is not None and used[d] > c for d, c in enumerate(capacity)):
                continue
        per_device = [[k for k in range(n) if placement[k] == d] for d in range(m)]
        choices = [_linear_extensions(ops, lambda a, b: reach[a][b]) for ops in per_device]
        for orders in itertools.product(*choices):
            span = _evaluate(times, edges, delay, placement, orders)
            if span is not None and (best is None or span < best):
                best = span
    return best


def _evaluate(times, edges, delay, placement, orders) -> float | None:  # noqa: ANN001
    n = len(times)
    prev = {}
    for seq in orders:
        for a, b in zip(seq, seq[1:]):
            prev[b] = a
    end: dict[int, float] = {}
    pending = set(range(n))
    while pending:
        progressed = False
        for k in sorted(pending):
            deps = [u for u, v, _ in edges if v == k] + ([prev[k]] if k in prev else [])
            if all(d in end for d in deps):
                t = end[prev[k]] if k in prev else 0.0
                for u, v, size in edges:
                    if v == k:
                        a, b = placement[u], placement[k]
                        t = max(t, end[u] + (delay(size, a, b) if a != b else 0.0))
                end[k] = t + times[k][placement[k]]
                pending.discard(k)
                progressed = True
        if not progressed:
            return None  # the device orders deadlock against the graph
    return max(end.values())
