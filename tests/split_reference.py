"""An exhaustive reference optimum for tiny split instances: every configuration of every unit
and every order of the ops that respects the graph, with earliest start times computed here
(an op's tasks start together once its devices are free and its inputs have arrived).

Costs (task times, edge delays per pair of configurations, memory) are read from the
SplitProblem's tables; the search and the timing share no code with the solver or its re-timing.
"""
from __future__ import annotations

import itertools

from placer.split.plan import SplitProblem


def _linear_extensions(n: int, preds: list[set[int]]) -> list[list[int]]:
    out: list[list[int]] = []

    def extend(prefix: list[int], placed: set[int]) -> None:
        if len(prefix) == n:
            out.append(list(prefix))
            return
        for k in range(n):
            if k not in placed and preds[k] <= placed:
                prefix.append(k)
                placed.add(k)
                extend(prefix, placed)
                placed.discard(k)
                prefix.pop()

    extend([], set())
    return out


def brute_force_split(sp: SplitProblem) -> float | None:
    """The optimal makespan over every configuration and order, or None when nothing fits."""
    p = sp.problem
    preds = [{p.edges[e].src for e in p.preds[k]} for k in range(p.n_ops)]
    orders = _linear_extensions(p.n_ops, preds)
    best = None
    for config in itertools.product(*(range(len(c)) for c in sp.configs)):
        used = [0] * p.n_devices
        for k in range(p.n_ops):
            c = config[p.group[k]]
            for d in sp.configs[p.group[k]][c].devices:
                used[d] += sp.task_memory[k][c]
        if any(cap is not None and u > cap for u, cap in zip(used, p.capacity_bytes)):
            continue
        for order in orders:
            free = [0.0] * p.n_devices
            end = [0.0] * p.n_ops
            for k in order:
                c = config[p.group[k]]
                devices = sp.configs[p.group[k]][c].devices
                ready = max(free[d] for d in devices)
                for e in p.preds[k]:
                    u = p.edges[e].src
                    ready = max(ready, end[u] + sp.edge_cost(e, config[p.group[u]], c).delay_ms)
                times = sp.task_ms[k][c]
                end[k] = ready + max(times)
                for d, t in zip(devices, times):
                    free[d] = ready + t
            makespan = max(end)
            if best is None or makespan < best:
                best = makespan
    return best
