"""The placement problem as a CP-SAT model (DESIGN.md "CP-SAT formulation").

    p[g, d]   bool   group g (ops that must share a device) runs on device d      (eq. 7)
    s[k], e[k] int   start and end of op k, in ticks; e = s + sum_d dur[k, d] p[g, d]
    interval  optional interval (s[k], dur[k, d]) present iff p[g(k), d]; no overlap per device (eq. 12)
    s[v] >= e[u] + sum_b delay[e, a, b] p[g(v), b]   enforced by p[g(u), a]  (eq. 10-11, fixed routes)
    sum_g mem[g] p[g, d] <= Mem(d)                                                 (eq. 13)
    cmax >= e[k] for every sink; minimise cmax.

Times are integer ticks. When every duration and delay is a multiple of a round tick
the model is exact; otherwise durations and delays are rounded up (so every model
solution stays feasible in continuous time) and `rounding_slack_ms` bounds how much
that can lengthen the optimum, which keeps the reported lower bound honest.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from placer.model import Edge, Problem
from placer.schedule import Schedule, Solution, earliest_times, solution_from_starts

__all__ = ["CpSatFormulation", "add_releases", "build_cpsat", "pair_delays", "pick_tick"]

_ROUND_TICKS_MS = (1.0, 0.5, 0.25, 0.1, 0.05, 0.01, 1e-3, 1e-4, 1e-5, 1e-6)
_MAX_TICKS = 2**40
_APPROX_TICKS = 2_000_000  # horizon resolution when no round tick is exact


@dataclass
class CpSatFormulation:
    model: Any
    tick_ms: float
    exact: bool
    rounding_slack_ms: float
    horizon_ticks: int
    presence: list[dict[int, Any]]  # group -> device -> literal
    start: list[Any]
    end: list[Any]
    cmax: Any
    duration_ticks: list[list[int]] = field(default_factory=list)  # [op][device], rounded up
    delay_ticks: list[dict[tuple[int, int], int]] = field(default_factory=list)  # [edge][(a, b)]
    stats: dict[str, int] = field(default_factory=dict)

    def decode(self, value: Callable[[Any], int], problem: Problem) -> Solution:
        """A solution from variable values (a solver, or a solution callback's Value)."""
        device = [0] * problem.n_ops
        for g, lits in enumerate(self.presence):
            chosen = [d for d, lit in lits.items() if value(lit)]
            for k in problem.groups[g]:
                device[k] = chosen[0]
        return solution_from_starts(problem, device, [value(s) for s in self.start])

    def lower_bound_ms(self, bound_ticks: float) -> float:
        """A lower bound on the continuous optimum from a bound on the tick model."""
        return max(0.0, math.floor(bound_ticks + 1e-9) * self.tick_ms - self.rounding_slack_ms)


def pick_tick(values: list[float], horizon_ms: float, min_ticks: float = 1.0) -> tuple[float, bool]:
    """The largest round tick that makes every value an integer, else a fine approximate one.

    `min_ticks`: the horizon must span at least this many ticks (fine resolution).
    """
    for tick in _ROUND_TICKS_MS:
        if horizon_ms / tick > _MAX_TICKS:
            break
        if horizon_ms / tick < min_ticks:
            continue
        if all(abs(v / tick - round(v / tick)) <= 1e-9 * max(1.0, v / tick) for v in values):
            return tick, True
    return max(horizon_ms, 1e-9) / _APPROX_TICKS, False


def _ticks(value_ms: float, tick_ms: float) -> int:
    return max(0, math.ceil(value_ms / tick_ms - 1e-9))


def pair_delays(problem: Problem, e: Edge) -> dict[tuple[int, int], float]:
    """The edge's delay for every (source device, destination device) pair it may use, the
    two devices distinct; none when its ends share a group."""
    gu, gv = problem.group[e.src], problem.group[e.dst]
    if gu == gv:
        return {}
    return {(a, b): problem.delay_ms(e, a, b) for a in problem.allowed[gu] for b in problem.allowed[gv] if a != b}


def _edge_delays(problem: Problem) -> list[dict[tuple[int, int], float]]:
    """Per edge, `pair_delays`."""
    return [pair_delays(problem, e) for e in problem.edges]


def _tick_makespan(problem: Problem, sol: Solution, dur: list[list[int]], delay: list[dict]) -> tuple[list[int], int]:
    """Re-time a solution in ticks (rounded-up costs): the hint and the horizon."""

    device = sol.device
    edge_delay = [delay[i][(device[e.src], device[e.dst])] if device[e.src] != device[e.dst] else 0
                  for i, e in enumerate(problem.edges)]
    # zero-length ops occupy one tick of their device in the model: schedule them so too
    duration = [max(1, dur[k][d]) for k, d in enumerate(device)]
    start, end = earliest_times(problem, sol, duration, edge_delay, 0)
    return start, max(end, default=0)


def _relabel(problem: Problem, sol: Solution, classes: list[list[int]], free_groups: list[int]) -> Solution:
    """Permute interchangeable devices so that they are first used in class order."""
    mapping = list(range(problem.n_devices))
    for cls in classes:
        seen: list[int] = []
        for g in free_groups:
            d = sol.device[problem.groups[g][0]]
            if d in cls and d not in seen:
                seen.append(d)
        seen += [d for d in cls if d not in seen]
        for slot, d in zip(cls, seen):
            mapping[d] = slot
    device = [mapping[d] for d in sol.device]
    order: list[list[int]] = [[] for _ in problem.devices]
    for d, seq in enumerate(sol.order):
        order[mapping[d]] = list(seq)
    return Solution(device=device, order=order)  # routes follow the devices: min-delay again


def add_symmetry_breaking(m: Any, classes: list[list[int]], groups: list[int], presence: Any,
                          hinted: dict[int, int] | None = None) -> int:
    """Interchangeable devices are first used in class order by `groups` (taken in order).

    Valid because any solution can be relabelled by a permutation of a class of devices that
    the hardware makes interchangeable (placer.model.Problem.interchangeable_devices).
    `hinted` (group -> device of a hint that already obeys the order) hints the helper
    literals too: CP-SAT takes a complete feasible hint as its first solution at once, where
    an incomplete one costs a 2,012-op model more than a minute of search.
    Returns the number of constraints added.
    """
    added = 0
    for cls in classes:
        used: list[Any] = [None] * len(cls)
        used_value = [False] * len(cls)
        for g in groups:
            lits = presence[g]
            for j in range(1, len(cls)):
                if used[j - 1] is None:
                    m.add(lits[cls[j]] == 0)
                else:
                    m.add_implication(lits[cls[j]], used[j - 1])
                added += 1
            for j, d in enumerate(cls):
                on_d = hinted is not None and hinted.get(g) == d
                if used[j] is None:
                    used[j] = lits[d]
                else:
                    both = m.new_bool_var(f"u_{g}_{d}")
                    m.add_bool_or([used[j], lits[d]]).only_enforce_if(both)
                    m.add_implication(used[j], both)
                    m.add_implication(lits[d], both)
                    used[j] = both
                    if hinted is not None:
                        m.add_hint(both, used_value[j] or on_d)
                used_value[j] = used_value[j] or on_d
    return added


def add_placement(m: Any, problem: Problem, groups: Iterable[int]) -> dict[int, dict[int, Any]]:
    """p[g, d]: group g runs on device d, exactly one per group (eq. 7)."""
    presence = {}
    for g in groups:
        lits = {d: m.new_bool_var(f"p_{g}_{d}") for d in problem.allowed[g]}
        m.add_exactly_one(lits.values())
        presence[g] = lits
    return presence


def add_op(m: Any, lits: dict[int, Any], durations: dict[int, int], horizon: int, name: str,
           per_device: dict[int, list[Any]] | list[list[Any]], point_ticks: int = 1) -> tuple[Any, Any]:
    """Start and end of one op, and its optional interval on each device it may use.

    A zero-length op is a point that must not fall strictly inside another op on its
    device: with `point_ticks` = 1 it occupies one tick (the caller charges that tick to
    the rounding slack); with 0 it takes no interval at all."""
    shortest = min(durations.values())
    s = m.new_int_var(0, max(0, horizon - shortest), f"s_{name}")
    if len(set(durations.values())) == 1:
        e = s + shortest
    else:
        e = m.new_int_var(0, horizon + max(durations.values()), f"e_{name}")
        m.add(e == s + sum(t * lits[d] for d, t in durations.items()))
    for d, t in durations.items():
        size = max(t, point_ticks)
        if size > 0:
            per_device[d].append(m.new_optional_fixed_size_interval_var(s, size, lits[d], f"i_{name}_{d}"))
    return s, e


def add_no_overlap(m: Any, per_device: Iterable[list[Any]]) -> None:
    """One op at a time on each device (eq. 12)."""
    for intervals in per_device:
        if len(intervals) > 1:
            m.add_no_overlap(intervals)


def add_energy(m: Any, starts: list[Any], shortest: list[int], n_devices: int, name: str) -> None:
    """Redundant: the ops at their shortest durations share n_devices machines (an
    energetic bound CP-SAT propagates and its LP uses)."""
    fixed = [m.new_fixed_size_interval_var(s, t, f"c_{name}_{i}") for i, (s, t) in enumerate(zip(starts, shortest))
             if t > 0]
    if n_devices > 1 and len(fixed) > n_devices:
        m.add_cumulative(fixed, [1] * len(fixed), n_devices)


def add_precedence(m: Any, start_v: Any, end_u: Any, pu: dict[int, Any], pv: dict[int, Any],
                   delay: dict[tuple[int, int], int]) -> int:
    """v starts after u ends plus the transfer delay of the devices they run on
    (eq. 10-11, fixed routes): one constraint per device of u, enforced by its literal.
    Returns how many enforced constraints were added."""
    m.add(start_v >= end_u)
    added = 0
    for a, on_a in pu.items():
        terms = [delay[a, b] * pv[b] for b in pv if b != a and delay.get((a, b), 0) > 0]
        if not terms:
            continue
        ct = m.add(start_v >= end_u + sum(terms))
        if len(pu) > 1:
            ct.only_enforce_if(on_a)
        added += 1
    return added


def add_memory(m: Any, problem: Problem, presence: dict[int, dict[int, Any]]) -> None:
    """sum of the groups' memory on each device <= its capacity (eq. 13)."""
    for d, cap in enumerate(problem.capacity_bytes):
        demand = {g: problem.group_memory_bytes(g) for g, lits in presence.items() if d in lits}
        if cap is not None and sum(demand.values()) > cap:
            m.add(sum(mem * presence[g][d] for g, mem in demand.items() if mem) <= cap)


def add_releases(m: Any, problem: Problem, start: list[Any], cmax: Any, releases: tuple[list[float], list[float]],
                 tick_ms: float) -> None:
    """Redundant: op k starts no earlier than its head, and the makespan is at least its
    start + its fastest time + its tail. Valid in ticks: a tick solution, read in
    milliseconds with the real (shorter) costs, is a valid schedule that ends by cmax."""
    heads, tails = releases
    for k in range(problem.n_ops):
        if heads[k] > 0:
            m.add(start[k] >= math.floor(heads[k] / tick_ms + 1e-9))
        if tails[k] > 0:
            m.add(cmax >= start[k] + math.floor((problem.min_time_ms(k) + tails[k]) / tick_ms + 1e-9))


def build_cpsat(problem: Problem, incumbent: Schedule | None, lower_bound_ms: float,
                redundant_cumulative: bool = True, symmetry_breaking: bool = True,
                releases: tuple[list[float], list[float]] | None = None,
                complete_hint: bool = False) -> CpSatFormulation:
    """Build the model; `incumbent` (the best heuristic) becomes the hint and the horizon.

    Without `symmetry_breaking` every relabelling of interchangeable devices stays a
    solution: what placer.neighbourhood needs to fix part of any incumbent as it is.
    `releases`: per op a head and a tail (ms) that hold for every valid placement
    (placer.bounds.Costs), added as redundant constraints. With `complete_hint` every
    variable is hinted (symmetry-breaking helpers and ends too), which CP-SAT takes as its
    first solution at once: what a big model solved without presolve needs (msr BERT-12,
    2,012 ops: no solution in 60 s from the partial hint). Small models keep the partial
    hint, which CP-SAT completes itself; a complete one changed their deterministic searches
    for the worse (GNMT in msr form: 32.29 -> 33.87 ms)."""
    from ortools.sat.python import cp_model

    delays_ms = _edge_delays(problem)
    values = [problem.time_ms[k][d] for k in range(problem.n_ops) for d in problem.allowed[problem.group[k]]]
    values += [x for per_edge in delays_ms for x in per_edge.values()]
    if incumbent is not None:
        horizon_ms = incumbent.makespan_ms
    else:
        horizon_ms = sum(max(row) for row in problem.time_ms) + sum(max(d.values(), default=0.0) for d in delays_ms)
    has_points = any(problem.time_ms[k][d] == 0 for k in range(problem.n_ops) for d in problem.allowed[problem.group[k]])
    # zero-length ops occupy one tick (see below): keep that tick negligible
    tick, exact = pick_tick(values, horizon_ms, min_ticks=_APPROX_TICKS / 2 if has_points else 1.0)
    dur = [[_ticks(t, tick) for t in row] for row in problem.time_ms]
    delay = [{pair: _ticks(x, tick) for pair, x in per_edge.items()} for per_edge in delays_ms]

    slack_ms = 0.0
    if not exact:
        for k in range(problem.n_ops):
            allowed = problem.allowed[problem.group[k]]
            slack_ms += max(dur[k][d] * tick - problem.time_ms[k][d] for d in allowed)
            slack_ms += max(
                (delay[i][pair] * tick - delays_ms[i][pair] for i in problem.preds[k] for pair in delay[i]),
                default=0.0,
            )

    slack_ms += tick * sum(1 for k in range(problem.n_ops)
                           if any(dur[k][d] == 0 for d in problem.allowed[problem.group[k]]))
    classes = problem.interchangeable_devices
    free_groups = [g for g in range(len(problem.groups)) if len(problem.allowed[g]) == problem.n_devices]
    free_groups.sort(key=lambda g: problem.groups[g][0])
    hint: Solution | None = None
    if incumbent is not None:
        hint = _relabel(problem, incumbent.solution, classes, free_groups) if symmetry_breaking else incumbent.solution
        hint_start, horizon = _tick_makespan(problem, hint, dur, delay)
    else:
        horizon = sum(max(max(row), 1) for row in dur) + sum(max(d.values(), default=0) for d in delay)
        horizon = max(horizon, _ticks(horizon_ms, tick))

    m = cp_model.CpModel()
    placed = add_placement(m, problem, range(len(problem.groups)))
    presence: list[dict[int, Any]] = [placed[g] for g in range(len(problem.groups))]

    start, end = [], []
    per_device: list[list[Any]] = [[] for _ in problem.devices]
    for k in range(problem.n_ops):
        lits = presence[problem.group[k]]
        s, e = add_op(m, lits, {d: dur[k][d] for d in lits}, horizon, str(k), per_device)
        start.append(s)
        end.append(e)
    add_no_overlap(m, per_device)
    if redundant_cumulative:
        add_energy(m, start, [min(dur[k][d] for d in presence[problem.group[k]]) for k in range(problem.n_ops)],
                   problem.n_devices, "all")

    n_enforced = 0
    for i, edge in enumerate(problem.edges):
        u, v = edge.src, edge.dst
        n_enforced += add_precedence(m, start[v], end[u], presence[problem.group[u]], presence[problem.group[v]],
                                     delay[i])
    add_memory(m, problem, placed)

    cmax = m.new_int_var(0, horizon, "cmax")
    for k in range(problem.n_ops):
        if not problem.succs[k]:
            m.add(cmax >= end[k])
    m.add(cmax >= max(0, math.floor((lower_bound_ms - slack_ms) / tick)))
    if releases is not None:
        add_releases(m, problem, start, cmax, releases, tick)
    m.minimize(cmax)

    chosen = {g: hint.device[problem.groups[g][0]] for g in range(len(problem.groups))} if hint is not None else None
    n_symmetry = add_symmetry_breaking(m, classes, free_groups, presence, chosen if complete_hint else None) \
        if symmetry_breaking else 0

    if hint is not None:
        for g, lits in enumerate(presence):
            for d, lit in lits.items():
                m.add_hint(lit, d == chosen[g])
        for k in range(problem.n_ops):
            m.add_hint(start[k], hint_start[k])
            if complete_hint and isinstance(end[k], cp_model.IntVar) and end[k].index != start[k].index:
                m.add_hint(end[k], hint_start[k] + dur[k][hint.device[k]])
        m.add_hint(cmax, horizon)

    return CpSatFormulation(
        model=m,
        tick_ms=tick,
        exact=exact,
        rounding_slack_ms=slack_ms,
        horizon_ticks=horizon,
        presence=presence,
        start=start,
        end=end,
        cmax=cmax,
        duration_ticks=dur,
        delay_ticks=delay,
        stats={
            "variables": len(m.proto.variables),
            "constraints": len(m.proto.constraints),
            "enforced_precedences": n_enforced,
            "symmetry_constraints": n_symmetry,
            "interchangeable_devices": sum(len(c) for c in classes),
        },
    )
