"""BERT-base (Devlin et al. 2018) fine-tuned for sequence classification, as Hugging Face's
BertForSequenceClassification builds it: 12 layers, hidden 768, 12 heads, FFN 3072,
WordPiece vocabulary 30,522, 512 positions, 2 token types, 128-token sequences, 2 labels.

Parameters: BertModel with its pooler has 109,482,240 (the published "110 M"); the 2-way
classifier adds 768 x 2 + 2 = 1,538, for 109,483,778 trained in the step.

Ops per encoder layer: query, key and value projections, the attention scores (Q K^T, scaled),
their softmax, the context (P V), the output projection, residual add, layernorm, FFN up,
GELU, FFN down, residual add, layernorm. Dropout and the attention mask are left out.
"""
from __future__ import annotations

from placer.zoo.layers import (
    SOFTMAX_FLOPS_PER_ELEMENT,
    add,
    embedding,
    gelu,
    layernorm,
    linear,
    softmax_cross_entropy,
    tanh,
)
from placer.zoo.network import Network, Tensor

__all__ = [
    "BERT_MODEL_PARAMETERS",
    "FFN",
    "HEADS",
    "HIDDEN",
    "LAYERS",
    "SEQUENCE_LENGTH",
    "VOCABULARY",
    "bert_base",
]

SEQUENCE_LENGTH = 128
LAYERS = 12
HIDDEN = 768
HEADS = 12
FFN = 3072
VOCABULARY = 30_522
MAX_POSITIONS = 512
TOKEN_TYPES = 2
LABELS = 2
BERT_MODEL_PARAMETERS = 109_482_240  # BertModel (embeddings, encoder, pooler), Hugging Face


def _encoder_layer(net: Network, p: str, h: Tensor) -> Tensor:
    s, d = h.shape
    q = linear(net, f"{p}.attention.query", h, d)
    k = linear(net, f"{p}.attention.key", h, d)
    v = linear(net, f"{p}.attention.value", h, d)
    scores = net.layer(f"{p}.attention.scores", "attention", [q, k], (HEADS, s, s),
                       2 * s * s * d + HEADS * s * s)  # Q K^T per head, then the 1/sqrt(d_head) scale
    probs = net.layer(f"{p}.attention.softmax", "softmax", [scores], scores.shape,
                      SOFTMAX_FLOPS_PER_ELEMENT * scores.elements)
    ctx = net.layer(f"{p}.attention.context", "attention", [probs, v], (s, d), 2 * s * s * d)
    out = linear(net, f"{p}.attention.output", ctx, d)
    h = layernorm(net, f"{p}.attention.layernorm", add(net, f"{p}.attention.residual", out, h))
    up = gelu(net, f"{p}.ffn.gelu", linear(net, f"{p}.ffn.up", h, FFN))
    down = linear(net, f"{p}.ffn.down", up, d)
    return layernorm(net, f"{p}.ffn.layernorm", add(net, f"{p}.ffn.residual", down, h))


def bert_base() -> Network:
    net = Network("bert_base", "BERT-base (12 x 768, 12 heads), sequence classification, 128 tokens")
    ids = net.input("input_ids", (SEQUENCE_LENGTH,))
    types = net.input("token_type_ids", (SEQUENCE_LENGTH,))
    tables = (("embeddings.word", ids, VOCABULARY), ("embeddings.position", None, MAX_POSITIONS),
              ("embeddings.token_type", types, TOKEN_TYPES))
    looked_up = []
    for name, source, rows in tables:
        net.parameters(name, rows * HIDDEN)
        looked_up.append(embedding(net, name, source, HIDDEN, group=name, table_rows=rows,
                                   lookups=SEQUENCE_LENGTH))
    h = layernorm(net, "embeddings.layernorm", add(net, "embeddings.sum", *looked_up))
    for layer in range(LAYERS):
        h = _encoder_layer(net, f"encoder.layer{layer}", h)
    pooled = tanh(net, "pooler.tanh", linear(net, "pooler.dense", h.view(HIDDEN), HIDDEN))  # [CLS] row
    softmax_cross_entropy(net, "loss", [linear(net, "classifier", pooled, LABELS)])
    return net
