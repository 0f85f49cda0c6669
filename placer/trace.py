"""The Chrome trace-event JSON of a replay (opens in Perfetto or chrome://tracing), and which
part of a training step an op belongs to (forward, backward, weight update), shared with the
Gantt chart.

Layout: process 1 "devices" has one thread per device (its ops), process 2 "links" one thread
per used link direction (the hops of transfers). Every op carries its kind, group, direction,
memory and the bytes it receives and sends; every hop its tensor's bytes, route and ends.
Flow events (`ph` "s" then "f", bound to the enclosing slices) draw an arrow from the producer
op to the first hop of its transfer, from hop to hop, and from the last hop to the consumer op.
"""
from __future__ import annotations

import re
from collections import defaultdict
from itertools import pairwise
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from placer.schema import GraphSpec
    from placer.simulator import SimulationReport

__all__ = ["DEVICES_PID", "LINKS_PID", "Direction", "chrome_trace", "direction"]

DEVICES_PID, LINKS_PID = 1, 2
Direction = Literal["forward", "backward", "update"]

_BACKWARD_SUFFIXES = (".bwd", "_bwd", "_grad", ".grad", "backward", "_backward")
_UPDATE_SUFFIXES = (".update", "_update")
_UPDATE_KINDS = ("sgd", "adam", "momentum", "optimizer", "update")


_TASK = re.compile(r"#\d+$")


def direction(op_id: str, kind: str | None = None) -> Direction:
    """Forward, backward (ids or kinds ending `.bwd`, `_grad`, `backward`) or weight update
    (ids ending `.update`/`_update`, optimizer kinds).

    >>> direction("conv1.bwd"), direction("fc", "matmul_grad"), direction("fc.update"), direction("fc")
    ('backward', 'backward', 'update', 'forward')
    >>> direction("conv1.bwd#3")
    'backward'
    """
    names = [_TASK.sub("", op_id).lower()] + ([kind.lower()] if kind else [])  # a split op's task: op#k
    if any(n.endswith(_UPDATE_SUFFIXES) for n in names) or (kind and kind.lower().startswith(_UPDATE_KINDS)):
        return "update"
    if any(n.endswith(_BACKWARD_SUFFIXES) for n in names):
        return "backward"
    return "forward"


def _us(ms: float) -> float:
    return ms * 1e3


def chrome_trace(report: SimulationReport, graph: GraphSpec | None = None) -> dict[str, Any]:
    """The trace of `report`; `graph` (the one replayed) adds each op's kind, group and memory."""
    ops = {op.id: op for op in graph.ops} if graph is not None else {}
    devices, links = list(report.device_busy_ms), sorted(report.link_busy_ms)
    tid = {name: i + 1 for i, name in enumerate(devices)} | {name: i + 1 for i, name in enumerate(links)}
    events: list[dict[str, Any]] = [
        {"ph": "M", "name": "process_name", "pid": DEVICES_PID, "tid": 0, "args": {"name": "devices"}},
        {"ph": "M", "name": "process_sort_index", "pid": DEVICES_PID, "tid": 0, "args": {"sort_index": 0}},
        {"ph": "M", "name": "process_name", "pid": LINKS_PID, "tid": 0, "args": {"name": "links"}},
        {"ph": "M", "name": "process_sort_index", "pid": LINKS_PID, "tid": 0, "args": {"sort_index": 1}},
    ]
    for pid, names in ((DEVICES_PID, devices), (LINKS_PID, links)):
        for name in names:
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid[name], "args": {"name": name}})
            events.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid[name],
                           "args": {"sort_index": tid[name]}})

    bytes_in: dict[str, int] = defaultdict(int)
    bytes_out: dict[str, int] = defaultdict(int)
    for t in report.transfers:
        bytes_out[t.src] += t.size_bytes
        bytes_in[t.dst] += t.size_bytes
    for k in sorted(report.placement, key=lambda k: (report.start_ms[k], k)):
        spec = ops.get(k)
        kind = spec.kind if spec is not None else None
        args: dict[str, Any] = {"device": report.placement[k], "direction": direction(k, kind),
                                "bytes_in": bytes_in[k], "bytes_out": bytes_out[k]}
        if spec is not None:
            args.update(kind=spec.kind, group=spec.group, memory_bytes=spec.memory_bytes)
        events.append({"ph": "X", "name": k, "cat": f"op,{args['direction']}", "pid": DEVICES_PID,
                       "tid": tid[report.placement[k]], "ts": _us(report.start_ms[k]),
                       "dur": _us(report.end_ms[k] - report.start_ms[k]), "args": args})

    def inside(start_ms: float, end_ms: float) -> float:
        """A time within a slice, so a flow event binds to it (bp "e": the enclosing slice)."""
        return _us((start_ms + end_ms) / 2)

    flow = 0
    for t in report.transfers:
        name = f"{t.src}->{t.dst}"
        hops = list(t.hops)
        for n, (a, b, s, e) in enumerate(hops):
            events.append({"ph": "X", "name": name, "cat": "transfer", "pid": LINKS_PID, "tid": tid[f"{a}->{b}"],
                           "ts": _us(s), "dur": _us(e - s),
                           "args": {"src": t.src, "dst": t.dst, "bytes": t.size_bytes, "route": list(t.route),
                                    "hop": n, "transfer_start_ms": t.start_ms, "transfer_end_ms": t.end_ms}})
        # the chain producer -> hop 0 -> ... -> last hop -> consumer, one flow per arrow
        ends = [(DEVICES_PID, tid[report.placement[t.src]], inside(report.start_ms[t.src], report.end_ms[t.src]))]
        ends += [(LINKS_PID, tid[f"{a}->{b}"], inside(s, e)) for a, b, s, e in hops]
        ends.append((DEVICES_PID, tid[report.placement[t.dst]], inside(report.start_ms[t.dst], report.end_ms[t.dst])))
        for (pid_a, tid_a, ts_a), (pid_b, tid_b, ts_b) in pairwise(ends):
            flow += 1
            common = {"name": name, "cat": "transfer", "id": flow, "bp": "e"}
            events.append({"ph": "s", "pid": pid_a, "tid": tid_a, "ts": ts_a, **common})
            events.append({"ph": "f", "pid": pid_b, "tid": tid_b, "ts": ts_b, **common})
    return {"traceEvents": events, "displayTimeUnit": "ms",
            "otherData": {"makespan_ms": report.makespan_ms, "contention": report.contention,
                          "policy": report.policy}}
