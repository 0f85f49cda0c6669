"""Synthetic graph families for benchmarks and tests, all as placer.graph/v1 documents.

Deterministic for a given seed. Times are profiled-style `time_ms`; tensor sizes are
chosen so the communication-to-computation ratio (CCR: mean transfer time over one link
of `link_gb_per_s` divided by mean op time) is what the caller asks for.
"""
from __future__ import annotations

import random
from typing import Any

__all__ = [
    "bert_per_head",
    "chain",
    "device_subset",
    "fork_join",
    "fully_connected_hardware",
    "layered",
    "random_dag",
    "training_step",
]


def _doc(name: str, ops: list[dict[str, Any]], edges: list[dict[str, Any]]) -> dict[str, Any]:
    return {"format": "placer.graph/v1", "name": name, "ops": ops, "edges": edges}


def _bytes_for(ms: float, link_gb_per_s: float) -> int:
    return int(ms * 1e-3 * link_gb_per_s * 1e9)


def layered(n_ops: int, seed: int = 0, width: int = 4, ccr: float = 0.5, link_gb_per_s: float = 25.0) -> dict:
    """Inception-like: layers of up to `width` parallel branches joined by concat ops."""
    rng = random.Random(seed)
    ops: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    prev = None
    while len(ops) < n_ops:
        if prev is None:
            prev = "in"
            ops.append({"id": prev, "time_ms": round(rng.uniform(0.2, 1.0), 3)})
            continue
        tails = []
        branches = rng.randint(2, width)
        for b in range(branches):
            depth = rng.randint(1, 3)
            src = prev
            for d in range(depth):
                if len(ops) >= n_ops - 1:
                    break
                name = f"l{len(ops)}_b{b}_{d}"
                t = round(rng.uniform(0.1, 1.5), 3)
                ops.append({"id": name, "time_ms": t})
                edges.append({"src": src, "dst": name, "bytes": _bytes_for(ccr * t * rng.uniform(0.5, 1.5), link_gb_per_s)})
                src = name
            if src != prev:
                tails.append(src)
        join = f"concat{len(ops)}"
        ops.append({"id": join, "time_ms": round(rng.uniform(0.05, 0.3), 3)})
        for t_ in tails or [prev]:
            edges.append({"src": t_, "dst": join, "bytes": _bytes_for(ccr * 0.5, link_gb_per_s)})
        prev = join
    return _doc(f"layered-{n_ops}-s{seed}", ops, edges)


def chain(n_ops: int, seed: int = 0, ccr: float = 0.5, link_gb_per_s: float = 25.0) -> dict:
    rng = random.Random(seed)
    ops = [{"id": f"c{i}", "time_ms": round(rng.uniform(0.1, 2.0), 3)} for i in range(n_ops)]
    edges = [{"src": f"c{i}", "dst": f"c{i + 1}", "bytes": _bytes_for(ccr, link_gb_per_s)} for i in range(n_ops - 1)]
    return _doc(f"chain-{n_ops}-s{seed}", ops, edges)


def fork_join(n_ops: int, seed: int = 0, ccr: float = 0.5, link_gb_per_s: float = 25.0) -> dict:
    """One source, n-2 independent ops, one sink."""
    rng = random.Random(seed)
    ops = [{"id": "src", "time_ms": 0.5}] + [
        {"id": f"f{i}", "time_ms": round(rng.uniform(0.1, 2.0), 3)} for i in range(n_ops - 2)
    ] + [{"id": "sink", "time_ms": 0.5}]
    edges = [{"src": "src", "dst": f"f{i}", "bytes": _bytes_for(ccr, link_gb_per_s)} for i in range(n_ops - 2)]
    edges += [{"src": f"f{i}", "dst": "sink", "bytes": _bytes_for(ccr, link_gb_per_s)} for i in range(n_ops - 2)]
    return _doc(f"forkjoin-{n_ops}-s{seed}", ops, edges)


def random_dag(n_ops: int, seed: int = 0, ccr: float = 1.0, density: float = 0.1, link_gb_per_s: float = 25.0) -> dict:
    """Edges from lower to higher index with probability `density` within a window."""
    rng = random.Random(seed)
    ops = [{"id": f"r{i}", "time_ms": round(rng.uniform(0.1, 2.0), 3)} for i in range(n_ops)]
    edges = []
    for v in range(1, n_ops):
        srcs = [u for u in range(max(0, v - 12), v) if rng.random() < density * 3] or [rng.randrange(max(0, v - 5), v)]
        for u in srcs:
            edges.append({"src": f"r{u}", "dst": f"r{v}", "bytes": _bytes_for(ccr * rng.uniform(0.2, 2.0), link_gb_per_s)})
    return _doc(f"random-{n_ops}-ccr{ccr}-s{seed}", ops, edges)


def training_step(forward: dict) -> dict:
    """Forward graph -> training step: a backward op per forward op (same group, edges
    reversed, 2x time) and nothing else; saved activations stay with their forward op."""
    ops = []
    edges = []
    for op in forward["ops"]:
        ops.append({**op, "group": op["id"]})
    for op in forward["ops"]:
        ops.append({"id": f"{op['id']}_grad", "time_ms": round(2 * op["time_ms"], 3), "group": op["id"]})
        edges.append({"src": op["id"], "dst": f"{op['id']}_grad", "bytes": 0})
    for e in forward["edges"]:
        edges.append(e)
        edges.append({"src": f"{e['dst']}_grad", "dst": f"{e['src']}_grad", "bytes": e["bytes"]})
    # the loss: every forward sink feeds its own gradient already; join forward sinks to backward sources
    return _doc(forward["name"] + "-train", ops, edges)


