"""Checks and replays of split plans, from the documents (DESIGN.md "Split operators") and
the per-kind rules (placer.split.semantics, placer.split.costs), not from the solver model or
the re-timing code, so a bug in those is caught here.

A split result is valid when: every op runs in one configuration (degree 1 in `placement`, or
a dimension its kind may be split along, a degree dividing that dimension's size and one
device per task in `splits`), the ops of a group alike; each task has one schedule entry on its
device lasting its share's time and all tasks of an op start together; no two tasks overlap on
a device; every piece of a tensor a consumer task needs from a producer task on another device
travels as a transfer over real links, after the producer ends, lasting at least its route's
delay, before the consumer starts; every sample-split weight gradient is all-reduced over its
devices (a collective whose ring routes are real and whose duration covers 2 (d - 1) steps)
before its update starts; memory per device fits; the makespan is the latest end.
"""
from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import dataclass, field

from placer.schema import GraphSpec, HardwareSpec, OpSpec, ResultSpec
from placer.split.costs import gradient_bytes, task_memory_bytes, task_time_ms, transfers
from placer.split.semantics import Layout, input_need, output_layout, role, split_dims
from placer.validate import overlaps, totals

__all__ = ["SplitReplay", "check_split_result", "simulate_split"]


@dataclass(frozen=True)
class _Cut:
    dim: str | None
    devices: tuple[str, ...]

    @property
    def degree(self) -> int:
        return len(self.devices)


def _cuts(graph: GraphSpec, hardware: HardwareSpec, result: ResultSpec, errors: list[str]) -> dict[str, _Cut]:
    devices = {d.id for d in hardware.devices}
    splits = result.splits or {}
    cuts: dict[str, _Cut] = {}
    for op in graph.ops:
        if op.id in splits:
            s = splits[op.id]
            if op.id in result.placement:
                errors.append(f"op {op.id!r} is both placed and split")
            if s.degree != len(s.devices) or len(set(s.devices)) != len(s.devices):
                errors.append(f"op {op.id!r}: split degree {s.degree} needs {s.degree} distinct devices, "
                              f"got {s.devices}")
                continue
            if any(d not in devices for d in s.devices):
                errors.append(f"op {op.id!r} is split over {s.devices}, not all devices")
                continue
            if role(op.kind) != "update":
                size = (op.dims or {}).get(s.dim)
                if s.dim not in split_dims(op.kind) or size is None:
                    errors.append(f"op {op.id!r} (kind {op.kind!r}) cannot be split along {s.dim!r}")
                    continue
                if size % s.degree:
                    errors.append(f"op {op.id!r}: degree {s.degree} does not divide {s.dim} size {size}")
            if op.device is not None:
                errors.append(f"op {op.id!r} is pinned to {op.device!r} but split")
            cuts[op.id] = _Cut(s.dim, tuple(s.devices))
        elif op.id in result.placement:
            where = result.placement[op.id]
            if where not in devices:
                errors.append(f"op {op.id!r} is placed on {where!r}, which is not a device")
                continue
            if op.device is not None and where != op.device:
                errors.append(f"op {op.id!r} is pinned to {op.device!r} but placed on {where!r}")
            cuts[op.id] = _Cut(None, (where,))
        else:
            errors.append(f"op {op.id!r} is neither placed nor split")
    known = {op.id for op in graph.ops}
    errors += [f"splits names unknown op {k!r}" for k in splits if k not in known]
    errors += [f"placement names unknown op {k!r}" for k in result.placement if k not in known]
    groups: dict[str, set[_Cut]] = defaultdict(set)
    for op in graph.ops:
        if op.group is not None and op.id in cuts:
            groups[op.group].add(cuts[op.id])
    errors += [f"group {g!r} is cut in {len(c)} different ways" for g, c in groups.items() if len(c) > 1]
    return cuts


def _layouts(src: OpSpec, dst: OpSpec, a: _Cut, b: _Cut) -> tuple[Layout, Layout]:
    if role(src.kind) == "backward" and role(dst.kind) == "update":
        out = output_layout("update", a.dim, a.degree)
        out = Layout("partial", a.degree) if out.form == "replica" else out
    else:
        out = output_layout(src.kind, a.dim, a.degree)
    return out, input_need(dst.kind, b.dim, b.degree)


