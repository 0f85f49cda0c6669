"""What splitting an op means: per op kind, the dimensions it may be split along, the part of
each input a task needs, and how its output is laid out over the tasks (DESIGN.md "Split
operators"; FlexFlow's "given the output tensor of a task and its operator type, we can infer
the necessary input tensors").

A tensor between two ops is described by a `Layout` over the tasks that hold it (producer side)
or need it (consumer side):

- ``whole``: one task holds (or needs) all of it (degree 1);
- ``split(axis)``: task k holds (needs) the k-th of d equal slices along ``sample`` or
  ``feature`` (output channels, heads);
- ``partial``: every task holds a full-size partial sum; a consumer sums them (the reduction's
  arithmetic is left out of the cost, its bytes are not);
- ``replica``: every task holds a full copy (a sample-split optimizer update).

Op roles come from the kind: ``X_grad`` is the backward op of kind X (its inputs are the
gradients of X's output, its output the gradient of X's input), the optimizer kinds are
updates, everything else is forward.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from placer.schema import SPLIT_DIMS as DIMS  # the dimension names a graph may give in `dims`

__all__ = [
    "BACKWARD_SUFFIX",
    "DIMS",
    "UPDATE_KINDS",
    "Layout",
    "base_kind",
    "input_need",
    "output_layout",
    "role",
    "split_dims",
]

BACKWARD_SUFFIX = "_grad"
BACKWARD_SUFFIXES = ("_grad", ".bwd")  # the zoo's and the importers' backward kinds
UPDATE_KINDS = frozenset({"sgd_momentum", "sgd", "adam", "adamw", "update", "optimizer"})
UPDATE_SUFFIX = ".update"  # the importers' optimizer kinds (adam.update, ...)

# framework op names (ONNX op types, torch aten names) -> the kinds below
ALIASES: dict[str, str] = {
    **dict.fromkeys(("Conv", "Conv2d", "convolution", "conv2d"), "conv2d"),
    **dict.fromkeys(("Gemm", "MatMul", "Linear", "linear", "addmm", "mm", "matmul"), "matmul"),
    **dict.fromkeys(("Relu", "relu", "relu_"), "relu"),
    **dict.fromkeys(("Gelu", "gelu"), "gelu"),
    **dict.fromkeys(("Tanh", "tanh"), "tanh"),
    **dict.fromkeys(("Sigmoid", "sigmoid"), "sigmoid"),
    **dict.fromkeys(("Add", "add", "add_"), "add"),
    **dict.fromkeys(("BatchNormalization", "batch_norm", "native_batch_norm", "_native_batch_norm_legit",
                     "_native_batch_norm_legit_no_training", "_native_batch_norm_legit_functional"), "batchnorm"),
    **dict.fromkeys(("LayerNormalization", "layer_norm", "native_layer_norm"), "layernorm"),
    **dict.fromkeys(("MaxPool", "AveragePool", "GlobalAveragePool", "max_pool2d", "avg_pool2d",
                     "adaptive_avg_pool2d", "max_pool2d_with_indices", "_adaptive_avg_pool2d"), "pool"),
    **dict.fromkeys(("Softmax", "softmax", "_softmax", "LogSoftmax", "log_softmax", "_log_softmax"), "softmax"),
    **dict.fromkeys(("Concat", "cat"), "concat"),
}


# kinds whose output mixes every input feature: a feature-split task needs its whole input
_MIXING = frozenset({"matmul", "linear", "conv2d", "lstm"})
_ELEMENTWISE = frozenset({"relu", "gelu", "tanh", "sigmoid", "add", "dropout", "batchnorm", "pool"})

# kind -> dimensions it may be split along (DESIGN.md: linear/matmul sample, output channel,
# input channel with a partial output; conv2d sample, output channel; element-wise and
# normalisation follow their input; attention sample, heads; embedding sample, vocabulary rows)
_SPLIT_DIMS: dict[str, tuple[str, ...]] = {
    "matmul": ("sample", "channel", "input_channel"),
    "linear": ("sample", "channel", "input_channel"),
    "conv2d": ("sample", "channel"),
    "attention": ("sample", "heads"),
    "embedding": ("sample", "vocab"),
    "layernorm": ("sample",),
    "softmax": ("sample", "channel"),
    "lstm": ("sample",),
    "concat": ("sample",),
    "input": ("sample",),
    **{k: ("sample", "channel") for k in _ELEMENTWISE},
}

Role = Literal["forward", "backward", "update"]


@dataclass(frozen=True, slots=True)
class Layout:
    """How a tensor is spread over the d tasks of an op (see the module docstring)."""

    form: Literal["whole", "split", "partial", "replica"]
    degree: int = 1
    axis: Literal["sample", "feature"] | None = None


WHOLE = Layout("whole")


def role(kind: str | None) -> Role:
    if kind is not None and (kind in UPDATE_KINDS or kind.endswith(UPDATE_SUFFIX)):
        return "update"
    if kind is not None and kind.endswith(BACKWARD_SUFFIXES):
        return "backward"
    return "forward"


def base_kind(kind: str | None) -> str | None:
    """The forward kind an op's kind derives from, framework names resolved
    (``conv2d_grad`` -> ``conv2d``, ``Gemm.bwd`` -> ``matmul``)."""
    if kind is None:
        return None
    for suffix in BACKWARD_SUFFIXES:
        if kind.endswith(suffix):
            kind = kind[: -len(suffix)]
            break
    return ALIASES.get(kind, kind)


def split_dims(kind: str | None) -> tuple[str, ...]:
    """Dimensions an op of this kind may be split along (none for unknown kinds).

    >>> split_dims("conv2d_grad")
    ('sample', 'channel')
    >>> split_dims("unknown")
    ()
    """
    base = base_kind(kind)
    return _SPLIT_DIMS.get(base, ()) if base is not None else ()


def _axis(dim: str) -> Literal["sample", "feature"]:
    return "sample" if dim == "sample" else "feature"


def _common_layout(kind: str | None, dim: str | None, degree: int) -> Layout | None:
    """What inputs and outputs share: whole at degree 1, a replica (sample) or slice (channel)
    for an update, and a sample slice for every sample split."""
    if dim is None or degree == 1:
        return WHOLE
    if role(kind) == "update":
        return Layout("replica", degree) if dim == "sample" else Layout("split", degree, "feature")
    if dim == "sample":
        return Layout("split", degree, "sample")
    return None


def output_layout(kind: str | None, dim: str | None, degree: int) -> Layout:
    """How an op's output (a forward op's result, a backward op's input gradient) lies over its
    tasks when the op is split along `dim` into `degree` tasks."""
    common = _common_layout(kind, dim, degree)
    if common is not None:
        return common
    r, base = role(kind), base_kind(kind)
    if dim in ("input_channel", "vocab"):
        # forward: each task sums over its share of the inputs (rows of the table);
        # backward: the input gradient of a row-parallel matmul is split like its input
        return Layout("partial", degree) if r == "forward" else Layout("split", degree, "feature")
    # channel or heads: forward is split by feature; the input gradient of a mixing op sums
    # over every output feature, so each task holds a partial sum
    if r == "backward" and (base in _MIXING):
        return Layout("partial", degree)
    return Layout("split", degree, "feature")


def input_need(kind: str | None, dim: str | None, degree: int) -> Layout:
    """The part of an input tensor each task of a split op needs (for a backward op, its input
    is the gradient of the forward op's output)."""
    common = _common_layout(kind, dim, degree)
    if common is not None:
        return common
    r, base = role(kind), base_kind(kind)
    if r == "backward":
        # the gradient of a channel-split output is split like it; a row-parallel or vocabulary
        # task needs the whole output gradient
        return Layout("split", degree, "feature") if dim in ("channel", "heads") else Layout("replica", degree)
    if dim == "input_channel":
        return Layout("split", degree, "feature")
    if dim == "vocab" or base in _MIXING:
        return Layout("replica", degree)
    return Layout("split", degree, "feature")  # element-wise, attention heads: their own slice


def fraction(out: Layout, need: Layout, k: int, j: int) -> float:
    """Share of the tensor consumer task j needs from producer task k (0 when none).

    A replica producer serves every consumer task from one task (see `replica_source`);
    the caller asks only for that one.

    >>> fraction(Layout("split", 2, "sample"), Layout("split", 4, "sample"), 0, 1)
    0.25
    >>> fraction(Layout("split", 2, "sample"), Layout("split", 2, "feature"), 1, 0)
    0.25
    >>> fraction(Layout("partial", 2), Layout("split", 2, "sample"), 1, 0)
    0.5
    """
    nj = need.degree if need.form == "split" else 1
    share_j = 1.0 / nj
    if out.form in ("whole", "partial", "replica"):
        return share_j
    # out.form == "split"
    if need.form != "split":
        return 1.0 / out.degree
    if need.axis != out.axis:
        return 1.0 / (out.degree * need.degree)
    lo = max(k / out.degree, j / need.degree)
    hi = min((k + 1) / out.degree, (j + 1) / need.degree)
    return max(0.0, hi - lo)


def aligned(out: Layout, need: Layout) -> bool:
    """Task k of the producer holds exactly what task k of the consumer needs."""
    if out.form == "whole" and need.form == "whole":
        return True
    if out.form == "replica" and need.form == "replica":
        return True
    return out.form == need.form == "split" and out.axis == need.axis and out.degree == need.degree
