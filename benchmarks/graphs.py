"""Synthetic graph families for benchmarks and tests, all as placer.graph/v1 documents.

Deterministic for a given seed. Times are profiled-style `time_ms`; tensor sizes are
chosen so the communication-to-computation ratio (CCR: mean transfer time over one link
of `link_gb_per_s` divided by mean op time) is what the caller asks for.
"""
from __future__ import annotations

import math
import random
from typing import Any

__all__ = [
    "bert_per_head",
    "chain",
    "device_subset",
    "fork_join",
    "fully_connected_hardware",
    "gpt_per_head",
    "group_memory",
    "layered",
    "memory_tight",
    "nasnet_cells",
    "random_dag",
    "separated_training",
    "training_step",
    "unet",
    "v100_nvlink",
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


def _attention_per_head(net: Any, p: str, h: Any, heads: int, *, causal: bool = False) -> Any:
    """Multi-head self-attention with every head's query, key and value projection, scores,
    softmax and context as its own op, the heads concatenated before the output projection.
    Each projection's heads share that projection's weight group (one update op per projection)."""
    from placer.zoo.layers import SOFTMAX_FLOPS_PER_ELEMENT, concat, linear

    sequence, hidden = h.shape
    d_head = hidden // heads
    for proj in ("query", "key", "value"):
        net.parameters(f"{p}.attention.{proj}", hidden * hidden + hidden)
    # a causal mask adds one compare-and-select per score; the matmuls are computed in full
    mask = sequence * sequence if causal else 0
    contexts = []
    for head in range(heads):
        q, k, v = (linear(net, f"{p}.attention.{proj}.h{head}", h, d_head, group=f"{p}.attention.{proj}",
                          shared=True) for proj in ("query", "key", "value"))
        scores = net.layer(f"{p}.attention.scores.h{head}", "attention", [q, k], (sequence, sequence),
                           2 * sequence * sequence * d_head + sequence * sequence + mask)
        probs = net.layer(f"{p}.attention.softmax.h{head}", "softmax", [scores], scores.shape,
                          SOFTMAX_FLOPS_PER_ELEMENT * scores.elements)
        contexts.append(net.layer(f"{p}.attention.context.h{head}", "attention", [probs, v],
                                  (sequence, d_head), 2 * sequence * sequence * d_head))
    return concat(net, f"{p}.attention.heads", contexts, axis=1)


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
    from placer.zoo.layers import add, embedding, gelu, layernorm, linear, softmax_cross_entropy, tanh
    from placer.zoo.network import Network

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
        ctx = _attention_per_head(net, p, h, heads)
        out = linear(net, f"{p}.attention.output", ctx, hidden)
        h = layernorm(net, f"{p}.attention.layernorm", add(net, f"{p}.attention.residual", out, h))
        up = gelu(net, f"{p}.ffn.gelu", linear(net, f"{p}.ffn.up", h, ffn))
        down = linear(net, f"{p}.ffn.down", up, hidden)
        h = layernorm(net, f"{p}.ffn.layernorm", add(net, f"{p}.ffn.residual", down, h))
    pooled = tanh(net, "pooler.tanh", linear(net, "pooler.dense", h.view(hidden), hidden))
    softmax_cross_entropy(net, "loss", [linear(net, "classifier", pooled, 2)])
    return training.training_graph(net, batch)


GPT_VOCABULARY = 50_257  # GPT-2's byte-pair vocabulary
GPT_POSITIONS = 1024


def gpt_per_head(batch: int = 8, layers: int = 16, hidden: int = 1024, heads: int = 8, ffn: int = 4096,
                 sequence: int = 256) -> dict:
    """A GPT-2-style decoder-only language model's training step, attention head by head:
    16 layers x 8 heads is about 2,000 ops (the operator-level transformer graph of another
    size than `bert_per_head`). Pre-layernorm blocks (layernorm, per-head causal attention,
    output projection, residual add; layernorm, FFN up, GELU, FFN down, residual add), a final
    layernorm, and the language-model head tied to the word embedding (its weight gradient goes
    to the embedding's update op) with a softmax cross-entropy over every position."""
    from placer.zoo import training
    from placer.zoo.layers import add, embedding, gelu, layernorm, linear, softmax_cross_entropy
    from placer.zoo.network import Network

    net = Network(f"gpt_per_head_l{layers}h{heads}", f"GPT ({layers} x {hidden}, {heads} heads), attention per head")
    ids = net.input("input_ids", (sequence,))
    net.parameters("wte", GPT_VOCABULARY * hidden)
    net.parameters("wpe", GPT_POSITIONS * hidden)
    tokens = embedding(net, "wte", ids, hidden, group="wte", table_rows=GPT_VOCABULARY, lookups=sequence)
    positions = embedding(net, "wpe", None, hidden, group="wpe", table_rows=GPT_POSITIONS, lookups=sequence)
    h = add(net, "embeddings.sum", tokens, positions)
    for layer in range(layers):
        p = f"h{layer}"
        ctx = _attention_per_head(net, p, layernorm(net, f"{p}.ln_1", h), heads, causal=True)
        h = add(net, f"{p}.attention.residual", linear(net, f"{p}.attention.output", ctx, hidden), h)
        up = gelu(net, f"{p}.mlp.gelu", linear(net, f"{p}.mlp.up", layernorm(net, f"{p}.ln_2", h), ffn))
        h = add(net, f"{p}.mlp.residual", linear(net, f"{p}.mlp.down", up, hidden), h)
    logits = linear(net, "lm_head", layernorm(net, "ln_f", h), GPT_VOCABULARY, bias=False, group="wte",
                    shared=True)
    softmax_cross_entropy(net, "loss", [logits])
    return training.training_graph(net, batch)


# NASNet cell operations: (name, kernel); sep = ReLU, depthwise conv, pointwise conv, batchnorm
_NASNET_OPS = (("sep3", 3), ("sep5", 5), ("sep7", 7), ("avg3", 3), ("max3", 3), ("identity", 0))


def _nasnet_genotype(rng: random.Random, blocks: int = 5) -> list[tuple[tuple[int, str], tuple[int, str]]]:
    """Per block, two (input state, operation) pairs: inputs among the cell's two inputs and the
    earlier blocks' outputs, drawn with a bias towards the two inputs (as NASNet-A's cells are)."""
    genotype = []
    for b in range(blocks):
        pair = []
        for _ in range(2):
            states = 2 + b
            index = rng.randrange(2) if rng.random() < 0.6 or states == 2 else rng.randrange(2, states)
            pair.append((index, rng.choice(_NASNET_OPS)[0]))
        genotype.append((pair[0], pair[1]))
    return genotype


def nasnet_cells(cells_per_stage: int = 8, seed: int = 0, batch: int = 32, channels: int = 64,
                 image: int = 224) -> dict:
    """NASNet-style cell graph (Zoph et al. 2018): a training step of about 2,000-2,500 ops with
    many parallel branches and no time cuts between cells.

    Stem (two stride-2 conv-bn-relu, a stride-2 max pool), then three stages of
    `cells_per_stage` normal cells with a reduction cell between stages (channels doubled,
    resolution halved). Every cell reads the outputs of the previous two cells (each adjusted to
    the cell's channels by ReLU, 1x1 conv, batchnorm; stride 2 when the older one is twice the
    size), has 5 blocks that each add two parallel operations (separable 3x3/5x5/7x7 conv:
    ReLU, depthwise conv, pointwise conv, batchnorm; 3x3 average or max pool; identity) applied
    to the cell's inputs or earlier blocks' outputs, and concatenates the 5 blocks' outputs. The
    normal and reduction cells' structures (genotypes) are drawn once per `seed`; in a reduction
    cell the operations on the cell's inputs have stride 2 (identity becomes a max pool)."""
    from placer.zoo import training
    from placer.zoo.layers import (
        add,
        avg_pool,
        batchnorm,
        concat,
        conv2d,
        conv_bn_relu,
        global_avg_pool,
        linear,
        max_pool,
        relu,
        softmax_cross_entropy,
    )
    from placer.zoo.network import Network

    rng = random.Random(seed)
    normal, reduction = _nasnet_genotype(rng), _nasnet_genotype(rng)
    net = Network(f"nasnet_cells_{cells_per_stage}x3_s{seed}",
                  f"NASNet-style network, 3 stages x {cells_per_stage} cells, 2 reduction cells")
    x = net.input("images", (3, image, image))
    x = conv_bn_relu(net, "stem.conv0", x, channels // 2, 3, stride=2, padding=1)
    x = conv_bn_relu(net, "stem.conv1", x, channels, 3, stride=2, padding=1)
    x = max_pool(net, "stem.pool", x, 3, 2, 1)

    def adjust(name: str, t: Any, c: int, stride: int) -> Any:
        y = conv2d(net, f"{name}.conv", relu(net, f"{name}.relu", t), c, 1, stride)
        return batchnorm(net, f"{name}.bn", y)

    def operation(name: str, op: str, t: Any, c: int, stride: int) -> Any:
        if op == "identity":
            return t if stride == 1 else max_pool(net, f"{name}.max3", t, 3, stride, 1)
        if op in ("avg3", "max3"):
            pool = avg_pool if op == "avg3" else max_pool
            return pool(net, f"{name}.{op}", t, 3, stride, 1)
        k = int(op[3:])
        y = relu(net, f"{name}.{op}.relu", t)
        y = conv2d(net, f"{name}.{op}.depthwise", y, c, k, stride, k // 2, groups=c)
        y = conv2d(net, f"{name}.{op}.pointwise", y, c, 1)
        return batchnorm(net, f"{name}.{op}.bn", y)

    def cell(name: str, older: Any, prev: Any, c: int, reduce: bool) -> Any:
        older_stride = 2 if older.shape[1] > prev.shape[1] else 1
        states = [adjust(f"{name}.in0", older, c, older_stride), adjust(f"{name}.in1", prev, c, 1)]
        for b, pair in enumerate(reduction if reduce else normal):
            outs = [operation(f"{name}.b{b}.{side}", op, states[i], c, 2 if reduce and i < 2 else 1)
                    for side, (i, op) in zip("lr", pair)]
            states.append(add(net, f"{name}.b{b}.add", *outs))
        return concat(net, f"{name}.concat", states[2:])

    older, prev, c, k = x, x, channels, 0
    for stage in range(3):
        if stage:
            c *= 2
            older, prev = prev, cell(f"cell{k}", older, prev, c, True)
            k += 1
        for _ in range(cells_per_stage):
            older, prev = prev, cell(f"cell{k}", older, prev, c, False)
            k += 1
    pooled = global_avg_pool(net, "head.pool", relu(net, "head.relu", prev))
    softmax_cross_entropy(net, "loss", [linear(net, "classifier", pooled, 1000)])
    return training.training_graph(net, batch)


def unet(depth: int = 5, convs_per_level: int = 4, batch: int = 8, base_channels: int = 32, image: int = 256,
         classes: int = 2) -> dict:
    """U-Net (Ronneberger et al. 2015) segmentation training step with long skip connections.

    Encoder level l (l = 0 .. depth-1, base_channels x 2^l channels): `convs_per_level` 3x3
    conv-bn-relu, its output kept for the decoder, then a 2x2 max pool; a bottleneck of the same
    convs; decoder level l: a 2x2 stride-2 transposed conv up, concatenated with encoder level
    l's output (the long skip), then the convs; a 1x1 conv to `classes` and a per-pixel softmax
    cross-entropy. depth 5 x 4 convs is about 400 ops, depth 6 x 9 convs about 1,000."""
    from placer.zoo import training
    from placer.zoo.layers import concat, conv2d, conv_bn_relu, max_pool, softmax_cross_entropy
    from placer.zoo.network import Network

    if image % (2 ** depth):
        raise ValueError(f"unet: image {image} is not divisible by 2^{depth}")
    net = Network(f"unet_d{depth}x{convs_per_level}", f"U-Net, depth {depth}, {convs_per_level} convs per level")
    x = net.input("images", (3, image, image))
    skips = []
    for level in range(depth + 1):
        c = base_channels * 2 ** level
        name = f"enc{level}" if level < depth else "bottleneck"
        for i in range(convs_per_level):
            x = conv_bn_relu(net, f"{name}.conv{i}", x, c, 3, padding=1)
        if level < depth:
            skips.append(x)
            x = max_pool(net, f"{name}.pool", x, 2, 2)
    for level in reversed(range(depth)):
        c = base_channels * 2 ** level
        cin, _, w = x.shape
        up = net.layer(f"dec{level}.up", "conv_transpose", [x], (c, 2 * w, 2 * w), 2 * cin * c * 4 * w * w + c * 4 * w * w,
                       params=cin * c * 4 + c)
        x = concat(net, f"dec{level}.concat", [skips[level], up])
        for i in range(convs_per_level):
            x = conv_bn_relu(net, f"dec{level}.conv{i}", x, c, 3, padding=1)
    logits = conv2d(net, "head.conv", x, classes, 1, bias=True)
    softmax_cross_entropy(net, "loss", [logits.view(image * image, classes)], classes=classes)
    return training.training_graph(net, batch)


def _is_backward_op(op: dict[str, Any]) -> bool:
    """Backward or weight-update op by the conventions of the zoo (`L.bwd`, `g.update`), the
    PipeDream importer (`L.bwd`) and `training_step` (`L_grad`)."""
    op_id, kind = op["id"], op.get("kind") or ""
    return (op_id.endswith((".bwd", ".update", "_grad")) or kind.endswith(("_grad", ".bwd"))
            or kind in ("backward", "sgd_momentum"))


def separated_training(doc: dict) -> dict:
    """A training graph with every forward-to-backward edge removed: the forward part and the
    backward part (with the weight updates) are separate components, joined only through the
    colocation groups an op shares with its gradient op. This is the form msr-fiddle's
    dnn-partitioning training graphs take (e.g. `inceptionv3_training.json`): the saved
    activations `L -> L.bwd` and the loss's `loss -> loss.bwd` are gone, so the backward part
    starts at the loss gradient with no input. E.g. `separated_training(placer.zoo.build("inception_v3"))`."""
    backward = {op["id"] for op in doc["ops"] if _is_backward_op(op)}
    if not backward or len(backward) == len(doc["ops"]):
        raise ValueError(f"separated_training: {doc.get('name')} has no forward/backward split")
    edges = [e for e in doc.get("edges", []) if not (e["src"] not in backward and e["dst"] in backward)]
    return {**doc, "name": f"{doc.get('name', 'graph')}-separated", "edges": edges}


def msr_form_training(doc: dict) -> dict:
    """`separated_training` with the backward part's edges turned to run in layer order, as in
    msr-fiddle's dnn-partitioning files (`gnmt_training.json`: `node4grad -> node5grad`): the
    gradient ops form a second copy of the forward graph, each joined to its layer only by its
    colocation group. Edges into the weight updates keep their direction."""
    separated = separated_training(doc)
    updates = {op["id"] for op in doc["ops"]
               if op["id"].endswith(".update") or op.get("kind") == "sgd_momentum"}
    backward = {op["id"] for op in doc["ops"] if _is_backward_op(op)} - updates
    edges = [{**e, "src": e["dst"], "dst": e["src"]} if e["src"] in backward and e["dst"] in backward else e
             for e in separated["edges"]]
    return {**separated, "name": f"{doc.get('name', 'graph')}-msr-form", "edges": edges}


def group_memory(graph_doc: dict) -> dict[str, int]:
    """Memory per colocation group (an op without a group is its own)."""
    groups: dict[str, int] = {}
    for op in graph_doc["ops"]:
        key = op.get("group") or f"op:{op['id']}"
        groups[key] = groups.get(key, 0) + int(op.get("memory_bytes", 0))
    return groups


def memory_tight(hardware_doc: dict, graph_doc: dict, slack: float = 1.15) -> dict:
    """`hardware_doc` with every device's memory set so that `graph_doc` barely fits the whole
    machine: slack x total memory / devices, but never below 1.05 x the largest group's memory
    (a group must fit on one device). The name gets `-tight`."""
    groups = group_memory(graph_doc)
    total, largest = sum(groups.values()), max(groups.values(), default=0)
    devices = hardware_doc["devices"]
    capacity = max(math.ceil(slack * total / len(devices)), math.ceil(1.05 * largest), 1)
    return {
        **hardware_doc,
        "name": f"{hardware_doc.get('name', 'hardware')}-tight",
        "devices": [{**d, "memory_bytes": capacity} for d in devices],
    }


def v100_nvlink(n: int = 4, memory_bytes: int = 32_000_000_000) -> dict:
    """n V100-SXM2-32GB fully connected by NVLink2: 25 GB/s per direction and 5 us per link,
    peak 15.7 TFLOP/s (FP32), 900 GB/s memory bandwidth: the machine the real graphs of
    /work/shared/data/real-graphs were benchmarked on (4 GPUs)."""
    device = {"kind": "V100-SXM2-32GB", "memory_bytes": memory_bytes, "peak_tflops": 15.7,
              "memory_bandwidth_gb_per_s": 900.0}
    return {
        "format": "placer.hardware/v1",
        "name": f"v100x{n}_nvlink",
        "description": f"{n} V100-SXM2-32GB fully connected by NVLink2 (25 GB/s per direction, 5 us)",
        "devices": [{"id": f"gpu{i}", **device} for i in range(n)],
        "links": [{"a": f"gpu{i}", "b": f"gpu{j}", "bandwidth_gb_per_s": 25.0, "latency_us": 5.0, "kind": "nvlink2"}
                  for i in range(n) for j in range(i + 1, n)],
    }


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