def _route_ms(links: dict, route: list[str], size_bytes: float) -> float | None:
    hops = list(itertools.pairwise(route))
    if any(frozenset(h) not in links for h in hops):
        return None
    return sum(size_bytes / (links[frozenset(h)].bandwidth_gb_per_s * 1e9) * 1e3
               + links[frozenset(h)].latency_us * 1e-3 for h in hops)


def check_split_result(graph: GraphSpec, hardware: HardwareSpec, result: ResultSpec,
                       task_overhead_ms: float, rel_tol: float = 1e-7) -> list[str]:
    """Every rule a split result breaks, as readable sentences (empty when valid)."""
    if result.status not in ("optimal", "feasible"):
        return []
    errors: list[str] = []
    hw = {d.id: d for d in hardware.devices}
    links = {frozenset((link.a, link.b)): link for link in hardware.links}
    ops = {op.id: op for op in graph.ops}
    tol = rel_tol * max([1.0] + [abs(s.end_ms) for s in result.schedule])
    cuts = _cuts(graph, hardware, result, errors)

    tasks: dict[tuple[str, int], object] = {}
    for i, entry in enumerate(result.schedule):
        cut = cuts.get(entry.op)
        if cut is None:
            errors.append(f"schedule[{i}] names op {entry.op!r}, which has no configuration")
            continue
        k = entry.task if entry.task is not None else 0
        if (cut.degree > 1) != (entry.task is not None) or not 0 <= k < cut.degree:
            errors.append(f"schedule[{i}]: op {entry.op!r} has no task {entry.task}")
            continue
        if (entry.op, k) in tasks:
            errors.append(f"op {entry.op!r} task {k} is scheduled twice")
        tasks[entry.op, k] = entry
        if entry.device != cut.devices[k]:
            errors.append(f"op {entry.op!r} task {k} runs on {entry.device!r}, its configuration says "
                          f"{cut.devices[k]!r}")
            continue
        need = task_time_ms(ops[entry.op], hw[entry.device], cut.dim, cut.degree, task_overhead_ms)
        if entry.start_ms < -tol:
            errors.append(f"op {entry.op!r} starts before 0")
        if abs(entry.end_ms - entry.start_ms - need) > tol:
            errors.append(f"op {entry.op!r} task {k} lasts {entry.end_ms - entry.start_ms} ms on "
                          f"{entry.device!r}, needs {need} ms")
    for op_id, cut in cuts.items():
        entries = [tasks.get((op_id, k)) for k in range(cut.degree)]
        if any(e is None for e in entries):
            errors.append(f"op {op_id!r} has a task without a schedule entry")
        elif len({e.start_ms for e in entries}) > 1 and max(e.start_ms for e in entries) - \
                min(e.start_ms for e in entries) > tol:
            errors.append(f"the tasks of op {op_id!r} do not start together")
    if errors:
        return errors

    errors += overlaps(tasks.values(), tol)

    moved: dict[tuple[str, str, int, int], list] = defaultdict(list)
    for t in result.transfers:
        moved[t.src, t.dst, t.src_task or 0, t.task or 0].append(t)
    reduced = {(c.src, c.dst): c for c in result.collectives or []}
    for edge in graph.edges:
        a, b = cuts[edge.src], cuts[edge.dst]
        name = f"edge {edge.src} -> {edge.dst}"
        end_u = max(tasks[edge.src, k].end_ms for k in range(a.degree))
        src, dst = ops[edge.src], ops[edge.dst]
        same_group = src.group is not None and src.group == dst.group
        if same_group and a.degree > 1 and a.dim == "sample" and role(src.kind) == "backward" \
                and role(dst.kind) == "update":
            errors += _check_all_reduce(reduced.get((edge.src, edge.dst)), name, gradient_bytes(edge.bytes, dst), a, end_u,
                                        [tasks[edge.dst, j] for j in range(b.degree)], links, tol)
            continue
        if same_group:  # task-local: task k feeds task k on the same device
            for k in range(a.degree):
                if tasks[edge.dst, k].start_ms < tasks[edge.src, k].end_ms - tol:
                    errors.append(f"{name}: task {k} starts before its input ends")
            continue
        out, need = _layouts(src, dst, a, b)
        if edge.bytes == 0 and any(tasks[edge.dst, j].start_ms < end_u - tol for j in range(b.degree)):
            errors.append(f"{name}: {edge.dst!r} starts before {edge.src!r} ends")
        for k, j, size in _moves(edge.bytes, out, need, a, b):
            found = moved.get((edge.src, edge.dst, k, j), [])
            t = next((t for t in found if t.route and t.route[0] == a.devices[k] and t.route[-1] == b.devices[j]), None)
            if t is None or t.bytes < size:
                errors.append(f"{name}: task {j} on {b.devices[j]!r} needs {size} bytes from task {k} on "
                              f"{a.devices[k]!r} and no transfer carries them")
                continue
            route_ms = _route_ms(links, t.route, t.bytes)
            if route_ms is None:
                errors.append(f"{name}: route {t.route} uses a link that does not exist")
                continue
            if t.start_ms < tasks[edge.src, k].end_ms - tol:
                errors.append(f"{name}: transfer starts before task {k} of {edge.src!r} ends")
            if t.end_ms - t.start_ms < route_ms - tol:
                errors.append(f"{name}: transfer lasts {t.end_ms - t.start_ms} ms, its route needs {route_ms} ms")
            if tasks[edge.dst, j].start_ms < t.end_ms - tol:
                errors.append(f"{name}: task {j} of {edge.dst!r} starts before its input arrives")
        for k in range(a.degree):
            for j in range(b.degree):
                if a.devices[k] == b.devices[j] and tasks[edge.dst, j].start_ms < tasks[edge.src, k].end_ms - tol:
                    errors.append(f"{name}: task {j} starts before task {k} ends on {a.devices[k]!r}")

    used: dict[str, int] = defaultdict(int)
    for op_id, cut in cuts.items():
        for d in cut.devices:
            used[d] += task_memory_bytes(ops[op_id], cut.dim, cut.degree)
    latest = max((e.end_ms for e in tasks.values()), default=0.0)
    return errors + totals(used, hw, latest, "task", result, tol)


