"""Importers: ONNX (hand-built graphs, and PyTorch exports when torch is present), PyTorch,
PipeDream profiles and dnn-partitioning JSON. Totals are hand-computed from the sources."""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from placer.cli import main
from placer.errors import InputError, InvalidGraphError
from placer.importers import KINDS, import_graph
from placer.importers.costs import attention_flops, einsum_flops, rnn_flops
from placer.importers.msr import import_msr
from placer.importers.pipedream import import_pipedream
from placer.schema import parse_graph

DATA = Path(__file__).parent / "data" / "importers"
PIPEDREAM = DATA / "graph.txt"
MSR = DATA / "dnn_partitioning.json"
LAYER = "{} -- L -- forward_compute_time=1, backward_compute_time=1, activation_size=8, parameter_size=0"


def by_id(result):
    return {op["id"]: op for op in result.document["ops"]}


def edge_map(result):
    return {(e["src"], e["dst"]): e["bytes"] for e in result.document["edges"]}


# ----------------------------------------------------------------------------- PipeDream


def test_pipedream_sample_totals_match_the_profile():
    result = import_pipedream(PIPEDREAM)
    t = result.totals
    assert (t.ops, t.edges) == (12, 18)  # 6 layers x (fwd, bwd); 6 fwd + 6 grad + 6 fwd->bwd edges
    # forward 12.5 + 1.25 + 2 + 0 + 0.25 + 0.5 = 16.5, backward 0 + 2.5 + 3 + 0 + 0.125 + 0.75 = 6.375
    assert t.time_ms == pytest.approx(22.875)
    # parameters + activations: 600 + 1448 + (1000 + 320) + 800 + 800 + 600
    assert t.memory_bytes == 5568
    # activation of the source on every edge, forward and again as the gradient: 2 x 5200
    assert t.edge_bytes == 10400
    assert result.document["name"] == "importers"
    assert any("Input layer time (12.5 ms)" in w for w in result.warnings)


def test_pipedream_training_structure():
    result = import_pipedream(PIPEDREAM)
    ops, edges = by_id(result), edge_map(result)
    assert ops["node2"] == {
        "id": "node2", "kind": "Conv2d", "time_ms": 1.25, "memory_bytes": 1448, "group": "node2"
    }
    assert ops["node2.bwd"] == {"id": "node2.bwd", "kind": "Conv2d.bwd", "time_ms": 2.5, "memory_bytes": 0,
                                "group": "node2"}
    assert edges[("node2", "node5")] == 1000 and edges[("node5.bwd", "node2.bwd")] == 1000
    assert edges[("node6", "node6.bwd")] == 0
    # activation lists are summed (PipeDream's own parser does the same)
    assert ops["node3"]["memory_bytes"] == 1000 + 320 and edges[("node3", "node4")] == 1000
    # a description containing " -- " and a trailing stage_id still parse
    assert ops["node5"]["kind"] == "Lambda" and ops["node6"]["kind"] == "Classifier"


def test_pipedream_zero_input_time():
    result = import_pipedream(PIPEDREAM, zero_input_time=True, name="toy")
    assert result.totals.time_ms == pytest.approx(10.375)
    assert by_id(result)["node1"]["time_ms"] == 0.0
    assert result.warnings == [] and result.document["name"] == "toy"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a -- Input -- forward_compute_time=1, backward_compute_time=x, activation_size=1, parameter_size=0",
         "graph.txt:1 (layer a): backward_compute_time='x' is not a number"),
        (LAYER.format("a").replace("=8", "=-4"),
         "graph.txt:1 (layer a): activation_size=-4 must be a finite non-negative number"),
        ("a -- Input -- forward_compute_time=1, backward_compute_time=1, activation_size=4",
         "graph.txt:1 (layer a): missing parameter_size"),
        ("a -- Input -- stuff", "graph.txt:1: expected 'ID -- DESCRIPTION -- forward_compute_time="),
        (LAYER.format("a") + "\n\ta -- b", "graph.txt:2: edge a -- b names unknown layer 'b'"),
        (LAYER.format("a") + "\n" + LAYER.format("a"), "graph.txt:2: layer 'a' is already defined on line 1"),
        ("", "no layer lines found"),
    ],
)
def test_pipedream_malformed_lines_name_the_line(tmp_path, text, message):
    path = tmp_path / "graph.txt"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        import_pipedream(path)
    assert message in str(info.value)


