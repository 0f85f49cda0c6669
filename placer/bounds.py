"""Lower bounds on the makespan that hold for every valid placement.

The solvers improve on them with what they prove; a result's `gap` is measured
against the best bound known.
"""
from __future__ import annotations

from placer.model import Problem

__all__ = ["lower_bound_ms", "critical_path_ms", "work_bound_ms"]


def critical_path_ms(problem: Problem) -> float:
    """Longest path with every op at its fastest allowed time and no communication."""
    finish = [0.0] * problem.n_ops
    for k in range(problem.n_ops):
        ready = max((finish[problem.edges[i].src] for i in problem.preds[k]), default=0.0)
        finish[k] = ready + problem.min_time_ms(k)
    return max(finish, default=0.0)


def work_bound_ms(problem: Problem) -> float:
    """Total work spread perfectly over the devices, and the biggest single group."""
    total = sum(problem.min_time_ms(k) for k in range(problem.n_ops))
    biggest_group = max(
        min(sum(problem.time_ms[k][d] for k in ops) for d in problem.allowed[g])
        for g, ops in enumerate(problem.groups)
    )
    pinned = [0.0] * problem.n_devices
    for g, allowed in enumerate(problem.allowed):
        if len(allowed) == 1:
            pinned[allowed[0]] += sum(problem.time_ms[k][allowed[0]] for k in problem.groups[g])
    return max(total / problem.n_devices, biggest_group, max(pinned))


def lower_bound_ms(problem: Problem) -> float:
    """max(critical path without communication, work / devices, largest group, pinned load)."""
    return max(critical_path_ms(problem), work_bound_ms(problem))
