"""PyTorch importer: an nn.Module and example inputs to placer.graph/v1 with analytic costs.

The model is captured with `torch.export.export(model, args, kwargs=..., strict=False)`, whose
nodes carry their output shapes (`node.meta["val"]`). FLOPs per node come from
`torch.utils.flop_counter`'s formulas where it has one (mm, addmm, bmm, convolution, ...)
and otherwise from the shared shape formulas in placer.importers.costs (linear, conv2d, sdpa,
lstm, norms, element-wise, ...). Parameters and buffers are memory of the first op that reads
them; edges carry the bytes of the producer's output. Needs torch (`pip install placer[torch]`).

A source is `module:callable` or `path/to/file.py:callable`; the callable takes no arguments
and returns `(model, example_inputs)`, where example_inputs is a tuple of positional
arguments, a dict of keyword arguments, a single tensor, or `(model, args, kwargs)`.
"""
from __future__ import annotations

import operator
from collections import Counter
from typing import Any

from placer.errors import InputError
from placer.importers import costs
from placer.importers.costs import numel
from placer.importers.forward import (
    ForwardGraph,
    ForwardOp,
    Optimizer,
    fold_views,
    is_shape_arithmetic,
    to_document,
)
from placer.importers.result import ImportResult, finish
from placer.importers.torch_capture import TorchCapture, capture_torch, load_source, require_torch

__all__ = ["forward_graph", "import_torch", "load_source"]

_VIEW = {
    "view", "reshape", "_unsafe_view", "flatten", "unflatten", "squeeze", "unsqueeze", "transpose",
    "permute", "t", "expand", "expand_as", "select", "slice", "alias", "detach", "getitem", "split",
    "split_with_sizes", "chunk", "unbind", "narrow", "as_strided", "view_as", "movedim", "swapaxes",
    "unfold", "view_as_real", "view_as_complex", "lift_fresh_copy", "sym_size", "sym_numel",
    "sym_stride", "_assert_async", "_assert_scalar", "_assert_tensor_metadata",
}
_DROPOUT = {"dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout"}  # (x, p, train)
_MOVEMENT = {
    "cat", "concat", "stack", "hstack", "vstack", "contiguous", "clone", "copy", "copy_", "_to_copy",
    "to", "type_as", "pad", "constant_pad_nd", "reflection_pad1d", "reflection_pad2d",
    "replication_pad1d", "replication_pad2d", "index_select", "gather", "scatter", "scatter_add",
    "index", "index_put", "index_put_", "embedding", "roll", "repeat", "repeat_interleave", "tile",
    "flip", "zeros", "ones", "full", "arange", "empty", "zeros_like", "ones_like", "full_like",
    "empty_like", "new_zeros", "new_ones", "new_empty", "new_full", "masked_select", "tril", "triu",
    "fill", "fill_", "scalar_tensor", "one_hot", "pixel_shuffle", "pixel_unshuffle", "rand",
    "randn", "rand_like", "randn_like", "bernoulli", "item", "_local_scalar_dense",
}
_ELEMENTWISE = {
    "add", "add_", "sub", "sub_", "rsub", "mul", "mul_", "div", "div_", "relu", "relu_", "gelu",
    "silu", "silu_", "sigmoid", "sigmoid_", "tanh", "tanh_", "exp", "log", "log1p", "expm1", "pow",
    "sqrt", "rsqrt", "neg", "abs", "clamp", "clamp_", "clamp_min", "clamp_max", "hardtanh",
    "hardtanh_", "where", "maximum", "minimum", "eq", "ne", "lt", "gt", "le", "ge", "logical_not",
    "logical_and", "logical_or", "logical_xor", "native_dropout", "erf", "sin", "cos", "masked_fill",
    "masked_fill_", "hardswish", "hardswish_", "hardsigmoid", "leaky_relu", "leaky_relu_", "elu",
    "softplus", "relu6", "square", "reciprocal", "floor", "ceil", "round", "sign", "mish",
    "bitwise_not", "bitwise_and", "bitwise_or", "isnan", "isinf", "fmod", "remainder", "lerp",
    "addcmul", "addcdiv", "glu", "log_sigmoid", "prelu", "selu", "celu", "threshold", "floor_divide",
    "upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d", "upsample_bilinear2d",
    "upsample_bicubic2d", "upsample_linear1d", "upsample_trilinear3d", "_upsample_nearest_exact2d",
    "_upsample_bilinear2d_aa", "nan_to_num", "logit", "atan", "atan2", "asin", "acos", "sinh", "cosh",
}
_REDUCE = {
    "sum", "mean", "amax", "amin", "max", "min", "argmax", "argmin", "var", "std", "var_mean",
    "std_mean", "norm", "linalg_vector_norm", "logsumexp", "cumsum", "cumprod", "prod", "any",
    "all", "topk", "sort", "argsort", "count_nonzero", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d", "_adaptive_avg_pool2d",
}
_NORM = {"layer_norm", "native_layer_norm", "group_norm", "native_group_norm", "instance_norm"}
_BATCH_NORM = {
    "batch_norm", "native_batch_norm", "_native_batch_norm_legit_no_training",
    "_native_batch_norm_legit", "_native_batch_norm_legit_functional",
}
_SOFTMAX = {"softmax", "_softmax", "log_softmax", "_log_softmax"}
_POOL = {
    "max_pool1d", "max_pool2d", "max_pool3d", "max_pool2d_with_indices", "max_pool3d_with_indices",
    "avg_pool1d", "avg_pool2d", "avg_pool3d",
}
_CONV = {"conv1d", "conv2d", "conv3d"}
_CONV_T = {"conv_transpose1d", "conv_transpose2d", "conv_transpose3d"}
_RNN = {"lstm": "lstm", "gru": "gru", "rnn_tanh": "rnn", "rnn_relu": "rnn"}


