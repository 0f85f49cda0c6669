"""A forward (inference) graph with analytic costs, shared by the ONNX and PyTorch importers.

Both importers first build a `ForwardGraph`: one op per framework node with FLOPs, bytes
accessed, the weights it owns and the bytes it outputs, and tensor edges. Then
`fold_views` removes zero-cost view ops (reshape, squeeze, getitem, ...) and `to_document`
writes placer.graph/v1, either the forward graph or a training step (forward, backward in the
forward op's group, and a weight update per op with weights).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

import networkx as nx

from placer.schema import GRAPH_FORMAT

__all__ = [
    "ATTENTION_BACKWARD_FACTOR",
    "OPTIMIZERS",
    "ForwardGraph",
    "ForwardOp",
    "Optimizer",
    "backward_factor",
    "fold_views",
    "is_shape_arithmetic",
    "to_document",
    "topological_ids",
    "unique_id",
]

Optimizer = Literal["sgd", "momentum", "adam"]

# Per parameter element: FLOPs of one update, and how many weight-sized tensors it reads plus
# writes (w, g, state...), and how many weight-sized state tensors it keeps resident.
#   sgd:      w -= lr g                                  2 FLOPs, read w g, write w        (3)
#   momentum: m = mu m + g; w -= lr m                    4 FLOPs, read w g m, write w m    (5), 1 state
#   adam:     m, v moments, bias correction, sqrt, div  12 FLOPs, read w g m v, write w m v (7), 2 states
OPTIMIZERS: dict[str, tuple[int, int, int]] = {
    "sgd": (2, 3, 0),
    "momentum": (4, 5, 1),
    "adam": (12, 7, 2),
}


# An op all of whose tensors are this small is shape arithmetic (Shape -> Gather -> Cast -> Sqrt
# of a head size, ...): exporters emit dozens of them and they cost nothing, so they fold like views.
SHAPE_ARITHMETIC_MAX_BYTES = 64


def is_shape_arithmetic(tensor_bytes: list[int | None]) -> bool:
    """True when every tensor an op reads or writes is known and at most 64 bytes."""
    return bool(tensor_bytes) and all(b is not None and b <= SHAPE_ARITHMETIC_MAX_BYTES for b in tensor_bytes)


# Backward FLOPs of fused attention over its forward FLOPs: the backward recomputes the score
# matrix and runs five matmuls to the forward's two (FlashAttention-2, Dao 2023, Section 3.1),
# and measured kernels take about 2.5x the forward's time. Other ops: 2x with parameters (input
# and weight gradients), 1x without.
ATTENTION_BACKWARD_FACTOR = 2.5
ATTENTION_KINDS = frozenset({
    "scaled_dot_product_attention", "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
    "Attention", "MultiHeadAttention",
})


def backward_factor(kind: str, has_parameters: bool) -> float:
    """Backward FLOPs as a multiple of the forward op's FLOPs (see ATTENTION_BACKWARD_FACTOR)."""
    if kind in ATTENTION_KINDS:
        return ATTENTION_BACKWARD_FACTOR
    return 2.0 if has_parameters else 1.0


@dataclass
class ForwardOp:
    """One forward op. `view` ops cost nothing and may be folded into their neighbours.

    `weight_bytes` is every constant the op holds (initializers, buffers, shape constants);
    `param_bytes` / `param_elements` are the trainable (floating-point parameter) part of it,
    which gets gradients and an optimizer update in a training step. `reads_parameters` is
    true for every op that reads a trainable parameter, held or not: the second reader of a
    tied weight computes a weight gradient too, though the weight is held (and updated) once.
    """

    id: str
    kind: str
    flops: float = 0.0
    bytes_accessed: float = 0.0
    weight_bytes: int = 0
    param_bytes: int = 0
    param_elements: int = 0
    output_bytes: int = 0
    view: bool = False
    reads_parameters: bool = False
    out_shape: tuple[int, ...] | None = None  # the output's shape, batch first (split dims)
    in_shape: tuple[int, ...] | None = None   # the first input's shape


