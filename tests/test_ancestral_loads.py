"""Heads and tails raised by the loads of ancestors (placer.ancestral_loads): never above an
optimum, exact where a cell's branches must run on its join's device, bounded in work."""
from __future__ import annotations

import math
import time
from collections.abc import Callable

import pytest

from placer.ancestral_loads import AncestralOptions, raise_by_ancestral_loads
from placer.bounds import Costs, bound_breakdown, head_tail_bounds_ms
from placer.engine import PlaceOptions, Strategy, place
from placer.model import Problem, build_problem
from placer.schema import parse_graph, parse_hardware
from tests.conftest import fully_connected
from tests.reference import brute_force_makespan
from tests.test_bounds import _mirror_case, _problem, _random_case
from tests.test_cone_bounds import _cells, _two_branches

TOL = 1e-6
EVERY_OP = AncestralOptions(region_ops=1000, near=0.0)  # every op, every ancestor


def _ancestral(problem: Problem, options: AncestralOptions = EVERY_OP, limit_s: float = 1000.0) -> float:
    raised = raise_by_ancestral_loads(problem, Costs.of(problem), 0.0, limit_s, options=options)
    return max(head_tail_bounds_ms(problem, raised.costs).values())


CASES = [(_random_case, seed) for seed in range(160)] + [(_mirror_case, seed) for seed in range(80)]


@pytest.mark.parametrize(("make", "seed"), CASES, ids=[f"{m.__name__.strip('_')}-{s}" for m, s in CASES])
def test_the_ancestral_bound_never_exceeds_the_exhaustive_optimum(make: Callable, seed: int) -> None:
    """The bound tests' random instances (groups, pins, memory, line topologies, two speeds) and
    forward/backward copies (tests/test_bounds.py)."""
    g, hw, t = make(seed)
    optimum = brute_force_makespan(t["times"], t["edges"], t["delay"], t["memory"], t["capacity"], t["groups"])
    if optimum is None:
        pytest.skip("no placement fits memory")
    for region in (1, 2, 1000):  # every region is a relaxation
        value = _ancestral(_problem(g, hw), AncestralOptions(region_ops=region, near=0.0))
        assert math.isfinite(value) and value <= optimum + TOL, (region, value, optimum)


def test_a_branch_must_pay_two_transfers_or_run_on_the_joins_device(without_side_ops: None) -> None:
    """Two branches of two 1 ms ops between s and j, 10 ms per tensor (tests/test_cone_bounds):
    the cheap heads see 5 ms; the ancestors' load is the optimum, all six ops on one device."""
    g, hw = _two_branches()
    problem = build_problem(parse_graph(g), parse_hardware(hw))
    assert max(bound_breakdown(problem).values()) == pytest.approx(5.0)
    assert _ancestral(problem) == pytest.approx(6.0)


def test_cell_after_cell_the_bound_keeps_up(without_side_ops: None) -> None:
    """Cells of three parallel branches, each reading the last two joins, 10 ms per tensor and
    1 ms per op on two GPUs (tests/test_cone_bounds): the optimum runs every op on one device.
    Two cells (15 ops): the ancestors' loads prove it. Twenty (141 ops): the cheap heads fall
    4 ms behind with every cell (82 ms); the ancestors' loads, 100 of them per op, keep 129."""
    hardware = parse_hardware(fully_connected(2, bandwidth_gb_per_s=1.0))
    two = build_problem(parse_graph(_cells(2)), hardware)
    assert max(bound_breakdown(two).values()) == pytest.approx(10.0)
    assert _ancestral(two) == pytest.approx(15.0)
    twenty = build_problem(parse_graph(_cells(20)), hardware)
    assert max(bound_breakdown(twenty).values()) == pytest.approx(82.0)
    assert 128.9 < _ancestral(twenty, AncestralOptions(near=0.0)) <= 141.0 + TOL


def test_cheap_links_leave_the_cheap_heads_as_they_are() -> None:
    """Where a transfer costs nothing, no ancestor has to share its join's device."""
    g, _ = _two_branches()
    free = fully_connected(2, bandwidth_gb_per_s=1e6)
    problem = build_problem(parse_graph(g), parse_hardware(free))
    raised = raise_by_ancestral_loads(problem, Costs.of(problem), 0.0, 10.0, options=EVERY_OP)
    assert raised.costs.head == pytest.approx(Costs.of(problem).head, abs=1e-3)


def test_a_short_limit_caps_the_visits_and_a_past_deadline_raises_nothing() -> None:
    problem = build_problem(parse_graph(_cells(20)), parse_hardware(fully_connected(2, bandwidth_gb_per_s=1.0)))
    cheap = Costs.of(problem)
    capped = raise_by_ancestral_loads(problem, cheap, 0.0, 0.001, options=AncestralOptions(near=0.0, visits_per_s=10**6))
    assert capped.visits <= 1000 and capped.stopped_by in ("done", "visits")
    late = raise_by_ancestral_loads(problem, cheap, 0.0, 10.0, deadline_s=time.perf_counter() - 1.0,
                                    options=AncestralOptions(near=0.0))
    assert late.stopped_by == "time" and late.raised == 0
    assert late.costs.head == cheap.head and late.costs.tail == cheap.tail


def test_the_engine_reports_the_bound_the_ancestral_loads_raised(without_side_ops: None) -> None:
    """The two branches: the heuristics find the 6 ms answer and the ancestral bound proves it,
    before any CP-SAT call."""
    g, hw = _two_branches()
    result = place(parse_graph(g), parse_hardware(hw), PlaceOptions(time_limit_s=10, deterministic=True))
    assert result.status == "optimal" and result.makespan_ms == pytest.approx(6.0)
    assert result.stats is not None and result.stats.bounds_ms is not None
    assert result.stats.bounds_ms["ancestral_communication"] == pytest.approx(6.0)
    assert result.stats.tight_bound == "ancestral_communication" and result.stats.ancestral_raised
    assert result.stats.proof == "a heuristic meets the bound the ancestral loads raised"


def test_region_zero_turns_the_pass_off() -> None:
    g, hw = _two_branches()
    result = place(parse_graph(g), parse_hardware(hw), PlaceOptions(time_limit_s=10, deterministic=True),
                   strategy=Strategy(ancestral=AncestralOptions(region_ops=0)))
    assert result.stats is not None and result.stats.ancestral_raised is None
    assert result.stats.tight_bound is not None and not result.stats.tight_bound.startswith("ancestral")


def test_the_cones_gate_ignores_the_ancestral_raise(without_side_ops: None) -> None:
    """The cones build on the ancestral heads and go further, so whether they run is weighed by
    the gap the other bounds leave: a cheap raise alone must not turn them off (BERT-base on the
    DGX-1, 60 s: the ancestral loads left 1.43%, below the cones' 2%, and the chain-loads bound
    that had closed it to 0.92% no longer ran)."""
    from placer.engine import _cones_wanted, _Run
    from placer.heuristics import single_device

    g, hw = _two_branches()
    run = _Run(parse_graph(g), parse_hardware(hw), PlaceOptions(time_limit_s=10), None, Strategy())
    best = single_device(run.problem)
    assert best is not None and best.makespan_ms == pytest.approx(6.0) and run.bound_ms == pytest.approx(5.0)
    run.raise_bound(5.99, "ancestral_communication")
    assert run.bound_ms == 5.99 and run.bound_but_ancestral_ms == pytest.approx(5.0)
    assert _cones_wanted(run, best)
    run.raise_bound(5.99, "cones_communication")
    assert run.bound_but_ancestral_ms == 5.99 and not _cones_wanted(run, best)
