"""Costs of split configurations (DESIGN.md "Split operators", Costs and Memory).

- A task's time: the analytic roofline on its share of the op's flops and bytes, where a sample
  task still reads the op's weights whole (`weight_bytes`); a profiled op's `time_ms / d` plus a
  per-task overhead. A sample-split optimizer update runs whole on every replica.
- Redistribution: the bytes each consumer task needs from each producer task on another device
  (placer.split.semantics.fraction), each routed over the hardware graph as placements are; the
  tensor is ready when the slowest of these transfers lands (they run in parallel).
- Weight gradients of a sample-split unit: a ring all-reduce over its devices before its update,
  2 (d - 1) steps of B / d bytes, each step as slow as the slowest hop of the ring.
- Memory: a task keeps its share of the op's memory; a sample-split update keeps a full replica
  of the optimizer state (weights, gradients, momentum).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from placer.routing import Router
from placer.schema import DeviceSpec, OpSpec
from placer.split.semantics import Layout, fraction, role

__all__ = ["Move", "gradient_bytes", "ring_all_reduce_ms", "ring_routes", "task_memory_bytes", "task_time_ms", "transfers"]


def task_time_ms(op: OpSpec, device: DeviceSpec, dim: str | None, degree: int, overhead_ms: float) -> float:
    """Duration of one of the `degree` tasks of `op` split along `dim`, on `device`."""
    from placer.cost import op_time_ms

    if degree == 1 or dim is None:
        return op_time_ms(op, device)
    replicated = role(op.kind) == "update" and dim == "sample"
    if op.time_ms is not None:
        return op.time_ms if replicated else op.time_ms / degree + overhead_ms
    if replicated:
        return op_time_ms(op, device)
    weights = min(float(op.weight_bytes or 0), op.bytes_accessed or 0.0) if dim == "sample" else 0.0
    bytes_share = ((op.bytes_accessed or 0.0) - weights) / degree + weights
    share = op.model_construct(**{**op.__dict__, "flops": (op.flops or 0.0) / degree,
                                  "bytes_accessed": bytes_share})
    return op_time_ms(share, device)


def task_memory_bytes(op: OpSpec, dim: str | None, degree: int) -> int:
    """What one task keeps resident: its share, or a full replica for a sample-split update."""
    if degree == 1 or dim is None or (role(op.kind) == "update" and dim == "sample"):
        return op.memory_bytes
    return math.ceil(op.memory_bytes / degree)


@dataclass(frozen=True, slots=True)
class Move:
    """Bytes from producer task `k` on device `src` to consumer task `j` on device `dst`."""

    k: int
    j: int
    src: int
    dst: int
    size_bytes: int


def transfers(size_bytes: int, out: Layout, need: Layout, src_devices: tuple[int, ...],
              dst_devices: tuple[int, ...]) -> list[Move]:
    """Every cross-device piece a consumer's tasks need from a producer's tasks."""
    moves: list[Move] = []
    if size_bytes == 0:
        return moves
    for j, dst in enumerate(dst_devices):
        if out.form == "replica":
            local = [k for k, d in enumerate(src_devices) if d == dst]
            sources = [] if local else [j % len(src_devices)]
        else:
            sources = list(range(len(src_devices)))
        for k in sources:
            src = src_devices[k]
            if src == dst:
                continue
            share = fraction(out, need, k, j)
            if share > 0:
                moves.append(Move(k, j, src, dst, max(1, math.ceil(share * size_bytes - 1e-9))))
    return moves


def gradient_bytes(edge_bytes: int, update: OpSpec) -> int:
    """Bytes a sample split all-reduces on a backward -> update edge: the edge's, or, where the
    graph gives the edge no size (the importers' colocated edges), the update's weights."""
    return edge_bytes or (update.weight_bytes or 0)


def ring_routes(router: Router, devices: list[str], size_bytes: float) -> list[tuple[str, ...]]:
    """The route of each hop of the ring over `devices` (in their order)."""
    return [router.route(size_bytes, devices[i], devices[(i + 1) % len(devices)]) for i in range(len(devices))]


def ring_all_reduce_ms(router: Router, devices: list[str], size_bytes: int) -> float:
    """A ring all-reduce of `size_bytes` over `devices`: 2 (d - 1) steps of size / d bytes."""
    d = len(devices)
    if d < 2 or size_bytes == 0:
        return 0.0
    chunk = size_bytes / d
    step = max(router.delay_ms(chunk, devices[i], devices[(i + 1) % d]) for i in range(d))
    return 2 * (d - 1) * step