@dataclass
class ForwardGraph:
    """Ops in a topological order and tensor edges (src, dst) -> bytes."""

    ops: list[ForwardOp] = field(default_factory=list)
    edges: dict[tuple[str, str], int] = field(default_factory=dict)

    def add_edge(self, src: str, dst: str, nbytes: int) -> None:
        if src != dst:
            self.edges[(src, dst)] = self.edges.get((src, dst), 0) + int(nbytes)


def unique_id(wanted: str, taken: set[str]) -> str:
    """`wanted`, or `wanted_2`, `wanted_3`, ... if taken; records the result in `taken`."""
    candidate = wanted[:240] or "op"
    n = 1
    while candidate in taken:
        n += 1
        candidate = f"{wanted[:240]}_{n}"
    taken.add(candidate)
    return candidate


def fold_views(graph: ForwardGraph) -> ForwardGraph:
    """Remove view ops that have a consumer, wiring their producers straight to their consumers.

    A folded edge p -> s carries min(bytes p->view, bytes view->s): the data of a reshape
    passes through whole, while a Shape op's consumer needs only the few bytes of the shape.
    Weights a view owned (a reshaped initializer) move to its first consumer. A view with no
    consumer (a graph output, an unused getitem) is dropped, unless it owns weights or is all
    that is left. Folding never creates a cycle.
    """
    order_ids = topological_ids([op.id for op in graph.ops], graph.edges)
    by_id = {op.id: replace(op) for op in graph.ops}  # copies: folding moves weights between ops
    ops = [by_id[i] for i in order_ids]
    succ: dict[str, list[str]] = {op.id: [] for op in ops}
    pred: dict[str, list[str]] = {op.id: [] for op in ops}
    edges = dict(graph.edges)
    for src, dst in edges:
        succ[src].append(dst)
        pred[dst].append(src)
    order = {op.id: i for i, op in enumerate(ops)}
    removed: set[str] = set()
    for op in ops:
        if not op.view or not succ[op.id]:
            continue
        outs = sorted(succ[op.id], key=order.__getitem__)
        if op.weight_bytes:
            heir = by_id[outs[0]]
            heir.weight_bytes += op.weight_bytes
            heir.param_bytes += op.param_bytes
            heir.param_elements += op.param_elements
        if op.reads_parameters:  # a transposed or reshaped weight: its readers read the parameter
            for reader in outs:
                by_id[reader].reads_parameters = True
        for p in pred[op.id]:
            into = edges.pop((p, op.id))
            succ[p].remove(op.id)
            for s in outs:
                nbytes = min(into, edges[(op.id, s)])
                if (p, s) not in edges:
                    succ[p].append(s)
                    pred[s].append(p)
                    edges[(p, s)] = 0
                edges[(p, s)] += nbytes
        for s in outs:
            del edges[(op.id, s)]
            pred[s].remove(op.id)
        removed.add(op.id)
    # Views nobody reads (an unused getitem, a reshaped graph output) cost and hold nothing: drop
    # them too, unless they own weights or nothing else would be left.
    dangling = {
        op.id for op in ops if op.view and op.id not in removed and not succ[op.id] and not op.weight_bytes
    }
    if len(removed) + len(dangling) < len(ops):
        removed |= dangling
        edges = {(s, d): b for (s, d), b in edges.items() if d not in dangling}
    return ForwardGraph(ops=[op for op in ops if op.id not in removed], edges=edges)


def split_dims(op: ForwardOp) -> dict[str, int]:
    """The output dimensions a split plan may cut (docs/split.md), from the shapes: the batch
    (the first axis), the channels (NCHW's second axis, else the last), a matmul's input
    features. Empty when the shapes are unknown or the op is not one the planner splits."""
    from placer.split.semantics import base_kind
    from placer.split.semantics import split_dims as kind_dims

    shape = op.out_shape
    allowed = kind_dims(op.kind)
    if not shape or len(shape) < 2 or not allowed:
        return {}
    dims = {"sample": shape[0]}
    if "channel" in allowed:
        dims["channel"] = shape[1] if len(shape) == 4 else shape[-1]
    if "input_channel" in allowed and op.in_shape and base_kind(op.kind) == "matmul":
        dims["input_channel"] = op.in_shape[-1]
    return {d: n for d, n in dims.items() if isinstance(n, int) and n > 1}


