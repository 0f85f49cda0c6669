"""The engine never returns an invalid answer: candidates are checked, memory is repaired,
rejections are counted (and fail in strict mode), deterministic runs repeat exactly."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.graphs import fully_connected_hardware, layered, training_step
from placer.ancestral_loads import AncestralOptions
from placer.cli import EXIT_FAILURE, main
from placer.engine import PlaceOptions, Strategy, _Run, place
from placer.errors import SolutionCheckError
from placer.heuristics import heft
from placer.importers.pipedream import import_pipedream
from placer.model import build_problem
from placer.repair import is_placement_feasible, memory_overflow, repair_memory
from placer.resolve import resolve_hardware
from placer.schedule import Solution, retime
from placer.schema import ResultSpec, parse_graph, parse_hardware
from placer.validate import check_result
from tests.conftest import VERIFY, fully_connected, graph

_NO_ANCESTRAL = AncestralOptions(region_ops=0)  # the ancestral loads prove some graphs before any MILP runs

REAL_GRAPHS = Path(__file__).resolve().parents[2] / "shared" / "data" / "real-graphs"


def _verify(tmp_path: Path, g: dict, hw: dict, result: ResultSpec) -> None:
    files = []
    for name, doc in (("g.json", g), ("hw.json", hw), ("r.json", result.model_dump(mode="json"))):
        (tmp_path / name).write_text(json.dumps(doc))
        files.append(str(tmp_path / name))
    done = subprocess.run([sys.executable, str(VERIFY), *files], check=False, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def _memory_tight_training_step(seed: int, capacity_share: float) -> tuple[dict, dict]:
    """A layered training step whose ops each keep memory, on 4 devices that together hold
    it but one alone does not: the decomposition's stitch must spread it."""
    doc = training_step(layered(60, seed=seed))
    for i, op in enumerate(doc["ops"]):
        op["memory_bytes"] = 1_000_000 * (1 + (i * 7 + seed) % 5)
    total = sum(op["memory_bytes"] for op in doc["ops"])
    hw = fully_connected_hardware(4, link_gb_per_s=25.0, memory_bytes=int(total * capacity_share))
    return doc, hw


@pytest.mark.parametrize("seed", range(3))
def test_a_decomposed_memory_tight_graph_gets_a_valid_answer(seed: int, tmp_path: Path) -> None:
    doc, hw = _memory_tight_training_step(seed, capacity_share=0.4)
    g, h = parse_graph(doc), parse_hardware(hw)
    r = place(g, h, PlaceOptions(time_limit_s=4, threads=1))
    assert r.status in ("optimal", "feasible")
    assert (r.stats.decomposition_components or 0) >= 2, "the series decomposition ran"
    assert check_result(g, h, r) == []
    assert max(r.memory_bytes.values()) <= hw["devices"][0]["memory_bytes"]
    _verify(tmp_path, doc, hw, r)


@pytest.mark.skipif(not REAL_GRAPHS.exists(), reason="shared real graphs not beside the project")
def test_resnext101_on_16gb_v100s_is_valid_not_a_crash(tmp_path: Path) -> None:
    """The issue's crash: the decomposition dropped memory between components and the
    stitched answer held 17.7 GB on one 16 GB GPU."""
    doc = import_pipedream(REAL_GRAPHS / "pipedream" / "resnext101" / "graph.txt", zero_input_time=True).graph
    hw = resolve_hardware("dgx1_v100")
    r = place(doc, hw, PlaceOptions(time_limit_s=6, threads=1))
    assert r.status in ("optimal", "feasible")
    assert check_result(doc, hw, r) == []
    assert max(r.memory_bytes.values()) <= 16_000_000_000
    assert r.makespan_ms <= r.baselines.heft_ms + 1e-9


def test_repair_moves_groups_off_an_overloaded_device() -> None:
    doc = graph([(f"op{i}", 1.0, 10) for i in range(6)], [(f"op{i}", f"op{i + 1}", 1000) for i in range(5)])
    p = build_problem(parse_graph(doc), parse_hardware(fully_connected(3, memory_bytes=25)))
    everything_on_one = Solution(device=[0] * 6, order=[list(range(6)), [], []])
    schedule = retime(p, everything_on_one)
    assert memory_overflow(p, schedule.solution.device) == [35, 0, 0]
    repaired = repair_memory(p, schedule).schedule
    assert repaired is not None and is_placement_feasible(p, repaired.solution.device)
    # a chain split into runs pays two transfers, not one per moved op
    assert len(repaired.transfers) == 2


