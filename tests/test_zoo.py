"""The analytic model zoo: published parameter counts and FLOPs, the shape of the training
step (forward / backward / update ops and their edges), batch scaling, the CLI, and a placement."""
from __future__ import annotations

import json
from functools import cache

import networkx as nx
import pytest

from placer.cli import main
from placer.errors import InputError, UnknownModelError
from placer.schema import parse_graph
from placer.zoo import build, list_models, network, summarize

MODELS = ["alexnet", "vgg16", "resnet50", "inception_v3", "gnmt", "biglstm", "bert_base"]


@cache
def _graph(name: str, batch: int) -> str:
    return json.dumps(build(name, batch))


def graph(name: str, batch: int) -> dict:
    """A fresh copy of a built graph (built once per model and batch in this module)."""
    return json.loads(_graph(name, batch))


def ops_by_id(g: dict) -> dict[str, dict]:
    return {op["id"]: op for op in g["ops"]}


def edges_by_pair(g: dict) -> dict[tuple[str, str], int]:
    return {(e["src"], e["dst"]): e["bytes"] for e in g["edges"]}


# --------------------------------------------------------------------------- registry and errors


def test_list_models_names_every_model():
    assert list_models() == MODELS


def test_unknown_model_is_an_unknown_model_error_listing_the_known_ones():
    with pytest.raises(UnknownModelError, match=r"'resnet51'.*known models: alexnet, vgg16, resnet50"):
        build("resnet51")


@pytest.mark.parametrize("batch", [0, -3, 2.5, "32", True])
def test_bad_batch_is_an_input_error(batch):
    with pytest.raises(InputError, match="batch"):
        build("alexnet", batch)


# --------------------------------------------------------------------------- validity


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("batch", [1, 32])
def test_every_model_builds_a_valid_dag(name, batch):
    g = graph(name, batch)
    spec = parse_graph(g)
    assert spec.name == f"{name}_b{batch}"
    dag = nx.DiGraph()
    dag.add_nodes_from(op["id"] for op in g["ops"])
    dag.add_edges_from((e["src"], e["dst"]) for e in g["edges"])
    assert nx.is_directed_acyclic_graph(dag)
    assert all(op["flops"] >= 0 and op["bytes_accessed"] >= 0 and op["memory_bytes"] >= 0 for op in g["ops"])
    assert all(op.get("kind") for op in g["ops"])


# --------------------------------------------------------------------------- published figures

PUBLISHED_PARAMETERS = {
    "alexnet": 61_100_840,  # torchvision AlexNet_Weights.IMAGENET1K_V1 num_params
    "vgg16": 138_357_544,  # torchvision VGG16_Weights num_params
    "resnet50": 25_557_032,  # torchvision ResNet50_Weights num_params
    # torchvision Inception_V3_Weights num_params 27,161,264 includes the auxiliary head:
    # conv 768->128 1x1 + BN (98,560), conv 128->768 5x5 + BN (2,459,136), fc 768->1000 (769,000)
    "inception_v3": 27_161_264 - (768 * 128 + 2 * 128) - (128 * 768 * 25 + 2 * 768) - (768 * 1000 + 1000),
    "gnmt": 160_671_297,  # MLPerf / NVIDIA GNMT v2 reference: "160,671,297 trainable parameters"
    "bert_base": 109_482_240 + 768 * 2 + 2,  # BertModel with pooler + a 2-label classifier
    # BIG LSTM: 2 x (gates 4*8192*(1024+1024) + bias 4*8192 + projection 8192*1024),
    # embedding 793,471 x 1024, softmax weights 793,471 x 1024 and biases 793,471
    "biglstm": 2 * (4 * 8192 * 2048 + 4 * 8192 + 8192 * 1024) + 2 * 793_471 * 1024 + 793_471,
}


@pytest.mark.parametrize("name", MODELS)
def test_parameter_count_is_exact(name):
    assert network(name).parameter_count == PUBLISHED_PARAMETERS[name]