def _forward_op(op: ForwardOp, memory_bytes: int, group: str | None) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "id": op.id,
        "kind": op.kind,
        "flops": float(op.flops),
        "bytes_accessed": float(op.bytes_accessed),
        "memory_bytes": int(memory_bytes),
    }
    if group is not None:
        doc["group"] = group
    dims = split_dims(op)
    if dims:
        doc["dims"] = dims
        doc["weight_bytes"] = int(op.weight_bytes)
    return doc


def to_document(
    graph: ForwardGraph,
    name: str,
    *,
    training: bool = False,
    optimizer: Optimizer = "adam",
) -> dict[str, Any]:
    """placer.graph/v1 for inference (memory = weights) or for a training step.

    Training step, per forward op X (group X):
      X          memory = weights + output bytes (the activation kept for the backward pass)
      X.bwd      FLOPs = 2 x forward if X reads parameters (input and weight gradients; a tied
                 weight's every reader, not only the op that holds it), 2.5 x
                 for fused attention, else 1 x (backward_factor); bytes accessed = 2 x forward; memory = the parameters' gradient
      X.update   only if X has parameters: the optimizer's FLOPs and traffic per parameter,
                 memory = its state (momentum 1 x, Adam 2 x the parameters)
    Edges: every forward edge u -> v (b bytes) gets a gradient edge v.bwd -> u.bwd (b bytes);
    X -> X.bwd and X.bwd -> X.update carry 0 bytes (same group, same device).
    """
    if not training:
        ops = [_forward_op(op, op.weight_bytes, None) for op in graph.ops]
        edges = [{"src": s, "dst": d, "bytes": int(b)} for (s, d), b in graph.edges.items()]
        return {"format": GRAPH_FORMAT, "name": name, "ops": ops, "edges": edges}

    flops_per_param, traffic_tensors, state_tensors = OPTIMIZERS[optimizer]
    fwd_ops: list[dict[str, Any]] = []
    bwd_ops: list[dict[str, Any]] = []
    upd_ops: list[dict[str, Any]] = []
    edges_out: list[dict[str, Any]] = []
    for op in graph.ops:
        fwd_ops.append(_forward_op(op, op.weight_bytes + op.output_bytes, op.id))
        bwd = f"{op.id}.bwd"
        bwd_ops.append({
            "id": bwd,
            "kind": f"{op.kind}.bwd",
            "flops": float(op.flops * backward_factor(op.kind, bool(op.param_bytes) or op.reads_parameters)),
            "bytes_accessed": float(2 * op.bytes_accessed),
            "memory_bytes": int(op.param_bytes),
            "group": op.id,
            **({"dims": split_dims(op), "weight_bytes": int(op.weight_bytes)} if split_dims(op) else {}),
        })
        edges_out.append({"src": op.id, "dst": bwd, "bytes": 0})
        if op.param_bytes:
            upd = f"{op.id}.update"
            upd_ops.append({
                "id": upd,
                "kind": f"{optimizer}.update",
                "flops": float(flops_per_param * op.param_elements),
                "bytes_accessed": float(traffic_tensors * op.param_bytes),
                "memory_bytes": int(state_tensors * op.param_bytes),
                "weight_bytes": int(op.param_bytes),  # what a sample split all-reduces
                "group": op.id,
            })
            edges_out.append({"src": bwd, "dst": upd, "bytes": 0})
    for (src, dst), nbytes in graph.edges.items():
        edges_out.append({"src": src, "dst": dst, "bytes": int(nbytes)})
        edges_out.append({"src": f"{dst}.bwd", "dst": f"{src}.bwd", "bytes": int(nbytes)})
    return {
        "format": GRAPH_FORMAT,
        "name": name,
        "ops": fwd_ops + bwd_ops + upd_ops,
        "edges": edges_out,
    }


def topological_ids(ops: list[str], edges: dict[tuple[str, str], int]) -> list[str]:
    """A topological order of the op ids that keeps the given order where it can."""
    g = nx.DiGraph()
    g.add_nodes_from(ops)
    g.add_edges_from(edges)
    position = {op: i for i, op in enumerate(ops)}
    return list(nx.lexicographical_topological_sort(g, key=position.__getitem__))