class _NoFormula(Exception):
    """The node's arguments are not what its formula expects."""


def _maybe_shape(value: Any) -> tuple[int, ...] | None:
    """A tensor's static shape, or None (not a tensor, or symbolic sizes)."""
    try:
        return tuple(int(d) for d in value.shape)
    except Exception:
        return None


def _shape(value: Any) -> tuple[int, ...]:
    shape = getattr(value, "shape", None)
    if shape is None:
        raise _NoFormula
    return tuple(int(d) for d in shape)


def _nbytes(value: Any) -> int:
    """Bytes of a tensor, or of the tensors in a tuple/list output; 0 for scalars and None."""
    if isinstance(value, (tuple, list)):
        return sum(_nbytes(v) for v in value)
    if hasattr(value, "shape") and hasattr(value, "element_size"):
        return numel(_shape(value)) * int(value.element_size())
    return 0


def _is_tensor_like(value: Any) -> bool:
    if isinstance(value, (tuple, list)):
        return any(_is_tensor_like(v) for v in value)
    return hasattr(value, "shape") and hasattr(value, "element_size")


def _rnn_flops(cell: str, args: tuple[Any, ...], out: Any) -> float:
    # aten.lstm.input(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
    # batch_first); gru/rnn_* take the same arguments with hx a single tensor.
    x = _shape(args[0])
    hx = args[1][0] if isinstance(args[1], (list, tuple)) else args[1]
    hidden = _shape(hx)[-1]
    layers, bidirectional, batch_first = int(args[4]), bool(args[7]), bool(args[8])
    seq, batch = (x[1], x[0]) if batch_first else (x[0], x[1])
    if len(x) == 2:  # unbatched
        seq, batch = x[0], 1
    return costs.rnn_flops(cell, seq, batch, x[-1], hidden, 2 if bidirectional else 1, layers)


def _sdpa_flops(args: tuple[Any, ...]) -> float:
    q, k, v = _shape(args[0]), _shape(args[1]), _shape(args[2])
    batch_heads = numel(q[:-2])
    return costs.attention_flops(batch_heads, q[-2], k[-2], q[-1], v[-1])


def _pool_flops(args: tuple[Any, ...], out: Any) -> float:
    kernel = args[1]
    if isinstance(kernel, int):
        kernel = [kernel] * (len(_shape(args[0])) - 2)
    return costs.pool_flops(_shape(out), [int(k) for k in kernel])


def _first_tensor(value: Any) -> Any:
    return value[0] if isinstance(value, (tuple, list)) else value


def _flops(name: str, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any, registry: Any) -> float | None:
    """FLOPs of one aten call from its argument and output values; None when unknown."""
    out0 = _first_tensor(out)
    if name in _VIEW or name in _MOVEMENT:
        return 0.0
    if registry is not None:
        return float(registry(*args, out_val=out, **kwargs))
    if name == "linear":
        return costs.matmul_flops(_shape(args[0]), _shape(out0))
    if name in ("matmul", "mm", "bmm", "addmm", "baddbmm"):
        a = args[1] if name in ("addmm", "baddbmm") else args[0]
        return costs.matmul_flops(_shape(a), _shape(out0))
    if name in _CONV:
        return costs.conv_flops(_shape(out0), _shape(args[1]))
    if name in _CONV_T:
        return costs.conv_transpose_flops(_shape(args[0]), _shape(args[1]))
    if name == "einsum":
        return costs.einsum_flops(str(args[0]), [_shape(t) for t in args[1]], _shape(out0))
    if name == "scaled_dot_product_attention":
        return _sdpa_flops(args)
    if name in _RNN:
        return _rnn_flops(_RNN[name], args, out)
    if name in _BATCH_NORM:
        return costs.BATCH_NORM_FLOPS * numel(_shape(args[0]))
    if name in _NORM:
        return costs.LAYER_NORM_FLOPS * numel(_shape(args[0]))
    if name == "rms_norm":
        return costs.RMS_NORM_FLOPS * numel(_shape(args[0]))
    if name in _SOFTMAX:
        return costs.SOFTMAX_FLOPS * numel(_shape(args[0]))
    if name in _POOL:
        return _pool_flops(args, out0)
    if name in _REDUCE:
        return numel(_shape(args[0]))
    if name in _ELEMENTWISE or name in _DROPOUT:
        return costs.ELEMENTWISE_FLOPS * numel(_shape(out0))
    return None


