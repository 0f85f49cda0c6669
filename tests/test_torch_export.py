"""Plans a PyTorch user can run: export, profile and measure (issue 13), on CPU.

Every plan device maps to the CPU, so the placed module runs here; its outputs and parameter
gradients must equal the original model's (float32, tight tolerance) for single-device,
multi-device and split plans. Models are built in the tests; no weights are downloaded.
"""
from __future__ import annotations

import importlib.util
import json
import sys
import warnings
from pathlib import Path

import pytest

from placer.cli import main
from placer.errors import InputError

torch = pytest.importorskip("torch")

from placer.export.plan import read_plan
from placer.export.torch_file import write_placed_file
from placer.export.torch_module import PlanExportError, placed_module
from placer.importers.torch_capture import capture_torch
from placer.importers.torch_model import import_torch

MODELS = '''
import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(12, 16), nn.Linear(16, 16), nn.Linear(16, 4)

    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


class BranchyCNN(nn.Module):
    """Two convolution branches joined by a concatenation and a residual add; BatchNorm trains."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.left = nn.Conv2d(8, 4, 1)
        self.right = nn.Conv2d(8, 4, 3, padding=1)
        self.head = nn.Linear(8 * 4 * 4, 5)

    def forward(self, x):
        h = torch.relu(self.bn(self.stem(x)))
        h = torch.cat([self.left(h), self.right(h)], dim=1) + h
        h = nn.functional.max_pool2d(h, 2)
        return self.head(h.flatten(1))


class TiedLM(nn.Module):
    """A transformer encoder whose output projection shares the embedding's weight."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 16)
        layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.lm_head = nn.Linear(16, 50, bias=False)
        self.lm_head.weight = self.embed.weight

    def forward(self, tokens):
        return {"logits": self.lm_head(self.encoder(self.embed(tokens)))}


class Constants(nn.Module):
    """A plain tensor attribute, a non-persistent buffer, a keyword input and a tuple output."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(32, 32)
        self.scale = torch.linspace(0.5, 2.0, 32)
        self.register_buffer("shift", torch.ones(32), persistent=False)

    def forward(self, x, y):
        return self.fc(x) * self.scale + self.shift, (y * 2.0).sum()


def consts():
    torch.manual_seed(3)
    return Constants(), (torch.randn(8, 32),), {"y": torch.randn(16)}


def mlp():
    torch.manual_seed(0)
    return MLP().train(), (torch.randn(8, 12),)


def cnn():
    torch.manual_seed(1)
    return BranchyCNN().train(), (torch.randn(4, 3, 8, 8),)


def tied_lm():
    torch.manual_seed(2)
    return TiedLM().train(), {"tokens": torch.randint(0, 50, (4, 6))}
'''

BUILDERS = ("mlp", "cnn", "tied_lm", "consts")


@pytest.fixture(scope="module")
def models_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "models.py"
    path.write_text(MODELS)
    return path


EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "torch" / "branchy_cnn.py"


def _fresh(models_file, builder):
    """The model and inputs exactly as a fresh call of the source builds them."""
    from placer.importers.torch_capture import load_source

    return load_source(f"{models_file}:{builder}")


def _outputs(out):
    if isinstance(out, dict):
        return list(out.values())
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _run(model, args, kwargs):
    out = _outputs(model(*args, **kwargs))
    sum(o.float().square().sum() for o in out).backward()
    return [o.detach() for o in out], {n: p.grad for n, p in model.named_parameters()}


