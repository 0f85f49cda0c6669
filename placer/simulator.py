"""Event-driven replay of a placement (FlexFlow-style execution simulator).

Each device runs one op at a time. Without a given order a device picks, among its
ready ops, the one ready first (ties: topological order), as a FIFO runtime would;
with an order (a solver's schedule) it runs its ops in that order. Transfers follow
their routes hop by hop (store-and-forward, paper eq. 11). With `contention`, each
direction of a link carries one transfer at a time, first come first served: the
effect the paper's model (and so the solvers) leave out.
"""
from __future__ import annotations

import heapq
import itertools
from collections import defaultdict, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from placer.errors import InputError
from placer.model import Problem, build_problem
from placer.schema import GraphSpec, HardwareSpec

__all__ = ["SimulationReport", "simulate", "simulate_problem"]

_OP_END, _HOP_END = 0, 1


@dataclass
class SimulatedTransfer:
    src: str
    dst: str
    size_bytes: int
    route: tuple[str, ...]
    start_ms: float = 0.0
    end_ms: float = 0.0
    hops: list[tuple[str, str, float, float]] = field(default_factory=list)  # (a, b, start, end)


@dataclass
class SimulationReport:
    """What a replay measured. Times in ms; links keyed "a->b" per direction."""

    makespan_ms: float
    contention: bool
    policy: str  # "fifo" or "order"
    placement: dict[str, str]
    start_ms: dict[str, float]
    end_ms: dict[str, float]
    device_busy_ms: dict[str, float]
    link_bytes: dict[str, int]
    link_busy_ms: dict[str, float]
    transfers: list[SimulatedTransfer]

    @property
    def device_utilisation(self) -> dict[str, float]:
        span = self.makespan_ms or 1.0
        return {d: busy / span for d, busy in self.device_busy_ms.items()}

    def to_dict(self) -> dict[str, Any]:
        return {
            "makespan_ms": self.makespan_ms,
            "contention": self.contention,
            "policy": self.policy,
            "device_busy_ms": self.device_busy_ms,
            "device_utilisation": self.device_utilisation,
            "link_bytes": self.link_bytes,
            "link_busy_ms": self.link_busy_ms,
            "schedule": [
                {"op": k, "device": self.placement[k], "start_ms": self.start_ms[k], "end_ms": self.end_ms[k]}
                for k in sorted(self.start_ms, key=lambda k: (self.start_ms[k], k))
            ],
            "transfers": [
                {"src": t.src, "dst": t.dst, "bytes": t.size_bytes, "route": list(t.route),
                 "start_ms": t.start_ms, "end_ms": t.end_ms}
                for t in self.transfers
            ],
        }

    def to_chrome_trace(self, graph: GraphSpec | None = None) -> dict[str, Any]:
        """Chrome trace-event JSON (opens in Perfetto): see placer.trace."""
        from placer.trace import chrome_trace

        return chrome_trace(self, graph)


def simulate(
    graph: GraphSpec,
    hardware: HardwareSpec,
    placement: Mapping[str, str],
    order: Mapping[str, Sequence[str]] | None = None,
    contention: bool = False,
    routes: Mapping[tuple[str, str], Sequence[str]] | None = None,
) -> SimulationReport:
    """Replay `placement` (op -> device) on `hardware`; see the module docstring."""
    problem = build_problem(graph, hardware)
    device = []
    for op in problem.ops:
        where = placement.get(op)
        if where is None:
            raise InputError(f"placement: op {op!r} is not placed")
        if where not in problem.device_index:
            raise InputError(f"placement: op {op!r} is placed on unknown device {where!r}")
        device.append(problem.device_index[where])
    unknown = sorted(set(placement) - set(problem.op_index))
    if unknown:
        raise InputError(f"placement names unknown ops: {', '.join(map(repr, unknown[:5]))}")
    order_idx = None
    if order is not None:
        for d, ops in order.items():
            if d not in problem.device_index:
                raise InputError(f"order: {d!r} is not a device")
            for o in ops:
                if o not in problem.op_index:
                    raise InputError(f"order: device {d!r} lists unknown op {o!r}")
                if placement.get(o) != d:
                    raise InputError(f"order: op {o!r} is listed on {d!r} but placed on {placement.get(o)!r}")
        order_idx = [[problem.op_index[o] for o in order.get(d, ())] for d in problem.devices]
        listed = sum(len(ops) for ops in order_idx)
        if listed != problem.n_ops or len({o for ops in order_idx for o in ops}) != problem.n_ops:
            raise InputError("order: every op must be listed exactly once, on the device it is placed on")
    edge_routes = {}
    for i, e in enumerate(problem.edges):
        key = (problem.ops[e.src], problem.ops[e.dst])
        if routes and key in routes and device[e.src] != device[e.dst]:
            edge_routes[i] = _checked_route(problem, key, tuple(routes[key]), device[e.src], device[e.dst])
    return simulate_problem(problem, device, order_idx, contention, edge_routes)


def _checked_route(problem: Problem, edge: tuple[str, str], route: tuple[str, ...], src: int, dst: int
                   ) -> tuple[str, ...]:
    """A given route must run over real links from the source op's device to the destination's."""
    where = f"route of edge {edge[0]} -> {edge[1]}"
    if len(route) < 2 or route[0] != problem.devices[src] or route[-1] != problem.devices[dst]:
        raise InputError(f"{where}: {list(route)} must run from {problem.devices[src]!r} to {problem.devices[dst]!r}")
    for a, b in itertools.pairwise(route):
        try:
            problem.router.link(a, b)
        except KeyError:
            raise InputError(f"{where}: there is no link {a!r} - {b!r}") from None
    return route


