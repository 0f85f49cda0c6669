"""Split ops run as their tasks: which inputs each task gets and how their outputs combine.

A split (DESIGN.md "Split operators", the result's `splits`) cuts one op into `degree` tasks
along one dimension of its output. `split_rule` says, from the op's kind and shapes, which
arguments are cut along which axis (`Rule.cuts`; the rest go whole to every task), and whether
the task outputs are concatenated along the split axis or summed (partial sums). `emit_split`
writes the tasks into the placed fx graph: each runs on its device and the combined output lives
on the first task's device. Gradients flow back through the cuts and copies, so a sample-split
op's weight gradient is the sum over its tasks (the all-reduce) and a channel task's gradient
lands in its slice of the weight.

| dim | kinds |
|---|---|
| sample | linear, conv, matmul/bmm, embedding, attention, layer/group/RMS norm, batch norm with running statistics, pools, element-wise ops, softmax (not over the batch), flatten, contiguous, clone |
| channel | linear and conv (weight rows), batch norm (exact in training: statistics are per channel), pools, element-wise ops, softmax (not over the channels) |
| input_channel | linear (row-parallel: input features and weight columns cut, partial outputs summed, bias once) |
| heads | scaled_dot_product_attention (q, k, v and a per-head mask cut along the head axis) |

Channel is axis 1 of a 4-D (NCHW) output and the last axis otherwise, as the importers give it.
"""
from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from placer.export.plan import Split
from placer.importers.torch_capture import TorchCapture

__all__ = ["EXPORTED_SPLITS", "Rule", "emit_split", "split_rule"]