def test_published_figures_the_exact_counts_rest_on():
    assert PUBLISHED_PARAMETERS["inception_v3"] == 23_834_568
    assert PUBLISHED_PARAMETERS["bert_base"] == 109_483_778
    # Jozefowicz et al. 2016: "2-Layer LSTM-8192-1024 (BIG LSTM) ... 1.8 B" parameters;
    # Shazeer et al. 2017, Table 7: 151.0 M parameters without embedding and softmax.
    assert round(PUBLISHED_PARAMETERS["biglstm"] / 1e9, 1) == 1.8
    lstm = sum(p for g, p in network("biglstm").group_parameters.items() if g.startswith("lstm"))
    assert lstm == pytest.approx(151.0e6, rel=1e-3)


@pytest.mark.parametrize("name", MODELS)
def test_update_ops_hold_three_copies_of_every_parameter(name):
    g = graph(name, 1)
    updates = [op for op in g["ops"] if op["kind"] == "sgd_momentum"]
    assert sum(op["memory_bytes"] for op in updates) == 3 * 4 * PUBLISHED_PARAMETERS[name]
    assert sum(op["flops"] for op in updates) == 4 * PUBLISHED_PARAMETERS[name]


# torchvision weights metadata "_ops": GMACs of one forward pass at the model's image size
PUBLISHED_GMACS = {"alexnet": 0.714, "vgg16": 15.47, "resnet50": 4.089, "inception_v3": 5.713}


@pytest.mark.parametrize("name", sorted(PUBLISHED_GMACS))
def test_cnn_forward_flops_match_published_macs(name):
    net = network(name)
    published_flops = 2 * PUBLISHED_GMACS[name] * 1e9
    assert net.forward_flops(1) == pytest.approx(published_flops, rel=0.02)
    # convolutions and the classifier alone are the published MACs to the published precision
    assert net.flops_of_kind("conv2d", "matmul") / 2 / 1e9 == pytest.approx(PUBLISHED_GMACS[name], rel=2e-3)


def test_bert_forward_flops_are_two_flops_per_weight_per_token_plus_attention():
    # Kaplan et al. 2020: forward ~ 2N per token + attention; bidirectional attention computes
    # Q K^T and P V over the whole context: 2 x 2 x n_layer x n_ctx x d per token.
    layers, ctx, d, ffn = 12, 128, 768, 3072
    weights = layers * (4 * d * d + 2 * d * ffn)
    expected = ctx * (2 * weights + 4 * layers * ctx * d)
    assert network("bert_base").forward_flops(1) == pytest.approx(expected, rel=0.02)


def test_gnmt_forward_flops_are_two_flops_per_multiply_add():
    h, s, v = 1024, 50, 32_320
    encoder = 2 * 4 * h * 2 * h + 4 * h * 3 * h + 2 * 4 * h * 2 * h  # bidirectional, 2048-in, 2 x 1024-in
    decoder = 4 * h * 2 * h + 3 * 4 * h * 3 * h + h * h + h * v  # LSTMs, attention query, classifier
    macs = s * (encoder + decoder) + s * h * h + s * 2 * s * h  # + keys, scores and context
    assert network("gnmt").forward_flops(1) == pytest.approx(2 * macs, rel=0.02)


def test_biglstm_ops_per_timestep_match_published():
    # Shazeer et al. 2017, Table 7: 2xLSTM-8192-1024 does 151.0 M ops (multiply-adds) per timestep
    # outside the softmax; 20 timesteps per sample.
    net = network("biglstm")
    assert net.flops_of_kind("lstm") / 2 / 20 == pytest.approx(151.0e6, rel=2e-3)
    sampled = 20 * 2 * 1024 * (8192 + 4)  # every token against the 8192 samples + 4 true-class columns
    assert net.flops_of_kind("matmul") == pytest.approx(sampled, rel=1e-3)


# --------------------------------------------------------------------------- training-step shape


@pytest.mark.parametrize("name", MODELS)
def test_backward_ops_pair_with_their_forward_op_in_its_group(name):
    g = graph(name, 32)
    ops = ops_by_id(g)
    edges = edges_by_pair(g)
    forward = [op for op in g["ops"] if not op["id"].endswith((".bwd", ".update"))]
    for op in forward:
        if op["kind"] == "input":
            assert op["id"] + ".bwd" not in ops and "group" not in op
            continue
        bwd = ops[op["id"] + ".bwd"]
        assert bwd["group"] == op["group"]
        assert bwd["kind"] == op["kind"] + "_grad"
        assert (op["id"], bwd["id"]) in edges  # saved activations
    for op in g["ops"]:
        if op["id"].endswith(".update"):
            group = op["id"].removesuffix(".update")
            assert op["group"] == group
            feeders = [s for (s, d) in edges if d == op["id"]]
            assert feeders and all(s.endswith(".bwd") and ops[s]["group"] == group for s in feeders)


