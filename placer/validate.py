"""The project's own validator: checks a result document against its inputs, rule by rule.

Written from the documents (DESIGN.md "A result is valid when"), not from the solver
models or the re-timing code, so a bug in those is caught here. Every result the
engine returns has passed it.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from placer.cost import op_time_ms
from placer.schema import DeviceSpec, GraphSpec, HardwareSpec, ResultSpec, ScheduleEntry

__all__ = ["check_result", "overlaps", "totals"]


def overlaps(entries: Iterable[ScheduleEntry], tol: float) -> list[str]:
    """Every pair of schedule entries that overlap on one device."""
    by_device: dict[str, list[ScheduleEntry]] = defaultdict(list)
    for entry in entries:
        by_device[entry.device].append(entry)
    errors = []
    for device, spans in by_device.items():
        spans.sort(key=lambda s: (s.start_ms, s.end_ms))
        for first, second in zip(spans, spans[1:]):
            if second.start_ms < first.end_ms - tol:
                errors.append(f"ops {first.op!r} and {second.op!r} overlap on {device!r}")
    return errors


def check_result(
    graph: GraphSpec, hardware: HardwareSpec, result: ResultSpec, rel_tol: float = 1e-7
) -> list[str]:
    """Every rule the result breaks, as readable sentences (empty when valid). A split plan
    (a result with `splits`) is checked by placer.split.check's rules."""
    if result.status not in ("optimal", "feasible"):
        return []
    if result.splits is not None:
        from placer.split.check import check_split_result
        from placer.split.configs import SplitOptions

        return check_split_result(graph, hardware, result, SplitOptions().task_overhead_ms, rel_tol)
    errors: list[str] = []
    devices = {d.id: d for d in hardware.devices}
    nodes = set(devices) | {s.id for s in hardware.switches}
    links = {frozenset((link.a, link.b)): link for link in hardware.links}
    ops = {op.id: op for op in graph.ops}
    scale = max([1.0] + [abs(s.end_ms) for s in result.schedule])
    tol = rel_tol * scale

    placement = result.placement
    for op_id, op in ops.items():
        where = placement.get(op_id)
        if where is None:
            errors.append(f"op {op_id!r} is not placed")
        elif where not in devices:
            errors.append(f"op {op_id!r} is placed on {where!r}, which is not a device")
        elif op.device is not None and where != op.device:
            errors.append(f"op {op_id!r} is pinned to {op.device!r} but placed on {where!r}")
    errors += [f"placement names unknown op {k!r}" for k in placement if k not in ops]

    group_devices: dict[str, set[str]] = defaultdict(set)
    for op_id, op in ops.items():
        if op.group is not None and op_id in placement:
            group_devices[op.group].add(placement[op_id])
    errors += [f"group {g!r} is split over {sorted(ds)}" for g, ds in group_devices.items() if len(ds) > 1]

    entries = {}
    for i, entry in enumerate(result.schedule):
        if entry.op not in ops:  # not an overlap or a timing question: the op does not exist
            errors.append(f"schedule[{i}] names unknown op {entry.op!r}")
            continue
        if entry.op in entries:
            errors.append(f"op {entry.op!r} is scheduled twice")
        entries[entry.op] = entry
    for op_id in ops:
        entry = entries.get(op_id)
        if entry is None:
            errors.append(f"op {op_id!r} has no schedule entry")
            continue
        if entry.device != placement.get(op_id):
            errors.append(f"op {op_id!r} is scheduled on {entry.device!r} but placed on {placement.get(op_id)!r}")
            continue
        if entry.device not in devices:
            continue
        if entry.start_ms < -tol:
            errors.append(f"op {op_id!r} starts before 0 ({entry.start_ms} ms)")
        need = op_time_ms(ops[op_id], devices[entry.device])
        if abs((entry.end_ms - entry.start_ms) - need) > tol:
            errors.append(f"op {op_id!r} lasts {entry.end_ms - entry.start_ms} ms on {entry.device!r}, needs {need} ms")

    errors += overlaps(entries.values(), tol)

    transfers = {(t.src, t.dst): t for t in result.transfers}
    for edge in graph.edges:
        u, v = entries.get(edge.src), entries.get(edge.dst)
        if u is None or v is None:
            continue
        name = f"edge {edge.src} -> {edge.dst}"
        if u.device == v.device:
            if v.start_ms < u.end_ms - tol:
                errors.append(f"{name}: {edge.dst!r} starts before {edge.src!r} ends on {u.device!r}")
            continue
        t = transfers.get((edge.src, edge.dst))
        if t is None:
            errors.append(f"{name} crosses {u.device!r} -> {v.device!r} but has no transfer")
            continue
        if not t.route or t.route[0] != u.device or t.route[-1] != v.device:
            errors.append(f"{name}: route {t.route} does not run from {u.device!r} to {v.device!r}")
            continue
        hops = list(zip(t.route, t.route[1:]))
        if any(n not in nodes for n in t.route) or any(frozenset(h) not in links for h in hops):
            errors.append(f"{name}: route {t.route} uses a node or link that does not exist")
            continue
        need = sum(
            edge.bytes / (links[frozenset(h)].bandwidth_gb_per_s * 1e9) * 1e3 + links[frozenset(h)].latency_us * 1e-3
            for h in hops
        )
        if t.start_ms < u.end_ms - tol:
            errors.append(f"{name}: transfer starts before {edge.src!r} ends")
        if t.end_ms - t.start_ms < need - tol:
            errors.append(f"{name}: transfer lasts {t.end_ms - t.start_ms} ms, its route needs {need} ms")
        if v.start_ms < t.end_ms - tol:
            errors.append(f"{name}: {edge.dst!r} starts before its input arrives")

    used: dict[str, int] = defaultdict(int)
    for op_id, op in ops.items():
        if placement.get(op_id) in devices:
            used[placement[op_id]] += op.memory_bytes
    latest = max((e.end_ms for e in entries.values()), default=0.0)
    return errors + totals(used, devices, latest, "op", result, tol)


def totals(used: dict[str, int], devices: dict[str, DeviceSpec], latest_ms: float, unit: str,
           result: ResultSpec, tol: float) -> list[str]:
    """What every result must hold whatever its schedule's units (ops, or split ops' tasks):
    each device's memory within its capacity, the makespan where the latest `unit` ends, the
    lower bound at most the makespan."""
    errors = []
    for device, total in used.items():
        cap = devices[device].memory_bytes
        if cap is not None and total > cap:
            errors.append(f"device {device!r} holds {total} bytes, capacity {cap}")
    if result.makespan_ms is None or abs(result.makespan_ms - latest_ms) > tol:
        errors.append(f"makespan_ms {result.makespan_ms} but the latest {unit} ends at {latest_ms}")
    if result.lower_bound_ms is not None and result.makespan_ms is not None \
            and result.lower_bound_ms > result.makespan_ms + tol:
        errors.append(f"lower_bound_ms {result.lower_bound_ms} exceeds makespan_ms {result.makespan_ms}")
    return errors
