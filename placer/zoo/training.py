"""Turn a per-sample forward Network into one training step as a placer.graph/v1 document.

For every forward layer L (group g, its parameter group or its own name):

- forward op `L` (group g): FLOPs and activation bytes x batch, plus the weight bytes it reads;
  `memory_bytes` = the activations it keeps for the backward pass (x batch).
- backward op `L.bwd` (group g, so it is colocated with `L`): FLOPs = 2 x forward for layers with
  weights (gradient w.r.t. the input and w.r.t. the weights, each a pass of the forward's size),
  1 x otherwise; bytes scale the same way. Layers may override this (embeddings).
- one update op `g.update` per parameter group (group g): SGD with momentum,
  v = mu v + g; w = w - lr v: 4 FLOPs and 20 bytes (read w, v, g; write w, v) per parameter.
  It holds the group's state: weights + gradients + momentum = 3 copies x 4 bytes per parameter.

Edges: forward data edges `P -> L` (bytes of the tensor L reads); the matching gradient edge
reversed, `L.bwd -> P.bwd` (the gradient has the tensor's size), when P has a backward op;
`L -> L.bwd` carrying the activations L saved; `L.bwd -> g.update` carrying the weight gradient.
"""
from __future__ import annotations

from typing import Any

from placer.schema import GRAPH_FORMAT
from placer.zoo.network import ELEMENT_BYTES, Layer, Network

__all__ = [
    "OPTIMIZER_COPIES",
    "UPDATE_BYTES_PER_PARAMETER",
    "UPDATE_FLOPS_PER_PARAMETER",
    "UPDATE_KIND",
    "backward_id",
    "split_dims",
    "training_graph",
    "update_id",
]

OPTIMIZER_COPIES = 3  # weights, gradients, momentum (SGD with momentum keeps one extra copy)
UPDATE_FLOPS_PER_PARAMETER = 4
UPDATE_BYTES_PER_PARAMETER = 5 * ELEMENT_BYTES
UPDATE_KIND = "sgd_momentum"
BACKWARD_KIND_SUFFIX = "_grad"


def backward_id(layer: str) -> str:
    return f"{layer}.bwd"


def update_id(group: str) -> str:
    return f"{group}.update"


_PER_CHANNEL = frozenset({"conv2d", "batchnorm", "relu", "pool", "add", "gelu", "tanh", "softmax"})


def split_dims(layer: Layer, batch: int) -> dict[str, int]:
    """The output dimensions a split plan may cut (placer.split.semantics): the batch, and per
    kind the output channels (the first axis of an image, the last of a sequence), a matmul's
    input features, attention heads, an embedding's vocabulary rows."""
    shape = layer.output.shape
    dims = {"sample": batch}
    if layer.kind in _PER_CHANNEL or layer.kind == "matmul":
        dims["channel"] = shape[0] if len(shape) == 3 else shape[-1]
    if layer.kind == "matmul" and layer.inputs:
        dims["input_channel"] = layer.inputs[0].shape[-1]
    if layer.kind == "attention":
        cubes = [t.shape for t in (layer.output, *layer.inputs) if len(t.shape) == 3]
        if cubes:
            dims["heads"] = cubes[0][0]
    if layer.kind == "embedding" and layer.weight_elements and shape:
        dims["vocab"] = layer.weight_elements // shape[-1]
    return {d: n for d, n in dims.items() if n > 1}


def _forward_op(layer: Layer, batch: int) -> dict[str, Any]:
    op: dict[str, Any] = {
        "id": layer.name,
        "kind": layer.kind,
        "flops": batch * layer.flops,
        "bytes_accessed": float(batch * layer.activation_bytes + layer.weight_bytes_read),
        "memory_bytes": batch * layer.saved_elements * ELEMENT_BYTES,
        "dims": split_dims(layer, batch),
        "weight_bytes": layer.weight_bytes_read,
    }
    if layer.group is not None:
        op["group"] = layer.group
    return op


def _backward_op(layer: Layer, batch: int) -> dict[str, Any]:
    factor = layer.grad_factor
    return {
        "id": backward_id(layer.name),
        "kind": layer.kind + BACKWARD_KIND_SUFFIX,
        "flops": batch * layer.grad_flops,
        "bytes_accessed": float(factor * (batch * layer.activation_bytes + layer.weight_bytes_read)),
        "memory_bytes": 0,
        "group": layer.group,
        "dims": split_dims(layer, batch),
        "weight_bytes": int(factor * layer.weight_bytes_read),
    }


def _update_op(group: str, parameters: int) -> dict[str, Any]:
    return {
        "id": update_id(group),
        "kind": UPDATE_KIND,
        "flops": float(UPDATE_FLOPS_PER_PARAMETER * parameters),
        "bytes_accessed": float(UPDATE_BYTES_PER_PARAMETER * parameters),
        "memory_bytes": OPTIMIZER_COPIES * ELEMENT_BYTES * parameters,
        "weight_bytes": ELEMENT_BYTES * parameters,
        "group": group,
    }


def training_graph(net: Network, batch: int) -> dict[str, Any]:
    """The placer.graph/v1 document of one training step of `net` on `batch` samples."""
    if batch < 1:
        raise ValueError(f"batch must be >= 1, got {batch}")
    ops: list[dict[str, Any]] = []
    edges: dict[tuple[str, str], int] = {}

    def edge(src: str, dst: str, nbytes: int) -> None:
        edges[(src, dst)] = edges.get((src, dst), 0) + nbytes

    layers = net.layers
    for layer in layers.values():
        ops.append(_forward_op(layer, batch))
        for t in layer.inputs:
            edge(t.producer, layer.name, batch * t.elements * ELEMENT_BYTES)
    backward = [layer for layer in reversed(layers.values()) if layer.has_backward]
    for layer in backward:
        ops.append(_backward_op(layer, batch))
        edge(layer.name, backward_id(layer.name), batch * layer.saved_elements * ELEMENT_BYTES)
        for t in layer.inputs:
            if layers[t.producer].has_backward:
                edge(backward_id(layer.name), backward_id(t.producer), batch * t.elements * ELEMENT_BYTES)
        if layer.has_weights:
            edge(backward_id(layer.name), update_id(layer.group), layer.weight_elements * ELEMENT_BYTES)
    for group, parameters in net.group_parameters.items():
        if parameters > 0:
            ops.append(_update_op(group, parameters))
    return {
        "format": GRAPH_FORMAT,
        "name": f"{net.name}_b{batch}",
        "ops": ops,
        "edges": [{"src": s, "dst": d, "bytes": b} for (s, d), b in edges.items()],
    }