def test_pipedream_cycle_and_duplicate_edges(tmp_path):
    path = tmp_path / "graph.txt"
    path.write_text("\n".join([LAYER.format("a"), LAYER.format("b"), "\ta -- b", "\ta -- b"]))
    result = import_pipedream(path)
    assert result.totals.edges == 4 and result.warnings == ["1 duplicate edge line(s) ignored"]
    path.write_text("\n".join([LAYER.format("a"), LAYER.format("b"), "\ta -- b", "\tb -- a"]))
    with pytest.raises(InvalidGraphError, match="cycle"):
        import_pipedream(path)


def test_pipedream_missing_file(tmp_path):
    with pytest.raises(InputError, match="cannot read PipeDream profile"):
        import_pipedream(tmp_path / "nope.txt")


# ----------------------------------------------------------------------------- msr-fiddle


def test_msr_sample_totals_match_the_file():
    result = import_msr(MSR)
    t = result.totals
    assert (t.ops, t.edges) == (8, 7)
    assert t.time_ms == pytest.approx(1.5 + 2.25 + 4.5 + 0.125 + 0.0625)  # fpgaLatency, cpuLatency ignored
    # forward sizes, plus the backward nodes with no forward node in their class (250 + 64)
    assert t.memory_bytes == 1000 + 3000 + 500 + 250 + 64
    assert t.edge_bytes == 4096 + 2048 * 3 + 4096 + 1024  # edge sizes; cost ignored; no size -> 0
    assert len(result.warnings) == 2
    assert "AccumulateGrad_7_grad" in result.warnings[0] and "no size" in result.warnings[1]


def test_msr_mapping():
    result = import_msr(MSR)
    ops = by_id(result)
    assert ops["node2grad"] == {"id": "node2grad", "kind": "backward", "time_ms": 4.5, "memory_bytes": 0,
                                "group": "class2"}
    assert ops["node2"]["group"] == "class2" and ops["node2"]["memory_bytes"] == 3000
    assert ops["node3"]["time_ms"] == 0.0  # zero-time nodes stay valid
    assert "group" not in ops["AccumulateGrad_7_grad"]
    assert ops["AdamOptimizer_w"]["memory_bytes"] == 64  # backward-only class keeps its size
    assert edge_map(result)[("node2", "node3")] == 2048


def test_msr_count_backward_memory():
    result = import_msr(MSR, count_backward_memory=True)
    assert result.totals.memory_bytes == 4814 + 500 + 3000 + 1000


def _msr_doc(**changes):
    doc = json.loads(MSR.read_text())
    for key, value in changes.items():
        doc[key] = value
    return doc


def test_msr_ids_fall_back_to_numbers_and_duplicates_merge():
    doc = _msr_doc()
    doc["nodes"][1]["name"] = "node1"  # two nodes named node1
    doc["edges"].append({"sourceId": 1, "destId": 2, "cost": 0.0, "size": 4.0})
    result = import_msr(doc)
    assert set(by_id(result)) == {f"n{i}" for i in range(1, 9)}
    assert edge_map(result)[("n1", "n2")] == 4100
    assert "1 duplicate edge(s) merged (their sizes summed)" in result.warnings
    assert result.document["name"] == "dnn-partitioning"


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["nodes"][2].pop("fpgaLatency"), "nodes[2] (id 3): missing fpgaLatency"),
        (lambda d: d["nodes"][1].update(size=-1), "nodes[1] (id 2): size=-1 must be a finite non-negative"),
        (lambda d: d["nodes"][0].update(isBackwardNode="no"), "nodes[0] (id 1): isBackwardNode='no' is not"),
        (lambda d: d["nodes"][4].update(id=1), "nodes[4] (id 1): duplicate id, first at nodes[0]"),
        (lambda d: d["edges"][1].update(destId=42), "edges[1] (2 -> 42): destId names unknown node 42"),
        (lambda d: d["edges"][0].pop("sourceId"), "edges[0]: missing sourceId"),
        (lambda d: d.pop("edges"), "missing or invalid 'edges'"),
    ],
)
def test_msr_malformed_input_names_the_node_or_edge(mutate, message):
    doc = _msr_doc()
    mutate(doc)
    with pytest.raises(InputError) as info:
        import_msr(doc)
    assert message in str(info.value)


