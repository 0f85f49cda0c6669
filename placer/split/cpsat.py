"""The split planner's exact model (DESIGN.md "Split operators"), CP-SAT:

    x[u, c]  bool   unit u runs in configuration c (exactly one per unit)
    s[k], e[k] int  start and end of op k in ticks; e = s + sum_c dur[k, c] x[u(k), c]
    interval  optional (s[k], task time on device d) present iff x[u(k), c], for every device
              d of configuration c: one gang per op, no overlap per device
    s[v] >= e[u] + sum_cb delay[e, ca, cb] x[u(v), cb]   enforced by x[u(u), ca]
              (redistribution, or the all-reduce of a weight gradient inside a unit)
    sum memory of the tasks on d <= Mem(d); cmax >= e[k]; minimise cmax.

Times are integer ticks; durations and delays are rounded up, so every model solution is
feasible in continuous time, and `rounding_slack_ms` (at most one tick per op and per edge on a
chain) keeps the reported lower bound valid. Zero-length tasks occupy one tick of their device.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from placer.formulations.cpsat_model import _ticks, pick_tick
from placer.split.plan import SplitPlan, SplitProblem

__all__ = ["SplitCpSat", "build_split_cpsat"]

_TICKS = 1_000_000  # horizon resolution


@dataclass
class SplitCpSat:
    model: Any
    tick_ms: float
    rounding_slack_ms: float
    x: list[list[Any]]
    start: list[Any]
    cmax: Any
    stats: dict[str, int]

    def decode(self, value: Callable[[Any], int], sp: SplitProblem) -> SplitPlan:
        """The configurations and the order of the solver's starts, re-timed in continuous time."""
        config = [next(c for c, lit in enumerate(lits) if value(lit)) for lits in self.x]
        starts = [value(s) for s in self.start]
        order = sorted(range(sp.problem.n_ops), key=lambda k: (starts[k], k))
        return sp.retime(config, order)

    def lower_bound_ms(self, bound_ticks: float) -> float:
        return max(0.0, math.floor(bound_ticks + 1e-9) * self.tick_ms - self.rounding_slack_ms)


def _tick_starts(sp: SplitProblem, plan: SplitPlan, task: list[list[list[int]]],
                 delays_ms: list[dict[tuple[int, int], float]], tick: float) -> list[int]:
    """The plan re-timed in the model's ticks (rounded-up costs, its order): a complete,
    feasible hint."""
    p = sp.problem
    free = [0] * p.n_devices
    start, end = [0] * p.n_ops, [0] * p.n_ops
    for k in plan.order:
        c = plan.config[p.group[k]]
        devices = sp.configs[p.group[k]][c].devices
        ready = max(free[d] for d in devices)
        for e in p.preds[k]:
            u = p.edges[e].src
            ready = max(ready, end[u] + _ticks(delays_ms[e][plan.config[p.group[u]], c], tick))
        start[k] = ready
        end[k] = ready + _ticks(sp.duration_ms(k, c), tick)
        for d, t in zip(devices, task[k][c]):
            free[d] = ready + t
    return start


