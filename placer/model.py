"""The domain model: a placement problem with resolved costs, indices and routes.

Built once from the validated documents; every algorithm (heuristics, formulations,
re-timing, simulation) reads it and none changes it. Ops are indexed in a stable
topological order (the graph's listing order breaks ties), devices in listing order.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import networkx as nx

from placer.cost import op_time_ms
from placer.errors import InvalidGraphError
from placer.routing import Router
from placer.schema import GraphSpec, HardwareSpec

__all__ = ["Edge", "Problem", "build_problem"]


@dataclass(frozen=True, slots=True)
class Edge:
    """A tensor between ops, by op index."""

    src: int
    dst: int
    size_bytes: int


@dataclass(eq=False)
class Problem:
    """A dataflow graph on a hardware graph, ready for the algorithms.

    Attributes
    ----------
    ops, devices : ids by index (ops in topological order).
    time_ms : time_ms[k][d], op k's duration on device d.
    memory_bytes, capacity_bytes : per op; per device (None = unlimited).
    edges : tensors; ``preds[k]``/``succs[k]`` hold edge indices.
    group : op -> group index; ``groups[g]`` lists the ops that must share a device.
    allowed : group -> device indices it may use (pins).
    """

    graph: GraphSpec
    hardware: HardwareSpec
    ops: list[str]
    devices: list[str]
    time_ms: list[list[float]]
    memory_bytes: list[int]
    capacity_bytes: list[int | None]
    edges: list[Edge]
    preds: list[list[int]]
    succs: list[list[int]]
    group: list[int]
    groups: list[list[int]]
    group_names: list[str | None]
    allowed: list[list[int]]
    router: Router
    op_index: dict[str, int] = field(default_factory=dict)
    device_index: dict[str, int] = field(default_factory=dict)

    @property
    def n_ops(self) -> int:
        return len(self.ops)

    @property
    def n_devices(self) -> int:
        return len(self.devices)

    def delay_ms(self, edge: Edge, a: int, b: int) -> float:
        """Minimum transfer delay of `edge` from device a to device b (0 on one device)."""
        if a == b:
            return 0.0
        return self.router.delay_ms(edge.size_bytes, self.devices[a], self.devices[b])

    def edges_between(self, u: int, v: int) -> list[int]:
        """Indices of the edges from op u to op v (more than one where the graph lists several tensors)."""
        return [i for i in self.succs[u] if self.edges[i].dst == v]

    def route(self, edge: Edge, a: int, b: int) -> tuple[str, ...]:
        return self.router.route(edge.size_bytes, self.devices[a], self.devices[b])

    def transfer(self, edge: Edge, a: int, b: int) -> tuple[tuple[str, ...], float]:
        """`edge`'s minimum-delay route from device a to device b (a != b) and its delay over that route."""
        return self.router.transfer(edge.size_bytes, self.devices[a], self.devices[b])

    @cached_property
    def edge_ends(self) -> tuple[list[int], list[int]]:
        """Source and destination op per edge index, as two lists: the inner loops of re-timing read them."""
        return [e.src for e in self.edges], [e.dst for e in self.edges]

    def group_memory_bytes(self, g: int) -> int:
        return self._group_memory[g]

    @cached_property
    def _group_memory(self) -> list[int]:
        """Bytes per group, summed once: list schedules and repairs ask per op and per move."""
        return [sum(self.memory_bytes[k] for k in ops) for ops in self.groups]

    def fit_together(self, groups: set[int]) -> bool:
        """Some device that every one of `groups` may use holds all of their memory: where
        none does, any valid placement puts two of them on different devices."""
        need = sum(self.group_memory_bytes(g) for g in groups)
        devices = set.intersection(*(set(self.allowed[g]) for g in groups))
        return any(self.capacity_bytes[d] is None or need <= self.capacity_bytes[d] for d in devices)

    def memory_exceeds_a_device(self) -> bool:
        """Some device cannot hold the whole graph's memory: answers stitched from parts of the
        graph solved on their own may overload it."""
        total = sum(self.memory_bytes)
        return any(cap is not None and cap < total for cap in self.capacity_bytes)

    def min_time_ms(self, k: int) -> float:
        return min(self.time_ms[k][d] for d in self.allowed[self.group[k]])

    @cached_property
    def descendants(self) -> list[int]:
        """Bitset per op of every op reachable from it: pairs so ordered never overlap anyway."""
        reach = [0] * self.n_ops
        for k in reversed(range(self.n_ops)):
            bits = 0
            for e in self.succs[k]:
                v = self.edges[e].dst
                bits |= reach[v] | (1 << v)
            reach[k] = bits
        return reach

    def ordered(self, i: int, j: int) -> bool:
        """True when i and j are ordered by the graph's transitive closure."""
        return bool(self.descendants[i] >> j & 1 or self.descendants[j] >> i & 1)

    @cached_property
    def uniform_time(self) -> bool:
        """True when every op lasts the same on every device it may use."""
        return all(len({self.time_ms[k][d] for d in self.allowed[self.group[k]]}) == 1 for k in range(self.n_ops))

    @cached_property
    def interchangeable_devices(self) -> list[list[int]]:
        """Classes of devices that any permutation may swap without changing any answer.

        Two devices are swappable when they give every op the same time, have the same
        memory, no op is pinned to either, and the transposition is an automorphism of
        the delay structure: equal Pareto route costs to every other device (hence equal
        delays at every size). Only such classes get symmetry breaking.
        """
        pinned = {d for g, allowed in enumerate(self.allowed) if len(allowed) < self.n_devices for d in allowed}
        classes: list[list[int]] = []
        for d in range(self.n_devices):
            if d in pinned:
                continue
            for cls in classes:
                if all(self._swappable(d, c) for c in cls):
                    cls.append(d)
                    break
            else:
                classes.append([d])
        return [c for c in classes if len(c) > 1]

    def alike(self, a: int, b: int) -> bool:
        """Devices a and b give every op the same time and have the same memory."""
        return self._alike[a][b]

    @cached_property
    def _alike(self) -> list[list[bool]]:
        """`alike` for every pair, computed once: relabellings ask it per pair and per try."""
        n = self.n_devices
        return [[self.capacity_bytes[a] == self.capacity_bytes[b] and all(row[a] == row[b] for row in self.time_ms)
                 for b in range(n)] for a in range(n)]

    def _swappable(self, a: int, b: int) -> bool:
        if not self.alike(a, b):
            return False
        da, db = self.devices[a], self.devices[b]
        prof = self.router.cost_profile
        if prof(da, db) != prof(db, da):
            return False
        for x in self.devices:
            if x not in (da, db) and (prof(da, x) != prof(db, x) or prof(x, da) != prof(x, db)):
                return False
        return True


