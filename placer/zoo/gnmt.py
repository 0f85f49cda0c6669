"""GNMT as NVIDIA's and MLPerf's PyTorch reference builds it (Wu et al. 2016, 4-layer variant):
160,671,297 parameters.

- Shared source/target embedding, vocabulary 32,320 (a 32k BPE vocabulary padded to a multiple
  of 8), 1024 features.
- Encoder: a bidirectional LSTM (1024 -> 2 x 1024), then LSTM 2048 -> 1024, then two LSTMs
  1024 -> 1024 with residual connections.
- Decoder: an LSTM 1024 -> 1024 whose output queries normalised Bahdanau attention over the
  encoder outputs (linear_q, linear_k 1024 x 1024, a scoring vector with a weight-norm scalar
  and bias: 2,099,201 parameters), then three LSTMs (output and attention context, 2048 -> 1024),
  the last two with residual connections; a 1024 -> 32,320 classifier with a softmax
  cross-entropy loss.
- PyTorch LSTMs: two bias vectors per gate set.

Source and target are 50 tokens. Each LSTM layer is cut into chunks of 5 time steps: one op per
chunk, all chunks of a layer in the layer's group (they share its weights and its update op),
chunk t+1 reading chunk t's state. This exposes the wavefront pipelining that makes model
parallelism pay for recurrent networks. The attention and the classifier are chunked the same
way; the attention keys are projected once, from the concatenated encoder outputs.
"""
from __future__ import annotations

from placer.zoo.layers import concat, embedding, linear, lstm_chunk, lstm_parameters, softmax_cross_entropy
from placer.zoo.network import Network, Tensor

__all__ = ["HIDDEN", "SEQUENCE_LENGTH", "STEPS_PER_OP", "VOCABULARY", "attention_parameters", "gnmt"]

SEQUENCE_LENGTH = 50
STEPS_PER_OP = 5
HIDDEN = 1024
VOCABULARY = 32_320
SOFTMAX_FLOPS_PER_SCORE = 5


def attention_parameters(hidden: int = HIDDEN) -> int:
    """Normalised Bahdanau attention: linear_q and linear_k (no bias), the scoring vector,
    its weight-norm scalar and the normalisation bias."""
    return 2 * hidden * hidden + hidden + 1 + hidden


def _lstm_layer(
    net: Network,
    group: str,
    inputs: list[list[Tensor]],
    input_size: int,
    *,
    reverse: bool = False,
    residual: bool = False,
) -> list[Tensor]:
    """One LSTM layer over the chunks; `inputs[c]` are the tensors chunk c reads."""
    net.parameters(group, lstm_parameters(input_size, HIDDEN))
    outputs: list[Tensor | None] = [None] * len(inputs)
    state = None
    order = range(len(inputs) - 1, -1, -1) if reverse else range(len(inputs))
    for c in order:
        outputs[c], state = lstm_chunk(
            net, f"{group}.c{c}", inputs[c], state, steps=STEPS_PER_OP, input_size=input_size,
            hidden=HIDDEN, group=group, residual=residual,
        )
    return [t for t in outputs if t is not None]


def _attention_chunk(net: Network, name: str, query: Tensor, keys: Tensor, values: Tensor) -> Tensor:
    """Per decoder step: project the query (2H^2), add it to every key with the normalisation
    bias (2SH), tanh (SH), score against the vector (2SH), softmax over S (5S), weighted sum of
    the values (2SH). Saves tanh(q + k) and the scores for backward."""
    s, h = keys.shape
    per_step = 2 * h * h + 7 * s * h + SOFTMAX_FLOPS_PER_SCORE * s
    steps = query.shape[0]
    saved = steps * (s * h + s + h)
    reads = query.elements + keys.elements + values.elements
    return net.layer(
        name, "attention", [query, keys, values], (steps, h), steps * per_step, group="attention",
        weights=h * h + 2 * h + 1, activation_bytes=(reads + steps * h + saved) * 4, saved_elements=saved,
    )


def gnmt() -> Network:
    net = Network("gnmt", "GNMT v2 (MLPerf/NVIDIA): 4+4 LSTM layers of 1024, attention, vocab 32,320, 50 tokens")
    chunks = SEQUENCE_LENGTH // STEPS_PER_OP
    t, h = STEPS_PER_OP, HIDDEN
    source = net.input("source_ids", (SEQUENCE_LENGTH,))
    target = net.input("target_ids", (SEQUENCE_LENGTH,))
    net.parameters("embedding", VOCABULARY * h)
    src = embedding(net, "encoder.embedding", source, h, group="embedding", table_rows=VOCABULARY)
    tgt = embedding(net, "decoder.embedding", target, h, group="embedding", table_rows=VOCABULARY)

    src_chunks = [[src.view(t, h)] for _ in range(chunks)]
    forward = _lstm_layer(net, "encoder.lstm0_fw", src_chunks, h)
    backward = _lstm_layer(net, "encoder.lstm0_bw", src_chunks, h, reverse=True)
    x = _lstm_layer(net, "encoder.lstm1", [[f, b] for f, b in zip(forward, backward)], 2 * h)
    for layer in (2, 3):
        x = _lstm_layer(net, f"encoder.lstm{layer}", [[o] for o in x], h, residual=True)
    values = concat(net, "encoder.outputs", x)

    net.parameters("attention", attention_parameters(h))
    keys = net.layer("attention.keys", "matmul", [values], values.shape, 2 * h * values.elements,
                     group="attention", weights=h * h)
    query = _lstm_layer(net, "decoder.lstm0", [[tgt.view(t, h)] for _ in range(chunks)], h)
    context = [_attention_chunk(net, f"attention.c{c}", query[c], keys, values) for c in range(chunks)]
    x = _lstm_layer(net, "decoder.lstm1", [[q, a] for q, a in zip(query, context)], 2 * h)
    for layer in (2, 3):
        x = _lstm_layer(net, f"decoder.lstm{layer}", [[o, a] for o, a in zip(x, context)], 2 * h, residual=True)

    net.parameters("classifier", h * VOCABULARY + VOCABULARY)
    for c in range(chunks):
        logits = linear(net, f"classifier.c{c}", x[c], VOCABULARY, group="classifier", shared=True)
        softmax_cross_entropy(net, f"loss.c{c}", [logits])
    return net