def test_a_repair_says_why_it_found_no_fitting_placement() -> None:
    """Out of time and out of moves are told apart: the engine counts the first, rejects the second."""
    doc = graph([(f"op{i}", 1.0, 10) for i in range(3)], [(f"op{i}", f"op{i + 1}", 1000) for i in range(2)])
    p = build_problem(parse_graph(doc), parse_hardware(fully_connected(2, memory_bytes=15)))
    schedule = retime(p, Solution(device=[0] * 3, order=[[0, 1, 2], []]))
    assert repair_memory(p, schedule, time_budget_s=-1.0).stopped_by == "clock"
    no_room = repair_memory(p, schedule)  # 30 bytes fit 2 x 15 only as 10 + 20: no placement fits
    assert no_room.schedule is None and no_room.stopped_by == "no_move"


def test_an_invalid_candidate_is_rejected_counted_and_fatal_in_strict_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = graph([("a", 1.0), ("b", 1.0)], [("a", "b", 1000)])
    doc["ops"][0]["group"] = doc["ops"][1]["group"] = "g"
    g, h = parse_graph(doc), parse_hardware(fully_connected(2))
    split_group = Solution(device=[0, 1], order=[[0], [1]])
    monkeypatch.setenv("PLACER_STRICT", "0")
    run = _Run(g, h, PlaceOptions(), None, Strategy())
    assert run.offer(split_group, "a test strategy") is None
    assert run.stats.rejected_candidates == {"a test strategy": 1}
    assert run.best is None
    monkeypatch.setenv("PLACER_STRICT", "1")
    strict = _Run(g, h, PlaceOptions(), None, Strategy())
    with pytest.raises(SolutionCheckError, match="a test strategy"):
        strict.offer(split_group, "a test strategy")


@pytest.mark.parametrize("failing", ["solve_decomposed", "_stitched_answers"])
def test_a_failing_decomposition_is_a_counted_rejection_not_a_traceback(monkeypatch: pytest.MonkeyPatch,
                                                                         failing: str) -> None:
    """The whole decomposition failing, or only its stitch: then the answer is lost, but
    not the decomposition's bound."""
    import placer.decompose

    def broken(*args: object, **kwargs: object) -> None:
        raise SolutionCheckError("the per-device order contradicts the graph's dependencies")

    monkeypatch.setattr(placer.decompose, failing, broken)
    doc = training_step(layered(60, seed=0))
    g, h = parse_graph(doc), parse_hardware(fully_connected_hardware(2))
    monkeypatch.setenv("PLACER_STRICT", "0")
    result = place(g, h, PlaceOptions(time_limit_s=2, deterministic=True))
    assert result.makespan_ms is not None and not check_result(g, h, result)
    assert result.stats is not None and result.stats.rejected_candidates == {"decomposition": 1}
    if failing == "_stitched_answers":
        assert result.stats.decomposition_bound_ms is not None
        assert result.lower_bound_ms >= result.stats.decomposition_bound_ms - 1e-9
    monkeypatch.setenv("PLACER_STRICT", "1")
    with pytest.raises(SolutionCheckError, match="decomposition"):
        place(g, h, PlaceOptions(time_limit_s=2, deterministic=True))


def test_deterministic_mode_repeats_its_answer_exactly() -> None:
    doc = training_step(layered(50, seed=3))
    g, h = parse_graph(doc), parse_hardware(fully_connected_hardware(4))
    options = PlaceOptions(time_limit_s=2, deterministic=True, threads=2)
    first, second = place(g, h, options), place(g, h, options)
    assert first.stats.mode == "deterministic"
    assert (first.status, first.makespan_ms, first.lower_bound_ms, first.placement) == \
        (second.status, second.makespan_ms, second.lower_bound_ms, second.placement)