def build_split_cpsat(sp: SplitProblem, hint: SplitPlan | None, horizon_ms: float) -> SplitCpSat:
    """The model over every configuration of `sp`; `hint` (a valid plan) is CP-SAT's hint and
    `horizon_ms` (its makespan, or any plan's) bounds every start."""
    from ortools.sat.python import cp_model

    p = sp.problem
    m = cp_model.CpModel()
    n_cfg = [len(c) for c in sp.configs]
    delays_ms: list[dict[tuple[int, int], float]] = []
    for e_idx, edge in enumerate(p.edges):
        gu, gv = p.group[edge.src], p.group[edge.dst]
        pairs = [(c, c) for c in range(n_cfg[gu])] if gu == gv else \
            [(ca, cb) for ca in range(n_cfg[gu]) for cb in range(n_cfg[gv])]
        delays_ms.append({pair: sp.edge_cost(e_idx, *pair).delay_ms for pair in pairs})
    values = [t for k in range(p.n_ops) for row in sp.task_ms[k] for t in row]
    values += [d for row in delays_ms for d in row.values()]
    tick, exact = pick_tick(values, horizon_ms, min_ticks=_TICKS / 2)
    dur = [[_ticks(sp.duration_ms(k, c), tick) for c in range(n_cfg[p.group[k]])] for k in range(p.n_ops)]
    task = [[[max(1, _ticks(t, tick)) for t in sp.task_ms[k][c]] for c in range(n_cfg[p.group[k]])]
            for k in range(p.n_ops)]
    horizon = math.ceil(horizon_ms / tick) + 2 * (p.n_ops + len(p.edges)) + 2

    x = []
    for u, cfgs in enumerate(sp.configs):
        lits = [m.new_bool_var(f"x_{u}_{c}") for c in range(len(cfgs))]
        m.add_exactly_one(lits)
        x.append(lits)

    per_device: list[list[Any]] = [[] for _ in range(p.n_devices)]
    start, end = [], []
    for k in range(p.n_ops):
        u = p.group[k]
        s = m.new_int_var(0, horizon, f"s_{k}")
        if len(set(dur[k])) == 1:
            e = s + dur[k][0]
        else:
            e = m.new_int_var(0, horizon + max(dur[k]), f"e_{k}")
            m.add(e == s + sum(t * x[u][c] for c, t in enumerate(dur[k])))
        for c, cfg in enumerate(sp.configs[u]):
            for d, t in zip(cfg.devices, task[k][c]):
                per_device[d].append(m.new_optional_fixed_size_interval_var(s, t, x[u][c], f"i_{k}_{c}_{d}"))
        start.append(s)
        end.append(e)
    for intervals in per_device:
        if len(intervals) > 1:
            m.add_no_overlap(intervals)

    terms = 0
    has_points = any(t == 0 for t in values[: sum(len(r) for k in range(p.n_ops) for r in sp.task_ms[k])])
    # a duration rounded up and a zero-length task's tick per op; a delay rounded up per edge
    slack_ms = 0.0 if exact and not has_points else tick * (2 * p.n_ops + len(p.edges))
    for e_idx, edge in enumerate(p.edges):
        u, v = edge.src, edge.dst
        gu, gv = p.group[u], p.group[v]
        m.add(start[v] >= end[u])
        if gu == gv:
            for c in range(n_cfg[gu]):
                delay = _ticks(delays_ms[e_idx][c, c], tick)
                if delay > 0:
                    m.add(start[v] >= end[u] + delay).only_enforce_if(x[gu][c])
                    terms += 1
            continue
        for ca in range(n_cfg[gu]):
            row = [(_ticks(delays_ms[e_idx][ca, cb], tick), cb) for cb in range(n_cfg[gv])]
            row = [(d, cb) for d, cb in row if d > 0]
            if not row:
                continue
            ct = m.add(start[v] >= end[u] + sum(d * x[gv][cb] for d, cb in row))
            if n_cfg[gu] > 1:
                ct.only_enforce_if(x[gu][ca])
            terms += len(row)

    for d, cap in enumerate(p.capacity_bytes):
        if cap is None:
            continue
        demand = []
        for u, cfgs in enumerate(sp.configs):
            for c, cfg in enumerate(cfgs):
                if d in cfg.devices:
                    need = sum(sp.task_memory[k][c] for k in p.groups[u])
                    if need:
                        demand.append(need * x[u][c])
        if demand:
            m.add(sum(demand) <= cap)

    cmax = m.new_int_var(0, horizon + max(max(r) for r in dur), "cmax")
    for k in range(p.n_ops):
        if not p.succs[k]:
            m.add(cmax >= end[k])
    m.minimize(cmax)

    if hint is not None:
        for u, lits in enumerate(x):
            for c, lit in enumerate(lits):
                m.add_hint(lit, c == hint.config[u])
        starts = _tick_starts(sp, hint, task, delays_ms, tick)
        for k, t in enumerate(starts):
            m.add_hint(start[k], t)
            c = hint.config[p.group[k]]
            if isinstance(end[k], cp_model.IntVar):
                m.add_hint(end[k], t + dur[k][c])
        m.add_hint(cmax, max(starts[k] + dur[k][hint.config[p.group[k]]] for k in range(p.n_ops)))
    stats = {"split_units": len(sp.configs), "split_configs": sum(n_cfg), "split_precedence_terms": terms}
    return SplitCpSat(m, tick, slack_ms, x, start, cmax, stats)