def _target_name(target: Any) -> str:
    if target is operator.getitem:
        return "getitem"
    packet = getattr(target, "overloadpacket", None)
    if packet is not None:
        return str(getattr(packet, "__name__", packet)).split(".")[-1]
    return str(getattr(target, "__name__", target))


def forward_graph(capture: TorchCapture, *, keep_views: bool = False) -> tuple[ForwardGraph, list[str]]:
    """The forward graph of a capture (op ids from `capture.op_ids`) and notes on what was guessed."""
    import torch
    from torch.utils.flop_counter import flop_registry

    weight_names = capture.weights
    trainable = capture.trainable
    fg = ForwardGraph()
    op_of: dict[str, str] = {}  # fx node name -> op id
    values: dict[str, Any] = {}  # weight placeholder name -> value
    unknown: Counter[str] = Counter()
    failed: Counter[str] = Counter()
    parameter_like = set(trainable)  # parameters and what ops on weights alone make of them

    def value_of(arg: Any) -> Any:
        return arg.meta.get("val") if isinstance(arg, torch.fx.Node) else arg

    for node in capture.graph.nodes:
        if node.op == "placeholder":
            if node.name in weight_names:
                values[node.name] = node.meta.get("val")
            continue
        if node.op != "call_function":
            continue
        name_ = _target_name(node.target)
        out = node.meta.get("val")
        args = torch.fx.node.map_arg(node.args, value_of)
        kwargs_ = torch.fx.node.map_arg(node.kwargs, value_of)
        packet = getattr(node.target, "overloadpacket", None)
        registry = flop_registry.get(packet) if packet is not None else None
        inert_dropout = name_ in _DROPOUT and len(args) > 2 and not args[2]
        sizes = [_nbytes(a.meta.get("val")) for a in node.all_input_nodes] + [_nbytes(out)]
        tiny = not keep_views and is_shape_arithmetic(sizes)
        update = node.name in capture.buffer_updates
        view = name_ in _VIEW or inert_dropout or tiny or update or not _is_tensor_like(out)
        try:
            flops = 0.0 if view else _flops(name_, args, kwargs_, out, registry)
        except Exception:
            flops = 0.0
            failed[name_] += 1
        if flops is None:
            unknown[name_] += 1
            flops = 0.0
        op = ForwardOp(id=capture.op_ids[node.name], kind=name_, flops=float(flops), view=view,
                       out_shape=_maybe_shape(out),
                       in_shape=_maybe_shape(value_of(node.args[0]) if node.args else None))
        for arg in node.all_input_nodes:
            nbytes = _nbytes(arg.meta.get("val"))
            if not view:
                op.bytes_accessed += nbytes
            if arg.name in op_of:
                fg.add_edge(op_of[arg.name], op.id, nbytes)
        for weight, owner in capture.owners.items():
            if owner == node.name:
                nbytes = _nbytes(values.get(weight))
                op.weight_bytes += nbytes
                if weight in trainable:
                    op.param_bytes += nbytes
                    op.param_elements += numel(_shape(values[weight]))
        if not view:
            op.output_bytes = _nbytes(out)
            op.bytes_accessed += op.output_bytes
        # a parameter read directly or through ops on weights alone (a transposed tied weight)
        op.reads_parameters = any(a.name in parameter_like for a in node.all_input_nodes)
        if op.reads_parameters and all(a.name in weight_names or a.name in parameter_like
                                       for a in node.all_input_nodes):
            parameter_like.add(node.name)
        op_of[node.name] = op.id
        fg.ops.append(op)

    if not fg.ops:
        raise InputError("the exported PyTorch model has no operations")
    if not keep_views:
        fg = fold_views(fg)
    notes: list[str] = []
    if unknown:
        listed = ", ".join(f"{k} x{v}" for k, v in sorted(unknown.items()))
        notes.append(f"aten ops without a FLOP formula, costed by bytes moved only: {listed}")
    if failed:
        listed = ", ".join(f"{k} x{v}" for k, v in sorted(failed.items()))
        notes.append(f"ops whose FLOP formula did not fit their arguments, costed by bytes only: {listed}")
    return fg, notes


def import_torch(
    source: str | tuple[Any, ...] | TorchCapture,
    *,
    name: str | None = None,
    training: bool = False,
    optimizer: Optimizer = "adam",
    keep_views: bool = False,
) -> ImportResult:
    """Import a PyTorch model as placer.graph/v1.

    `source` is a `module:callable` / `file.py:callable` spec, a `(model, example_inputs)`
    tuple or a capture from `capture_torch`. Op ids are `module.path/aten_name` (see
    placer.importers.torch_capture). `training` emits a training step (see
    placer.importers.forward.to_document); `keep_views` keeps zero-cost view ops (view,
    getitem, transpose, ...) instead of folding them. The model is exported in whatever mode
    (train/eval) the caller left it in.
    """
    require_torch()
    capture = source if isinstance(source, TorchCapture) else capture_torch(source, name)
    fg, notes = forward_graph(capture, keep_views=keep_views)
    document = to_document(fg, name or capture.name, training=training, optimizer=optimizer)
    return finish(document, notes)