def test_the_cli_reports_a_failure_in_one_line_without_a_traceback(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import placer.commands.solve as solve_command

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("something nobody expected")

    monkeypatch.setattr(solve_command, "place", broken)
    monkeypatch.delenv("PLACER_DEBUG", raising=False)
    (tmp_path / "g.json").write_text(json.dumps(graph([("a", 1.0)])))
    (tmp_path / "hw.json").write_text(json.dumps(fully_connected(2)))
    code = main(["solve", str(tmp_path / "g.json"), "--hardware", str(tmp_path / "hw.json"), "-q"])
    err = capsys.readouterr().err
    assert code == EXIT_FAILURE
    assert "internal error: RuntimeError: something nobody expected" in err
    assert "Traceback" not in err


def test_heuristic_incumbents_are_offered_like_any_candidate() -> None:
    doc = training_step(layered(30, seed=1))
    g, h = parse_graph(doc), parse_hardware(fully_connected_hardware(2))
    r = place(g, h, PlaceOptions(time_limit_s=3, threads=1))
    p = build_problem(g, h)
    assert r.makespan_ms <= heft(p).makespan_ms + 1e-9
    assert r.stats.best_from
    assert r.stats.tight_bound is not None


# fuzz seed 32593: flow routing through a switch and a direct link; CBC, hinted with the incumbent,
# said "infeasible" when the MILP's horizon was the incumbent's makespan to the last digit
_FUZZ_32593 = {
    "graph": {"format": "placer.graph/v1", "name": "fuzz-32593", "ops": [
        {"id": "op0", "flops": 1e9, "bytes_accessed": 1e5}, {"id": "op1", "flops": 7.7e8},
        {"id": "op2", "time_ms": 0.5, "group": "g0"},
        {"id": "op3", "flops": 1e6, "bytes_accessed": 3e8, "group": "g0", "device": "gpu0"},
        {"id": "op4", "flops": 1e8, "device": "gpu0"}],
        "edges": [{"src": "op0", "dst": "op3", "bytes": 100000}, {"src": "op0", "dst": "op4", "bytes": 1000},
                  {"src": "op1", "dst": "op2", "bytes": 100000}, {"src": "op1", "dst": "op3", "bytes": 100000}]},
    "hardware": {"format": "placer.hardware/v1", "name": "fuzz-mixed-2", "switches": [{"id": "sw0"}],
                 "devices": [{"id": "gpu0", "peak_tflops": 4.0, "memory_bandwidth_gb_per_s": 900.0},
                             {"id": "gpu1", "peak_tflops": 15.7, "memory_bandwidth_gb_per_s": 900.0}],
                 "links": [{"a": "gpu0", "b": "sw0", "bandwidth_gb_per_s": 25.0, "latency_us": 0.0},
                           {"a": "gpu1", "b": "sw0", "bandwidth_gb_per_s": 1.0, "latency_us": 0.0},
                           {"a": "gpu0", "b": "gpu1", "bandwidth_gb_per_s": 2.0, "latency_us": 0.0}]},
}


@pytest.mark.parametrize("solver", ["cbc", "highs"])
def test_the_milp_proves_what_its_warm_start_reaches(solver: str) -> None:
    g, h = parse_graph(_FUZZ_32593["graph"]), parse_hardware(_FUZZ_32593["hardware"])
    result = place(g, h, PlaceOptions(solver=solver, routing="flow", time_limit_s=5, threads=1, relative_gap=0.0))
    assert result.status == "optimal" and result.makespan_ms == pytest.approx(0.9573779193, abs=1e-9)


def test_a_milp_that_says_infeasible_beside_an_incumbent_is_a_counted_rejection(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A solver's wrong "infeasible": the incumbent stands as feasible, never a traceback; fatal in strict mode."""
    from solvers.base import SolverRun, SolveStatus

    def says_infeasible(self: object, model: object, limits: object) -> tuple[SolverRun, None]:
        return SolverRun("cbc", SolveStatus.INFEASIBLE, None, None, 0.01), None

    monkeypatch.setattr("solvers.registry.PulpMilp.solve", says_infeasible)
    g, h = parse_graph(training_step(layered(12, seed=1))), parse_hardware(fully_connected_hardware(2))
    options, strategy = PlaceOptions(solver="cbc", time_limit_s=5), Strategy(ancestral=_NO_ANCESTRAL)
    monkeypatch.setenv("PLACER_STRICT", "0")
    result = place(g, h, options, strategy=strategy)
    assert result.status == "feasible" and not check_result(g, h, result)
    assert result.stats is not None and result.stats.rejected_candidates == {"cbc": 1}
    monkeypatch.setenv("PLACER_STRICT", "1")
    with pytest.raises(SolutionCheckError, match="says infeasible"):
        place(g, h, options, strategy=strategy)
