"""A proven lower bound from an exact solve of a small relaxation of the problem.

The bound that stalls big solves is usually set by a few ops: the critical path and the
ops it shares colocation groups with (a layer's forward op and its backward op run on
one device, so the path cannot use every device freely). This module keeps only such a
*core* of ops, closed under groups, and replaces the rest of the graph by numbers that
every schedule of the full problem respects:

- a release per core op: the longest path into it, at the fastest durations, with no
  communication (an op cannot start before all its ancestors ran one after another);
- a tail per core op: the same out of it, to the end of the step;
- a lag per pair of core ops joined by paths through non-core ops: the longest such
  path's durations (its ops run in sequence between the two).

Edges between core ops keep their device-dependent delays, groups, pins and memory stay
as they are. Restricting any schedule of the full problem to the core gives a schedule
of the relaxation no longer than it, so CP-SAT's proven bound on the relaxation bounds
the full problem. Its model is the monolithic one (placer.formulations.cpsat_model) of
the core as a problem of its own, plus these constraints, with releases, tails and lags
rounded down to ticks (durations are rounded up and the slack subtracted, as always).
"""
from __future__ import annotations

import heapq
import math
from typing import Any

from placer.bounds import longest_path
from placer.budget import Budget
from placer.model import Edge, Problem

__all__ = ["core_bound_ms", "critical_core"]


def critical_core(problem: Problem, max_ops: int) -> list[list[int]]:
    """Cores to relax: the critical path's groups, cut into pieces of at most about
    `max_ops` ops (each piece is a valid relaxation on its own)."""
    path = longest_path(problem, [problem.min_time_ms(k) for k in range(problem.n_ops)])
    cores: list[list[int]] = []
    core: set[int] = set()
    seen_groups: set[int] = set()
    for k in path:
        g = problem.group[k]
        if g in seen_groups:
            continue
        seen_groups.add(g)
        if core and len(core) + len(problem.groups[g]) > max_ops:
            cores.append(sorted(core))
            core = set()
        core.update(problem.groups[g])
    if core:
        cores.append(sorted(core))
    return cores


def core_bound_ms(problem: Problem, core: list[int], budget: Budget, seconds: float, lower_bound_ms: float
                  ) -> tuple[float, dict[str, Any]]:
    """CP-SAT's proven bound on the relaxation to `core` (a sorted, group-closed op list)."""
    from placer.formulations.cpsat_model import build_cpsat

    fastest = [problem.min_time_ms(k) for k in range(problem.n_ops)]
    head = _longest_into(problem, fastest)
    tail = _longest_out_of(problem, fastest)
    sub = _sub_problem(problem, core)
    position = {k: i for i, k in enumerate(core)}
    lags = _lags(problem, core, position, fastest)
    horizon_ms = max(head[k] for k in core) + sum(max(row) for row in sub.time_ms) + max(tail[k] for k in core)
    f = build_cpsat(sub, None, lower_bound_ms, redundant_cumulative=True, horizon_ms=horizon_ms + 1.0)
    m, tick = f.model, f.tick_ms
    for k in core:
        i = position[k]
        m.add(f.start[i] >= math.floor(head[k] / tick + 1e-9))
        m.add(f.cmax >= f.end[i] + math.floor(tail[k] / tick + 1e-9))
    for (u, v), lag in lags.items():
        m.add(f.start[v] >= f.end[u] + math.floor(lag / tick + 1e-9))
    run, _ = budget.solve_cpsat(m, seconds)
    stats = {"core_ops": len(core), "status": run.status.value, "lags": len(lags)}
    if run.bound is None or not math.isfinite(run.bound):
        return 0.0, stats
    return f.lower_bound_ms(run.bound), stats


def _longest_into(problem: Problem, fastest: list[float]) -> list[float]:
    head = [0.0] * problem.n_ops
    for k in range(problem.n_ops):
        for i in problem.preds[k]:
            u = problem.edges[i].src
            head[k] = max(head[k], head[u] + fastest[u])
    return head


def _longest_out_of(problem: Problem, fastest: list[float]) -> list[float]:
    tail = [0.0] * problem.n_ops
    for k in reversed(range(problem.n_ops)):
        for i in problem.succs[k]:
            v = problem.edges[i].dst
            tail[k] = max(tail[k], fastest[v] + tail[v])
    return tail


def _lags(problem: Problem, core: list[int], position: dict[int, int], fastest: list[float]
          ) -> dict[tuple[int, int], float]:
    """Longest paths between core ops through non-core ops only (by local index); paths
    through other core ops follow from the chained constraints. Ops are indexed in a
    topological order, so a heap pops each op after every op that reaches it."""
    lags: dict[tuple[int, int], float] = {}
    for u in core:
        reach: dict[int, float] = {}  # non-core op -> longest time from u's end to its start
        heap: list[int] = []
        for i in problem.succs[u]:
            w = problem.edges[i].dst
            if w not in position and w not in reach:
                reach[w] = 0.0
                heapq.heappush(heap, w)
        while heap:
            w = heapq.heappop(heap)
            done = reach[w] + fastest[w]
            for i in problem.succs[w]:
                x = problem.edges[i].dst
                if x in position:
                    key = (position[u], position[x])
                    lags[key] = max(lags.get(key, 0.0), done)
                elif x not in reach:
                    reach[x] = done
                    heapq.heappush(heap, x)
                elif reach[x] < done:
                    reach[x] = done
    return {key: lag for key, lag in lags.items() if lag > 0}


def _sub_problem(problem: Problem, core: list[int]) -> Problem:
    """The core as a problem of its own: its ops, the edges among them, its groups."""
    position = {k: i for i, k in enumerate(core)}
    edges = [Edge(position[e.src], position[e.dst], e.size_bytes) for e in problem.edges
             if e.src in position and e.dst in position]
    edges.sort(key=lambda e: (e.src, e.dst))
    preds: list[list[int]] = [[] for _ in core]
    succs: list[list[int]] = [[] for _ in core]
    for i, e in enumerate(edges):
        succs[e.src].append(i)
        preds[e.dst].append(i)
    group_map: dict[int, int] = {}
    group = []
    for k in core:
        group.append(group_map.setdefault(problem.group[k], len(group_map)))
    groups: list[list[int]] = [[] for _ in group_map]
    for i, g in enumerate(group):
        groups[g].append(i)
    old_of = {new: old for old, new in group_map.items()}
    return Problem(
        graph=problem.graph, hardware=problem.hardware,
        ops=[problem.ops[k] for k in core], devices=problem.devices,
        time_ms=[problem.time_ms[k] for k in core],
        memory_bytes=[problem.memory_bytes[k] for k in core],
        capacity_bytes=problem.capacity_bytes,
        edges=edges, preds=preds, succs=succs, group=group, groups=groups,
        group_names=[problem.group_names[old_of[g]] for g in range(len(groups))],
        allowed=[problem.allowed[old_of[g]] for g in range(len(groups))],
        router=problem.router,
        op_index={problem.ops[k]: i for i, k in enumerate(core)},
        device_index=problem.device_index,
    )
