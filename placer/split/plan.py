"""A split plan and its problem: configurations per unit, costs per op and edge, re-timing in
continuous time, the two baselines (data parallelism, a placement) and the expansion into the
result document's task-level entries.

A unit is a colocation group (problem.groups): all its ops share one configuration, so an op,
its backward op and its update are cut the same way on the same devices. Edges inside a unit
are task-local (saved activations, recurrent state), except a sample-split unit's weight
gradient, which is all-reduced over its devices before its update runs.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from placer.errors import SolutionCheckError
from placer.model import Problem
from placer.schedule import Schedule
from placer.schema import CollectiveEntry, ScheduleEntry, SplitEntry, TransferEntry
from placer.split.configs import Config, SplitOptions, unit_configs
from placer.split.costs import (
    Move,
    gradient_bytes,
    ring_all_reduce_ms,
    ring_routes,
    task_memory_bytes,
    task_time_ms,
    transfers,
)
from placer.split.semantics import Layout, input_need, output_layout, role

__all__ = ["EdgeCost", "SplitPlan", "SplitProblem"]


@dataclass(frozen=True, slots=True)
class EdgeCost:
    """What an edge costs under a pair of configurations: its redistribution moves (or an
    all-reduce of its bytes over the producer's devices) and the delay until the consumer may start."""

    delay_ms: float
    moves: tuple[Move, ...] = ()
    all_reduce: bool = False


@dataclass
class SplitPlan:
    """A configuration per unit and a start per op (all tasks of an op start together)."""

    config: list[int]
    start_ms: list[float]
    end_ms: list[float]
    order: list[int]

    @property
    def makespan_ms(self) -> float:
        return max(self.end_ms, default=0.0)


class SplitProblem:
    """A placement problem with the configurations and costs of splitting (placer.split.costs)."""

    def __init__(self, problem: Problem, options: SplitOptions):
        self.problem = problem
        self.options = options
        by_id = {op.id: op for op in problem.graph.ops}
        self.spec = [by_id[o] for o in problem.ops]
        self.roles = [role(op.kind) for op in self.spec]
        p = problem
        work = [sum(p.min_time_ms(k) for k in ops) for ops in p.groups]
        total = sum(work) or 1.0
        self.configs: list[list[Config]] = []
        for g, ops in enumerate(p.groups):
            cfgs = unit_configs(p, ops, p.allowed[g], work[g] >= options.heavy_share * total, options)
            if self._has_internal_forward_edges(ops):
                cfgs = [c for c in cfgs if c.dim in (None, "sample")]
            self.configs.append(cfgs)
        devices = p.hardware.devices
        self.task_ms: list[list[tuple[float, ...]]] = []
        self.task_memory: list[list[int]] = []
        for k, op in enumerate(self.spec):
            cfgs = self.configs[p.group[k]]
            self.task_ms.append([tuple(task_time_ms(op, devices[d], c.dim, c.degree, options.task_overhead_ms)
                                       for d in c.devices) for c in cfgs])
            self.task_memory.append([task_memory_bytes(op, c.dim, c.degree) for c in cfgs])
        self._edge_costs: dict[tuple[int, int, int], EdgeCost] = {}

    def _has_internal_forward_edges(self, ops: list[int]) -> bool:
        p, inside = self.problem, set(ops)
        return any(p.edges[e].dst in inside and self.roles[k] == self.roles[p.edges[e].dst] != "update"
                   for k in ops for e in p.succs[k])

    # ------------------------------------------------------------------ costs

    def duration_ms(self, k: int, c: int) -> float:
        return max(self.task_ms[k][c])

    def unit(self, k: int) -> int:
        return self.problem.group[k]

    def config_of(self, k: int, c: int) -> Config:
        return self.configs[self.problem.group[k]][c]

    def layouts(self, e: int, ca: int, cb: int) -> tuple[Layout, Layout]:
        edge = self.problem.edges[e]
        u, v = edge.src, edge.dst
        a, b = self.config_of(u, ca), self.config_of(v, cb)
        if self.roles[u] == "backward" and self.roles[v] == "update":
            # the weight gradient: partial sums of a sample split, slices of a channel split
            out = output_layout("update", a.dim, a.degree)
            out = Layout("partial", a.degree) if out.form == "replica" else out
        else:
            out = output_layout(self.spec[u].kind, a.dim, a.degree)
        return out, input_need(self.spec[v].kind, b.dim, b.degree)

    def edge_cost(self, e: int, ca: int, cb: int) -> EdgeCost:
        key = (e, ca, cb)
        cost = self._edge_costs.get(key)
        if cost is None:
            cost = self._edge_costs[key] = self._compute_edge_cost(e, ca, cb)
        return cost

    def _compute_edge_cost(self, e: int, ca: int, cb: int) -> EdgeCost:
        p = self.problem
        edge = p.edges[e]
        u, v = edge.src, edge.dst
        a, b = self.config_of(u, ca), self.config_of(v, cb)
        if p.group[u] == p.group[v]:
            if a.degree > 1 and a.dim == "sample" and self.roles[u] == "backward" and self.roles[v] == "update":
                names = [p.devices[d] for d in a.devices]
                size = gradient_bytes(edge.size_bytes, self.spec[v])
                return EdgeCost(ring_all_reduce_ms(p.router, names, size), all_reduce=True)
            return EdgeCost(0.0)  # task-local
        out, need = self.layouts(e, ca, cb)
        moves = tuple(transfers(edge.size_bytes, out, need, a.devices, b.devices))
        delay = max((p.router.delay_ms(m.size_bytes, p.devices[m.src], p.devices[m.dst]) for m in moves),
                    default=0.0)
        return EdgeCost(delay, moves)

    @cached_property
    def min_duration_ms(self) -> list[float]:
        return [min(self.duration_ms(k, c) for c in range(len(self.task_ms[k]))) for k in range(self.problem.n_ops)]

    @cached_property
    def min_work_ms(self) -> list[float]:
        """Device time an op takes at least (all its tasks summed), over its configurations."""
        return [min(sum(t) for t in self.task_ms[k]) for k in range(self.problem.n_ops)]

    def lower_bound_ms(self) -> float:
        """Valid for every plan of this configuration space: the total device time over the
        devices, and the critical path with each op at its fastest configuration and free
        communication."""
        p = self.problem
        work = sum(self.min_work_ms) / p.n_devices
        finish = [0.0] * p.n_ops
        for k in range(p.n_ops):
            ready = max((finish[p.edges[e].src] for e in p.preds[k]), default=0.0)
            finish[k] = ready + self.min_duration_ms[k]
        return max(work, max(finish, default=0.0))

    # ------------------------------------------------------------------ plans

    def retime(self, config: list[int], order: list[int]) -> SplitPlan:
        """Earliest start of every op in `order` (topological; each device runs its tasks in
        this order), all tasks of an op starting together."""
        p = self.problem
        free = [0.0] * p.n_devices
        start = [0.0] * p.n_ops
        end = [0.0] * p.n_ops
        done = [False] * p.n_ops
        for k in order:
            c = config[p.group[k]]
            devices = self.configs[p.group[k]][c].devices
            ready = max(free[d] for d in devices)
            for e in p.preds[k]:
                u = p.edges[e].src
                if not done[u]:
                    raise SolutionCheckError(f"op {p.ops[k]!r} is ordered before its input {p.ops[u]!r}")
                ready = max(ready, end[u] + self.edge_cost(e, config[p.group[u]], c).delay_ms)
            durations = self.task_ms[k][c]
            start[k], end[k] = ready, ready + max(durations)
            for d, t in zip(devices, durations):
                free[d] = ready + t
            done[k] = True
        return SplitPlan(list(config), start, end, list(order))

    def memory_bytes(self, config: list[int]) -> list[int]:
        used = [0] * self.problem.n_devices
        for k in range(self.problem.n_ops):
            c = config[self.problem.group[k]]
            for d in self.config_of(k, c).devices:
                used[d] += self.task_memory[k][c]
        return used

    def fits(self, config: list[int]) -> bool:
        cap = self.problem.capacity_bytes
        return all(c is None or used <= c for used, c in zip(self.memory_bytes(config), cap))

    def data_parallel(self) -> SplitPlan | None:
        """Every unit that may be sample-split over all devices is; the rest stay on the first
        device they may use; program order. None when it does not fit memory."""
        p = self.problem
        config = []
        for cfgs in self.configs:
            full = [i for i, c in enumerate(cfgs) if c.dim == "sample" and c.degree == p.n_devices]
            config.append(full[0] if full else 0)
        if not self.fits(config):
            return None
        return self.retime(config, list(range(p.n_ops)))

    def from_placement(self, schedule: Schedule) -> SplitPlan:
        """A placement (placer.schedule.Schedule) as a split plan of degree-1 configurations."""
        p = self.problem
        config = []
        for g, ops in enumerate(p.groups):
            device = schedule.solution.device[ops[0]]
            config.append(next(i for i, c in enumerate(self.configs[g]) if c.dim is None and c.devices == (device,)))
        order = sorted(range(p.n_ops), key=lambda k: (schedule.start_ms[k], k))
        return self.retime(config, order)

    # ------------------------------------------------------------------ the result's entries

    def splits(self, plan: SplitPlan) -> dict[str, SplitEntry]:
        p = self.problem
        out = {}
        for k in range(p.n_ops):
            c = self.config_of(k, plan.config[p.group[k]])
            if c.degree > 1:
                assert c.dim is not None
                out[p.ops[k]] = SplitEntry(dim=c.dim, degree=c.degree, devices=[p.devices[d] for d in c.devices])
        return out

    def entries(self, plan: SplitPlan) -> tuple[list[ScheduleEntry], list[TransferEntry], list[CollectiveEntry]]:
        """The plan's tasks, redistribution transfers and all-reduces, as result entries."""
        p = self.problem
        schedule: list[ScheduleEntry] = []
        moves: list[TransferEntry] = []
        collectives: list[CollectiveEntry] = []
        for k in sorted(range(p.n_ops), key=lambda k: (plan.start_ms[k], k)):
            c = plan.config[p.group[k]]
            cfg = self.config_of(k, c)
            for i, (d, t) in enumerate(zip(cfg.devices, self.task_ms[k][c])):
                schedule.append(ScheduleEntry(op=p.ops[k], device=p.devices[d], start_ms=plan.start_ms[k],
                                              end_ms=plan.start_ms[k] + t, task=i if cfg.degree > 1 else None))
        for e, edge in enumerate(p.edges):
            u, v = edge.src, edge.dst
            ca, cb = plan.config[p.group[u]], plan.config[p.group[v]]
            cost = self.edge_cost(e, ca, cb)
            a, b = self.config_of(u, ca), self.config_of(v, cb)
            if cost.all_reduce:
                names = [p.devices[d] for d in a.devices]
                size = gradient_bytes(edge.size_bytes, self.spec[v])
                collectives.append(CollectiveEntry(
                    src=p.ops[u], dst=p.ops[v], participants=names, bytes=size,
                    routes=[list(r) for r in ring_routes(p.router, names, size / len(names))],
                    start_ms=plan.end_ms[u], end_ms=plan.end_ms[u] + cost.delay_ms))
            for m in cost.moves:
                src, dst = p.devices[m.src], p.devices[m.dst]
                moves.append(TransferEntry(
                    src=p.ops[u], dst=p.ops[v], bytes=m.size_bytes, route=list(p.router.route(m.size_bytes, src, dst)),
                    start_ms=plan.end_ms[u], end_ms=plan.end_ms[u] + p.router.delay_ms(m.size_bytes, src, dst),
                    task=m.j if b.degree > 1 else None, src_task=m.k if a.degree > 1 else None))
        return schedule, moves, collectives


