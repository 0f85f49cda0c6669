"""Layer builders shared by the zoo's models: each adds one forward layer to a Network with its
analytic cost (SMSG-style: quantities of computation and data, no profiling).

FLOP conventions (per output element unless said otherwise; one multiply-add = 2 FLOPs):

| kind        | forward FLOPs |
|-------------|---------------|
| conv2d      | 2 x Cin/groups x kh x kw per output element, + 1 with a bias |
| matmul      | 2 x in_features per output element, + 1 with a bias |
| batchnorm, layernorm | 5 (sum and sum of squares: 3; scale and shift: 2) |
| relu, add   | 1 per output element (add: inputs - 1 per element) |
| gelu        | 8 (tanh approximation) |
| tanh        | 1 |
| pool        | kh x kw per output element (max: comparisons, average: adds + 1 divide) |
| softmax     | 5 per element (max, subtract, exp, sum, divide); cross-entropy loss adds 1 per row |
| concat, embedding | 0 (pure data movement, costed by bytes) |
| lstm        | see `lstm_chunk` |
| attention   | batched matmuls: 2 x reduction length per output element |

Shapes are per sample: (C, H, W) for images, (positions..., features) for sequences.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

from placer.zoo.network import ELEMENT_BYTES, Network, Tensor

__all__ = [
    "GELU_FLOPS_PER_ELEMENT",
    "LSTM_ELEMENTWISE_FLOPS_PER_UNIT",
    "NORM_FLOPS_PER_ELEMENT",
    "SOFTMAX_FLOPS_PER_ELEMENT",
    "add",
    "avg_pool",
    "batchnorm",
    "concat",
    "conv2d",
    "conv_bn_relu",
    "embedding",
    "gelu",
    "global_avg_pool",
    "layernorm",
    "linear",
    "lstm_chunk",
    "lstm_parameters",
    "max_pool",
    "relu",
    "softmax",
    "softmax_cross_entropy",
    "tanh",
]

NORM_FLOPS_PER_ELEMENT = 5
SOFTMAX_FLOPS_PER_ELEMENT = 5
GELU_FLOPS_PER_ELEMENT = 8
LSTM_ELEMENTWISE_FLOPS_PER_UNIT = 9  # 3 sigmoids, 2 tanh, c = f*c + i*g (3), h = o*tanh(c) (1)


def _pair(v: int | tuple[int, int]) -> tuple[int, int]:
    return (v, v) if isinstance(v, int) else v


def _out_size(size: int, kernel: int, stride: int, padding: int) -> int:
    out = (size + 2 * padding - kernel) // stride + 1
    if out < 1:
        raise ValueError(f"kernel {kernel} stride {stride} padding {padding} leaves nothing of size {size}")
    return out


# --------------------------------------------------------------------------- convolutional


def conv2d(
    net: Network,
    name: str,
    x: Tensor,
    out_channels: int,
    kernel: int | tuple[int, int],
    stride: int | tuple[int, int] = 1,
    padding: int | tuple[int, int] = 0,
    *,
    bias: bool = False,
    groups: int = 1,
) -> Tensor:
    """2-D convolution over a (C, H, W) tensor; weights Cout x Cin/groups x kh x kw (+ Cout bias)."""
    c, h, w = x.shape
    kh, kw = _pair(kernel)
    sh, sw = _pair(stride)
    ph, pw = _pair(padding)
    ho, wo = _out_size(h, kh, sh, ph), _out_size(w, kw, sw, pw)
    macs_per_output = (c // groups) * kh * kw
    outputs = out_channels * ho * wo
    params = out_channels * (c // groups) * kh * kw + (out_channels if bias else 0)
    flops = outputs * (2 * macs_per_output + (1 if bias else 0))
    return net.layer(name, "conv2d", [x], (out_channels, ho, wo), flops, params=params)


def batchnorm(net: Network, name: str, x: Tensor) -> Tensor:
    """Batch normalisation in training mode; affine (gamma, beta per channel)."""
    return net.layer(name, "batchnorm", [x], x.shape, NORM_FLOPS_PER_ELEMENT * x.elements, params=2 * x.shape[0])


def relu(net: Network, name: str, x: Tensor) -> Tensor:
    return net.layer(name, "relu", [x], x.shape, x.elements)


def conv_bn_relu(
    net: Network,
    name: str,
    x: Tensor,
    out_channels: int,
    kernel: int | tuple[int, int],
    stride: int | tuple[int, int] = 1,
    padding: int | tuple[int, int] = 0,
) -> Tensor:
    """torchvision's BasicConv2d: conv (no bias) -> batchnorm -> relu, as three ops."""
    y = conv2d(net, f"{name}.conv", x, out_channels, kernel, stride, padding)
    y = batchnorm(net, f"{name}.bn", y)
    return relu(net, f"{name}.relu", y)


