"""Status mapping per back end, on crafted models, and the hard deadline of a forked solve."""
from __future__ import annotations

import os
import random
import subprocess
import time
from pathlib import Path

import pytest

from placer.errors import SolverError
from solvers import SolveStatus, available_solvers, cbc_path
from solvers.processes import Overrun, run_forked
from solvers.pulp_milp import solve_milp

MILP = [b for b in ("cbc", "highs") if available_solvers()[b]]


def _small(feasible: bool):  # noqa: ANN202
    import pulp

    prob = pulp.LpProblem("small", pulp.LpMinimize)
    x = prob.add_variable("x", cat="Binary")
    y = prob.add_variable("y", cat="Binary")
    prob += x + y >= (1 if feasible else 3)
    prob += 2 * x + 3 * y
    return prob


def _markshare(m: int = 6, n: int = 50, seed: int = 2):  # noqa: ANN202
    """A market-share instance (Cornuejols & Dawande): feasible at once, unprovable in seconds."""
    import pulp

    rng = random.Random(seed)
    prob = pulp.LpProblem("markshare", pulp.LpMinimize)
    x = [prob.add_variable(f"x{j}", cat="Binary") for j in range(n)]
    sp = [prob.add_variable(f"sp{i}", lowBound=0) for i in range(m)]
    sm = [prob.add_variable(f"sm{i}", lowBound=0) for i in range(m)]
    for i in range(m):
        a = [rng.randint(0, 99) for _ in range(n)]
        prob += pulp.lpSum(a[j] * x[j] for j in range(n)) + sp[i] - sm[i] == sum(a) // 2
    prob += pulp.lpSum(sp) + pulp.lpSum(sm)
    return prob


@pytest.mark.parametrize("backend", MILP)
def test_milp_optimal_and_infeasible(backend: str) -> None:
    run = solve_milp(_small(True), backend, 10)
    assert run.status is SolveStatus.OPTIMAL and run.objective == pytest.approx(2.0) and run.bound == pytest.approx(2.0)
    assert solve_milp(_small(False), backend, 10).status is SolveStatus.INFEASIBLE


@pytest.mark.parametrize("backend", MILP)
def test_milp_time_limit_with_an_incumbent_is_feasible_not_optimal(backend: str) -> None:
    """PuLP says "Optimal" here; its sol_status says IntegerFeasible."""
    run = solve_milp(_markshare(), backend, 1.5)
    assert run.status is SolveStatus.FEASIBLE
    assert run.bound is not None and run.bound < run.objective


