"""The CP-SAT model restricted to a few ops: what the bounds that reason about part of the
graph solve (placer.cone_bounds, placer.refutation).

Everything outside the ops is dropped, memory is left out, and every duration and transfer
delay is rounded down to ticks (floor(a + b) >= floor(a) + floor(b) keeps every real
schedule a tick solution). So any valid placement and schedule of the whole graph,
restricted to the ops, is a solution of the sub-model, and what CP-SAT proves of the
sub-model holds for the whole graph. The pieces are the whole model's
(placer.formulations.cpsat_model): placement with pins and symmetry breaking, optional
intervals, one op at a time per device, precedences enforced with the delay of the
devices chosen; zero-length ops take no interval.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from placer.formulations.cpsat_model import (
    add_no_overlap,
    add_op,
    add_placement,
    add_precedence,
    add_symmetry_breaking,
    pair_delays,
    pick_tick,
)
from placer.model import Problem

__all__ = ["SubModel", "sub_model"]

_TICKS = 20_000  # resolution of a sub-model's horizon when no round tick is exact: 5x the cone
# sub-solves of 2,000,000 (the whole model's) in the same time on NASNet-style cells, and a higher bound


@dataclass
class SubModel:
    """A CP-SAT model over a few ops; times in ticks of `tick` ms from the caller's origin."""

    model: Any
    tick: float
    start: dict[int, Any]
    finish: dict[int, Any]

    def down(self, ms: float) -> int:
        """`ms` in ticks, rounded down (durations, delays, earliest starts: a relaxation)."""
        return math.floor(ms / self.tick + 1e-9)

    def up(self, ms: float) -> int:
        """`ms` in ticks, rounded up (deadlines: a relaxation)."""
        return math.ceil(ms / self.tick - 1e-9)


def sub_model(problem: Problem, ops: list[int], horizon_ms: float, earliest_ms: dict[int, float],
              deadline_ms: dict[int, float] | None = None, reverse: bool = False) -> SubModel:
    """`ops` placed on their groups' devices and scheduled from time 0 to `horizon_ms`: each
    starts no earlier than `earliest_ms` and ends by `deadline_ms` (where given), and each
    edge between two of them is a precedence with its transfer delay. With `reverse` the
    edges point the other way (tails: the consumer comes first; the delay is still the
    tensor's, from its source's device to its destination's). The tick is the largest round
    one that makes every duration and delay exact in at least 2,000 ticks, else the horizon
    over 20,000."""
    from ortools.sat.python import cp_model

    inside = set(ops)
    edges = [i for k in ops for i in problem.preds[k] if problem.edges[i].src in inside]
    delays = {i: pair_delays(problem, problem.edges[i]) for i in edges}
    values = [problem.time_ms[k][d] for k in ops for d in problem.allowed[problem.group[k]]]
    values += [x for pairs in delays.values() for x in pairs.values()]
    tick, exact = pick_tick(values, max(horizon_ms, 1e-9), min_ticks=_TICKS / 10)  # exact ticks lose nothing
    if not exact:
        tick = max(horizon_ms, 1e-9) / _TICKS  # coarse ticks keep each solve short (each op loses < 1 tick)
    horizon = math.ceil(horizon_ms / tick) + 1
    sub = SubModel(cp_model.CpModel(), tick, {}, {})
    m = sub.model
    groups = sorted({problem.group[k] for k in ops})
    presence = add_placement(m, problem, groups)
    per_device: list[list[Any]] = [[] for _ in problem.devices]
    for k in ops:
        lits = presence[problem.group[k]]
        sub.start[k], sub.finish[k] = add_op(m, lits, {d: sub.down(problem.time_ms[k][d]) for d in lits}, horizon,
                                             str(k), per_device, point_ticks=0)
        m.add(sub.start[k] >= sub.down(earliest_ms[k]))
        if deadline_ms is not None:
            m.add(sub.finish[k] <= sub.up(deadline_ms[k]))
    add_no_overlap(m, per_device)
    for i in edges:
        edge = problem.edges[i]
        first, then = (edge.dst, edge.src) if reverse else (edge.src, edge.dst)
        add_precedence(m, sub.start[then], sub.finish[first], presence[problem.group[edge.src]],
                       presence[problem.group[edge.dst]], {pair: sub.down(x) for pair, x in delays[i].items()})
    free = [g for g in groups if len(problem.allowed[g]) == problem.n_devices]
    add_symmetry_breaking(m, problem.interchangeable_devices, free, presence)
    return sub