def _moves(size_bytes: int, out: Layout, need: Layout, a: _Cut, b: _Cut) -> list[tuple[int, int, int]]:
    """(producer task, consumer task, bytes) of every piece that crosses devices."""
    index = {d: i for i, d in enumerate(dict.fromkeys(a.devices + b.devices))}
    found = transfers(size_bytes, out, need, tuple(index[d] for d in a.devices), tuple(index[d] for d in b.devices))
    return [(m.k, m.j, m.size_bytes) for m in found]


def _check_all_reduce(c, name: str, size_bytes: int, cut: _Cut, ready_ms: float, consumers: list,
                      links: dict, tol: float) -> list[str]:
    if c is None:
        return [f"{name}: the sample-split weight gradient has no all-reduce"]
    errors = []
    if sorted(c.participants) != sorted(cut.devices) or c.bytes < size_bytes:
        errors.append(f"{name}: the all-reduce covers {c.participants} with {c.bytes} bytes, needs "
                      f"{list(cut.devices)} with {size_bytes}")
    d = len(c.participants)
    step = 0.0
    for i, route in enumerate(c.routes):
        if not route or route[0] != c.participants[i % d] or route[-1] != c.participants[(i + 1) % d]:
            errors.append(f"{name}: all-reduce hop {i} route {route} does not join its ring neighbours")
            return errors
        ms = _route_ms(links, route, size_bytes / d)
        if ms is None:
            errors.append(f"{name}: all-reduce route {route} uses a link that does not exist")
            return errors
        step = max(step, ms)
    if len(c.routes) != d:
        errors.append(f"{name}: the all-reduce ring has {len(c.routes)} hops for {d} devices")
    if c.start_ms < ready_ms - tol:
        errors.append(f"{name}: the all-reduce starts before the gradient is computed")
    if c.end_ms - c.start_ms < 2 * (d - 1) * step - tol:
        errors.append(f"{name}: the all-reduce lasts {c.end_ms - c.start_ms} ms, its ring needs "
                      f"{2 * (d - 1) * step} ms")
    if any(t.start_ms < c.end_ms - tol for t in consumers):
        errors.append(f"{name}: the update starts before the all-reduce ends")
    return errors