def test_msr_cycle_is_rejected():
    doc = _msr_doc()
    doc["edges"].append({"sourceId": 3, "destId": 1, "cost": 0.0, "size": 1.0})
    with pytest.raises(InvalidGraphError, match="cycle"):
        import_msr(doc)


# ----------------------------------------------------------------------------- cost formulas


def test_cost_formulas_by_hand():
    # LSTM, 5 steps, batch 2, 3 inputs, 4 hidden: per step 2*4*4*(3+4) + 9*4 = 260
    assert rnn_flops("lstm", 5, 2, 3, 4) == 260 * 10
    # 2 layers bidirectional GRU: layer 2 reads 2 x hidden
    layer1, layer2 = 2 * 3 * 4 * (3 + 4) + 8 * 4, 2 * 3 * 4 * (8 + 4) + 8 * 4
    assert rnn_flops("gru", 1, 1, 3, 4, directions=2, layers=2) == 2 * layer1 + 2 * layer2
    assert attention_flops(2, 4, 6, 8, 8) == 2 * 48 * 8 * 2 + 48 * 6
    assert einsum_flops("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)], (2, 3, 5)) == 2 * 30 * 4
    assert einsum_flops("...ij,...jk", [(7, 3, 4), (7, 4, 5)], (7, 3, 5)) == 2 * 105 * 4


# ----------------------------------------------------------------------------- ONNX (hand-built)

@pytest.fixture
def onnx_mod():
    return pytest.importorskip("onnx")


def _cnn(onnx_mod, batch="2"):
    """Conv(3->4, 3x3, pad 1) -> Relu -> MaxPool 2x2 -> Reshape [2, 64] -> Gemm(64->10) -> Softmax."""
    import numpy as np
    from onnx import TensorProto as T
    from onnx import helper, numpy_helper

    dim = int(batch) if batch.isdigit() else batch
    x = helper.make_tensor_value_info("x", T.FLOAT, [dim, 3, 8, 8])
    y = helper.make_tensor_value_info("y", T.FLOAT, None)
    inits = [
        numpy_helper.from_array(np.zeros((4, 3, 3, 3), np.float32), "w"),
        numpy_helper.from_array(np.zeros(4, np.float32), "b"),
        numpy_helper.from_array(np.array([-1, 64], np.int64), "shape"),
        numpy_helper.from_array(np.zeros((10, 64), np.float32), "wg"),
        numpy_helper.from_array(np.zeros(10, np.float32), "bg"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Reshape", ["p", "shape"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "wg", "bg"], ["g"], name="fc", transB=1),
        helper.make_node("Softmax", ["g"], ["y"], name="softmax"),
    ]
    graph = helper.make_graph(nodes, "cnn", [x], [y], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_onnx_cnn_costs_by_hand(onnx_mod):
    from placer.importers.onnx_model import import_onnx

    result = import_onnx(_cnn(onnx_mod))
    ops = by_id(result)
    assert list(ops) == ["conv", "relu", "pool", "fc", "softmax"]  # the Reshape is folded
    assert ops["conv"]["flops"] == 2 * (2 * 4 * 8 * 8) * 27
    assert ops["relu"]["flops"] == 512
    assert ops["pool"]["flops"] == 128 * 4
    assert ops["fc"]["flops"] == 2 * 2 * 10 * 64
    assert ops["softmax"]["flops"] == 5 * 20
    assert result.totals.flops == 27648 + 512 + 512 + 2560 + 100
    # input 1536 + weights 432 + bias 16 + output 2048
    assert ops["conv"]["bytes_accessed"] == 1536 + 432 + 16 + 2048
    # every initializer is memory exactly once: the Reshape's shape moves on to the Gemm
    assert ops["conv"]["memory_bytes"] == 448 and ops["fc"]["memory_bytes"] == 2560 + 40 + 16
    assert result.totals.memory_bytes == 432 + 16 + 16 + 2560 + 40
    assert edge_map(result) == {("conv", "relu"): 2048, ("relu", "pool"): 2048, ("pool", "fc"): 512,
                                ("fc", "softmax"): 80}
    assert result.warnings == []


def test_onnx_keep_views(onnx_mod):
    from placer.importers.onnx_model import import_onnx

    result = import_onnx(_cnn(onnx_mod), keep_views=True)
    ops, edges = by_id(result), edge_map(result)
    assert ops["flatten"]["flops"] == 0 and ops["flatten"]["memory_bytes"] == 16
    assert edges[("pool", "flatten")] == 512 and edges[("flatten", "fc")] == 512
    assert result.totals.memory_bytes == 3064


def test_onnx_training_graph(onnx_mod):
    from placer.importers.onnx_model import import_onnx

    forward = 27648 + 512 + 512 + 2560 + 100
    sgd = import_onnx(_cnn(onnx_mod), training=True, optimizer="sgd")
    ops = by_id(sgd)
    assert sgd.totals.ops == 5 + 5 + 2  # forward, backward, an update for conv and fc
    # backward: 2 x forward for ops with parameters, 1 x for the rest; sgd 2 FLOPs per parameter
    # (conv 108 + 4, fc 640 + 10; the int64 shape constant is not a parameter)
    assert sgd.totals.flops == forward + (2 * 27648 + 512 + 512 + 2 * 2560 + 100) + 2 * (112 + 650)
    assert ops["fc.bwd"]["group"] == "fc" and ops["fc.update"]["group"] == "fc"
    assert ops["fc.update"]["bytes_accessed"] == 3 * 2600
    # weights + saved outputs, gradients of the parameters, no optimizer state
    assert sgd.totals.memory_bytes == 3064 + (2048 + 2048 + 512 + 80 + 80) + (448 + 2600)
    edges = edge_map(sgd)
    assert edges[("fc.bwd", "pool.bwd")] == 512 and edges[("fc", "fc.bwd")] == 0
    adam = import_onnx(_cnn(onnx_mod), training=True)
    assert adam.totals.memory_bytes == sgd.totals.memory_bytes + 2 * (448 + 2600)
    assert by_id(adam)["conv.update"]["flops"] == 12 * 112


def test_onnx_symbolic_dims(onnx_mod):
    from placer.importers.onnx_model import import_onnx, parse_dims

    guessed = import_onnx(_cnn(onnx_mod, batch="N"))
    assert guessed.warnings == [
        "symbolic dimensions taken as 1 (set them with --dim NAME=SIZE): N",
        "1 dimension(s) that shape inference could not resolve taken as 1",  # Reshape's -1 of N x 64
    ]
    assert by_id(guessed)["relu"]["flops"] == 256
    sized = import_onnx(_cnn(onnx_mod, batch="N"), dims=parse_dims(["N=2"]))
    assert sized.warnings == [] and by_id(sized)["relu"]["flops"] == 512
    with pytest.raises(InputError, match="--dim 'N=0'"):
        parse_dims(["N=0"])


def _single(onnx_mod, node, inputs, outputs, opset=17, initializers=()):
    from onnx import helper

    graph = helper.make_graph([node], "g", inputs, outputs, initializer=list(initializers))
    imports = [helper.make_opsetid("", opset), helper.make_opsetid("custom.ops", 1)]
    return helper.make_model(graph, opset_imports=imports)


def test_onnx_unknown_op_is_costed_by_bytes_with_a_warning(onnx_mod):
    from onnx import TensorProto as T
    from onnx import helper

    from placer.importers.onnx_model import import_onnx

    a = helper.make_tensor_value_info("a", T.FLOAT, [4, 8])
    b = helper.make_tensor_value_info("b", T.FLOAT, [4, 8])
    relu = helper.make_node("Relu", ["a"], ["r"], name="relu")
    odd = helper.make_node("Frobnicate", ["r"], ["b"], name="odd", domain="custom.ops")
    graph = helper.make_graph([relu, odd], "g", [a], [b],
                              value_info=[helper.make_tensor_value_info("r", T.FLOAT, [4, 8])])
    imports = [helper.make_opsetid("", 17), helper.make_opsetid("custom.ops", 1)]
    model = helper.make_model(graph, opset_imports=imports)
    result = import_onnx(model)
    odd_op = by_id(result)["odd"]
    assert odd_op["flops"] == 0 and odd_op["bytes_accessed"] == 128 + 128
    assert result.warnings == [
        "op types without a FLOP formula, costed by bytes moved only: custom.ops.Frobnicate x1"
    ]


def test_onnx_lstm_and_attention_blocks(onnx_mod):
    import numpy as np
    from onnx import TensorProto as T
    from onnx import helper, numpy_helper

    from placer.importers.onnx_model import import_onnx

    x = helper.make_tensor_value_info("x", T.FLOAT, [5, 2, 3])
    y = helper.make_tensor_value_info("y", T.FLOAT, None)
    inits = [numpy_helper.from_array(np.zeros(s, np.float32), n)
             for n, s in (("W", (1, 16, 3)), ("R", (1, 16, 4)), ("B", (1, 32)))]
    lstm = helper.make_node("LSTM", ["x", "W", "R", "B"], ["y"], name="lstm", hidden_size=4)
    result = import_onnx(_single(onnx_mod, lstm, [x], [y], initializers=inits))
    assert by_id(result)["lstm"]["flops"] == 2600
    assert by_id(result)["lstm"]["memory_bytes"] == 4 * (48 + 64 + 32)

    # scaled dot-product attention from building blocks: Q K^T / sqrt(d), softmax, times V
    q = helper.make_tensor_value_info("q", T.FLOAT, [2, 4, 8])
    k = helper.make_tensor_value_info("k", T.FLOAT, [2, 4, 8])
    v = helper.make_tensor_value_info("v", T.FLOAT, [2, 4, 8])
    o = helper.make_tensor_value_info("o", T.FLOAT, None)
    nodes = [
        helper.make_node("Transpose", ["k"], ["kt"], name="kt", perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["s"], name="qk"),
        helper.make_node("Div", ["s", "scale"], ["sd"], name="scale"),
        helper.make_node("Softmax", ["sd"], ["p"], name="softmax", axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["o"], name="pv"),
    ]
    scale = numpy_helper.from_array(np.array(8 ** 0.5, np.float32), "scale")
    graph = helper.make_graph(nodes, "attn", [q, k, v], [o], initializer=[scale])
    result = import_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    ops = by_id(result)
    assert [ops[n]["flops"] for n in ("kt", "qk", "scale", "softmax", "pv")] == [0, 512, 32, 160, 512]
    assert ops["kt"]["bytes_accessed"] == 2 * 256  # a transpose is a copy in ONNX

    # the fused ONNX Attention op (opset 23)
    qq = helper.make_tensor_value_info("q", T.FLOAT, [1, 2, 4, 8])
    kk = helper.make_tensor_value_info("k", T.FLOAT, [1, 2, 6, 8])
    vv = helper.make_tensor_value_info("v", T.FLOAT, [1, 2, 6, 8])
    attention = helper.make_node("Attention", ["q", "k", "v"], ["o"], name="attn")
    result = import_onnx(_single(onnx_mod, attention, [qq, kk, vv], [o], opset=23))
    assert by_id(result)["attn"]["flops"] == attention_flops(2, 4, 6, 8, 8) == 1824


def test_onnx_shape_arithmetic_is_evaluated(onnx_mod):
    """A reshape target computed with Mod (which ONNX data propagation does not evaluate)."""
    import numpy as np
    from onnx import TensorProto as T
    from onnx import helper, numpy_helper

    from placer.importers.onnx_model import import_onnx

    def const(name, value):
        tensor = numpy_helper.from_array(np.array(value, np.int64))
        return helper.make_node("Constant", [], [name], value=tensor)

    x = helper.make_tensor_value_info("x", T.FLOAT, [2, 6])
    y = helper.make_tensor_value_info("y", T.FLOAT, None)
    nodes = [
        const("seven", 7), const("four", 4), const("zero", 0), const("axes", [0]), const("rest", [-1]),
        helper.make_node("Shape", ["x"], ["shape"], name="shape"),
        helper.make_node("Gather", ["shape", "zero"], ["batch"], name="batch"),
        helper.make_node("Mod", ["seven", "four"], ["three"], name="mod"),
        helper.make_node("Unsqueeze", ["batch", "axes"], ["batch1"], name="u1"),
        helper.make_node("Unsqueeze", ["three", "axes"], ["three1"], name="u2"),
        helper.make_node("Concat", ["batch1", "three1", "rest"], ["target"], name="target", axis=0),
        helper.make_node("Reshape", ["x", "target"], ["r"], name="reshape"),
        helper.make_node("MatMul", ["r", "w"], ["y"], name="matmul"),
    ]
    w = numpy_helper.from_array(np.zeros((2, 5), np.float32), "w")
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y], initializer=[w]),
                              opset_imports=[helper.make_opsetid("", 17)])
    plain = onnx_mod.shape_inference.infer_shapes(model, data_prop=True)
    r_dims = [vi.type.tensor_type.shape.dim for vi in plain.graph.value_info if vi.name == "r"]
    assert not r_dims or not all(d.HasField("dim_value") for d in r_dims[0])  # inference alone fails
    result = import_onnx(model)
    assert result.warnings == []
    assert [(op["id"], op["flops"]) for op in result.document["ops"]] == [("matmul", 2 * (2 * 3 * 5) * 2)]
    assert len(model.graph.node) == 13  # the caller's model is left alone


