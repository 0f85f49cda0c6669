"""Sub-solves in parallel (placer.parallel): the decomposition's components solved in a pool
give valid bounds and answers, and in deterministic mode the same answer whichever worker ran
which component (local processes against one process; Ray tasks on a real two-node loopback
cluster, where the components run on both nodes)."""
from __future__ import annotations

from typing import Any

import pytest

from benchmarks.graphs import fully_connected_hardware
from placer.ancestral_loads import AncestralOptions
from placer.budget import Budget
from placer.decompose import decompose, solve_decomposed
from placer.engine import PlaceOptions, Strategy, place
from placer.heuristics import heft
from placer.model import build_problem
from placer.parallel import ProcessPool, RayPool, SerialPool, pool_for
from placer.schema import parse_graph, parse_hardware
from placer.validate import check_result
from tests.test_decompose import diamonds


class InOrder(SerialPool):
    """Claims `workers` but runs every item in this process, in order: the reference answer."""

    def __init__(self, workers: int) -> None:
        super().__init__()
        self.workers = workers


def _answer(g: dict, hw: dict, pool: Any, limit_s: float = 8.0) -> tuple[float, float | None, list[int] | None]:
    p = build_problem(parse_graph(g), parse_hardware(hw))
    answer = solve_decomposed(p, decompose(p), Budget(limit_s, deterministic=True, threads=1), limit_s,
                              heft(p).solution, pool=pool)
    schedule = answer.schedule
    return (answer.bound_ms, schedule.makespan_ms if schedule else None,
            list(schedule.solution.device) if schedule else None)


def test_serial_options_open_no_pool() -> None:
    with pool_for(1, None, 2) as pool:
        assert pool is None


@pytest.mark.parametrize("seed", range(2))
def test_components_in_processes_give_the_exact_optimum(seed: int) -> None:
    """On identical fully connected devices a chain of diamonds is solved exactly by parts, in
    parallel as one after another."""
    g, hw = diamonds(4, seed), fully_connected_hardware(3, link_gb_per_s=1.0, latency_us=0)
    exact = place(parse_graph(g), parse_hardware(hw), PlaceOptions(time_limit_s=20, threads=1, relative_gap=0))
    assert exact.status == "optimal"
    pool = ProcessPool(2)
    try:
        bound, makespan, _ = _answer(g, hw, pool)
    finally:
        pool.close()
    assert bound == pytest.approx(exact.makespan_ms) and makespan == pytest.approx(exact.makespan_ms)


def test_deterministic_answer_does_not_depend_on_which_process_ran_a_component() -> None:
    g, hw = diamonds(6, 3), fully_connected_hardware(3, link_gb_per_s=1.0, latency_us=0)
    pool = ProcessPool(2)
    try:
        in_processes = _answer(g, hw, pool)
    finally:
        pool.close()
    assert in_processes == _answer(g, hw, InOrder(2))


def test_engine_with_workers_answers_valid_and_reports_them() -> None:
    g, hw = diamonds(40, 5), fully_connected_hardware(3, link_gb_per_s=1.0, latency_us=0)
    options = PlaceOptions(time_limit_s=6, threads=1, deterministic=True, workers=2, coarsen="off")
    # the ancestral loads prove this graph optimal before the decomposition: off, the components run
    strategy = Strategy(ancestral=AncestralOptions(region_ops=0))
    result = place(parse_graph(g), parse_hardware(hw), options, strategy=strategy)
    assert result.status in ("optimal", "feasible")
    assert check_result(parse_graph(g), parse_hardware(hw), result) == []
    assert result.stats.decomposition_workers == 2
    again = place(parse_graph(g), parse_hardware(hw), options, strategy=strategy)
    assert again.makespan_ms == result.makespan_ms and again.lower_bound_ms == result.lower_bound_ms


def test_components_on_both_nodes_of_a_ray_cluster(ray_cluster: Any) -> None:
    """Two one-CPU nodes, tasks spread: the components ran on both nodes, and the deterministic
    answer is the one of the same worker count in one process."""
    g, hw = diamonds(6, 3), fully_connected_hardware(3, link_gb_per_s=1.0, latency_us=0)
    pool = RayPool(ray_cluster.address, None, cpus_per_item=1)
    try:
        assert pool.workers == 2  # two CPUs, one per sub-solve
        on_ray = _answer(g, hw, pool)
        assert len(pool.places) == 2, pool.places
    finally:
        pool.close()
    assert on_ray == _answer(g, hw, InOrder(2))


def test_the_default_paths_never_import_ray() -> None:
    """Ray is an optional extra: the library, the CLI and the default service load without it."""
    import subprocess
    import sys

    code = ("import sys, placer, placer.cli, placer.parallel, placer.decompose, api.main, api.jobs, api.executor; "
            "from placer.parallel import pool_for\n"
            "with pool_for(1, None, 1) as pool: pass\n"
            "assert 'ray' not in sys.modules, 'ray was imported'")
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


def test_portfolio_members_prove_the_published_optimum_and_agree_with_one_process() -> None:
    """The whole model solved by two portfolio members at once (placer.portfolio): the classic
    instance's published optimum, and, members being deterministic, the same answer whether
    they ran in two processes or one after another here."""
    from ortools.sat.python import cp_model  # noqa: F401  (the members need it: fail here, not in a child)

    from placer.formulations.cpsat_model import build_cpsat
    from placer.portfolio import solve_portfolio
    from solvers.registry import Limits
    from tests.test_classic_benchmarks import DATA, _load

    inst = _load(DATA / "nodes_11_outtree_p2.json")
    options = PlaceOptions(time_limit_s=20, threads=1, deterministic=True, workers=2, relative_gap=0)
    result = place(parse_graph(inst.graph), parse_hardware(inst.hardware), options)
    assert result.status == "optimal" and result.makespan_ms == pytest.approx(inst.optimum, abs=1e-6)
    assert check_result(parse_graph(inst.graph), parse_hardware(inst.hardware), result) == []
    if result.stats.best_from == "cpsat":  # the heuristics did not meet the bound first
        assert result.stats.portfolio_members == 2 and result.stats.portfolio_answered == 2

    p = build_problem(parse_graph(inst.graph), parse_hardware(inst.hardware))
    f = build_cpsat(p, heft(p), 0.0)
    limits = Limits(2.0, deterministic=True, seed=3)
    pool = ProcessPool(2)
    try:
        in_processes = solve_portfolio(pool, f.model, limits)
    finally:
        pool.close()
    here = solve_portfolio(InOrder(2), f.model, limits)
    assert (in_processes.run.objective, in_processes.run.bound, in_processes.values) == \
        (here.run.objective, here.run.bound, here.values)
    assert in_processes.answered == 2 and f.decode(in_processes.value, p).device
