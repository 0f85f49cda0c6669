"""Synthetic graph families for benchmarks and tests, all as placer.graph/v1 documents.

Deterministic for a given seed. Times are profiled-style `time_ms`; tensor sizes are
chosen so the communication-to-computation ratio (CCR: mean transfer time over one link
of `link_gb_per_s` divided by mean op time) is what the caller asks for.
"""
from __future__ import annotations

import random
from typing import Any

__all__ = ["layered", "chain", "fork_join", "random_dag", "training_step", "fully_connected_hardware"]


def _doc(name: str, ops: list[dict[str, Any]], edges: list[dict[str, Any]]) -> dict[str, Any]:
    return {"format": "placer.graph/v1", "name": name, "ops": ops, "edges": edges}


def _bytes_for(ms: float, link_gb_per_s: float) -> int:
    return int(ms * 1e-3 * link_gb_per_s * 1e9)


def layered(n_ops: int, seed: int = 0, width: int = 4, ccr: float = 0.5, link_gb_per_s: float = 25.0) -> dict:
    """Inception-like: layers of up to `width` parallel branches joined by concat ops."""
    rng = random.Random(seed)
    ops: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    prev = None
    while len(ops) < n_ops:
        if prev is None:
            prev = "in"
            ops.append({"id": prev, "time_ms": round(rng.uniform(0.2, 1.0), 3)})
            continue
        tails = []
        branches = rng.randint(2, width)
        for b in range(branches):
            depth = rng.randint(1, 3)
            src = prev
            for d in range(depth):
                if len(ops) >= n_ops - 1:
                    break
                name = f"l{len(ops)}_b{b}_{d}"
                t = round(rng.uniform(0.1, 1.5), 3)
                ops.append({"id": name, "time_ms": t})
                edges.append({"src": src, "dst": name, "bytes": _bytes_for(ccr * t * rng.uniform(0.5, 1.5), link_gb_per_s)})
                src = name
            if src != prev:
                tails.append(src)
        join = f"concat{len(ops)}"
        ops.append({"id": join, "time_ms": round(rng.uniform(0.05, 0.3), 3)})
        for t_ in tails or [prev]:
            edges.append({"src": t_, "dst": join, "bytes": _bytes_for(ccr * 0.5, link_gb_per_s)})
        prev = join
    return _doc(f"layered-{n_ops}-s{seed}", ops, edges)


def chain(n_ops: int, seed: int = 0, ccr: float = 0.5, link_gb_per_s: float = 25.0) -> dict:
    rng = random.Random(seed)
    ops = [{"id": f"c{i}", "time_ms": round(rng.uniform(0.1, 2.0), 3)} for i in range(n_ops)]
    edges = [{"src": f"c{i}", "dst": f"c{i + 1}", "bytes": _bytes_for(ccr, link_gb_per_s)} for i in range(n_ops - 1)]
    return _doc(f"chain-{n_ops}-s{seed}", ops, edges)


def fork_join(n_ops: int, seed: int = 0, ccr: float = 0.5, link_gb_per_s: float = 25.0) -> dict:
    """One source, n-2 independent ops, one sink."""
    rng = random.Random(seed)
    ops = [{"id": "src", "time_ms": 0.5}] + [
        {"id": f"f{i}", "time_ms": round(rng.uniform(0.1, 2.0), 3)} for i in range(n_ops - 2)
    ] + [{"id": "sink", "time_ms": 0.5}]
    edges = [{"src": "src", "dst": f"f{i}", "bytes": _bytes_for(ccr, link_gb_per_s)} for i in range(n_ops - 2)]
    edges += [{"src": f"f{i}", "dst": "sink", "bytes": _bytes_for(ccr, link_gb_per_s)} for i in range(n_ops - 2)]
    return _doc(f"forkjoin-{n_ops}-s{seed}", ops, edges)


def random_dag(n_ops: int, seed: int = 0, ccr: float = 1.0, density: float = 0.1, link_gb_per_s: float = 25.0) -> dict:
    """Edges from lower to higher index with probability `density` within a window."""
    rng = random.Random(seed)
    ops = [{"id": f"r{i}", "time_ms": round(rng.uniform(0.1, 2.0), 3)} for i in range(n_ops)]
    edges = []
    for v in range(1, n_ops):
        srcs = [u for u in range(max(0, v - 12), v) if rng.random() < density * 3] or [rng.randrange(max(0, v - 5), v)]
        for u in srcs:
            edges.append({"src": f"r{u}", "dst": f"r{v}", "bytes": _bytes_for(ccr * rng.uniform(0.2, 2.0), link_gb_per_s)})
    return _doc(f"random-{n_ops}-ccr{ccr}-s{seed}", ops, edges)


def training_step(forward: dict) -> dict:
    """Forward graph -> training step: a backward op per forward op (same group, edges
    reversed, 2x time) and nothing else; saved activations stay with their forward op."""
    ops = []
    edges = []
    for op in forward["ops"]:
        ops.append({**op, "group": op["id"]})
    for op in forward["ops"]:
        ops.append({"id": f"{op['id']}_grad", "time_ms": round(2 * op["time_ms"], 3), "group": op["id"]})
        edges.append({"src": op["id"], "dst": f"{op['id']}_grad", "bytes": 0})
    for e in forward["edges"]:
        edges.append(e)
        edges.append({"src": f"{e['dst']}_grad", "dst": f"{e['src']}_grad", "bytes": e["bytes"]})
    # the loss: every forward sink feeds its own gradient already; join forward sinks to backward sources
    return _doc(forward["name"] + "-train", ops, edges)


def fully_connected_hardware(n: int, link_gb_per_s: float = 25.0, latency_us: float = 5.0,
                             memory_bytes: int | None = None) -> dict:
    device: dict[str, Any] = {"kind": "gpu"}
    if memory_bytes is not None:
        device["memory_bytes"] = memory_bytes
    return {
        "format": "placer.hardware/v1",
        "name": f"{n}-gpu-fully-connected",
        "devices": [{"id": f"gpu{i}", **device} for i in range(n)],
        "links": [{"a": f"gpu{i}", "b": f"gpu{j}", "bandwidth_gb_per_s": link_gb_per_s, "latency_us": latency_us}
                  for i in range(n) for j in range(i + 1, n)],
    }