def test_onnx_bad_files(tmp_path, onnx_mod):
    from placer.importers.onnx_model import import_onnx

    with pytest.raises(InputError, match="no such file"):
        import_onnx(tmp_path / "missing.onnx")
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"\x08\x07garbage\xff\xff\xff")
    with pytest.raises(InputError, match="not a readable ONNX model"):
        import_onnx(broken)


# ----------------------------------------------------------------------------- PyTorch

MODEL_FILE = '''
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn = torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(8 * 4 * 4, 10)

    def forward(self, x):
        h = torch.relu(self.bn(self.conv(x)))
        h = torch.nn.functional.max_pool2d(h, 2)
        return torch.softmax(self.fc(h.flatten(1)), dim=-1)

def build():
    torch.manual_seed(0)
    return Net().eval(), (torch.randn(2, 3, 8, 8),)
'''


@pytest.fixture(scope="module")
def torch_mod():
    return pytest.importorskip("torch")


@pytest.fixture
def model_file(tmp_path):
    path = tmp_path / "netdef.py"
    path.write_text(MODEL_FILE)
    return path


MATMUL_KINDS = {"conv2d", "linear", "mm", "addmm", "bmm", "matmul", "Conv", "Gemm", "MatMul"}


def _flop_counter_total(torch_mod, model, args):
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        model(*args)
    return counter.get_total_flops()


