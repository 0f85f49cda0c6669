"""msr-fiddle/dnn-partitioning JSON (NeurIPS 2020 "Efficient Algorithms for Device Placement of
DNN Graph Operators") to placer.graph/v1.

Input: `{maxSizePerFPGA, maxFPGAs, maxCPUs, nodes: [{id, name?, supportedOnFpga, cpuLatency,
fpgaLatency, isBackwardNode, colorClass?, size?}], edges: [{sourceId, destId, cost, size?}]}`.
"FPGA" there means any accelerator (its layer graphs hold GPU profiles).

Mapping: `fpgaLatency` (ms) is `time_ms`; `colorClass` is `group` (nodes without one are
free); `size` (bytes) is `memory_bytes`, except that a backward node whose colour class also
holds a forward node contributes 0 (the layer graphs repeat the layer's size on its backward
node, so the class's memory is counted once; `count_backward_memory=True` counts every
node's size, as the repository's own solvers do); edge `size` is `bytes` (`cost`, a transfer
time whose unit differs between files, is ignored). Booleans may be true/false or 0/1. The
machine fields (maxFPGAs, ...) are not part of a graph: pick a hardware preset instead.
Op ids are the node names when every node has a distinct one, else `n<id>`.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from placer.errors import InputError
from placer.importers.result import ImportResult, finish
from placer.schema import GRAPH_FORMAT, load_json

__all__ = ["import_msr"]


def _number(node: dict[str, Any], key: str, where: str, default: float | None = None) -> float:
    if key not in node:
        if default is None:
            raise InputError(f"{where}: missing {key}")
        return default
    value = node[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{where}: {key}={value!r} is not a number")
    if not math.isfinite(value) or value < 0:
        raise InputError(f"{where}: {key}={value!r} must be a finite non-negative number")
    return float(value)


def _flag(node: dict[str, Any], key: str, where: str) -> bool:
    if key not in node:
        raise InputError(f"{where}: missing {key}")
    value = node[key]
    if value in (True, False, 0, 1):
        return bool(value)
    raise InputError(f"{where}: {key}={value!r} is not a boolean (true/false or 0/1)")


def _node_id(node: Any, i: int) -> Any:
    if not isinstance(node, dict):
        raise InputError(f"nodes[{i}]: expected an object, got {type(node).__name__}")
    if "id" not in node or isinstance(node["id"], (bool, float, dict, list)) or node["id"] is None:
        raise InputError(f"nodes[{i}]: missing or invalid id (an integer or a string)")
    return node["id"]


def import_msr(
    source: str | Path | dict[str, Any],
    *,
    name: str | None = None,
    count_backward_memory: bool = False,
) -> ImportResult:
    """Import a dnn-partitioning input file (a path or the parsed JSON) as placer.graph/v1."""
    raw = load_json(source) if isinstance(source, (str, Path)) else source
    if not isinstance(raw, dict):
        raise InputError(f"dnn-partitioning input: expected a JSON object, got {type(raw).__name__}")
    for key in ("nodes", "edges"):
        if not isinstance(raw.get(key), list):
            raise InputError(f"dnn-partitioning input: missing or invalid {key!r} (an array)")
    nodes: list[dict[str, Any]] = raw["nodes"]
    if not nodes:
        raise InputError("dnn-partitioning input: 'nodes' is empty")

    ids = [_node_id(node, i) for i, node in enumerate(nodes)]
    first_at: dict[Any, int] = {}
    for i, node_id in enumerate(ids):
        if node_id in first_at:
            first = first_at[node_id]
            raise InputError(f"nodes[{i}] (id {node_id!r}): duplicate id, first at nodes[{first}]")
        first_at[node_id] = i
    names = [node.get("name") for node in nodes]
    use_names = len(set(names)) == len(names) and all(isinstance(n, str) and 0 < len(n) <= 256 for n in names)
    op_id = {node_id: (names[i] if use_names else f"n{node_id}") for i, node_id in enumerate(ids)}

    warnings: list[str] = []
    parsed = []
    for i, (node, node_id) in enumerate(zip(nodes, ids)):
        where = f"nodes[{i}] (id {node_id!r})"
        color = node.get("colorClass")
        if color is not None and (isinstance(color, (bool, float, dict, list))):
            raise InputError(f"{where}: colorClass={color!r} is not an integer or a string")
        parsed.append((
            node_id,
            _number(node, "fpgaLatency", where),
            round(_number(node, "size", where, default=0.0)),
            _flag(node, "isBackwardNode", where),
            _flag(node, "supportedOnFpga", where),
            color,
        ))
    forward_classes = {color for _, _, _, backward, _, color in parsed if not backward and color is not None}
    not_supported = [op_id[node_id] for node_id, _, _, _, supported, _ in parsed if not supported]
    if not_supported:
        shown = ", ".join(not_supported[:5]) + (", ..." if len(not_supported) > 5 else "")
        warnings.append(
            f"{len(not_supported)} node(s) marked supportedOnFpga=false keep their accelerator time "
            f"(fpgaLatency); pin them with 'device' if they must run elsewhere: {shown}"
        )

    ops = []
    for node_id, latency_ms, size, backward, _, color in parsed:
        shared = backward and color in forward_classes and not count_backward_memory
        op: dict[str, Any] = {
            "id": op_id[node_id],
            "kind": "backward" if backward else "forward",
            "time_ms": latency_ms,
            "memory_bytes": 0 if shared else size,
        }
        if color is not None:
            op["group"] = f"class{color}"
        ops.append(op)

    edge_bytes: dict[tuple[str, str], int] = {}
    missing_size = duplicates = 0
    for i, edge in enumerate(raw["edges"]):
        if not isinstance(edge, dict):
            raise InputError(f"edges[{i}]: expected an object, got {type(edge).__name__}")
        ends = []
        for key in ("sourceId", "destId"):
            if key not in edge:
                raise InputError(f"edges[{i}]: missing {key}")
            if edge[key] not in first_at:
                raise InputError(f"edges[{i}] ({edge.get('sourceId')!r} -> {edge.get('destId')!r}): "
                                 f"{key} names unknown node {edge[key]!r}")
            ends.append(op_id[edge[key]])
        where = f"edges[{i}] ({edge['sourceId']!r} -> {edge['destId']!r})"
        if ends[0] == ends[1]:
            raise InputError(f"{where}: an edge cannot join a node to itself")
        if "size" not in edge:
            missing_size += 1
        nbytes = round(_number(edge, "size", where, default=0.0))
        key = (ends[0], ends[1])
        if key in edge_bytes:
            duplicates += 1
        edge_bytes[key] = edge_bytes.get(key, 0) + nbytes
    if missing_size:
        warnings.append(f"{missing_size} edge(s) have no size: they carry 0 bytes")
    if duplicates:
        warnings.append(f"{duplicates} duplicate edge(s) merged (their sizes summed)")

    default_name = Path(source).stem if isinstance(source, (str, Path)) else "dnn-partitioning"
    document = {
        "format": GRAPH_FORMAT,
        "name": name or default_name,
        "ops": ops,
        "edges": [{"src": s, "dst": d, "bytes": b} for (s, d), b in edge_bytes.items()],
    }
    return finish(document, warnings)
