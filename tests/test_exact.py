"""Exact answers: hand-derived optima, an exhaustive reference, and back ends that agree."""
from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from placer.engine import PlaceOptions, place
from placer.schema import parse_graph, parse_hardware
from tests.conftest import EXACT, VERIFY, fully_connected, graph
from tests.reference import brute_force_makespan

BACKENDS = [(s, r) for s in EXACT for r in (("shortest", "flow") if s != "cpsat" else ("shortest",))]


def solve(g: dict, hw: dict, solver: str = "cpsat", routing: str = "shortest", limit: float = 20.0):
    opts = PlaceOptions(solver=solver, routing=routing, time_limit_s=limit, threads=1, seed=0, relative_gap=0.0)
    return place(parse_graph(g), parse_hardware(hw), opts)


def verify(tmp_path: Path, g: dict, hw: dict, result, optimum: float | None = None) -> None:  # noqa: ANN001
    """Run the project-independent checker (tests.conftest.VERIFY) on a result."""
    files = []
    for name, doc in (("g", g), ("hw", hw), ("r", result.model_dump(mode="json"))):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(doc))
        files.append(str(path))
    extra = ["--optimum", str(optimum)] if optimum is not None else []
    done = subprocess.run([sys.executable, str(VERIFY), *files, *extra], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


# a (2 ms) feeds b and c (4 ms each); a transfer costs 1 ms. Optimum 7: a, b on one device,
# c on the other starting at 2 + 1 = 3. Everything on one device takes 10.
FORK = graph([("a", 2.0), ("b", 4.0), ("c", 4.0)], [("a", "b", 1_000_000), ("a", "c", 1_000_000)])


@pytest.mark.parametrize("solver,routing", BACKENDS)
def test_fork_optimum_is_7(solver: str, routing: str, tmp_path: Path) -> None:
    hw = fully_connected(2)
    r = solve(FORK, hw, solver, routing)
    assert r.status == "optimal" and r.makespan_ms == pytest.approx(7.0)
    assert r.lower_bound_ms == pytest.approx(7.0) and r.gap == pytest.approx(0.0, abs=1e-9)
    assert r.single_device_ms == pytest.approx(10.0) and r.speedup == pytest.approx(10 / 7)
    verify(tmp_path, FORK, hw, r, optimum=7.0)


@pytest.mark.parametrize("solver,routing", BACKENDS)
def test_expensive_communication_keeps_everything_together(solver: str, routing: str) -> None:
    hw = fully_connected(2, bandwidth_gb_per_s=0.001)  # 1 MB takes 1000 ms
    r = solve(FORK, hw, solver, routing)
    assert r.status == "optimal" and r.makespan_ms == pytest.approx(10.0)
    assert len(set(r.placement.values())) == 1 and r.transfers == []


@pytest.mark.parametrize("solver,routing", BACKENDS)
def test_memory_forces_a_split(solver: str, routing: str, tmp_path: Path) -> None:
    """A chain a -> b -> c of 1 ms ops, 6 GB each, on two 12 GB devices with a 5 ms transfer.

    No device holds all three, so one transfer is unavoidable: 1 + 1 + 5 + 1 = 8 ms.
    """
    g = graph([("a", 1.0, 6_000_000_000), ("b", 1.0, 6_000_000_000), ("c", 1.0, 6_000_000_000)],
              [("a", "b", 5_000_000), ("b", "c", 5_000_000)])
    hw = fully_connected(2, memory_bytes=12_000_000_000)
    r = solve(g, hw, solver, routing)
    assert r.status == "optimal" and r.makespan_ms == pytest.approx(8.0)
    assert r.single_device_ms is None and r.speedup is None
    verify(tmp_path, g, hw, r, optimum=8.0)


def test_heterogeneous_devices_use_per_device_durations(tmp_path: Path) -> None:
    """Analytic costs: a 4x faster GPU runs both branches itself (8 / 4 = 2 ms) rather than split."""
    g = {"ops": [{"id": "x", "flops": 1e9}, {"id": "y", "flops": 4e9}, {"id": "z", "flops": 4e9}],
         "edges": [{"src": "x", "dst": "y", "bytes": 1_000_000}, {"src": "x", "dst": "z", "bytes": 1_000_000}]}
    hw = {"devices": [{"id": "slow", "peak_tflops": 1.0}, {"id": "fast", "peak_tflops": 4.0}],
          "links": [{"a": "slow", "b": "fast", "bandwidth_gb_per_s": 1.0}]}
    results = {s: solve(g, hw, s) for s in EXACT}
    for s, r in results.items():
        assert r.status == "optimal", s
        assert r.makespan_ms == pytest.approx(0.25 + 1 + 1), s  # x on fast: 0.25 ms, y, z: 1 ms each
        assert set(r.placement.values()) == {"fast"}
        verify(tmp_path, g, hw, r)


def test_infeasible_memory_is_explained() -> None:
    g = graph([("big", 1.0, 20_000_000_000), ("small", 1.0, 1)])
    r = solve(g, fully_connected(2, memory_bytes=16_000_000_000))
    assert r.status == "infeasible"
    assert "op 'big' needs 20000000000 bytes" in r.reason and "16000000000" in r.reason


def test_infeasible_total_memory_and_pins_are_explained() -> None:
    g = graph([("a", 1.0, 9), ("b", 1.0, 9), ("c", 1.0, 9)])
    assert "in all" in solve(g, fully_connected(2, memory_bytes=10)).reason
    g["ops"][0]["device"] = g["ops"][1]["device"] = "gpu1"
    r = solve(g, fully_connected(2, memory_bytes=17))
    assert r.status == "infeasible" and "pinned to 'gpu1' need 18 bytes" in r.reason


def test_memory_packing_infeasibility_is_proven_by_the_solver() -> None:
    """Three 6-byte ops on two 10-byte devices: every count check passes, no packing exists."""
    g = graph([("a", 1.0, 6), ("b", 1.0, 6), ("c", 1.0, 6)])
    for s in EXACT:
        r = solve(g, fully_connected(2, memory_bytes=11))
        assert r.status == "infeasible" and "proved" in r.reason, s


def test_groups_and_pins_hold() -> None:
    g = graph([("f", 1.0), ("b", 1.0), ("x", 3.0), ("y", 3.0)], [("f", "b", 1_000_000)])
    g["ops"][0]["group"] = g["ops"][1]["group"] = "layer"
    g["ops"][2]["device"] = "gpu1"
    for s in EXACT + ["heft", "critical_path"]:
        r = solve(g, fully_connected(2), s)
        assert r.placement["f"] == r.placement["b"] and r.placement["x"] == "gpu1", s


def _random_instance(seed: int, n_ops: int, line: bool) -> tuple[dict, dict, list, list, callable]:
    rng = random.Random(seed)
    ops = [(f"o{k}", float(rng.randint(1, 6))) for k in range(n_ops)]
    edges = [(f"o{u}", f"o{v}", rng.choice([0, 1, 2, 3]) * 1_000_000)
             for u in range(n_ops) for v in range(u + 1, n_ops) if rng.random() < 0.35]
    if line:
        hw = {"devices": [{"id": "gpu0"}, {"id": "gpu1"}, {"id": "gpu2"}],
              "links": [{"a": "gpu0", "b": "gpu1", "bandwidth_gb_per_s": 1.0},
                        {"a": "gpu1", "b": "gpu2", "bandwidth_gb_per_s": 1.0}]}

        def delay(size: float, a: int, b: int) -> float:
            return abs(a - b) * size / 1e6   # hops x 1 ms per MB
    else:
        hw = fully_connected(2)

        def delay(size: float, a: int, b: int) -> float:
            return size / 1e6
    m = len(hw["devices"])
    times = [[t] * m for _, t in ops]
    idx = [(int(u[1:]), int(v[1:]), b) for u, v, b in edges]
    return graph(ops, edges), hw, times, idx, delay


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("line", [False, True], ids=["2-gpus", "3-gpu-line"])
def test_every_back_end_finds_the_brute_force_optimum(seed: int, line: bool, tmp_path: Path) -> None:
    n_ops = 6 if line else 7
    g, hw, times, edges, delay = _random_instance(seed, n_ops, line)
    optimum = brute_force_makespan(times, edges, delay)
    for solver, routing in BACKENDS:
        r = solve(g, hw, solver, routing)
        assert r.status == "optimal", (solver, routing)
        assert r.makespan_ms == pytest.approx(optimum), (solver, routing)
        assert r.makespan_ms <= r.baselines.heft_ms + 1e-9
    verify(tmp_path, g, hw, r, optimum=optimum)


def test_time_limited_runs_report_feasible_with_a_gap() -> None:
    """30 independent ops between a source and a sink on 4 GPUs: a packing no back end
    proves in 1 s. The answer is feasible, with a gap, and no worse than HEFT."""
    rng = random.Random(7)
    ops = [("src", 1.0)] + [(f"o{k}", rng.randint(10, 99) / 7) for k in range(30)] + [("sink", 1.0)]
    edges = [("src", f"o{k}", 1000) for k in range(30)] + [(f"o{k}", "sink", 1000) for k in range(30)]
    g = graph(ops, edges)
    for solver in EXACT:
        r = solve(g, fully_connected(4, latency_us=10), solver, limit=1.0)
        assert r.status == "feasible", solver
        assert 0 < r.gap < 1 and r.lower_bound_ms < r.makespan_ms
        assert r.makespan_ms <= r.baselines.heft_ms + 1e-9
        assert r.solve_time_s < 15


def test_the_bundled_verifier_is_the_shared_one() -> None:
    """tests/tools keeps a copy for bare checkouts: it must not drift from ../shared/tools."""
    from tests.conftest import _SHARED_VERIFY

    bundled = Path(__file__).parent / "tools" / "verify_result.py"
    if not _SHARED_VERIFY.exists():
        pytest.skip("no ../shared/tools beside this checkout")
    assert bundled.read_text() == _SHARED_VERIFY.read_text()


@pytest.mark.parametrize("solver,routing", [b for b in BACKENDS if b[0] != "cpsat"])
def test_sub_microsecond_ops_are_solved_exactly(solver: str, routing: str) -> None:
    """Found by benchmarks/fuzz.py (seed 1061): CBC's default `increment` (an absolute gap of
    1e-4) made it call 0.00074 ms optimal where 0.0007 ms exists."""
    g = graph([("op0", 0.0), ("op1", 0.0003), ("op2", 0.0001), ("op3", 0.0002), ("op4", 0.0002), ("op5", 0.0003)],
              [("op1", "op5", 1000), ("op3", "op5", 7_000_000), ("op4", "op5", 1_000_000)])
    hw = fully_connected(2, bandwidth_gb_per_s=25.0)
    opts = PlaceOptions(solver=solver, routing=routing, time_limit_s=20, threads=1, relative_gap=0.0)
    r = place(parse_graph(g), parse_hardware(hw), opts)
    assert r.status == "optimal" and r.makespan_ms == pytest.approx(0.0007, rel=1e-9), (r.status, r.makespan_ms)


@pytest.mark.parametrize("solver,routing", BACKENDS)
def test_a_device_without_memory_takes_only_ops_that_need_none(solver: str, routing: str) -> None:
    """Found by benchmarks/fuzz.py (seed 1051): a 0-byte device divided the MILP's memory row by 0."""
    g = graph([("a", 1.0, 3), ("b", 2.0, 0)])
    hw = fully_connected(3)
    hw["devices"][1]["memory_bytes"] = 0
    r = solve(g, hw, solver, routing)
    assert r.status == "optimal" and r.makespan_ms == pytest.approx(2.0)
    assert r.placement["a"] != "gpu1"


# Found by benchmarks/fuzz.py (seed 881): with 1e-4 ms ops (1e6 flops at 10 TFLOP/s) in a
# 14 ms horizon, CBC's probing cuts on the model in ms removed the optimum (2.1038667 for
# 2.1037667). The model now works in a unit that keeps such coefficients away from zero.
TINY_FLOPS = {
    "ops": [{"id": "op0", "flops": 7.7e8}, {"id": "op1", "time_ms": 1.25},
            {"id": "op2", "flops": 1e9, "bytes_accessed": 1e7, "group": "g0"}, {"id": "op3", "flops": 1e6, "group": "g0"},
            {"id": "op4", "flops": 7.7e8, "bytes_accessed": 3e8}, {"id": "op5", "flops": 7.7e8, "group": "g0"},
            {"id": "op6", "flops": 1e6}],
    "edges": [{"src": s, "dst": d, "bytes": b} for s, d, b in [
        ("op0", "op1", 0), ("op0", "op3", 7_000_000), ("op0", "op5", 0), ("op1", "op2", 1_000_000), ("op1", "op4", 1),
        ("op1", "op5", 765), ("op1", "op6", 1_000_000), ("op2", "op3", 1), ("op2", "op5", 1000), ("op3", "op4", 0),
        ("op3", "op5", 1)]],
}
TINY_FLOPS_HW = {"devices": [{"id": "gpu0", "peak_tflops": 10.0, "memory_bandwidth_gb_per_s": 100.0},
                             {"id": "gpu1", "peak_tflops": 10.0, "memory_bandwidth_gb_per_s": 900.0, "efficiency": 0.5}],
                 "links": [{"a": "gpu0", "b": "gpu1", "bandwidth_gb_per_s": 1.0, "latency_us": 10.0}]}
TINY_FLOPS_OPTIMUM = 2.1037666666666666  # CP-SAT (exact ticks), CBC and HiGHS with a warm start agree


@pytest.mark.parametrize("solver,routing", [b for b in BACKENDS if b[0] != "cpsat"])
def test_the_milp_alone_keeps_tiny_coefficients(solver: str, routing: str) -> None:
    """The bare model, without the heuristic warm start that hid the bug behind `place`."""
    from placer.bounds import lower_bound_ms
    from placer.formulations.milp import build_milp
    from placer.model import build_problem
    from placer.schedule import retime
    from solvers.pulp_milp import solve_milp

    p = build_problem(parse_graph(TINY_FLOPS), parse_hardware(TINY_FLOPS_HW))
    f = build_milp(p, routing, None, lower_bound_ms(p))
    run = solve_milp(f.prob, solver, 20.0)
    assert run.status.value == "optimal"
    assert run.objective == pytest.approx(TINY_FLOPS_OPTIMUM, rel=1e-7) and run.bound == pytest.approx(run.objective)
    assert retime(p, f.decode(p)).makespan_ms == pytest.approx(TINY_FLOPS_OPTIMUM, rel=1e-9)


def test_the_tiny_flops_optimum_on_cpsat() -> None:
    r = place(parse_graph(TINY_FLOPS), parse_hardware(TINY_FLOPS_HW), PlaceOptions(solver="cpsat", threads=1))
    assert r.status == "optimal" and r.makespan_ms == pytest.approx(TINY_FLOPS_OPTIMUM, rel=1e-9)


@pytest.mark.skipif("highs" not in EXACT, reason="no HiGHS")
def test_highs_solve_errors_are_retried() -> None:
    """Found by benchmarks/fuzz.py (seed 797): HiGHS 1.12 ended this bare model in "Solve
    error" (no answer, in 0.04 s); solvers.pulp_milp retries without presolve, then with a
    tighter MIP tolerance. Six independent ops, two pinned; the exhaustive optimum is 0.6 ms."""
    from placer.bounds import lower_bound_ms
    from placer.formulations.milp import build_milp
    from placer.model import build_problem
    from placer.schedule import retime
    from solvers.pulp_milp import solve_milp

    g = {"ops": [{"id": "op0", "flops": 3e9}, {"id": "op1", "flops": 3e9}, {"id": "op2", "flops": 1e6, "device": "gpu1"},
                 {"id": "op3", "flops": 1e8, "bytes_accessed": 1e7}, {"id": "op4", "flops": 1e6, "device": "gpu1"},
                 {"id": "op5", "flops": 1e8}]}
    hw = {"devices": [{"id": "gpu0", "peak_tflops": 10.0, "memory_bandwidth_gb_per_s": 900.0},
                      {"id": "gpu1", "peak_tflops": 4.0, "memory_bandwidth_gb_per_s": 900.0}],
          "links": [{"a": "gpu0", "b": "gpu1", "bandwidth_gb_per_s": 1.0, "latency_us": 10.0}]}
    p = build_problem(parse_graph(g), parse_hardware(hw))
    f = build_milp(p, "shortest", None, lower_bound_ms(p))
    run = solve_milp(f.prob, "highs", 20.0)
    assert run.status.value == "optimal" and run.objective == pytest.approx(0.6, rel=1e-6)
    assert retime(p, f.decode(p)).makespan_ms == pytest.approx(0.6, rel=1e-9)


@pytest.mark.skipif("cbc" not in EXACT, reason="no CBC")
def test_cbc_runs_sequentially(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """CBC's threaded branch and bound deadlocks now and then (found by benchmarks/fuzz.py:
    about 1 run in 400, killed at the hard deadline), so no `threads` reaches CBC."""
    import pulp

    import solvers.pulp_milp
    from solvers.pulp_milp import solve_milp

    seen = tmp_path / "cbc-options.json"  # the solve runs in a forked child: it writes what it saw
    real = solvers.pulp_milp._cbc_solver

    def spy(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        solver = real(*args, **kwargs)
        seen.write_text(json.dumps({"kwargs": sorted(kwargs), "options": solver.options + solver.getOptions()}))
        return solver

    monkeypatch.setattr(solvers.pulp_milp, "_cbc_solver", spy)
    prob = pulp.LpProblem("tiny", pulp.LpMinimize)
    x = prob.add_variable("x", lowBound=1, cat="Integer")
    prob += x
    run = solve_milp(prob, "cbc", 5.0, threads=2)
    assert run.status.value == "optimal" and run.objective == pytest.approx(1.0)
    used = json.loads(seen.read_text())
    assert "threads" not in used["kwargs"] and not any("threads" in o for o in used["options"])
