"""A bound that couples a series decomposition's components through device loads.

The decomposition bound (placer.decompose) adds up the time cuts and each component's
optimum, each component alone. It drops the dangling ops (weight updates) and the link
between components, so it is blind to a cost that BERT-base pays: its 230 time cuts and
12 layer components all run best on one device (28.25 ms), and the 2.0 ms of weight
updates, colocated with the layers' weights, then land on that device too (30.25 ms).
Moving part of the chain to another device costs transfers where the chain switches.

This master problem chooses a device for every colocation group of the time cuts and the
components (their dangling ops go with them). A component whose groups are not all on
one device costs at least its spread bound (the component model told so); one across
which the chain switches devices (the cut groups it touches not all on one device), at
least its switched bound (told so). A switch between consecutive cuts joined directly
costs the fastest delay any device pair has for their tensors. Then

    makespan >= cuts + sum of component bounds (+ spread or switched extra) + switches,
    makespan >= the work of the groups on each device,
    makespan >= H_i + the work on a device of the ops after time cut i (for each i),
    makespan >= the work on a device of the ops before time cut i + T_i,

where H_i (T_i) adds up the cuts before (after) cut i and the segments before (after) it,
each segment at its bound solved alone. The last two see when a device's work must run,
not only how much there is: on a DGX A100, BERT-base's first layers' weight updates can only
follow the backward pass's end, and on the device that runs it they lengthen the step
(the bound rose from 13.762 to 13.786 ms).

Every term is a lower bound of what the schedule must pay given the choice, so CP-SAT's
proven bound on the master is a lower bound of the placement problem.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from placer.budget import Budget
from placer.formulations.cpsat_model import add_symmetry_breaking
from placer.model import Problem
from placer.relax import fastest_delay_ms

__all__ = ["ChainLoads", "chain_loads", "component_groups", "latest_cut"]


@dataclass(frozen=True)
class ChainLoads:
    """The inputs of the master besides the problem: per component, its proven bounds free,
    spread and switched (each at least the one before; see the module docstring); per
    segment, the bound of its span alone (None: the master leaves out the time windows)."""

    cuts: list[int]
    segments: list[list[int]]
    components: list[list[int]]
    bound_ms: list[float]
    spread_bound_ms: list[float]
    switched_bound_ms: list[float]
    segment_bound_ms: list[float] | None = None  # per segment, its span's bound solved alone
    priced_switches: frozenset[int] = frozenset()  # empty segments whose switch a component's bound holds


def component_groups(problem: Problem, cuts: list[int], segments: list[list[int]],
                     comp: list[int]) -> tuple[list[int], list[int]]:
    """(every group of a component's ops and boundary cuts, those of them holding a time cut)."""
    ops = [k for j in comp for k in segments[j]]
    ops += [cuts[i] for j in comp for i in (j - 1, j) if 0 <= i < len(cuts)]
    groups = sorted({problem.group[k] for k in ops})
    cut_groups = {problem.group[c] for c in cuts}
    return groups, [g for g in groups if g in cut_groups]


def latest_cut(problem: Problem, cuts: list[int]) -> list[int]:
    """Per op, the index of the latest time cut it is or descends from (-1 for none)."""
    index = {c: i for i, c in enumerate(cuts)}
    last = [-1] * problem.n_ops
    for k in range(problem.n_ops):  # (ops are in topological order)
        last[k] = max([index.get(k, -1)] + [last[problem.edges[e].src] for e in problem.preds[k]])
    return last


MAX_WINDOWS = 128  # at most so many time cuts as the windows' thresholds each way (evenly spaced)


def _windows(problem: Problem, parts: ChainLoads) -> list[tuple[float, list[bool], float]]:
    """(time before, ops counted, time after) for a device's work that must fall after a time
    cut starts, and for its work that must end before a time cut ends.

    Every op that descends from time cut i starts no earlier than cut i, which starts after the
    cuts before it and the segments before it (each at least its bound alone): on one device,
    those ops then end no earlier than that time plus their work there. The same backwards
    for the ops that come before cut i (weight updates run late, on their weights' device;
    placer.chain_loads sees the device they load, this sees when)."""
    cuts, seg = parts.cuts, parts.segment_bound_ms
    if seg is None or not cuts:
        return []
    index = {c: i for i, c in enumerate(cuts)}
    last_cut = latest_cut(problem, cuts)
    first_cut = [len(cuts)] * problem.n_ops  # earliest time cut at or after each op
    for k in reversed(range(problem.n_ops)):
        successors = [first_cut[problem.edges[e].dst] for e in problem.succs[k]]
        first_cut[k] = min([index.get(k, len(cuts))] + successors)
    cut_ms = [problem.min_time_ms(c) for c in cuts]
    # thresholds: the last cut each dangling op (off the cuts and segments) follows, the first
    # it precedes; between two of them the ops counted differ only by the chain's own
    inside = set(cuts).union(*map(set, parts.segments))
    dangling = [k for k in range(problem.n_ops) if k not in inside]
    out = []
    for i in _spaced({last_cut[k] for k in dangling if last_cut[k] >= 0}):
        before = sum(cut_ms[:i]) + sum(seg[:i + 1])
        out.append((before, [x >= i for x in last_cut], 0.0))
    for i in _spaced({first_cut[k] for k in dangling if first_cut[k] < len(cuts)}):
        after = sum(cut_ms[i + 1:]) + sum(seg[i + 1:])
        out.append((0.0, [x <= i for x in first_cut], after))
    return out


def _spaced(values: set[int]) -> list[int]:
    """At most MAX_WINDOWS of `values`, evenly spaced in their order."""
    ordered = sorted(values)
    step = max(1, math.ceil(len(ordered) / MAX_WINDOWS))
    return ordered[::step]


def chain_loads(problem: Problem, parts: ChainLoads, budget: Budget, time_limit_s: float) -> float | None:
    """The master's proven bound in ms (None when CP-SAT proves nothing in time)."""
    from ortools.sat.python import cp_model

    n = problem.n_devices
    cut_groups = sorted({problem.group[c] for c in parts.cuts})
    base_ms = sum(problem.min_time_ms(c) for c in parts.cuts) + sum(parts.bound_ms)
    total_ms = sum(max(problem.time_ms[k]) for k in range(problem.n_ops))
    unit = max(total_ms, 1e-9) / 1e8      # ms per model unit; costs are rounded down (still a bound)

    def units(ms: float) -> int:
        return max(0, math.floor(ms / unit))

    def work(g: int, d: int) -> int:
        return units(sum(problem.time_ms[k][d] for k in problem.groups[g]))

    m = cp_model.CpModel()
    comp_groups = [component_groups(problem, parts.cuts, parts.segments, comp) for comp in parts.components]
    held = sorted(set(cut_groups).union(*(set(groups) for groups, _ in comp_groups)))
    on = {g: {d: m.new_bool_var(f"y_{g}_{d}") for d in problem.allowed[g]} for g in held}
    for lits in on.values():
        m.add_exactly_one(lits.values())

    def not_together(groups: list[int], name: str) -> object:
        """A literal forced true when `groups` are not all on one device (first's device d,
        another's not d)."""
        apart = m.new_bool_var(name)
        for d, lit in on[groups[0]].items():
            for g in groups[1:]:
                m.add_bool_or([~lit, on[g][d], apart] if d in on[g] else [~lit, apart])
        return apart

    extra = []                                       # (literal, units) the chain pays
    for c, (groups, touching) in enumerate(comp_groups):
        spread_extra = units(parts.spread_bound_ms[c] - parts.bound_ms[c])
        switched_extra = units(parts.switched_bound_ms[c] - parts.bound_ms[c]) - spread_extra
        if spread_extra > 0 and len(groups) > 1:
            extra.append((not_together(groups, f"spread_{c}"), spread_extra))
        if switched_extra > 0 and len(touching) > 1:
            extra.append((not_together(touching, f"switched_{c}"), switched_extra))
    for j, seg in enumerate(parts.segments):
        if seg or j == 0 or j == len(parts.cuts) or j in parts.priced_switches:
            continue
        a, b = parts.cuts[j - 1], parts.cuts[j]
        ga, gb = problem.group[a], problem.group[b]
        delay = max((fastest_delay_ms(problem, problem.edges[i].size_bytes)
                     for i in problem.edges_between(a, b)), default=0.0)
        if ga != gb and units(delay) > 0:
            extra.append((not_together([ga, gb], f"switch_{j}"), units(delay)))
    above = m.new_int_var(0, units(total_ms) + sum(u for _, u in extra) + 1, "above_base")  # makespan - base
    m.add(above >= sum(u * lit for lit, u in extra))
    floor_base = math.ceil(base_ms / unit)
    for d in range(n):
        load = sum(work(g, d) * lits[d] for g, lits in on.items() if d in lits)
        m.add(above >= load - floor_base)
    for before_ms, counted, after_ms in _windows(problem, parts):
        inside = {g: [k for k in problem.groups[g] if counted[k]] for g in on}  # (once, not per device)
        for d in range(n):
            late = [(units(sum(problem.time_ms[k][d] for k in inside[g])), lits[d])
                    for g, lits in on.items() if d in lits and inside[g]]
            m.add(above >= units(before_ms) + sum(u * lit for u, lit in late if u) + units(after_ms)
                  - floor_base)
    if problem.uniform_time and all(len(allowed) == n for allowed in problem.allowed):
        # devices differ in the master only by loads: with equal GPUs any permutation keeps it
        add_symmetry_breaking(m, [list(range(n))], held, on)
    m.minimize(above)
    run, _ = budget.solve_cpsat(m, time_limit_s)
    if not run.has_solution or run.bound is None:
        return None
    return base_ms + max(0.0, math.floor(run.bound + 1e-9)) * unit
