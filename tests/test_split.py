"""Split operators (placer.split): the hand-computed MLP, brute-force optima on tiny graphs,
the validator's rules, the baselines, and the interfaces (CLI, HTTP through the engine)."""
from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from placer.engine import PlaceOptions, place
from placer.errors import InputError
from placer.model import build_problem
from placer.schema import load_json, parse_graph, parse_hardware
from placer.split.check import check_split_result, simulate_split
from placer.split.configs import SplitOptions
from placer.split.plan import SplitProblem
from placer.validate import check_result
from tests.split_reference import brute_force_split

ROOT = Path(__file__).resolve().parents[1]
MLP = ROOT / "examples" / "mlp_split.json"
TWO_GPUS = ROOT / "examples" / "two_gpus_10gbs.json"
OVERHEAD = SplitOptions().task_overhead_ms


def _options(**kw: object) -> PlaceOptions:
    return PlaceOptions(split=True, time_limit_s=20.0, threads=1, seed=0, **kw)


def _mlp():
    return parse_graph(load_json(MLP)), parse_hardware(load_json(TWO_GPUS))


def test_mlp_data_parallel_and_column_then_row_are_as_computed_by_hand() -> None:
    graph, hw = _mlp()
    sp = SplitProblem(build_problem(graph, hw), SplitOptions())
    # data parallel: fc1 2.005, fc2 2.005, loss 0.505, loss.bwd 0.505, fc2.bwd 4.005, fc1.bwd 4.005
    # (ends 13.03); fc2's 40 MB gradient all-reduce 9.025-13.025 (2 steps of 20 MB at 10 GB/s),
    # l2.update 13.03-14.03, fc1's all-reduce 13.03-17.03, l1.update 17.03-18.03
    assert sp.data_parallel().makespan_ms == pytest.approx(18.03)
    names = {n: g for g, n in enumerate(sp.problem.group_names)}

    def config(unit: str, dim: str) -> int:
        return next(i for i, c in enumerate(sp.configs[names[unit]]) if c.dim == dim)

    cfg = [0] * len(sp.configs)
    cfg[names["l1"]], cfg[names["l2"]], cfg[names["loss"]] = (config("l1", "channel"), config("l2", "input_channel"),
                                                              config("loss", "sample"))
    order = list(range(sp.problem.n_ops))
    # column then row: no transfer until fc2's partial sums reach the sample-split loss (10 MB
    # each way, 1 ms), the output gradient goes whole to both fc2.bwd tasks (1 ms), then fc1.bwd
    # reads fc2.bwd's feature slices in place; updates are halves (0.505): 16.04 ms
    assert sp.retime(cfg, order).makespan_ms == pytest.approx(16.04)


def test_mlp_optimum_is_the_brute_force_one_and_beats_both_baselines() -> None:
    graph, hw = _mlp()
    sp = SplitProblem(build_problem(graph, hw), SplitOptions())
    optimum = brute_force_split(sp)
    result = place(graph, hw, _options())
    assert result.status == "optimal"
    assert result.makespan_ms == pytest.approx(optimum, rel=1e-9)
    assert result.makespan_ms == pytest.approx(15.535)
    assert result.baselines.data_parallel_ms == pytest.approx(18.03)
    assert result.baselines.placement_only_ms == pytest.approx(28.0)
    assert result.splits["fc1"].dim == "channel" and result.splits["fc2"].dim == "sample"
    assert check_split_result(graph, hw, result, OVERHEAD) == []
    assert check_result(graph, hw, result) == []
    assert simulate_split(graph, hw, result).makespan_ms == pytest.approx(result.makespan_ms)


def _tiny(seed: int) -> tuple[dict, dict]:
    """3-5 ops, a mix of matmul, relu and a backward/update pair, on 2 devices."""
    rng = random.Random(seed)
    n = rng.randint(3, 5)
    kinds = ["matmul", "relu", "conv2d"]
    ops = []
    for i in range(n):
        kind = rng.choice(kinds)
        op = {"id": f"o{i}", "kind": kind, "time_ms": float(rng.randint(1, 8)),
              "dims": {"sample": 4, "channel": 2 * rng.randint(1, 3)}}
        if kind == "matmul":
            op["dims"]["input_channel"] = 4
        ops.append(op)
    edges = []
    for i in range(1, n):
        for j in sorted(rng.sample(range(i), min(i, rng.randint(1, 2)))):
            edges.append({"src": f"o{j}", "dst": f"o{i}", "bytes": rng.choice([0, 5, 10, 40]) * 1_000_000})
    if rng.random() < 0.5:  # a weight gradient all-reduced before its update
        last = ops[-1]
        last["group"] = "g"
        ops.append({"id": "upd", "kind": "sgd_momentum", "time_ms": 1.0, "group": "g"})
        edges.append({"src": last["id"], "dst": "upd", "bytes": 20_000_000})
        last["kind"] = "matmul_grad"
        last["dims"]["input_channel"] = 4
    graph = {"format": "placer.graph/v1", "name": f"tiny{seed}", "ops": ops, "edges": edges}
    hw = {"format": "placer.hardware/v1", "name": "two", "devices": [{"id": "gpu0"}, {"id": "gpu1"}],
          "links": [{"a": "gpu0", "b": "gpu1", "bandwidth_gb_per_s": 10.0, "latency_us": 0.0}]}
    return graph, hw