def _pool(net: Network, name: str, x: Tensor, kernel: int, stride: int, padding: int) -> Tensor:
    c, h, w = x.shape
    shape = (c, _out_size(h, kernel, stride, padding), _out_size(w, kernel, stride, padding))
    return net.layer(name, "pool", [x], shape, kernel * kernel * math.prod(shape))


def max_pool(net: Network, name: str, x: Tensor, kernel: int, stride: int, padding: int = 0) -> Tensor:
    return _pool(net, name, x, kernel, stride, padding)


def avg_pool(net: Network, name: str, x: Tensor, kernel: int, stride: int, padding: int = 0) -> Tensor:
    return _pool(net, name, x, kernel, stride, padding)


def global_avg_pool(net: Network, name: str, x: Tensor) -> Tensor:
    """Average over H x W: (C, H, W) -> (C,)."""
    return net.layer(name, "pool", [x], (x.shape[0],), x.elements)


# --------------------------------------------------------------------------- dense and element-wise


def linear(
    net: Network,
    name: str,
    x: Tensor,
    out_features: int,
    *,
    bias: bool = True,
    group: str | None = None,
    shared: bool = False,
) -> Tensor:
    """y = x W^T (+ b) over the last dimension. `shared`: the weights belong to `group` and were
    declared there (a classifier applied chunk by chunk)."""
    in_features = x.shape[-1]
    rows = x.elements // in_features
    weights = in_features * out_features + (out_features if bias else 0)
    flops = rows * out_features * (2 * in_features + (1 if bias else 0))
    shape = (*x.shape[:-1], out_features)
    if shared:
        return net.layer(name, "matmul", [x], shape, flops, group=group, weights=weights)
    return net.layer(name, "matmul", [x], shape, flops, params=weights, group=group)


def add(net: Network, name: str, *xs: Tensor) -> Tensor:
    """Element-wise sum of same-shaped tensors (residual connections)."""
    if len({t.shape for t in xs}) != 1:
        raise ValueError(f"{net.name}: {name}: shapes differ: {[t.shape for t in xs]}")
    return net.layer(name, "add", xs, xs[0].shape, (len(xs) - 1) * xs[0].elements, saved_elements=0)


def concat(net: Network, name: str, xs: Sequence[Tensor], axis: int = 0) -> Tensor:
    """Concatenation along `axis`; no arithmetic, only bytes."""
    first = xs[0].shape
    size = sum(t.shape[axis] for t in xs)
    shape = (*first[:axis], size, *first[axis + 1:])
    return net.layer(name, "concat", xs, shape, 0.0)


def softmax(net: Network, name: str, x: Tensor) -> Tensor:
    return net.layer(name, "softmax", [x], x.shape, SOFTMAX_FLOPS_PER_ELEMENT * x.elements)


def softmax_cross_entropy(net: Network, name: str, logits: Sequence[Tensor], classes: int | None = None) -> Tensor:
    """Softmax over the last dimension and the cross-entropy loss: a scalar per sample. The
    probabilities are kept for the backward pass. `classes` is the softmax width when the
    logits arrive in several pieces (shards)."""
    elements = sum(t.elements for t in logits)
    width = classes or logits[0].shape[-1]
    rows = elements // width
    flops = SOFTMAX_FLOPS_PER_ELEMENT * elements + rows
    return net.layer(name, "softmax", logits, (1,), flops, saved_elements=elements)


def layernorm(net: Network, name: str, x: Tensor) -> Tensor:
    """Layer normalisation over the last dimension; affine (gamma, beta per feature)."""
    return net.layer(name, "layernorm", [x], x.shape, NORM_FLOPS_PER_ELEMENT * x.elements, params=2 * x.shape[-1])