def simulate_problem(
    problem: Problem,
    device: Sequence[int],
    order: Sequence[Sequence[int]] | None = None,
    contention: bool = False,
    routes: Mapping[int, tuple[str, ...]] | None = None,
) -> SimulationReport:
    """The replay itself, on a built problem (op and device indices)."""
    n = problem.n_ops
    events: list[tuple[float, int, int, Any]] = []
    seq = 0

    def push(time: float, kind: int, payload: Any) -> None:
        nonlocal seq
        seq += 1
        heapq.heappush(events, (time, seq, kind, payload))

    arrived = [0] * n
    ready_at = [0.0] * n
    start = [0.0] * n
    end = [0.0] * n
    busy = [False] * problem.n_devices
    fifo: list[list[tuple[float, int]]] = [[] for _ in problem.devices]
    is_ready = [False] * n
    position = [0] * problem.n_devices
    link_free: dict[tuple[str, str], bool] = defaultdict(lambda: True)
    link_queue: dict[tuple[str, str], deque] = defaultdict(deque)
    link_bytes: dict[str, int] = defaultdict(int)
    link_busy: dict[str, float] = defaultdict(float)
    transfers: list[SimulatedTransfer] = []
    device_busy = [0.0] * problem.n_devices
    started = 0

    def make_ready(k: int, t: float) -> None:
        ready_at[k] = t
        is_ready[k] = True
        if order is None:
            heapq.heappush(fifo[device[k]], (t, k))

    def input_arrived(k: int, t: float) -> None:
        arrived[k] += 1
        if arrived[k] == len(problem.preds[k]):
            make_ready(k, t)

    def start_hop(tr: SimulatedTransfer, hop: int, t: float) -> None:
        a, b = tr.route[hop], tr.route[hop + 1]
        duration = problem.router.link(a, b).delay_ms(tr.size_bytes)
        if contention:
            link_free[(a, b)] = False
        tr.hops.append((a, b, t, t + duration))
        link_bytes[f"{a}->{b}"] += tr.size_bytes
        link_busy[f"{a}->{b}"] += duration
        push(t + duration, _HOP_END, (tr, hop))

    def request_hop(tr: SimulatedTransfer, hop: int, t: float) -> None:
        key = (tr.route[hop], tr.route[hop + 1])
        if contention and (not link_free[key] or link_queue[key]):
            link_queue[key].append((tr, hop))
        else:
            start_hop(tr, hop, t)

    def dispatch(t: float) -> None:
        nonlocal started
        for d in range(problem.n_devices):
            if busy[d]:
                continue
            if order is None:
                if not fifo[d]:
                    continue
                _, k = heapq.heappop(fifo[d])
            else:
                if position[d] >= len(order[d]) or not is_ready[order[d][position[d]]]:
                    continue
                k = order[d][position[d]]
                position[d] += 1
            busy[d] = True
            start[k] = t
            end[k] = t + problem.time_ms[k][d]
            device_busy[d] += end[k] - start[k]
            started += 1
            push(end[k], _OP_END, k)

    for k in range(n):
        if not problem.preds[k]:
            make_ready(k, 0.0)
    dispatch(0.0)
    while events:
        now = events[0][0]
        while events and events[0][0] <= now + 1e-12 * max(1.0, abs(now)):
            _, _, kind, payload = heapq.heappop(events)
            if kind == _OP_END:
                k = payload
                busy[device[k]] = False
                for i in problem.succs[k]:
                    e = problem.edges[i]
                    if device[e.dst] == device[k]:
                        input_arrived(e.dst, now)
                        continue
                    route = (routes or {}).get(i) or problem.route(e, device[k], device[e.dst])
                    tr = SimulatedTransfer(problem.ops[k], problem.ops[e.dst], e.size_bytes, route, start_ms=now)
                    transfers.append(tr)
                    request_hop(tr, 0, now)
            else:
                tr, hop = payload
                key = (tr.route[hop], tr.route[hop + 1])
                if contention:
                    link_free[key] = True
                    if link_queue[key]:
                        start_hop(*link_queue[key].popleft(), now)
                if hop + 2 < len(tr.route):
                    request_hop(tr, hop + 1, now)
                else:
                    tr.end_ms = now
                    input_arrived(problem.op_index[tr.dst], now)
        dispatch(now)
    if started != n:
        raise InputError("order: the per-device order contradicts the graph's dependencies (the replay deadlocks)")

    names = problem.ops
    return SimulationReport(
        makespan_ms=max(end, default=0.0),
        contention=contention,
        policy="fifo" if order is None else "order",
        placement={names[k]: problem.devices[device[k]] for k in range(n)},
        start_ms={names[k]: start[k] for k in range(n)},
        end_ms={names[k]: end[k] for k in range(n)},
        device_busy_ms={problem.devices[d]: device_busy[d] for d in range(problem.n_devices)},
        link_bytes=dict(link_bytes),
        link_busy_ms=dict(link_busy),
        transfers=transfers,
    )
