"""FLOP formulas shared by the ONNX and PyTorch importers, from tensor shapes alone.

Conventions (the README's importer section lists them too):

- a multiply-add is 2 FLOPs, and matmul/convolution count their multiply-adds only, not the
  bias addition (as `torch.utils.flop_counter` and the published "GMACs x 2" figures);
- element-wise arithmetic, comparisons and activations: 1 FLOP per output element;
- normalisation: batch norm 2 per element (scale and shift with running statistics), layer /
  group / instance norm 7 per element (sum, sum of squares, centre, scale, affine), RMS norm 4;
- softmax 5 per element (max, subtract, exp, sum, divide);
- reductions: 1 per input element; pooling: 1 per window element per output element;
- data movement (concat, transpose, gather, pad, cast, ...) 0 FLOPs: it is costed by its bytes.

Shapes are tuples of ints; callers resolve symbolic dimensions first.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = [
    "Shape",
    "numel",
    "ELEMENTWISE_FLOPS",
    "BATCH_NORM_FLOPS",
    "LAYER_NORM_FLOPS",
    "RMS_NORM_FLOPS",
    "SOFTMAX_FLOPS",
    "conv_flops",
    "conv_transpose_flops",
    "matmul_flops",
    "gemm_flops",
    "pool_flops",
    "attention_flops",
    "rnn_flops",
    "einsum_flops",
]

Shape = tuple[int, ...]

ELEMENTWISE_FLOPS = 1
BATCH_NORM_FLOPS = 2
LAYER_NORM_FLOPS = 7
RMS_NORM_FLOPS = 4
SOFTMAX_FLOPS = 5

# Gates per recurrent cell and the element-wise FLOPs per hidden unit per step besides the gate
# matmuls and biases: LSTM 4 gate activations + c = f*c + i*g (3) + h = o*tanh(c) (2);
# GRU 3 gate activations + r*(...) (1) + h = (1-z)*n + z*h (4); plain RNN 1 activation.
RNN_GATES = {"lstm": 4, "gru": 3, "rnn": 1}
RNN_CELL_FLOPS = {"lstm": 9, "gru": 8, "rnn": 1}


def numel(shape: Sequence[int]) -> int:
    """Number of elements of a tensor of `shape` (1 for a scalar)."""
    return math.prod(shape)


def conv_flops(out_shape: Shape, weight_shape: Shape) -> int:
    """Convolution: each output element is a dot product over C_in/groups x kernel."""
    return 2 * numel(out_shape) * numel(weight_shape[1:])


def conv_transpose_flops(in_shape: Shape, weight_shape: Shape) -> int:
    """Transposed convolution: each input element scatters into C_out/groups x kernel outputs."""
    return 2 * numel(in_shape) * numel(weight_shape[1:])


def matmul_flops(a_shape: Shape, out_shape: Shape) -> int:
    """numpy-style matmul (batched, broadcast): 2 x output elements x the contracted length."""
    k = a_shape[-1] if a_shape else 1
    return 2 * numel(out_shape) * k


def gemm_flops(m: int, n: int, k: int) -> int:
    """Y = A B (+ C): 2 M N K (adding C is not counted, like a bias)."""
    return 2 * m * n * k


def pool_flops(out_shape: Shape, kernel: Sequence[int]) -> int:
    """Windowed max/average pooling: one comparison or addition per window element."""
    return numel(out_shape) * numel(kernel)


def attention_flops(batch_heads: int, q_len: int, kv_len: int, head_dim: int, value_dim: int) -> int:
    """softmax(Q K^T / sqrt(d)) V: the two matmuls, the scaling and the softmax."""
    scores = batch_heads * q_len * kv_len
    return 2 * scores * head_dim + 2 * scores * value_dim + scores * (1 + SOFTMAX_FLOPS)


def rnn_flops(
    cell: str,
    seq_len: int,
    batch: int,
    input_size: int,
    hidden_size: int,
    directions: int = 1,
    layers: int = 1,
) -> int:
    """A stacked (bi)directional LSTM, GRU or plain RNN over a whole sequence.

    Per step, per direction, per batch row: gate matmuls 2 G H (I + H) (biases not counted,
    as for every matmul) and the cell's element-wise work (RNN_CELL_FLOPS x H). Layers above
    the first read the concatenated directions (I = H x directions).
    """
    gates = RNN_GATES[cell]
    total = 0
    in_size = input_size
    for _ in range(layers):
        per_step = 2 * gates * hidden_size * (in_size + hidden_size) + RNN_CELL_FLOPS[cell] * hidden_size
        total += per_step * seq_len * batch * directions
        in_size = hidden_size * directions
    return total


def einsum_flops(equation: str, in_shapes: Sequence[Shape], out_shape: Shape) -> int:
    """Einsum: 2 x output elements x the product of the contracted (summed-out) index sizes.

    A single-operand einsum (a sum or a transpose) costs one FLOP per input element.
    """
    lhs = equation.replace(" ", "").split("->")[0]
    terms = lhs.split(",")
    if len(in_shapes) < 2:
        return numel(in_shapes[0]) if in_shapes else 0
    out_letters = set(equation.split("->")[1]) if "->" in equation else None
    sizes: dict[str, int] = {}
    counts: dict[str, int] = {}
    for term, shape in zip(terms, in_shapes):
        letters = term.replace("...", "")
        # letters before "..." align left, letters after it align right
        head, _, tail = term.partition("...")
        for i, letter in enumerate(head):
            if i < len(shape):
                sizes[letter] = shape[i]
        for i, letter in enumerate(reversed(tail)):
            if i < len(shape):
                sizes[letter] = shape[len(shape) - 1 - i]
        for letter in set(letters):
            counts[letter] = counts.get(letter, 0) + 1
    if out_letters is None:  # implicit output: the letters that appear exactly once
        out_letters = {letter for letter, n in counts.items() if n == 1}
    contracted = [size for letter, size in sizes.items() if letter not in out_letters]
    return 2 * numel(out_shape) * numel(contracted)