def test_torch_import_matches_flop_counter_and_parameters(torch_mod, model_file):
    from placer.importers.torch_model import import_torch, load_source

    model, args, _ = load_source(f"{model_file}:build")
    result = import_torch(f"{model_file}:build")
    ops = by_id(result)
    assert result.document["name"] == "build" and result.warnings == []
    matmul = sum(op["flops"] for op in ops.values() if op["kind"] in MATMUL_KINDS)
    assert matmul == _flop_counter_total(torch_mod, model, args) == 2 * (2 * 8 * 64) * 27 + 2 * 2 * 10 * 128
    assert ops["relu"]["flops"] == 2 * 8 * 64 and ops["softmax"]["flops"] == 5 * 20
    assert ops["max_pool2d"]["flops"] == 2 * 8 * 16 * 4
    # parameters and the batch-norm running statistics it reads, each once
    resident = sum(p.numel() * p.element_size() for p in model.parameters())
    resident += sum(b.numel() * b.element_size() for n, b in model.named_buffers() if "running" in n)
    assert result.totals.memory_bytes == resident
    assert "flatten" not in ops  # a view, folded
    assert edge_map(result)[("max_pool2d", "fc/linear")] == 2 * 128 * 4
    assert {"conv/conv2d", "bn/batch_norm", "fc/linear"} <= set(ops)  # module paths kept