@pytest.mark.parametrize("name", MODELS)
def test_every_forward_edge_has_a_reversed_gradient_edge(name):
    g = graph(name, 1)
    ops = ops_by_id(g)
    edges = edges_by_pair(g)
    for (src, dst), nbytes in edges.items():
        if src.endswith((".bwd", ".update")) or dst.endswith((".bwd", ".update")):
            continue
        if ops[src]["kind"] == "input":
            assert (dst + ".bwd", src + ".bwd") not in edges
        else:
            assert edges[(dst + ".bwd", src + ".bwd")] == nbytes


@pytest.mark.parametrize("name", MODELS)
def test_batch_scales_activations_and_flops_linearly(name):
    one, many = graph(name, 1), graph(name, 32)
    ops1, ops32 = ops_by_id(one), ops_by_id(many)
    assert ops1.keys() == ops32.keys()
    for op_id, op in ops1.items():
        big = ops32[op_id]
        if op["kind"] == "sgd_momentum":
            assert big == op
        else:
            assert big["flops"] == pytest.approx(32 * op["flops"], rel=1e-12)
            assert big["memory_bytes"] == 32 * op["memory_bytes"]
    edges1, edges32 = edges_by_pair(one), edges_by_pair(many)
    assert edges1.keys() == edges32.keys()
    for pair, nbytes in edges1.items():
        expected = nbytes if pair[1].endswith(".update") else 32 * nbytes
        assert edges32[pair] == expected


def test_resnet50_conv1_costs_by_hand():
    g = graph("resnet50", 32)
    ops, edges = ops_by_id(g), edges_by_pair(g)
    weights = 64 * 3 * 7 * 7
    flops = 2 * 3 * 7 * 7 * 64 * 112 * 112  # 2 x MACs per output element x 64 x 112 x 112 outputs
    activation = 64 * 112 * 112 * 4
    image = 3 * 224 * 224 * 4
    assert ops["conv1"]["flops"] == 32 * flops
    assert ops["conv1"]["memory_bytes"] == 32 * activation
    assert ops["conv1"]["bytes_accessed"] == 32 * (image + activation) + 4 * weights
    assert ops["conv1.bwd"]["flops"] == 2 * 32 * flops
    assert ops["conv1.update"] == {"id": "conv1.update", "kind": "sgd_momentum", "flops": 4.0 * weights,
                                   "bytes_accessed": 20.0 * weights, "memory_bytes": 12 * weights,
                                   "weight_bytes": 4 * weights, "group": "conv1"}
    # what a split plan may cut (docs/split.md): the batch and the 64 output channels
    assert ops["conv1"]["dims"] == ops["conv1.bwd"]["dims"] == {"sample": 32, "channel": 64}
    assert ops["conv1"]["weight_bytes"] == 4 * weights and ops["conv1.bwd"]["weight_bytes"] == 8 * weights
    assert ops["relu"]["flops"] == 32 * 64 * 112 * 112 and ops["relu.bwd"]["flops"] == ops["relu"]["flops"]
    assert edges[("images", "conv1")] == 32 * image
    assert edges[("conv1", "bn1")] == edges[("bn1.bwd", "conv1.bwd")] == 32 * activation
    assert edges[("conv1.bwd", "conv1.update")] == 4 * weights
    assert edges[("conv1", "conv1.bwd")] == 32 * activation