@dataclass
class SplitReplay:
    """An event-driven replay of a split result (ops in the order of their starts)."""

    makespan_ms: float
    device_busy_ms: dict[str, float] = field(default_factory=dict)
    link_bytes: dict[str, int] = field(default_factory=dict)
    link_busy_ms: dict[str, float] = field(default_factory=dict)
    collective_ms: float = 0.0
    start_ms: dict[tuple[str, int], float] = field(default_factory=dict)  # (op, task) -> replayed start

    @property
    def device_utilisation(self) -> dict[str, float]:
        return {d: (b / self.makespan_ms if self.makespan_ms > 0 else 0.0) for d, b in self.device_busy_ms.items()}


def simulate_split(graph: GraphSpec, hardware: HardwareSpec, result: ResultSpec, contention: bool = False
                   ) -> SplitReplay:
    """Replay a split result: each device runs its tasks in the result's order, an op's tasks
    start together once every device is free and every input piece (transfer, all-reduce)
    has arrived. With `contention` each link direction carries one piece at a time, first
    come first served in the replay's order (store and forward, hop by hop)."""
    links = {frozenset((link.a, link.b)): link for link in hardware.links}
    first_start: dict[str, float] = {}
    for e in result.schedule:
        first_start[e.op] = min(first_start.get(e.op, e.start_ms), e.start_ms)
    order = sorted(first_start, key=lambda o: first_start[o])
    tasks: dict[str, list] = defaultdict(list)
    for e in result.schedule:
        tasks[e.op].append(e)
    inbound: dict[str, list] = defaultdict(list)
    for t in result.transfers:
        inbound[t.dst].append(("move", t))
    for c in result.collectives or []:
        inbound[c.dst].append(("reduce", c))
    position = {o: i for i, o in enumerate(order)}
    free: dict[str, float] = defaultdict(float)
    link_free: dict[tuple[str, str], float] = defaultdict(float)
    link_bytes: dict[str, int] = defaultdict(int)
    link_busy: dict[str, float] = defaultdict(float)
    busy: dict[str, float] = defaultdict(float)
    end: dict[str, float] = {}
    task_end: dict[tuple[str, int], float] = {}
    preds: dict[str, set[str]] = defaultdict(set)
    for edge in graph.edges:
        preds[edge.dst].add(edge.src)

    def hop(u: str, v: str, size: float, at: float) -> float:
        link = links[frozenset((u, v))]
        ms = size / (link.bandwidth_gb_per_s * 1e9) * 1e3 + link.latency_us * 1e-3
        begin = max(at, link_free[u, v]) if contention else at
        link_free[u, v] = begin + ms
        link_bytes[f"{u}->{v}"] += int(size)
        link_busy[f"{u}->{v}"] += ms
        return begin + ms

    collective_ms = 0.0
    starts: dict[tuple[str, int], float] = {}
    for op_id in order:
        ready = max((free[e.device] for e in tasks[op_id]), default=0.0)
        for src in preds[op_id]:
            if position[src] > position[op_id]:
                raise ValueError(f"op {op_id!r} starts before its input {src!r}")
        local = {e.device for e in tasks[op_id]}
        for kind, item in inbound[op_id]:
            if kind == "move":
                at = task_end.get((item.src, item.src_task or 0), end.get(item.src, 0.0))
                for u, v in zip(item.route, item.route[1:]):
                    at = hop(u, v, item.bytes, at)
                ready = max(ready, at)
            else:
                at = end[item.src]
                d = len(item.participants)
                began = at
                for _ in range(2 * (d - 1)):
                    step_end = at
                    for route in item.routes:
                        t = at
                        for u, v in itertools.pairwise(route):
                            t = hop(u, v, item.bytes / d, t)
                        step_end = max(step_end, t)
                    at = step_end
                collective_ms += at - began
                ready = max(ready, at)
        for src in preds[op_id]:
            for e in tasks[src]:
                if e.device in local:
                    ready = max(ready, task_end[src, e.task or 0])
        latest = ready
        for e in tasks[op_id]:
            spent = e.end_ms - e.start_ms
            starts[op_id, e.task or 0] = ready
            task_end[op_id, e.task or 0] = ready + spent
            free[e.device] = ready + spent
            busy[e.device] += spent
            latest = max(latest, ready + spent)
        end[op_id] = latest
    makespan = max(end.values(), default=0.0)
    return SplitReplay(makespan, {d.id: busy.get(d.id, 0.0) for d in hardware.devices}, dict(link_bytes),
                       dict(link_busy), collective_ms, starts)