def gelu(net: Network, name: str, x: Tensor) -> Tensor:
    return net.layer(name, "gelu", [x], x.shape, GELU_FLOPS_PER_ELEMENT * x.elements)


def tanh(net: Network, name: str, x: Tensor) -> Tensor:
    return net.layer(name, "tanh", [x], x.shape, x.elements)


# --------------------------------------------------------------------------- embeddings and recurrence


def embedding(
    net: Network,
    name: str,
    ids: Tensor | None,
    dim: int,
    *,
    group: str,
    table_rows: int,
    lookups: int | None = None,
) -> Tensor:
    """A table lookup: `lookups` rows (default: one per id) of `dim` features from `group`'s
    table of `table_rows` rows (declared by the caller with `net.parameters`). Without `ids`
    the rows are fixed (BERT's position embeddings: rows 0..lookups-1).

    Forward moves bytes only (0 FLOPs); backward scatter-adds the output gradient into the rows
    (1 FLOP per output element) and computes no input gradient (ids are integers), so its bytes
    equal the forward's. Weight bytes are the rows read, which scale with the batch.
    """
    if lookups is None:
        if ids is None:
            raise ValueError(f"{net.name}: {name}: an embedding without ids needs `lookups`")
        lookups = ids.elements
    inputs = [] if ids is None else [ids]
    out_elements = lookups * dim
    id_elements = 0 if ids is None else ids.elements
    activation_bytes = (id_elements + 2 * out_elements) * ELEMENT_BYTES  # ids, rows read, rows written
    return net.layer(
        name, "embedding", inputs, (lookups, dim), 0.0, group=group, weights=table_rows * dim,
        weight_bytes_read=0, activation_bytes=activation_bytes, saved_elements=0,
        backward_flops=float(out_elements), backward_factor=1.0,
    )


def lstm_parameters(input_size: int, hidden: int, *, projection: int | None = None, bias_vectors: int = 2) -> int:
    """Parameters of one LSTM layer (one direction): gate weights 4H x (I + R), `bias_vectors`
    bias vectors of 4H (PyTorch keeps b_ih and b_hh: 2; TensorFlow one), and an optional
    projection H -> P (LSTMP), where R is the recurrent input size (P, or H without projection)."""
    recurrent = projection or hidden
    params = 4 * hidden * (input_size + recurrent) + bias_vectors * 4 * hidden
    if projection:
        params += hidden * projection
    return params


def lstm_chunk(
    net: Network,
    name: str,
    inputs: Sequence[Tensor],
    state: Tensor | None,
    *,
    steps: int,
    input_size: int,
    hidden: int,
    group: str,
    projection: int | None = None,
    bias_vectors: int = 2,
    residual: bool = False,
) -> tuple[Tensor, Tensor]:
    """`steps` time steps of one LSTM layer, as one op; returns (outputs (steps, R), state).

    Per step and sample: gates 2 x 4H x (I + R) FLOPs, bias adds `bias_vectors` x 4H, element-wise
    9H, projection 2 x H x P, residual add R. The weights are streamed once per step (a batch of
    sentences is small: recurrent layers are bandwidth-bound). Saved for backward per step: the
    four gates, the cell and tanh(cell) (6H) and the output (R). The returned state (h and c,
    R + H elements) is what the next chunk of the same layer reads.
    """
    recurrent = projection or hidden
    per_step = 2 * 4 * hidden * (input_size + recurrent) + bias_vectors * 4 * hidden
    per_step += LSTM_ELEMENTWISE_FLOPS_PER_UNIT * hidden
    if projection:
        per_step += 2 * hidden * projection
    if residual:
        per_step += recurrent
    weights = lstm_parameters(input_size, hidden, projection=projection, bias_vectors=bias_vectors)
    ins = list(inputs) + ([state] if state is not None else [])
    saved = steps * (6 * hidden + recurrent)
    activation_bytes = (sum(t.elements for t in ins) + steps * recurrent + saved) * ELEMENT_BYTES
    out = net.layer(
        name, "lstm", ins, (steps, recurrent), steps * per_step, group=group, weights=weights,
        weight_bytes_read=steps * weights * ELEMENT_BYTES, activation_bytes=activation_bytes,
        saved_elements=saved,
    )
    return out, out.view(recurrent + hidden)
