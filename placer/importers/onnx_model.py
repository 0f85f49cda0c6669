"""ONNX importer: an .onnx model to placer.graph/v1 with analytic costs (FLOPs and bytes per op).

Shapes come from ONNX shape inference (with data propagation, so Reshape targets computed in
the graph resolve). Symbolic dimensions such as `batch` are set with `dims={"batch": 32}`;
any left symbolic count as 1, with a warning naming them. Weights (initializers and Constant
nodes) are memory of the first op that reads them; each edge carries the bytes of the tensors
it moves. Op types without a formula are costed by the bytes they move (0 FLOPs), with a
warning naming them. Needs the `onnx` package (`pip install placer[onnx]`).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from placer.errors import InputError
from placer.importers import costs
from placer.importers.costs import Shape, numel
from placer.importers.forward import (
    ForwardGraph,
    ForwardOp,
    Optimizer,
    fold_views,
    is_shape_arithmetic,
    to_document,
    unique_id,
)
from placer.importers.result import ImportResult, finish

__all__ = ["KNOWN_OP_TYPES", "import_onnx", "parse_dims"]


@dataclass(frozen=True)
class _Tensor:
    shape: Shape | None  # None: shape inference found nothing
    itemsize: int
    floating: bool = False

    @property
    def nbytes(self) -> int:
        return 0 if self.shape is None else numel(self.shape) * self.itemsize


@dataclass(frozen=True)
class _Node:
    op_type: str
    inputs: list[_Tensor | None]  # None for an omitted optional input
    outputs: list[_Tensor | None]
    attrs: dict[str, Any]

    def shape(self, i: int, outputs: bool = False) -> Shape:
        items = self.outputs if outputs else self.inputs
        t = items[i] if i < len(items) else None
        if t is None or t.shape is None:
            raise _NoShape
        return t.shape

    def has_input(self, i: int) -> bool:
        return i < len(self.inputs) and self.inputs[i] is not None


class _NoShape(Exception):
    """A formula needs a shape that shape inference could not give."""


# ----------------------------------------------------------------------------- op formulas

_VIEW = {"Reshape", "Squeeze", "Unsqueeze", "Flatten", "Identity", "Shape", "Size", "Constant"}
_MOVEMENT = {
    "Concat", "Split", "Slice", "Transpose", "Gather", "GatherElements", "GatherND", "Scatter",
    "ScatterElements", "ScatterND", "Pad", "Expand", "Tile", "Cast", "CastLike", "ConstantOfShape",
    "Range", "DepthToSpace", "SpaceToDepth", "Compress", "OneHot", "NonZero", "Trilu", "EyeLike",
    "ReverseSequence", "SplitToSequence", "ConcatFromSequence",
}
_ELEMENTWISE = {
    "Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Reciprocal", "Neg", "Abs", "Exp", "Log", "Relu",
    "LeakyRelu", "PRelu", "Elu", "Selu", "Celu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Erf",
    "Gelu", "Softplus", "Softsign", "Clip", "Where", "Equal", "Less", "Greater", "LessOrEqual",
    "GreaterOrEqual", "Not", "And", "Or", "Xor", "Floor", "Ceil", "Round", "Sign", "Sin", "Cos", "Tan",
    "Asin", "Acos", "Atan", "Sinh", "Cosh", "Mod", "BitShift", "IsNaN", "IsInf", "Mish",
    "ThresholdedRelu", "Dropout", "Shrink", "BiasGelu", "FastGelu", "QuickGelu", "Resize", "Upsample",
    "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot",
}
_VARIADIC = {"Max", "Min", "Sum", "Mean"}
_REDUCE = {
    "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
    "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "ArgMax", "ArgMin", "CumSum", "TopK",
    "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool",
}
_NORM = {"LayerNormalization", "GroupNormalization", "InstanceNormalization", "SimplifiedLayerNormalization"}
_SOFTMAX = {"Softmax", "LogSoftmax", "Hardmax"}
_POOL = {"MaxPool", "AveragePool", "LpPool"}


def _out_elements(n: _Node) -> int:
    return sum(numel(t.shape) for t in n.outputs if t is not None and t.shape is not None)


def _conv(n: _Node) -> float:
    return costs.conv_flops(n.shape(0, outputs=True), n.shape(1))


def _conv_transpose(n: _Node) -> float:
    return costs.conv_transpose_flops(n.shape(0), n.shape(1))


def _matmul(n: _Node) -> float:
    return costs.matmul_flops(n.shape(0), n.shape(0, outputs=True))


def _gemm(n: _Node) -> float:
    a = n.shape(0)
    k = a[0] if n.attrs.get("transA", 0) else a[-1]
    m, nn = n.shape(0, outputs=True)
    return costs.gemm_flops(m, nn, k)


def _pool(n: _Node) -> float:
    return costs.pool_flops(n.shape(0, outputs=True), n.attrs.get("kernel_shape", []))


def _rnn(cell: str) -> Callable[[_Node], float]:
    def flops(n: _Node) -> float:
        x = n.shape(0)
        seq, batch = (x[1], x[0]) if n.attrs.get("layout", 0) else (x[0], x[1])
        w = n.shape(1)  # [directions, gates * hidden, input]
        hidden = n.attrs.get("hidden_size") or w[1] // costs.RNN_GATES[cell]
        return costs.rnn_flops(cell, seq, batch, x[2], hidden, directions=w[0])

    return flops


def _attention(n: _Node) -> float:
    """ONNX Attention (opset 23): Q, K, V as [B, heads, S, d], or [B, S, heads * d] with head counts."""
    q, k, v = n.shape(0), n.shape(1), n.shape(2)
    if len(q) == 4:
        return costs.attention_flops(q[0] * q[1], q[2], k[2], q[3], v[3])
    q_heads = int(n.attrs["q_num_heads"])
    kv_heads = int(n.attrs["kv_num_heads"])
    return costs.attention_flops(q[0] * q_heads, q[1], k[1], q[2] // q_heads, v[2] // kv_heads)


def _ms_attention(n: _Node) -> float:
    """com.microsoft Attention: input [B, S, D], packed QKV weights [D, 3 D'], num_heads."""
    x, w = n.shape(0), n.shape(1)
    heads = int(n.attrs["num_heads"])
    batch, seq = x[0], x[1]
    head_dim = w[1] // 3 // heads
    projection = 2 * batch * seq * x[2] * w[1]
    return projection + costs.attention_flops(batch * heads, seq, seq, head_dim, head_dim)


def _ms_mha(n: _Node) -> float:
    """com.microsoft MultiHeadAttention with separate 3-D query, key and value."""
    q, k, v = n.shape(0), n.shape(1), n.shape(2)
    heads = int(n.attrs["num_heads"])
    if len(k) != 3 or len(v) != 3:
        raise _NoShape
    return costs.attention_flops(q[0] * heads, q[1], k[1], q[2] // heads, v[2] // heads)


def _einsum(n: _Node) -> float:
    shapes = [n.shape(i) for i in range(len(n.inputs))]
    equation = n.attrs["equation"]
    if isinstance(equation, bytes):
        equation = equation.decode()
    return costs.einsum_flops(equation, shapes, n.shape(0, outputs=True))


def _lrn(n: _Node) -> float:
    return (2 * int(n.attrs.get("size", 1)) + 3) * numel(n.shape(0))


_FORMULAS: dict[str, Callable[[_Node], float]] = {
    "Conv": _conv,
    "ConvTranspose": _conv_transpose,
    "MatMul": _matmul,
    "FusedMatMul": _matmul,
    "Gemm": _gemm,
    "Einsum": _einsum,
    "LSTM": _rnn("lstm"),
    "GRU": _rnn("gru"),
    "RNN": _rnn("rnn"),
    "Attention": _attention,
    "MultiHeadAttention": _ms_mha,
    "LRN": _lrn,
    "BatchNormalization": lambda n: costs.BATCH_NORM_FLOPS * numel(n.shape(0)),
    "SkipLayerNormalization": lambda n: (costs.LAYER_NORM_FLOPS + 1) * numel(n.shape(0)),
    "RMSNormalization": lambda n: costs.RMS_NORM_FLOPS * numel(n.shape(0)),
}
for _op in _NORM:
    _FORMULAS[_op] = lambda n: costs.LAYER_NORM_FLOPS * numel(n.shape(0))
for _op in _SOFTMAX:
    _FORMULAS[_op] = lambda n: costs.SOFTMAX_FLOPS * numel(n.shape(0))
for _op in _POOL:
    _FORMULAS[_op] = _pool
for _op in _REDUCE:
    _FORMULAS[_op] = lambda n: numel(n.shape(0))
for _op in _ELEMENTWISE:
    _FORMULAS[_op] = lambda n: costs.ELEMENTWISE_FLOPS * _out_elements(n)
for _op in _VARIADIC:
    _FORMULAS[_op] = lambda n: max(1, len(n.inputs) - 1) * _out_elements(n)
for _op in _MOVEMENT | _VIEW:
    _FORMULAS[_op] = lambda n: 0.0

KNOWN_OP_TYPES = frozenset(_FORMULAS)


def _flops(n: _Node, domain: str) -> float | None:
    """FLOPs of one node; None when the op type has no formula."""
    if domain in ("com.microsoft",) and n.op_type == "Attention":
        return _ms_attention(n)
    formula = _FORMULAS.get(n.op_type)
    return None if formula is None else float(formula(n))


# ----------------------------------------------------------------------------- shapes

# TensorProto.DataType: FLOAT, FLOAT16, DOUBLE, BFLOAT16 (trainable parameters)
_FLOAT_TYPES = frozenset({1, 10, 11, 16})


class _Shapes:
    """Tensor name -> _Tensor, resolving symbolic dims from `dims` and recording what it guessed."""

    def __init__(self, onnx_mod: Any, dims: Mapping[str, int]) -> None:
        self._onnx = onnx_mod
        self._dims = dims
        self.tensors: dict[str, _Tensor] = {}
        self.unresolved: set[str] = set()

    def itemsize(self, elem_type: int) -> int:
        try:
            return int(self._onnx.helper.tensor_dtype_to_np_dtype(elem_type).itemsize)
        except Exception:  # string, undefined or a type numpy lacks
            return 0

    def add_value_info(self, vi: Any) -> None:
        t = vi.type
        if not t.HasField("tensor_type"):
            return
        tt = t.tensor_type
        if not tt.HasField("shape"):
            self.tensors.setdefault(vi.name, _Tensor(None, self.itemsize(tt.elem_type)))
            return
        shape = []
        for d in tt.shape.dim:
            if d.HasField("dim_value"):
                shape.append(int(d.dim_value))
            elif d.HasField("dim_param") and d.dim_param in self._dims:
                shape.append(int(self._dims[d.dim_param]))
            else:
                self.unresolved.add(d.dim_param or "?")
                shape.append(1)
        self.tensors[vi.name] = _Tensor(tuple(shape), self.itemsize(tt.elem_type))

    def constant(self, name: str, proto: Any) -> _Tensor:
        """Record an initializer or a Constant node's value (a TensorProto)."""
        floating = proto.data_type in _FLOAT_TYPES
        t = _Tensor(tuple(int(d) for d in proto.dims), self.itemsize(proto.data_type), floating)
        self.tensors[name] = t
        return t


def _load(source: str | Path | Any, onnx_mod: Any) -> Any:
    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.is_file():
            raise InputError(f"cannot read ONNX model {path}: no such file")
        try:
            return onnx_mod.load(str(path), load_external_data=False)
        except Exception as exc:  # DecodeError and friends
            raise InputError(f"{path}: not a readable ONNX model: {exc}") from None
    return source


def _set_input_dims(model: Any, dims: Mapping[str, int]) -> None:
    for vi in model.graph.input:
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape"):
            for d in vi.type.tensor_type.shape.dim:
                if d.HasField("dim_param") and d.dim_param in dims:
                    d.dim_value = int(dims[d.dim_param])


# Shape arithmetic is evaluated ahead of shape inference only when its results are this small.
_FOLD_MAX_ELEMENTS = 1024
_NO_FOLD = {
    "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli",
}


def _static_shapes(model: Any) -> dict[str, tuple[int, ...]]:
    graph = model.graph
    static = {}
    for vi in list(graph.input) + list(graph.value_info) + list(graph.output):
        tt = vi.type.tensor_type
        known = vi.type.HasField("tensor_type") and tt.HasField("shape")
        if known and all(d.HasField("dim_value") for d in tt.shape.dim):
            static[vi.name] = tuple(int(d.dim_value) for d in tt.shape.dim)
    return static


def _fold_shape_arithmetic(model: Any, onnx_mod: Any, infer: Callable[[Any], Any]) -> Any:
    """Evaluate constant shape arithmetic so that shape inference can see through it.

    Exporters compute reshape targets at run time (Shape -> Gather -> Mod -> Concat -> Reshape)
    with ops that ONNX data propagation does not evaluate, which leaves every tensor downstream
    without a shape. Here Constant nodes become initializers, Shape nodes of statically shaped
    tensors become their value, and nodes whose inputs are all small constants are evaluated
    with onnx.reference; repeated with fresh shape inference until nothing changes. Returns the
    inferred model.
    """
    import numpy as np
    from onnx import numpy_helper
    from onnx.reference import ReferenceEvaluator

    graph = model.graph
    small: dict[str, Any] = {}  # name -> ndarray of constants small enough to fold through
    for init in graph.initializer:
        if numel(tuple(init.dims)) <= _FOLD_MAX_ELEMENTS and not init.data_location:
            small[init.name] = numpy_helper.to_array(init)
    inferred = infer(model)
    for _ in range(16):
        static = _static_shapes(inferred)
        keep, changed = [], False
        for node in graph.node:
            values = None
            inputs = [i for i in node.input if i]
            if node.op_type == "Constant" and not node.input:
                try:
                    values = ReferenceEvaluator(node).run(None, {})
                except Exception:
                    values = None
            elif node.op_type == "Shape" and node.input and node.input[0] in static:
                attrs = _attributes(node, onnx_mod)
                shape = static[node.input[0]]
                start, end = attrs.get("start", 0), attrs.get("end", len(shape))
                values = [np.array(shape[start:end], dtype=np.int64)]
            elif (
                inputs and node.domain in ("", "ai.onnx") and node.op_type not in _NO_FOLD
                and all(i in small for i in inputs)
                and not any(a.type in (5, 10) for a in node.attribute)  # GRAPH, GRAPHS
            ):
                try:
                    values = ReferenceEvaluator(node).run(None, {i: small[i] for i in inputs})
                except Exception:
                    values = None
            if values is None or len(values) != len(node.output):
                keep.append(node)
                continue
            for name, value in zip(node.output, values):
                array = np.asarray(value)
                graph.initializer.append(numpy_helper.from_array(array, name))
                if array.size <= _FOLD_MAX_ELEMENTS:
                    small[name] = array
            changed = True
        if not changed:
            break
        del graph.node[:]
        graph.node.extend(keep)
        inferred = infer(model)
    return inferred


def _attributes(node: Any, onnx_mod: Any) -> dict[str, Any]:
    out = {}
    for a in node.attribute:
        try:
            out[a.name] = onnx_mod.helper.get_attribute_value(a)
        except Exception:
            continue
    return out


def import_onnx(
    source: str | Path | Any,
    *,
    name: str | None = None,
    dims: Mapping[str, int] | None = None,
    training: bool = False,
    optimizer: Optimizer = "adam",
    keep_views: bool = False,
) -> ImportResult:
    """Import an ONNX model (a path or a ModelProto) as a placer.graph/v1 document.

    `dims` sets symbolic input dimensions (e.g. {"batch": 32}). `training` emits a training
    step (forward, backward, update; see placer.importers.forward.to_document), otherwise the
    forward graph. `keep_views` keeps zero-cost view ops (Reshape, Squeeze, Shape, ...), which
    are otherwise folded into their neighbours.
    """
    try:
        import onnx
        import onnx.shape_inference
    except ImportError:
        raise InputError("the ONNX importer needs the onnx package: pip install 'placer[onnx]'") from None
    dims = dict(dims or {})
    loaded = _load(source, onnx)
    model = onnx.ModelProto()
    model.CopyFrom(loaded)  # folding rewrites the graph: never the caller's proto
    warnings: list[str] = []
    if model.graph.node and any(n.op_type in ("If", "Loop", "Scan") for n in model.graph.node):
        warnings.append("control flow (If/Loop/Scan) is costed by bytes only; its subgraphs are not expanded")
    _set_input_dims(model, dims)

    def infer(m: Any) -> Any:
        return onnx.shape_inference.infer_shapes(m, check_type=False, strict_mode=False, data_prop=True)

    try:
        inferred = _fold_shape_arithmetic(model, onnx, infer)
    except Exception as exc:
        warnings.append(f"ONNX shape inference failed ({exc}); using the shapes stored in the model")
        inferred = model
    graph = inferred.graph

    shapes = _Shapes(onnx, dims)
    for vi in list(graph.input) + list(graph.value_info) + list(graph.output):
        shapes.add_value_info(vi)
    weights: dict[str, _Tensor] = {init.name: shapes.constant(init.name, init) for init in graph.initializer}

    fg = ForwardGraph()
    taken: set[str] = set()
    producer: dict[str, str] = {}
    owner: set[str] = set()  # weights already charged to an op
    parameter_like = {name for name, t in weights.items() if t.floating}  # parameters and their views
    unknown: Counter[str] = Counter()
    no_shape: Counter[str] = Counter()
    for index, node in enumerate(graph.node):
        attrs = _attributes(node, onnx)
        if node.op_type == "Constant" and "value" in attrs and len(node.output) == 1:
            weights[node.output[0]] = shapes.constant(node.output[0], attrs["value"])
            continue
        op_id = unique_id(node.name or f"{node.op_type}_{index}", taken)
        ins = [shapes.tensors.get(t, _Tensor(None, 0)) if t else None for t in node.input]
        outs = [shapes.tensors.get(t, _Tensor(None, 0)) if t else None for t in node.output]
        n = _Node(node.op_type, ins, outs, attrs)
        try:
            flops = _flops(n, node.domain)
        except (_NoShape, KeyError, IndexError, ValueError, TypeError, ZeroDivisionError):
            flops = 0.0
            no_shape[node.op_type] += 1
        if flops is None:
            unknown[node.op_type if not node.domain else f"{node.domain}.{node.op_type}"] += 1
            flops = 0.0
        sizes = [None if t is None or t.shape is None else t.nbytes for t in ins + outs if t is not None]
        view = node.op_type in _VIEW or (not keep_views and is_shape_arithmetic(sizes))
        op = ForwardOp(id=op_id, kind=node.op_type, flops=flops, view=view,
                       out_shape=outs[0].shape if outs and outs[0] is not None else None,
                       in_shape=ins[0].shape if ins and ins[0] is not None else None)
        seen: set[str] = set()
        for tensor_name, t in zip(node.input, ins):
            if not tensor_name or tensor_name in seen or t is None:
                continue
            seen.add(tensor_name)
            if not op.view:
                op.bytes_accessed += t.nbytes
            if tensor_name in producer:
                fg.add_edge(producer[tensor_name], op_id, t.nbytes)
            elif tensor_name in weights and tensor_name not in owner:  # held by its first reader
                owner.add(tensor_name)
                op.weight_bytes += t.nbytes
                if t.floating:
                    op.param_bytes += t.nbytes
                    op.param_elements += numel(t.shape or ())
        # a parameter read directly or through ops on weights alone (Transpose of a tied weight)
        op.reads_parameters = any(name in parameter_like for name in node.input if name)
        if op.reads_parameters and all(name in weights or name in parameter_like for name in node.input if name):
            parameter_like.update(name for name in node.output if name)
        for tensor_name, t in zip(node.output, outs):
            if tensor_name and t is not None:
                producer[tensor_name] = op_id
                if not op.view:
                    op.output_bytes += t.nbytes
                    op.bytes_accessed += t.nbytes
        fg.ops.append(op)

    if not fg.ops:
        raise InputError("the ONNX model has no operator nodes")
    if not keep_views:
        fg = fold_views(fg)
    if unknown:
        listed = ", ".join(f"{k} x{v}" for k, v in sorted(unknown.items()))
        warnings.append(f"op types without a FLOP formula, costed by bytes moved only: {listed}")
    if no_shape:
        listed = ", ".join(f"{k} x{v}" for k, v in sorted(no_shape.items()))
        warnings.append(f"ops whose shapes could not be inferred, costed by known bytes only: {listed}")
    named = sorted(d for d in shapes.unresolved if d != "?" and not d.startswith("unk__"))
    if named:
        warnings.append(f"symbolic dimensions taken as 1 (set them with --dim NAME=SIZE): {', '.join(named)}")
    anonymous = len(shapes.unresolved) - len(named)
    if anonymous:
        warnings.append(f"{anonymous} dimension(s) that shape inference could not resolve taken as 1")
    graph_name = name or (Path(source).stem if isinstance(source, (str, Path)) else graph.name) or "onnx"
    return finish(to_document(fg, graph_name, training=training, optimizer=optimizer), warnings)


def parse_dims(items: Sequence[str]) -> dict[str, int]:
    """'batch=32' items from the command line to {"batch": 32}."""
    dims = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key or not value.strip().isdigit() or int(value) < 1:
            raise InputError(f"--dim {item!r}: expected NAME=SIZE with a positive integer SIZE")
        dims[key.strip()] = int(value)
    return dims
