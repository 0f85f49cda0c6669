"""A split result as a placer.simulator.SimulationReport, so the Chrome trace and the Gantt
chart draw split plans as they draw placements: each task is a row entry named ``op#k`` on its
device, each redistribution piece and each hop of an all-reduce ring a transfer on its links."""
from __future__ import annotations

import itertools
from collections import defaultdict

from placer.schema import GraphSpec, HardwareSpec, ResultSpec
from placer.simulator import SimulatedTransfer, SimulationReport

__all__ = ["replay_split", "split_report", "task_name"]


def task_name(op: str, task: int | None) -> str:
    return op if task is None else f"{op}#{task}"


def replay_split(graph: GraphSpec, hardware: HardwareSpec, result: ResultSpec,
                 contention: bool = False) -> SimulationReport:
    """Replay a split result (placer.split.check.simulate_split) as a SimulationReport: the
    replayed task times, device and link figures; the transfers drawn at the plan's times."""
    from placer.split.check import simulate_split

    replayed = simulate_split(graph, hardware, result, contention)
    report = split_report(graph, hardware, result)
    for e in result.schedule:
        name, k = task_name(e.op, e.task), e.task or 0
        report.start_ms[name] = replayed.start_ms[e.op, k]
        report.end_ms[name] = replayed.start_ms[e.op, k] + (e.end_ms - e.start_ms)
    report.makespan_ms = replayed.makespan_ms
    report.contention = contention
    report.device_busy_ms = replayed.device_busy_ms
    report.link_bytes, report.link_busy_ms = replayed.link_bytes, replayed.link_busy_ms
    return report


def split_report(graph: GraphSpec, hardware: HardwareSpec, result: ResultSpec) -> SimulationReport:
    """The result's own timeline (tasks, transfers, collectives) in a SimulationReport."""
    links = {frozenset((link.a, link.b)): link for link in hardware.links}
    placement, start, end = {}, {}, {}
    busy: dict[str, float] = defaultdict(float)
    for e in result.schedule:
        name = task_name(e.op, e.task)
        placement[name], start[name], end[name] = e.device, e.start_ms, e.end_ms
        busy[e.device] += e.end_ms - e.start_ms
    link_bytes: dict[str, int] = defaultdict(int)
    link_busy: dict[str, float] = defaultdict(float)
    moves: list[SimulatedTransfer] = []

    def add(src: str, dst: str, size: float, route: list[str], at: float, until: float | None = None) -> None:
        t = SimulatedTransfer(src, dst, int(size), tuple(route), start_ms=at)
        for a, b in itertools.pairwise(route):
            link = links[frozenset((a, b))]
            ms = size / (link.bandwidth_gb_per_s * 1e9) * 1e3 + link.latency_us * 1e-3
            t.hops.append((a, b, at, at + ms))
            link_bytes[f"{a}->{b}"] += int(size)
            link_busy[f"{a}->{b}"] += ms
            at += ms
        t.end_ms = until if until is not None else at
        moves.append(t)

    for tr in result.transfers:
        add(task_name(tr.src, tr.src_task), task_name(tr.dst, tr.task), tr.bytes, tr.route, tr.start_ms, tr.end_ms)
    for c in result.collectives or []:
        d = len(c.participants)
        steps = 2 * (d - 1)
        step_ms = (c.end_ms - c.start_ms) / steps if steps else 0.0
        for s in range(steps):
            for i, route in enumerate(c.routes):  # participant i runs task i of both ops
                add(task_name(c.src, i), task_name(c.dst, (i + 1) % d), c.bytes / d, route, c.start_ms + s * step_ms)
    return SimulationReport(
        makespan_ms=result.makespan_ms or 0.0, contention=False, policy="order", placement=placement,
        start_ms=start, end_ms=end, device_busy_ms={d.id: busy.get(d.id, 0.0) for d in hardware.devices},
        link_bytes=dict(link_bytes), link_busy_ms=dict(link_busy), transfers=moves)