def fully_connected_hardware(n: int, link_gb_per_s: float = 25.0, latency_us: float = 5.0,
                             memory_bytes: int | None = None) -> dict:
    device: dict[str, Any] = {"kind": "gpu"}
    if memory_bytes is not None:
        device["memory_bytes"] = memory_bytes
    return {
        "format": "placer.hardware/v1",
        "name": f"{n}-gpu-fully-connected",
        "devices": [{"id": f"gpu{i}", **device} for i in range(n)],
        "links": [{"a": f"gpu{i}", "b": f"gpu{j}", "bandwidth_gb_per_s": link_gb_per_s, "latency_us": latency_us}
                  for i in range(n) for j in range(i + 1, n)],
    }


def bert_per_head(batch: int = 32, layers: int = 12, hidden: int = 768, heads: int = 12, ffn: int = 3072,
                  sequence: int = 128) -> dict:
    """BERT-base's training step with attention computed head by head: about 2,000 ops.

    The zoo's `bert_base` (458 ops) treats each attention block as a few big ops; a framework
    graph profiled per head (each head's query, key and value projection, scores, softmax and
    context as its own op, the heads concatenated before the output projection) is the
    2,000-op "BERT-size" graph of issue 6. Same parameters and FLOPs as `bert_base` up to the
    per-head split; each projection's heads share that projection's weight group, so the
    training step keeps one update op per projection."""
    from placer.zoo import training
    from placer.zoo.bert import MAX_POSITIONS, TOKEN_TYPES, VOCABULARY
    from placer.zoo.layers import (
        SOFTMAX_FLOPS_PER_ELEMENT,
        add,
        concat,
        embedding,
        gelu,
        layernorm,
        linear,
        softmax_cross_entropy,
        tanh,
    )
    from placer.zoo.network import Network

    d_head = hidden // heads
    net = Network(f"bert_per_head_l{layers}", f"BERT ({layers} x {hidden}, {heads} heads), attention per head")
    ids = net.input("input_ids", (sequence,))
    types = net.input("token_type_ids", (sequence,))
    looked_up = []
    for name, source, rows in (("embeddings.word", ids, VOCABULARY), ("embeddings.position", None, MAX_POSITIONS),
                               ("embeddings.token_type", types, TOKEN_TYPES)):
        net.parameters(name, rows * hidden)
        looked_up.append(embedding(net, name, source, hidden, group=name, table_rows=rows, lookups=sequence))
    h = layernorm(net, "embeddings.layernorm", add(net, "embeddings.sum", *looked_up))
    for layer in range(layers):
        p = f"encoder.layer{layer}"
        contexts = []
        for proj in ("query", "key", "value"):
            net.parameters(f"{p}.attention.{proj}", hidden * hidden + hidden)
        for head in range(heads):
            q, k, v = (linear(net, f"{p}.attention.{proj}.h{head}", h, d_head, group=f"{p}.attention.{proj}",
                              shared=True) for proj in ("query", "key", "value"))
            scores = net.layer(f"{p}.attention.scores.h{head}", "attention", [q, k], (sequence, sequence),
                               2 * sequence * sequence * d_head + sequence * sequence)
            probs = net.layer(f"{p}.attention.softmax.h{head}", "softmax", [scores], scores.shape,
                              SOFTMAX_FLOPS_PER_ELEMENT * scores.elements)
            contexts.append(net.layer(f"{p}.attention.context.h{head}", "attention", [probs, v],
                                      (sequence, d_head), 2 * sequence * sequence * d_head))
        ctx = concat(net, f"{p}.attention.heads", contexts, axis=1)
        out = linear(net, f"{p}.attention.output", ctx, hidden)
        h = layernorm(net, f"{p}.attention.layernorm", add(net, f"{p}.attention.residual", out, h))
        up = gelu(net, f"{p}.ffn.gelu", linear(net, f"{p}.ffn.up", h, ffn))
        down = linear(net, f"{p}.ffn.down", up, hidden)
        h = layernorm(net, f"{p}.ffn.layernorm", add(net, f"{p}.ffn.residual", down, h))
    pooled = tanh(net, "pooler.tanh", linear(net, "pooler.dense", h.view(hidden), hidden))
    softmax_cross_entropy(net, "loss", [linear(net, "classifier", pooled, 2)])
    return training.training_graph(net, batch)


def device_subset(hardware: dict, keep: list[str], name: str | None = None) -> dict:
    """A placer.hardware/v1 document with only the devices in `keep` (switches and the links
    among what remains are kept): e.g. two NVLinked GPUs of a DGX-1 quad."""
    dropped = {d["id"] for d in hardware["devices"]} - set(keep)
    missing = set(keep) - {d["id"] for d in hardware["devices"]}
    if missing:
        raise ValueError(f"device_subset: {sorted(missing)} not in {hardware.get('name')}")
    return {
        **hardware,
        "name": name or f"{hardware.get('name', 'hardware')}-{'-'.join(keep)}",
        "devices": [d for d in hardware["devices"] if d["id"] in keep],
        "links": [link for link in hardware["links"] if link["a"] not in dropped and link["b"] not in dropped],
    }