@pytest.mark.parametrize("seed", range(8))
def test_cpsat_proves_the_brute_force_optimum(seed: int) -> None:
    raw_graph, raw_hw = _tiny(seed)
    graph, hw = parse_graph(raw_graph), parse_hardware(raw_hw)
    sp = SplitProblem(build_problem(graph, hw), SplitOptions())
    optimum = brute_force_split(sp)
    result = place(graph, hw, _options())
    assert result.status == "optimal"
    assert result.makespan_ms == pytest.approx(optimum, rel=1e-9, abs=1e-9)
    assert result.makespan_ms <= result.baselines.data_parallel_ms + 1e-9
    assert result.makespan_ms <= result.baselines.placement_only_ms + 1e-9
    assert check_split_result(graph, hw, result, OVERHEAD) == []


def test_memory_that_only_a_split_fits() -> None:
    """One op's 12 GB do not fit a 10 GB device: the answer splits it."""
    graph = parse_graph({"ops": [{"id": "big", "kind": "matmul", "time_ms": 4.0, "memory_bytes": 12_000_000_000,
                                  "dims": {"sample": 4, "channel": 4}}]})
    hw = parse_hardware({"devices": [{"id": "a", "memory_bytes": 10_000_000_000},
                                     {"id": "b", "memory_bytes": 10_000_000_000}],
                         "links": [{"a": "a", "b": "b", "bandwidth_gb_per_s": 10.0}]})
    result = place(graph, hw, _options())
    assert result.status == "optimal"
    assert result.splits["big"].degree == 2
    assert max(result.memory_bytes.values()) == 6_000_000_000


def test_the_validator_names_what_a_broken_split_plan_breaks() -> None:
    graph, hw = _mlp()
    result = place(graph, hw, _options())
    late = result.model_copy(deep=True)
    late.schedule[1].start_ms += 0.5  # the second task of fc1 starts later than the first
    assert any("do not start together" in e for e in check_split_result(graph, hw, late, OVERHEAD))
    no_reduce = result.model_copy(deep=True)
    no_reduce.collectives = []
    assert any("has no all-reduce" in e for e in check_split_result(graph, hw, no_reduce, OVERHEAD))
    no_move = result.model_copy(deep=True)
    no_move.transfers = no_move.transfers[1:]
    assert any("no transfer carries them" in e for e in check_split_result(graph, hw, no_move, OVERHEAD))
    ghost = result.model_copy(deep=True)
    ghost.splits["ghost"] = ghost.splits["fc1"]
    assert "splits names unknown op 'ghost'" in check_split_result(graph, hw, ghost, OVERHEAD)
    bad_dim = result.model_copy(deep=True)
    bad_dim.splits["loss"] = bad_dim.splits["loss"].model_copy(update={"dim": "channel"})
    assert any("cannot be split along 'channel'" in e for e in check_split_result(graph, hw, bad_dim, OVERHEAD))


def test_unknown_dimension_is_refused_naming_the_op() -> None:
    with pytest.raises(InputError, match=r"op 'x': dims: unknown dimension 'rows'"):
        parse_graph({"ops": [{"id": "x", "time_ms": 1.0, "dims": {"rows": 4}}]})


def test_milp_back_ends_say_they_do_not_split() -> None:
    graph, hw = _mlp()
    with pytest.raises(InputError, match="does not model split operators") as info:
        place(graph, hw, PlaceOptions(split=True, solver="highs", time_limit_s=5))
    assert info.value.code == "split_unsupported"


def test_without_split_the_answer_has_no_split_fields() -> None:
    graph, hw = _mlp()
    result = place(graph, hw, PlaceOptions(time_limit_s=5, threads=1)).model_dump(mode="json")
    assert "splits" not in result and "collectives" not in result
    assert all("task" not in e for e in result["schedule"])
    assert "data_parallel_ms" not in result["baselines"]