def test_recurrent_layers_share_one_group_and_one_update():
    g = graph("gnmt", 1)
    chunks = [op for op in g["ops"] if op["id"].startswith("decoder.lstm1.c") and op["kind"] == "lstm"]
    assert len(chunks) == 10 and {op["group"] for op in chunks} == {"decoder.lstm1"}
    edges = edges_by_pair(g)
    assert sum(1 for (s, d) in edges if d == "decoder.lstm1.update") == 10
    assert ("decoder.lstm1.c0", "decoder.lstm1.c1") in edges  # the state flows forward in time
    assert ("decoder.lstm1.c1.bwd", "decoder.lstm1.c0.bwd") in edges  # and its gradient backward
    assert ("encoder.lstm0_bw.c1", "encoder.lstm0_bw.c0") in edges  # the backward direction runs in reverse
    # the shared embedding: both lookups feed one update op
    assert {s for (s, d) in edges if d == "embedding.update"} == {"encoder.embedding.bwd", "decoder.embedding.bwd"}


def test_graph_sizes_suit_the_benchmarks():
    assert len(graph("inception_v3", 32)["ops"]) >= 600
    assert len(graph("bert_base", 32)["ops"]) <= 2000


# --------------------------------------------------------------------------- summary and CLI


def test_summary_counts_the_graph():
    s = summarize("alexnet", batch=2)
    g = graph("alexnet", 1)
    assert (s.ops, s.edges, s.parameters) == (len(g["ops"]), len(g["edges"]), 61_100_840)
    assert s.memory_bytes == sum(op["memory_bytes"] for op in build("alexnet", 2)["ops"])
    assert s.forward_flops_per_sample == network("alexnet").forward_flops(1)


def test_cli_writes_a_graph_that_parses(tmp_path, capsys):
    out = tmp_path / "bert.json"
    assert main(["zoo", "bert_base", "--batch", "4", "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert parse_graph(doc).name == "bert_base_b4"
    assert doc == build("bert_base", 4)


def test_cli_lists_the_models(capsys):
    assert main(["zoo", "--list"]) == 0
    text = capsys.readouterr().out
    for name in MODELS:
        assert name in text
    assert "25,557,032" in text and "808" in text


def test_cli_rejects_unknown_model_and_bad_batch(capsys):
    assert main(["zoo", "resnet51"]) == 2
    assert "known models" in capsys.readouterr().err
    assert main(["zoo", "resnet50", "--batch", "0"]) == 2
    assert main(["zoo"]) == 2


# --------------------------------------------------------------------------- placement


def _four_v100() -> dict:
    gpus = [f"gpu{i}" for i in range(4)]
    return {
        "format": "placer.hardware/v1",
        "name": "4xV100-nvlink",
        "devices": [{"id": g, "kind": "V100", "memory_bytes": 16_000_000_000, "peak_tflops": 125,
                     "memory_bandwidth_gb_per_s": 900} for g in gpus],
        "links": [{"a": a, "b": b, "bandwidth_gb_per_s": 25.0} for i, a in enumerate(gpus) for b in gpus[i + 1:]],
    }


def test_resnet50_at_batch_32_places_with_heft_and_validates():
    engine = pytest.importorskip("placer.engine")
    from placer.schema import parse_hardware
    from placer.validate import check_result

    spec, hardware = parse_graph(build("resnet50", 32)), parse_hardware(_four_v100())
    result = engine.place(spec, hardware, engine.PlaceOptions(solver="heft"))
    assert result.status in ("optimal", "feasible")
    assert len(result.placement) == len(spec.ops)
    assert check_result(spec, hardware, result) == []
    by_group: dict[str, set[str]] = {}
    for op in spec.ops:
        if op.group:
            by_group.setdefault(op.group, set()).add(result.placement[op.id])
    assert all(len(devices) == 1 for devices in by_group.values())


@pytest.mark.parametrize("preset", ["dgx1_v100_quad", "dgx_a100"])
@pytest.mark.parametrize("name", list_models())
def test_every_model_places_on_the_quad_and_dgx_a100(name: str, preset: str) -> None:
    """Issue 3's bar: each zoo model at batch 32 places on both machines and validates."""
    from placer.engine import PlaceOptions, place
    from placer.resolve import resolve_hardware
    from placer.validate import check_result

    graph, hardware = parse_graph(build(name, 32)), resolve_hardware(preset)
    result = place(graph, hardware, PlaceOptions(solver="heft"))
    assert result.status in ("optimal", "feasible")
    assert check_result(graph, hardware, result) == []
