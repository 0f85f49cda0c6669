"""BIG LSTM of Jozefowicz et al. 2016 ("Exploring the Limits of Language Modeling",
2-layer LSTM-8192-1024) on the One Billion Word vocabulary: 1,776,882,559 parameters
(published: 1.8 B; 151.0 M without the embedding and softmax, Shazeer et al. 2017, Table 7).

- Word embedding 793,471 x 1024, in 4 shards (one op and one group each, so a placement can
  spread the 3.25 GB table; each shard serves an expected quarter of the lookups), stitched
  back into the sequence.
- Two LSTM layers of 8192 cells with a 1024 projection (LSTMP, TensorFlow style: one bias
  vector per gate set), 20 unrolled time steps, chunked into ops of 5 steps as in `gnmt`.
- Sampled softmax, as trained in the paper: 8192 classes sampled per step and shared by the
  whole batch, plus each token's true class. The 793,471 x 1024 softmax weights and biases sit in
  4 shards; each shard scores every token against its 2048 sampled classes and its true class
  (the true-class logit is charged to every shard: 1/2049 too many FLOPs) and reads only those
  rows. The loss combines the shards' logits. Gradients and optimizer state are kept dense.
"""
from __future__ import annotations

from placer.zoo.layers import concat, embedding, lstm_chunk, lstm_parameters, softmax_cross_entropy
from placer.zoo.network import ELEMENT_BYTES, Network, Tensor

__all__ = [
    "EMBEDDING",
    "HIDDEN",
    "PROJECTION",
    "SAMPLED_CLASSES",
    "SEQUENCE_LENGTH",
    "SHARDS",
    "STEPS_PER_OP",
    "VOCABULARY",
    "biglstm",
    "shard_rows",
]

VOCABULARY = 793_471
EMBEDDING = 1024
HIDDEN = 8192
PROJECTION = 1024
SEQUENCE_LENGTH = 20
STEPS_PER_OP = 5
SAMPLED_CLASSES = 8192
SHARDS = 4
LAYERS = 2


def shard_rows(rows: int = VOCABULARY, shards: int = SHARDS) -> list[int]:
    """Rows per shard, as even as possible (the first shards take the remainder)."""
    base, extra = divmod(rows, shards)
    return [base + (1 if s < extra else 0) for s in range(shards)]


def _lstm_layer(net: Network, group: str, inputs: list[Tensor], input_size: int) -> list[Tensor]:
    net.parameters(group, lstm_parameters(input_size, HIDDEN, projection=PROJECTION, bias_vectors=1))
    outputs, state = [], None
    for c, x in enumerate(inputs):
        out, state = lstm_chunk(
            net, f"{group}.c{c}", [x], state, steps=STEPS_PER_OP, input_size=input_size, hidden=HIDDEN,
            group=group, projection=PROJECTION, bias_vectors=1,
        )
        outputs.append(out)
    return outputs


def _softmax_shard(net: Network, name: str, h: Tensor, rows: int) -> Tensor:
    """Logits of every token against this shard's sampled classes and its true class."""
    tokens, features = h.shape
    columns = SAMPLED_CLASSES // SHARDS + 1
    net.parameters(name, rows * features + rows)
    flops = tokens * columns * (2 * features + 1)
    true_rows = tokens * (features + 1)
    activation_bytes = (h.elements + true_rows + tokens * columns) * ELEMENT_BYTES
    sampled_rows_bytes = (columns - 1) * (features + 1) * ELEMENT_BYTES
    return net.layer(
        name, "matmul", [h], (tokens, columns), flops, group=name, weights=rows * features + rows,
        weight_bytes_read=sampled_rows_bytes, activation_bytes=activation_bytes,
    )


def biglstm() -> Network:
    net = Network("biglstm", "BIG LSTM (Jozefowicz et al. 2016): 2 x LSTM-8192-1024, vocab 793,471, "
                             "sampled softmax, 20 steps")
    chunks = SEQUENCE_LENGTH // STEPS_PER_OP
    ids = net.input("token_ids", (SEQUENCE_LENGTH,))
    pieces = []
    for s, rows in enumerate(shard_rows()):
        group = f"embedding.shard{s}"
        net.parameters(group, rows * EMBEDDING)
        pieces.append(embedding(net, group, ids, EMBEDDING, group=group, table_rows=rows,
                                lookups=SEQUENCE_LENGTH // SHARDS))
    x = concat(net, "embedding.stitch", pieces)
    outputs = [x.view(STEPS_PER_OP, EMBEDDING) for _ in range(chunks)]
    input_size = EMBEDDING
    for layer in range(1, LAYERS + 1):
        outputs = _lstm_layer(net, f"lstm{layer}", outputs, input_size)
        input_size = PROJECTION
    top = concat(net, "lstm.outputs", outputs)
    logits = [_softmax_shard(net, f"softmax.shard{s}", top, rows) for s, rows in enumerate(shard_rows())]
    columns = SHARDS * (SAMPLED_CLASSES // SHARDS + 1)
    softmax_cross_entropy(net, "loss", logits, classes=columns)
    return net