def test_torch_lstm_attention_and_training(torch_mod):
    from placer.importers.torch_model import import_torch

    class Block(torch_mod.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch_mod.nn.LSTM(3, 4)

        def forward(self, x, q):
            out, _ = self.lstm(x)
            return out.sum() + torch_mod.nn.functional.scaled_dot_product_attention(q, q, q).sum()

    args = (torch_mod.randn(5, 2, 3), torch_mod.randn(1, 2, 4, 8))
    result = import_torch((Block(), args))
    ops = by_id(result)
    assert ops["lstm/lstm"]["flops"] == 2600
    assert ops["scaled_dot_product_attention"]["flops"] == attention_flops(2, 4, 4, 8, 8)
    assert "getitem" not in " ".join(ops)  # unused LSTM state outputs are dropped
    training = import_torch((Block(), args), training=True, optimizer="momentum")
    t_ops = by_id(training)
    assert t_ops["lstm/lstm.bwd"]["flops"] == 2 * 2600 and t_ops["lstm/lstm.update"]["flops"] == 4 * (48 + 64 + 32)
    assert t_ops["lstm/lstm.update"]["memory_bytes"] == 4 * (48 + 64 + 32)  # one momentum buffer
    # fused attention's backward: 2.5x its forward (recomputed scores, five matmuls to two)
    sdpa = t_ops["scaled_dot_product_attention"]["flops"]
    assert t_ops["scaled_dot_product_attention.bwd"]["flops"] == 2.5 * sdpa
    assert "sum_1.update" not in t_ops


def test_torch_bad_sources(tmp_path, torch_mod, model_file):
    from placer.importers.torch_model import import_torch

    with pytest.raises(InputError, match="expected MODULE:CALLABLE"):
        import_torch("no_colon_here")
    with pytest.raises(InputError, match="has no callable 'nothing'"):
        import_torch(f"{model_file}:nothing")
    with pytest.raises(InputError, match="no such file"):
        import_torch(f"{tmp_path / 'missing.py'}:build")
    with pytest.raises(InputError, match="importing no_such_module_xyz failed"):
        import_torch("no_such_module_xyz:build")
    with pytest.raises(InputError, match="expected a torch.nn.Module"):
        import_torch((object(), ()))


def test_onnx_exported_from_torch(tmp_path, torch_mod, onnx_mod, model_file):
    from onnx import numpy_helper

    from placer.importers.onnx_model import import_onnx
    from placer.importers.torch_model import load_source

    model, args, _ = load_source(f"{model_file}:build")
    path = tmp_path / "net.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch_mod.onnx.export(model, args, str(path), dynamo=False)
    result = import_onnx(path)
    ops = by_id(result)
    # the exporter folds the batch norm into the convolution (which gains a bias)
    matmul = sum(op["flops"] for op in ops.values() if op["kind"] in MATMUL_KINDS)
    assert matmul == _flop_counter_total(torch_mod, model, args)
    stored = onnx_mod.load(str(path))
    weights = sum(numpy_helper.to_array(t).nbytes for t in stored.graph.initializer)
    weights += sum(numpy_helper.to_array(a.t).nbytes for n in stored.graph.node if n.op_type == "Constant"
                   for a in n.attribute if a.name == "value")
    assert result.totals.memory_bytes == weights
    assert result.document["name"] == "net"


# ----------------------------------------------------------------------------- CLI


def test_cli_import_pipedream(tmp_path, capsys):
    out = tmp_path / "g.json"
    argv = ["import", "pipedream", str(PIPEDREAM), "-o", str(out), "--zero-input-time", "--name", "pd"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "12 ops, 18 edges, 10.375 ms total time" in captured.out and "0 warnings" in captured.out
    doc = json.loads(out.read_text())
    assert doc["name"] == "pd" and parse_graph(doc).ops[0].id == "node1"


def test_cli_import_msr_warnings_on_stderr(tmp_path, capsys):
    out = tmp_path / "g.json"
    assert main(["import", "msr", str(MSR), "-o", str(out), "--count-backward-memory"]) == 0
    captured = capsys.readouterr()
    assert "8 ops, 7 edges" in captured.out and "2 warnings" in captured.out
    assert captured.err.count("placer: warning:") == 2


def test_cli_import_bad_input_exits_2(tmp_path, capsys):
    bad = tmp_path / "graph.txt"
    bad.write_text("a -- b -- c\n")
    assert main(["import", "pipedream", str(bad), "-o", str(tmp_path / "g.json")]) == 2
    assert f"{bad}:1" in capsys.readouterr().err
    assert not (tmp_path / "g.json").exists()


def test_cli_import_onnx(tmp_path, capsys, onnx_mod):
    from onnx import save

    model_path = tmp_path / "cnn.onnx"
    save(_cnn(onnx_mod, batch="N"), str(model_path))
    out = tmp_path / "g.json"
    assert main(["import", "onnx", str(model_path), "-o", str(out), "--dim", "N=2", "--training"]) == 0
    assert "imported onnx" in capsys.readouterr().out
    doc = json.loads(out.read_text())
    assert len(doc["ops"]) == 12 and doc["name"] == "cnn"


def test_cli_import_torch(tmp_path, capsys, torch_mod, model_file):
    out = tmp_path / "g.json"
    assert main(["import", "torch", f"{model_file}:build", "-o", str(out), "--optimizer", "sgd"]) == 0
    assert "GFLOPs" in capsys.readouterr().out
    assert parse_graph(json.loads(out.read_text())).name == "build"


def test_import_graph_dispatch():
    assert KINDS == ("onnx", "torch", "pipedream", "msr")
    assert import_graph("msr", MSR).totals.ops == 8
    with pytest.raises(InputError, match="unknown import kind 'caffe'"):
        import_graph("caffe", "x")


def test_tied_weights_give_every_reader_a_weight_gradient(onnx_mod, torch_mod):
    """A weight shared by two MatMuls is held once, but both backward ops compute its gradient."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    from placer.importers.onnx_model import import_onnx
    from placer.importers.torch_model import import_torch

    # 48 x 48 weights: too big for the importer to fold Transpose(w) into a constant of its own
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 48])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 48])
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="first"),
             helper.make_node("Transpose", ["w"], ["wt"], name="wt"),
             helper.make_node("MatMul", ["h", "wt"], ["y"], name="second")]
    w = numpy_helper.from_array(np.zeros((48, 48), np.float32), "w")
    model = helper.make_model(helper.make_graph(nodes, "tied", [x], [y], initializer=[w]),
                              opset_imports=[helper.make_opsetid("", 17)])
    ops = by_id(import_onnx(model, training=True))
    matmul = 2 * 4 * 48 * 48
    assert ops["first.bwd"]["flops"] == ops["second.bwd"]["flops"] == 2 * matmul  # was 1x for "second"
    assert ops["first"]["memory_bytes"] == 48 * 48 * 4 + 4 * 48 * 4 and "second.update" not in ops

    class Tied(torch_mod.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch_mod.nn.Embedding(10, 8)
            self.out = torch_mod.nn.Linear(8, 10, bias=False)
            self.out.weight = self.embed.weight

        def forward(self, tokens):
            return self.out(self.embed(tokens))

    t_ops = by_id(import_torch((Tied(), (torch_mod.zeros(2, 3, dtype=torch_mod.long),)), training=True))
    assert t_ops["out/linear.bwd"]["flops"] == 2 * t_ops["out/linear"]["flops"] == 2 * (2 * 6 * 8 * 10)
    assert "out/linear.update" not in t_ops and "embed/embedding.update" in t_ops