def _knapsack_cp(n: int):  # noqa: ANN202
    from ortools.sat.python import cp_model

    rng = random.Random(1)
    m = cp_model.CpModel()
    xs = [m.new_bool_var(f"x{i}") for i in range(n)]
    w = [rng.randint(10**5, 10**6) for _ in range(n)]
    m.add(sum(a * x for a, x in zip(w, xs)) == sum(w) // 2 + 1)
    m.minimize(sum(xs))
    return m


def test_cpsat_statuses() -> None:
    from ortools.sat.python import cp_model

    from solvers.cpsat import solve_cpsat

    run, _ = solve_cpsat(_knapsack_cp(20), 10, threads=1)
    assert run.status is SolveStatus.OPTIMAL and run.objective == run.bound
    run, _ = solve_cpsat(_knapsack_cp(60), 0.001, threads=1)
    assert run.status is SolveStatus.NO_SOLUTION and run.objective is None
    m = cp_model.CpModel()
    x = m.new_int_var(0, 3, "x")
    m.add(x >= 5)
    assert solve_cpsat(m, 5)[0].status is SolveStatus.INFEASIBLE


def test_deterministic_cpsat_runs_one_worker_whatever_the_threads() -> None:
    """Racing workers are not reproducible: deterministic mode's promise rests on this."""
    from solvers.cpsat import solve_cpsat

    run, solver = solve_cpsat(_knapsack_cp(20), 10, threads=2, deterministic=True)
    assert run.status is SolveStatus.OPTIMAL and solver.parameters.num_workers == 1
    assert solve_cpsat(_knapsack_cp(20), 10, threads=2)[1].parameters.num_workers == 2


def test_cpsat_without_its_linear_relaxation_proves_the_same_optimum() -> None:
    """The window search's sub-solves run without the LP (placer.window_search): the limit
    reaches CP-SAT through the back-end interface, and only the search changes."""
    from solvers.registry import Limits, get_backend

    with_lp, solver = get_backend("cpsat").solve(_knapsack_cp(20), Limits(10, deterministic=True))
    without, solver_without = get_backend("cpsat").solve(_knapsack_cp(20), Limits(10, deterministic=True,
                                                                                  linear_relaxation=False))
    assert solver.parameters.linearization_level == 1 and solver_without.parameters.linearization_level == 0
    assert with_lp.status is without.status is SolveStatus.OPTIMAL and with_lp.objective == without.objective


def test_cpsat_with_its_bound_search_proves_the_same_optimum() -> None:
    """The relaxation's rounds of the decomposition search for the bound (placer.decompose):
    the option reaches CP-SAT through the back-end interface, and only the search changes."""
    from solvers.registry import Limits, get_backend

    default, solver = get_backend("cpsat").solve(_knapsack_cp(20), Limits(10, deterministic=True))
    tree, solver_tree = get_backend("cpsat").solve(_knapsack_cp(20), Limits(10, deterministic=True,
                                                                            bound_search=True))
    assert not solver.parameters.optimize_with_lb_tree_search and solver_tree.parameters.optimize_with_lb_tree_search
    assert default.status is tree.status is SolveStatus.OPTIMAL and default.objective == tree.objective


def test_cpsat_answers_a_model_its_symmetry_detection_crashes_on() -> None:
    """Fuzz case 1602: OR-Tools 9.15's presolve raises IndexError on this memory-infeasible model."""
    from pathlib import Path

    from ortools.sat.python import cp_model

    from solvers.cpsat import solve_cpsat

    model = cp_model.CpModel()
    model.proto.parse_text_format((Path(__file__).parent / "data" / "ortools-crash-1602.pbtxt").read_text())
    assert solve_cpsat(model, 5, threads=1)[0].status is SolveStatus.INFEASIBLE


def test_place_proves_fuzz_case_1602_infeasible() -> None:
    """The same case through the engine: memory makes it infeasible, every back end says so."""
    import json
    from pathlib import Path

    from placer import PlaceOptions, place
    from placer.schema import GraphSpec, HardwareSpec

    case = json.loads((Path(__file__).parent / "data" / "fuzz-1602.json").read_text())
    graph, hardware = GraphSpec.model_validate(case["graph"]), HardwareSpec.model_validate(case["hardware"])
    for solver in ("cpsat", *MILP):
        result = place(graph, hardware, PlaceOptions(solver=solver, time_limit_s=5, threads=1, relative_gap=0.0))
        assert result.status == "infeasible", solver


def _gone_or_zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2] == "Z"


@pytest.mark.skipif(cbc_path() is None, reason="no CBC binary")
def test_an_overrunning_solve_is_killed_with_what_it_started(tmp_path: Path) -> None:
    """CBC with no arguments waits for commands on stdin forever: the deadline must end it,
    and the forked child that started it."""
    path = cbc_path()
    assert path is not None
    pids = tmp_path / "pids"

    def hang() -> None:
        cbc = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
        pids.write_text(f"{os.getpid()} {cbc.pid}")
        cbc.wait()

    with pytest.raises(Overrun):
        run_forked(hang, 1.0)
    child, cbc = map(int, pids.read_text().split())
    assert _gone_or_zombie(cbc)
    assert not Path(f"/proc/{child}").exists()  # killed and reaped


def test_a_forked_call_answers_or_raises_its_own_error() -> None:
    assert run_forked(lambda: {"answer": [1.5, None]}, 30.0) == {"answer": [1.5, None]}

    def fail() -> None:
        raise SolverError("no luck")

    with pytest.raises(SolverError, match="no luck"):
        run_forked(fail, 30.0)
    with pytest.raises(RuntimeError, match="exit code 3"):
        run_forked(lambda: os._exit(3), 30.0)


@pytest.mark.parametrize("backend", MILP)
def test_a_milp_solve_past_its_deadline_is_killed(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A solver that ignores its limit (stands in for CBC reading a big model) is killed."""
    monkeypatch.setattr("solvers.pulp_milp._solve", lambda *args: time.sleep(3600))
    run = solve_milp(_small(True), backend, 0.5)
    assert run.killed and run.status is SolveStatus.NO_SOLUTION and run.reason == "killed at the hard deadline"


@pytest.mark.parametrize("backend", MILP)
def test_a_milp_solve_sets_the_values_like_pulp(backend: str) -> None:
    prob = _small(True)
    solve_milp(prob, backend, 10)
    assert {v.name: v.varValue for v in prob.variables()} == {"x": 1.0, "y": 0.0}