def _assert_same_as_original(placed, models_file, builder):
    model, args, kwargs = _fresh(models_file, builder)
    want_out, want_grads = _run(model, args, kwargs)
    got_out, got_grads = _run(placed, args, kwargs)
    for got, want in zip(got_out, want_out, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    assert set(got_grads) == set(want_grads)
    # float32 sums taken in another order (split tasks, copies) differ by rounding: relative to
    # the largest gradient, since some gradients are exactly zero in real arithmetic (the key
    # bias of attention) and only rounding noise in float32
    scale = max(float(g.abs().max()) for g in want_grads.values())
    for name, grad in want_grads.items():
        torch.testing.assert_close(got_grads[name], grad, rtol=1e-4, atol=1e-6 * max(scale, 1.0),
                                   msg=lambda m, name=name: f"{name}: {m}")
    # buffers (BatchNorm running statistics, num_batches_tracked) updated the same way
    placed_buffers = dict(placed.named_buffers())
    for name, buffer in model.named_buffers():
        torch.testing.assert_close(placed_buffers[name], buffer, msg=name)


def _load(path):
    spec = importlib.util.spec_from_file_location(f"placed_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _training_ids(models_file, builder):
    capture = capture_torch(f"{models_file}:{builder}")
    document = import_torch(capture, training=True).document
    return capture, [op["id"] for op in document["ops"]]


def _spread(ids, devices):
    """A multi-device plan: forward ops round-robin, .bwd and .update with their forward op."""
    placement, forward = {}, [i for i in ids if not i.endswith((".bwd", ".update"))]
    for k, op in enumerate(forward):
        placement[op] = devices[k % len(devices)]
    for op in ids:
        if op not in placement:
            placement[op] = placement[op.rsplit(".", 1)[0]]
    return placement


@pytest.mark.parametrize("builder", BUILDERS)
@pytest.mark.parametrize("devices", [("gpu0",), ("gpu0", "gpu1", "gpu2")], ids=["single", "multi"])
def test_exported_file_matches_the_original(tmp_path, models_file, builder, devices):
    capture, ids = _training_ids(models_file, builder)
    plan = read_plan({"placement": _spread(ids, devices)})
    path = write_placed_file(capture, plan, f"{models_file}:{builder}", "plan.json", tmp_path / "placed.py")
    placed = _load(path).build_placed()
    assert isinstance(placed, torch.fx.GraphModule)
    if len(devices) > 1:
        assert ".to(" in placed.code  # tensors cross devices where the plan has transfers
    _assert_same_as_original(placed, models_file, builder)


def test_parameters_live_on_the_device_of_their_owner(models_file):
    capture, ids = _training_ids(models_file, "tied_lm")
    placement = _spread(ids, ("gpu0", "gpu1"))
    placed = placed_module(capture, read_plan(placement))
    from placer.export.torch_module import place_graph

    weights = place_graph(capture, read_plan(placement)).weights
    # the tied weight is held once, by its first reader (the embedding)
    assert "lm_head.weight" not in weights and weights["embed.weight"][1] == placement["embed/embedding"]
    assert "embed.weight" in dict(placed.named_parameters())


SPLITS = [
    ("mlp", {"fc1/linear": ("sample", 2), "fc2/linear": ("channel", 2), "relu_1": ("channel", 4),
             "fc3/linear": ("input_channel", 4)}),
    ("cnn", {"stem/conv2d": ("sample", 2), "bn/batch_norm": ("channel", 4), "relu": ("sample", 4),
             "right/conv2d": ("channel", 2), "max_pool2d": ("channel", 2), "head/linear": ("channel", 5)}),
    ("tied_lm", {"embed/embedding": ("sample", 2), "encoder.layers.0.linear1/linear": ("channel", 4),
                 "encoder.layers.0.linear2/linear": ("input_channel", 2),
                 "encoder.layers.0.self_attn/scaled_dot_product_attention": ("heads", 2),
                 "encoder.layers.1.self_attn/scaled_dot_product_attention": ("sample", 4),
                 "encoder.layers.1.norm1/layer_norm": ("sample", 4), "lm_head/linear": ("sample", 2)}),
]


@pytest.mark.parametrize(("builder", "cuts"), SPLITS, ids=[b for b, _ in SPLITS])
def test_split_plans_match_the_original(tmp_path, models_file, builder, cuts):
    capture, ids = _training_ids(models_file, builder)
    devices = ("gpu0", "gpu1", "gpu2", "gpu3", "gpu4")
    splits = {op: {"dim": dim, "degree": d, "devices": list(devices[-d:])} for op, (dim, d) in cuts.items()}
    splits.update({f"{op}.bwd": spec for op, spec in splits.items()})  # as `solve --split` writes them
    plan = read_plan({"placement": _spread(ids, ("gpu0", "gpu1")), "splits": splits})
    path = write_placed_file(capture, plan, f"{models_file}:{builder}", "plan.json", tmp_path / "placed.py")
    placed = _load(path).build_placed()
    assert placed.code.count("torch.ops.aten.split.Tensor") >= len(cuts)
    _assert_same_as_original(placed, models_file, builder)


def test_unexportable_splits_are_clear_errors(models_file):
    capture, ids = _training_ids(models_file, "cnn")
    placement = {op: "gpu0" for op in ids}

    def plan(op, dim, degree):
        return read_plan({"placement": placement, "splits": {op: {"dim": dim, "degree": degree,
                                                                  "devices": [f"gpu{k}" for k in range(degree)]}}})

    with pytest.raises(PlanExportError, match=r"splits.bn/batch_norm: a sample split of batch_norm in training"):
        placed_module(capture, plan("bn/batch_norm", "sample", 2))  # batch statistics in training
    with pytest.raises(PlanExportError, match=r"degree 3 does not divide its sample size 4"):
        placed_module(capture, plan("stem/conv2d", "sample", 3))
    with pytest.raises(PlanExportError, match=r"dim 'height' is not exported"):
        placed_module(capture, plan("stem/conv2d", "height", 2))
    with pytest.raises(PlanExportError, match=r"an? input_channel split of conv2d is not exported"):
        placed_module(capture, plan("stem/conv2d", "input_channel", 2))


def test_plans_and_device_maps_that_do_not_fit(tmp_path, models_file):
    capture, ids = _training_ids(models_file, "mlp")
    with pytest.raises(PlanExportError, match=r"'conv9/conv2d' .* not ops of this model"):
        placed_module(capture, read_plan({**{op: "gpu0" for op in ids}, "conv9/conv2d": "gpu1"}))
    plan = read_plan({op: "gpu0" for op in ids})
    with pytest.raises(InputError, match=r"devices: 'gpu7' not in the plan; its devices are 'gpu0'"):
        placed_module(capture, plan, {"gpu0": "cpu", "gpu7": "cpu"})
    path = write_placed_file(capture, plan, f"{models_file}:mlp", "plan.json", tmp_path / "placed.py")
    module = _load(path)
    with pytest.raises(module.DeviceMapError, match=r"'gpu7' not in the plan"):
        module.build_placed({"gpu7": "cpu"})
    with pytest.raises(module.DeviceMapError, match=r"no torch device for plan device\(s\) 'gpu0'"):
        module.build_placed({})
    with pytest.raises(InputError, match=r"the result is infeasible"):
        read_plan({"format": "placer.result/v1", "status": "infeasible", "solver": "cpsat"})
    with pytest.raises(InputError, match=r"splits.fc1/linear.devices: 1 devices for degree 2"):
        read_plan({"placement": {"fc1/linear": "gpu0"},
                   "splits": {"fc1/linear": {"dim": "sample", "degree": 2, "devices": ["gpu0"]}}})


def test_batch_norm_buffer_update_folds_into_its_owner(models_file):
    capture = capture_torch(f"{models_file}:cnn")
    ops = {op["id"]: op for op in import_torch(capture, training=True).document["ops"]}
    assert not [op for op in ops if "add_" in op]  # no isolated num_batches_tracked update
    bn = ops["bn/batch_norm"]
    # BatchNorm holds weight, bias, running mean and variance (8 floats each), the step counter
    # (an int64) and its output activation (4 x 8 x 8 x 8 floats)
    assert bn["memory_bytes"] == 4 * 4 * 8 + 8 + 4 * 4 * 8 * 8 * 8


def test_profile_times_every_op(models_file):
    from placer.importers.torch_profile import profile_torch
    from placer.schema import DeviceSpec, parse_graph

    capture = capture_torch(f"{models_file}:cnn")
    document = import_torch(capture, training=True, optimizer="sgd").document
    gpu = DeviceSpec(id="ref", peak_tflops=1.0, memory_bandwidth_gb_per_s=100.0)
    rows = profile_torch(capture, document, repeat=1, optimizer="sgd", reference=gpu)
    assert all(op["time_ms"] >= 0.0 and op["flops"] >= 0.0 for op in document["ops"])
    assert sum(op["time_ms"] for op in document["ops"]) > 0.0
    parse_graph(document)  # still a valid graph, now profiled
    kinds = {row.kind for row in rows}
    assert {"conv2d", "conv2d.bwd", "sgd.update", "batch_norm"} <= kinds
    assert sum(row.ops for row in rows) == len(document["ops"])
    assert all(row.analytic_ms is not None for row in rows)


def test_end_to_end_through_the_command_line(tmp_path, capsys):
    """import -> solve -> export -> build_placed(), profile and measure on the README's example."""
    source = f"{EXAMPLE}:build"
    graph, result, placed = tmp_path / "g.json", tmp_path / "r.json", tmp_path / "placed.py"
    assert main(["import", "torch", source, "--training", "-o", str(graph)]) == 0
    assert main(["solve", str(graph), "--hardware", "dgx1_v100_quad", "--deterministic", "--time-limit", "5",
                 "-o", str(result), "-q"]) == 0
    assert main(["export", "torch", source, str(result), "-o", str(placed)]) == 0
    _assert_same_as_original(_load(placed).build_placed(), EXAMPLE, "build")
    measured = tmp_path / "m.json"
    assert main(["measure", source, str(result), "--steps", "2", "--warmup", "1", "-o", str(measured)]) == 0
    report = json.loads(measured.read_text())
    assert report["training"] and report["measured_ms"] > 0
    assert report["predicted_ms"] == json.loads(result.read_text())["makespan_ms"]
    assert "measured" in capsys.readouterr().out
    profiled = tmp_path / "gp.json"
    assert main(["import", "torch", source, "--training", "--profile", "--repeat", "1",
                 "--hardware", "dgx1_v100", "-o", str(profiled)]) == 0
    assert all("time_ms" in op for op in json.loads(profiled.read_text())["ops"])
    assert "ratio" in capsys.readouterr().err
    bad = ["measure", source, str(result), "--devices", '{"gpu42": "cpu"}']
    assert main(bad) == 2 and "'gpu42' not in the plan" in capsys.readouterr().err


def test_export_without_torch_names_the_extra(tmp_path, models_file, monkeypatch, capsys):
    plan = tmp_path / "r.json"
    plan.write_text(json.dumps({"fc1/linear": "gpu0"}))
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` fails as if not installed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(["export", "torch", f"{models_file}:mlp", str(plan), "-o", str(tmp_path / "p.py")])
    assert code == 2 and "pip install 'placer[torch]'" in capsys.readouterr().err


def test_placer_and_its_commands_load_without_torch():
    import subprocess

    code = ("import sys; sys.modules['torch'] = None\n"
            "import placer, placer.cli, placer.export.plan, placer.commands.export, placer.commands.measure\n"
            "placer.cli.main(['export', '--help'])  # argparse exits 0 after printing\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0 and "build_placed" in run.stdout, run.stderr


def test_profiling_on_a_missing_device_is_a_clear_error(models_file):
    from placer.importers.torch_profile import profile_torch

    capture = capture_torch(f"{models_file}:mlp")
    document = import_torch(capture).document
    if not torch.cuda.is_available():
        with pytest.raises(InputError, match=r"--device 'cuda:0': CUDA is not available"):
            profile_torch(capture, document, device="cuda:0")
    with pytest.raises(InputError, match=r"--device 'tpu9': not a torch device"):
        profile_torch(capture, document, device="tpu9")
    with pytest.raises(InputError, match=r"--repeat: expected at least 1 run"):
        profile_torch(capture, document, repeat=0)
