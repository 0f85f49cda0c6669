"""Lower bounds on the makespan that hold for every valid placement.

The solvers improve on them with what they prove; a result's `gap` is measured
against the best bound known.
"""
from __future__ import annotations

import math

from placer.model import Problem

__all__ = ["lower_bound_ms", "critical_path_ms", "communication_bound_ms", "work_bound_ms"]


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
    """max(communication-aware critical path, work / devices, largest group, pinned load)."""
    return max(critical_path_ms(problem), communication_bound_ms(problem), work_bound_ms(problem))


def _earliest_with_communication(problem: Problem, reverse: bool) -> list[float]:
    """Per op, a lower bound on its earliest start (or, reversed, on the time from its
    end to the makespan) that charges communication where parallelism needs it.

    The inputs an op gets without a transfer come from ops on its own device, which run
    one at a time; every other input pays at least the fastest transfer of its size. For
    an op v with inputs u (release r(u), fastest finish f(u), fastest delay c(u)), some
    set S of inputs is local: start(v) >= max(max_{u not in S} f(u) + c(u),
    one-machine completion of S). The best S is always the k inputs with the largest
    f(u) + c(u) (a larger S only adds local work), so k = 0..|inputs| is tried.
    Inputs in v's colocation group are always local.
    """
    n = problem.n_ops
    fastest = [problem.min_time_ms(k) for k in range(n)]
    min_delay: dict[int, float] = {}
    pairs = [(a, b) for a in range(problem.n_devices) for b in range(problem.n_devices) if a != b]

    def cheapest(i: int) -> float:
        if i not in min_delay:
            e = problem.edges[i]
            min_delay[i] = min((problem.delay_ms(e, a, b) for a, b in pairs), default=0.0)
        return min_delay[i]

    release = [0.0] * n
    order = range(n - 1, -1, -1) if reverse else range(n)
    for v in order:
        inputs = []
        for i in (problem.succs[v] if reverse else problem.preds[v]):
            u = problem.edges[i].dst if reverse else problem.edges[i].src
            finish = release[u] + fastest[u]
            local = problem.group[u] == problem.group[v] or problem.n_devices == 1
            inputs.append((math.inf if local else finish + cheapest(i), release[u], fastest[u], finish))
        if not inputs:
            continue
        inputs.sort(key=lambda x: -x[0])
        best = math.inf
        local_ops: list[tuple[float, float]] = []
        for k in range(len(inputs) + 1):
            remote = inputs[k][0] if k < len(inputs) else 0.0
            if remote == math.inf:
                local_ops.append((inputs[k][1], inputs[k][2]))
                continue
            t = 0.0
            for r, d in sorted(local_ops):
                t = max(t, r) + d
            best = min(best, max(remote, t))
            if k < len(inputs):
                local_ops.append((inputs[k][1], inputs[k][2]))
        release[v] = best
    return release


def communication_bound_ms(problem: Problem) -> float:
    """max over ops of (earliest start + op + time after it), both communication-aware."""
    head = _earliest_with_communication(problem, reverse=False)
    tail = _earliest_with_communication(problem, reverse=True)
    return max((head[k] + problem.min_time_ms(k) + tail[k] for k in range(problem.n_ops)), default=0.0)