_ELEMENTWISE = frozenset({
    "relu", "gelu", "silu", "sigmoid", "tanh", "add", "sub", "mul", "div", "dropout", "hardtanh",
    "leaky_relu", "elu", "mish", "hardswish", "clamp", "clamp_min", "clamp_max", "neg", "exp", "pow",
    "sqrt", "rsqrt", "abs", "square", "relu_", "add_", "mul_",
})
_SOFTMAX = frozenset({"softmax", "log_softmax", "_softmax", "_log_softmax"})
_POOLS = frozenset({"max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
                    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool2d"})
_NORMS = frozenset({"layer_norm", "group_norm", "rms_norm", "instance_norm"})
_CONVS = frozenset({"conv1d", "conv2d", "conv3d"})
_PER_SAMPLE = frozenset({"flatten", "contiguous", "clone", "conv_transpose1d", "conv_transpose2d",
                         "conv_transpose3d", "matmul", "bmm"}) | _NORMS

EXPORTED_SPLITS: dict[str, frozenset[str]] = {
    "sample": _ELEMENTWISE | _SOFTMAX | _POOLS | _CONVS | _PER_SAMPLE | {"linear", "embedding", "batch_norm",
                                                                        "scaled_dot_product_attention"},
    "channel": _ELEMENTWISE | _SOFTMAX | _POOLS | _CONVS | {"linear", "batch_norm"},
    "input_channel": frozenset({"linear"}),
    "heads": frozenset({"scaled_dot_product_attention"}),
}


class SplitNotExported(ValueError):
    """This split cannot run as tasks; the message says why (the caller names the op)."""


@dataclass(frozen=True)
class Rule:
    """Arguments cut per task (position -> axis), how outputs combine, the split size."""

    size: int
    cuts: dict[int, int]
    combine: str  # "cat" along out_axis, or "sum" (partial sums)
    out_axis: int
    first_task_only: frozenset[int] = field(default_factory=frozenset)  # a row-parallel bias
    updated_in_place: frozenset[int] = field(default_factory=frozenset)  # running statistics


def _shape(arg: Any) -> tuple[int, ...] | None:
    value = arg.meta.get("val") if hasattr(arg, "meta") else None
    return tuple(int(d) for d in value.shape) if hasattr(value, "shape") else None


def _channel_axis(rank: int) -> int:
    return 1 if rank == 4 else rank - 1


def _follow(node: Any, axis: int, size: int) -> dict[int, int]:
    """Cut every tensor argument along the axis it broadcasts to the output's `axis`."""
    rank = len(node.meta["val"].shape)
    cuts = {}
    for i, arg in enumerate(node.args):
        shape = _shape(arg)
        if shape is None:
            continue
        aligned = axis - (rank - len(shape))
        if aligned < 0 or shape[aligned] == 1:
            continue  # broadcast along the split axis: every task needs it whole
        if shape[aligned] != size:
            raise SplitNotExported(f"argument {i} of shape {list(shape)} does not follow the output's axis {axis}")
        cuts[i] = aligned
    return cuts


def _batch_inputs(node: Any, capture: TorchCapture, size: int) -> dict[int, int]:
    """Activations with the output's rank and batch (embedding: its indices), cut along 0."""
    rank = len(node.meta["val"].shape)
    cuts = {}
    for i, arg in enumerate(node.args):
        shape = _shape(arg)
        if shape is None or getattr(arg, "name", None) in capture.weights:
            continue
        indices = i == 1 and _kind_of(node) == "embedding"  # one rank fewer than the output
        if shape and shape[0] == size and (len(shape) == rank or indices):
            cuts[i] = 0
    if not cuts:
        raise SplitNotExported("no input has the output's batch dimension")
    return cuts


def _kind_of(node: Any) -> str:
    packet = getattr(node.target, "overloadpacket", None)
    return str(getattr(packet, "__name__", node.target)).split(".")[-1]


def split_rule(node: Any, split: Split, capture: TorchCapture) -> Rule:
    """How `node` runs as the tasks of `split` (SplitNotExported when it cannot)."""
    kind, dim = _kind_of(node), split.dim
    out = _shape(node)
    if out is None:
        raise SplitNotExported(f"its {kind} output is not one tensor")
    if dim not in EXPORTED_SPLITS:
        raise SplitNotExported(f"dim {dim!r} is not exported (exported: {', '.join(EXPORTED_SPLITS)})")
    if kind not in EXPORTED_SPLITS[dim]:
        raise SplitNotExported(f"a {dim} split of {kind} is not exported ({dim}-splittable kinds: "
                               f"{', '.join(sorted(EXPORTED_SPLITS[dim]))})")
    rank = len(out)
    axis = 0 if dim == "sample" else _channel_axis(rank)
    if kind in _SOFTMAX and int(node.args[1]) % rank == axis:
        raise SplitNotExported(f"{kind} normalises over the split axis {axis}")
    if kind == "batch_norm":
        training = bool(node.args[5])
        if dim == "sample" and training:
            raise SplitNotExported("a sample split of batch_norm in training: its statistics span the batch")
        cuts = {0: axis}
        if dim == "channel":
            cuts.update({i: 0 for i in (1, 2, 3, 4) if _shape(node.args[i]) is not None})
        stats = frozenset(i for i in (3, 4) if i in cuts) if training else frozenset()
        return Rule(out[axis], cuts, "cat", axis, updated_in_place=stats)
    if kind == "linear" and dim != "sample":
        weight = _shape(node.args[1])
        if dim == "channel":
            cuts = {1: 0, **({2: 0} if len(node.args) > 2 and _shape(node.args[2]) else {})}
            return Rule(weight[0], cuts, "cat", rank - 1)
        x_rank = len(_shape(node.args[0]))
        bias = frozenset({2}) if len(node.args) > 2 and _shape(node.args[2]) else frozenset()
        return Rule(weight[1], {0: x_rank - 1, 1: 1}, "sum", rank - 1, bias)
    if kind in _CONVS and dim == "channel":
        groups = node.args[6] if len(node.args) > 6 else 1
        if groups != 1:
            raise SplitNotExported(f"a channel split of a grouped convolution (groups {groups})")
        cuts = {1: 0, **({2: 0} if len(node.args) > 2 and _shape(node.args[2]) else {})}
        return Rule(_shape(node.args[1])[0], cuts, "cat", 1)
    if kind == "scaled_dot_product_attention" and dim == "heads":
        heads = out[1]
        cuts = {i: 1 for i in (0, 1, 2)}
        mask = _shape(node.args[3]) if len(node.args) > 3 else None
        if mask is not None and len(mask) == 4 and mask[1] == heads:
            cuts[3] = 1
        return Rule(heads, cuts, "cat", 1)
    if kind in _POOLS:
        return Rule(out[axis if dim == "sample" else 1], {0: 0 if dim == "sample" else 1}, "cat",
                    0 if dim == "sample" else 1)
    if kind in _ELEMENTWISE or kind in _SOFTMAX or (dim == "channel"):
        return Rule(out[axis], _follow(node, axis, out[axis]), "cat", axis)
    return Rule(out[0], _batch_inputs(node, capture, out[0]), "cat", 0)


def emit_split(graph: Any, node: Any, split: Split, rule: Rule, where: dict[str, str],
               on: Callable[[Any, str | None], Any], device_node: Callable[[str], Any]) -> Any:
    """Write the tasks of `node` into `graph`; the combined output's node (on the first device)."""
    import torch
    from torch import fx

    if rule.size % split.degree:
        raise SplitNotExported(f"degree {split.degree} does not divide its {split.dim} size {rule.size}")
    first = split.devices[0]
    mutated = _mutated_args(node) | rule.updated_in_place
    pieces: dict[int, list[Any]] = {}
    for i, axis in rule.cuts.items():
        parts = graph.call_function(torch.ops.aten.split.Tensor, (on(node.args[i], None),
                                                                    rule.size // split.degree, axis))
        pieces[i] = [graph.call_function(operator.getitem, (parts, k)) for k in range(split.degree)]
    outputs = []
    for k, device in enumerate(split.devices):
        args, writebacks = [], []
        for i, arg in enumerate(node.args):
            if i in rule.first_task_only and k > 0:
                args.append(None)
            elif i in pieces:
                piece = pieces[i][k]
                if device == where[arg.name]:
                    args.append(piece)
                else:
                    moved = graph.call_method("to", (piece, device_node(device)))
                    args.append(moved)
                    if i in mutated:  # an in-place update (running statistics) of a moved slice
                        writebacks.append((piece, moved))
            else:
                args.append(fx.node.map_arg(arg, lambda a, dev=device: on(a, dev)))
        kwargs = fx.node.map_arg(node.kwargs, lambda a, dev=device: on(a, dev))
        task = graph.call_function(node.target, tuple(args), kwargs)
        for piece, moved in writebacks:  # through .data: the slice's version counter is the
            # buffer's, which the other tasks' saved tensors check in the backward pass
            graph.call_method("copy_", (graph.call_function(getattr, (piece, "data")), moved))
        outputs.append(task if device == first else graph.call_method("to", (task, device_node(first))))
    if rule.combine == "sum":
        total = outputs[0]
        for part in outputs[1:]:
            total = graph.call_function(torch.ops.aten.add.Tensor, (total, part))
        return total
    return graph.call_function(torch.ops.aten.cat.default, (outputs, rule.out_axis))


def _mutated_args(node: Any) -> set[int]:
    schema = getattr(node.target, "_schema", None)
    if schema is None:
        return set()
    return {i for i, a in enumerate(schema.arguments) if a.alias_info is not None and a.alias_info.is_write}