def test_cli_split_prints_the_splits_and_writes_them(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    run = subprocess.run([sys.executable, "-m", "placer.cli", "solve", str(MLP), "--hardware", str(TWO_GPUS),
                          "--split", "--time-limit", "20", "-o", str(out)], capture_output=True, text=True,
                         cwd=ROOT, check=False)
    assert run.returncode == 0, run.stderr
    assert "split ops:" in run.stdout and "collectives:" in run.stdout
    doc = json.loads(out.read_text())
    assert doc["splits"]["fc1"] == {"dim": "channel", "degree": 2, "devices": ["gpu0", "gpu1"]}
    assert {e["task"] for e in doc["schedule"] if e["op"] == "fc1"} == {0, 1}
    assert doc["baselines"]["data_parallel_ms"] == pytest.approx(18.03)


def test_onnx_import_fills_split_dims_and_the_graph_splits() -> None:
    onnx = pytest.importorskip("onnx")
    from placer.importers.onnx_model import import_onnx
    from tests.test_importers import _cnn

    doc = import_onnx(_cnn(onnx, batch="4"), training=True, optimizer="sgd").document
    ops = {op["id"]: op for op in doc["ops"]}
    assert ops["conv"]["dims"] == {"sample": 4, "channel": 4}
    assert ops["fc"]["dims"] == {"sample": 4, "channel": 10, "input_channel": 64}
    assert ops["fc.bwd"]["dims"] == ops["fc"]["dims"] and ops["fc.update"]["weight_bytes"] == 2600
    graph = parse_graph(doc)
    hw = parse_hardware({"devices": [{"id": "a", "peak_tflops": 1e-3, "memory_bandwidth_gb_per_s": 1e-3},
                                     {"id": "b", "peak_tflops": 1e-3, "memory_bandwidth_gb_per_s": 1e-3}],
                         "links": [{"a": "a", "b": "b", "bandwidth_gb_per_s": 10.0}]})
    result = place(graph, hw, _options())
    assert result.splits, "slow devices and a fast link: splitting pays"
    assert result.makespan_ms <= result.baselines.data_parallel_ms + 1e-9
    assert result.makespan_ms < result.baselines.placement_only_ms
    assert check_result(graph, hw, result) == []


def test_torch_import_fills_split_dims() -> None:
    torch = pytest.importorskip("torch")
    from placer.importers.torch_model import import_torch

    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8))
    doc = import_torch((model, (torch.randn(4, 16),)), training=True, optimizer="sgd").document
    ops = {op["id"]: op for op in doc["ops"]}
    assert ops["0/linear"]["dims"] == {"sample": 4, "channel": 32, "input_channel": 16}
    assert ops["1/relu"]["dims"] == {"sample": 4, "channel": 32}
    assert ops["2/linear.bwd"]["dims"] == {"sample": 4, "channel": 8, "input_channel": 32}
    assert ops["0/linear.update"]["weight_bytes"] == (16 * 32 + 32) * 4
    graph = parse_graph(doc)
    hw = parse_hardware({"devices": [{"id": "a", "peak_tflops": 1e-3, "memory_bandwidth_gb_per_s": 1e-3},
                                     {"id": "b", "peak_tflops": 1e-3, "memory_bandwidth_gb_per_s": 1e-3}],
                         "links": [{"a": "a", "b": "b", "bandwidth_gb_per_s": 10.0}]})
    result = place(graph, hw, _options())
    assert result.splits and check_result(graph, hw, result) == []


def test_crossover_su_m_with_split_compares_against_the_best_m_device_plan() -> None:
    from placer.crossover.config import EngineSpec
    from placer.crossover.engine_speedup import engine_speedups

    graph, hw = json.loads(MLP.read_text()), json.loads(TWO_GPUS.read_text())
    placed = engine_speedups(EngineSpec(graph=graph, hardware=hw, m=[2], time_limit_s=10))[2]
    split = engine_speedups(EngineSpec(graph=graph, hardware=hw, m=[2], time_limit_s=10, split=True))[2]
    assert placed.speedup == pytest.approx(1.0)  # a chain: placement cannot help
    assert split.speedup == pytest.approx(28.0 / 15.535)


def test_cli_simulate_and_validate_read_split_results(tmp_path: Path) -> None:
    result = tmp_path / "r.json"
    base = [sys.executable, "-m", "placer.cli"]
    inputs = [str(MLP), "--hardware", str(TWO_GPUS)]
    subprocess.run(base + ["solve", *inputs, "--split", "-q", "-o", str(result)], check=True, cwd=ROOT,
                   capture_output=True)
    sim = subprocess.run(base + ["simulate", *inputs, "--placement", str(result), "--contention",
                                 "--trace", str(tmp_path / "t.json")], capture_output=True, text=True, cwd=ROOT,
                         check=False)
    assert sim.returncode == 0, sim.stderr
    assert "simulated makespan 15.535 ms" in sim.stdout
    trace = json.loads((tmp_path / "t.json").read_text())
    assert any(e.get("name") == "fc1#1" for e in trace["traceEvents"])
    ok = subprocess.run(base + ["validate", *inputs, str(result)], capture_output=True, text=True, cwd=ROOT,
                        check=False)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    doc = json.loads(result.read_text())
    doc["collectives"] = []
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    bad = subprocess.run(base + ["validate", *inputs, str(tmp_path / "bad.json")], capture_output=True, text=True,
                         cwd=ROOT, check=False)
    assert bad.returncode != 0 and "has no all-reduce" in bad.stdout + bad.stderr


def test_deterministic_split_runs_give_the_same_plan() -> None:
    graph, hw = _mlp()
    options = PlaceOptions(split=True, time_limit_s=10.0, deterministic=True, threads=2, seed=3)
    first, second = place(graph, hw, options), place(graph, hw, options)
    assert first.status == second.status == "optimal"
    assert first.makespan_ms == second.makespan_ms == pytest.approx(15.535)
    assert first.splits == second.splits