def _topological_order(graph: GraphSpec) -> list[str]:
    """Topological order that keeps the listing order wherever the edges allow."""
    position = {op.id: i for i, op in enumerate(graph.ops)}
    g = nx.DiGraph()
    g.add_nodes_from(position)
    g.add_edges_from((e.src, e.dst) for e in graph.edges)
    return list(nx.lexicographical_topological_sort(g, key=position.__getitem__))


def build_problem(graph: GraphSpec, hardware: HardwareSpec) -> Problem:
    """Resolve costs, groups, pins and routes; raises InputError naming what is wrong."""
    ops = _topological_order(graph)
    op_index = {o: i for i, o in enumerate(ops)}
    spec_of = {op.id: op for op in graph.ops}
    devices = [d.id for d in hardware.devices]
    device_index = {d: i for i, d in enumerate(devices)}
    time_ms = [[op_time_ms(spec_of[o], dev) for dev in hardware.devices] for o in ops]

    group_names: list[str | None] = []
    group: list[int] = []
    by_name: dict[str, int] = {}
    for o in ops:
        name = spec_of[o].group
        if name is None:
            group.append(len(group_names))
            group_names.append(None)
        else:
            if name not in by_name:
                by_name[name] = len(group_names)
                group_names.append(name)
            group.append(by_name[name])
    groups: list[list[int]] = [[] for _ in group_names]
    for k, g in enumerate(group):
        groups[g].append(k)

    allowed = [list(range(len(devices))) for _ in groups]
    for k, o in enumerate(ops):
        pin = spec_of[o].device
        if pin is None:
            continue
        if pin not in device_index:
            raise InvalidGraphError(
                f"op {o!r}: device {pin!r} is not a device of hardware {hardware.name!r} "
                f"(devices: {', '.join(devices)})"
            )
        allowed[group[k]] = [device_index[pin]]

    edges = [Edge(op_index[e.src], op_index[e.dst], e.bytes) for e in graph.edges]
    edges.sort(key=lambda e: (e.src, e.dst))
    preds: list[list[int]] = [[] for _ in ops]
    succs: list[list[int]] = [[] for _ in ops]
    for i, e in enumerate(edges):
        succs[e.src].append(i)
        preds[e.dst].append(i)

    return Problem(
        graph=graph,
        hardware=hardware,
        ops=ops,
        devices=devices,
        time_ms=time_ms,
        memory_bytes=[spec_of[o].memory_bytes for o in ops],
        capacity_bytes=[d.memory_bytes for d in hardware.devices],
        edges=edges,
        preds=preds,
        succs=succs,
        group=group,
        groups=groups,
        group_names=group_names,
        allowed=allowed,
        router=Router(hardware),
        op_index=op_index,
        device_index=device_index,
    )

