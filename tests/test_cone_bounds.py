"""Heads and tails raised by cone sub-solves (placer.cone_bounds): never above an optimum,
and exact where the cheap heads are not.

Sub-solves run in deterministic mode (CP-SAT work limits), so what they prove does not
depend on the machine's load."""
from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from placer.ancestral_loads import AncestralOptions
from placer.bounds import Costs, bound_breakdown
from placer.budget import Budget
from placer.cone_bounds import ConeBound, ConeOptions, _cone, raise_by_cones
from placer.engine import PlaceOptions, Strategy, place
from placer.model import Problem, build_problem
from placer.schema import parse_graph, parse_hardware
from tests.conftest import fully_connected, graph
from tests.reference import brute_force_makespan
from tests.test_bounds import _mirror_case, _problem, _random_case

TOL = 1e-6
EVERY_JOIN = ConeOptions(near=0.0, step_s=10.0)  # a sub-solve at every join, each to its proof
NO_ANCESTRAL = AncestralOptions(region_ops=0)  # engine tests of the cones: no ancestral loads before them


def _cones(problem: Problem, options: ConeOptions = EVERY_JOIN) -> float:
    return raise_by_cones(problem, Budget(1000.0, deterministic=True), 1000.0, 0.0, options).bound_ms


CASES = [(_random_case, seed) for seed in range(0, 160, 2)] + [(_mirror_case, seed) for seed in range(0, 80, 2)]


@pytest.mark.parametrize(("make", "seed"), CASES, ids=[f"{m.__name__.strip('_')}-{s}" for m, s in CASES])
def test_cones_never_exceed_the_exhaustive_optimum(make: Callable, seed: int) -> None:
    """The bound tests' random instances and forward/backward copies (tests/test_bounds.py)."""
    g, hw, t = make(seed)
    optimum = brute_force_makespan(t["times"], t["edges"], t["delay"], t["memory"], t["capacity"], t["groups"])
    if optimum is None:
        pytest.skip("no placement fits memory")
    value = _cones(_problem(g, hw))
    assert math.isfinite(value) and value <= optimum + TOL, (value, optimum)


def _two_branches() -> tuple[dict, dict]:
    """s -> a1 -> a2 -> j and s -> b1 -> b2 -> j, 1 ms each, on 2 GPUs whose link takes
    10 ms per tensor. Running a branch elsewhere costs two transfers (20 ms), so the
    optimum runs all six ops on one device: 6 ms. The cheap heads see the join's two
    inputs one at a time on its device (4 ms) but not the branches' first ops: 5 ms (the path
    blocks see 6 ms: one branch beside the other, `without_side_ops`)."""
    ops = [(name, 1.0) for name in ("s", "a1", "a2", "b1", "b2", "j")]
    edges = [("s", "a1", 10_000_000), ("a1", "a2", 10_000_000), ("a2", "j", 10_000_000),
             ("s", "b1", 10_000_000), ("b1", "b2", 10_000_000), ("b2", "j", 10_000_000)]
    return graph(ops, edges), fully_connected(2, bandwidth_gb_per_s=1.0)


def test_cones_prove_what_the_cheap_heads_miss(without_side_ops: None) -> None:
    g, hw = _two_branches()
    problem = build_problem(parse_graph(g), parse_hardware(hw))
    assert max(bound_breakdown(problem).values()) == pytest.approx(5.0)
    assert _cones(problem) == pytest.approx(6.0, abs=1e-3)
    assert brute_force_makespan([[1.0, 1.0]] * 6, [(0, 1, 1e7), (1, 2, 1e7), (2, 5, 1e7), (0, 3, 1e7), (3, 4, 1e7),
                                                    (4, 5, 1e7)], lambda size, a, b: size / 1e6) == 6.0


def test_a_cone_far_from_time_zero_proves_its_join_to_the_microsecond(without_side_ops: None) -> None:
    """The two branches of `_two_branches` (irregular times) after a 100 s op: a cone of five
    ops counts time from its earliest head (100 s), so its ticks resolve microseconds; counted
    from 0 (the horizon 100 s long, no round tick exact) the rounded-down durations lost 0.007 ms
    of the proof."""
    times = {"p": 100_000.0, "s": 1.0, "a1": 1.2345678912, "a2": 0.9876543219, "b1": 1.1111111113,
             "b2": 0.8765432109, "j": 1.0}
    edges = [("p", "s", 0)] + [(a, b, 10_000_000) for a, b in [("s", "a1"), ("a1", "a2"), ("a2", "j"), ("s", "b1"),
                                                               ("b1", "b2"), ("b2", "j")]]
    problem = build_problem(parse_graph(graph(list(times.items()), edges)),
                            parse_hardware(fully_connected(2, bandwidth_gb_per_s=1.0)))
    one_device = sum(times.values())  # the optimum: a branch elsewhere pays two 10 ms transfers
    assert max(bound_breakdown(problem).values()) < one_device - 0.5
    assert _cones(problem, ConeOptions(near=0.0, step_s=10.0, cone_ops=5)) == pytest.approx(one_device, abs=1e-3)


def test_a_cone_is_cut_where_fewest_of_its_ops_take_an_input_from_outside() -> None:
    """s -> x1, x2, x3 -> m -> y1, y2, y3 -> v: of v's six nearest ancestors (breadth first:
    the y's, m and one x), the cone keeps v, the y's and m (one op, m, with inputs outside)
    rather than adding x1 (two: m and x1)."""
    ops = [(name, 1.0) for name in ("s", "x1", "x2", "x3", "m", "y1", "y2", "y3", "v")]
    edges = [(a, b, 1000) for a, b in [("s", "x1"), ("s", "x2"), ("s", "x3"), ("x1", "m"), ("x2", "m"), ("x3", "m"),
                                      ("m", "y1"), ("m", "y2"), ("m", "y3"), ("y1", "v"), ("y2", "v"), ("y3", "v")]]
    problem = build_problem(parse_graph(graph(ops, edges)), parse_hardware(fully_connected(2)))
    costs = Costs.of(problem)
    index = {name: k for k, name in enumerate(problem.ops)}
    cone = _cone(problem, index["v"], 6, False, costs.head)
    assert cone == sorted(index[name] for name in ("m", "y1", "y2", "y3", "v"))
    backwards = _cone(problem, index["s"], 6, True, costs.tail)
    assert backwards == sorted(index[name] for name in ("s", "x1", "x2", "x3", "m"))


def test_the_engine_reports_the_bound_the_cones_raised(without_side_ops: None) -> None:
    g, hw = _two_branches()
    result = place(parse_graph(g), parse_hardware(hw), PlaceOptions(time_limit_s=10, deterministic=True),
                   strategy=Strategy(ancestral=NO_ANCESTRAL))
    assert result.status == "optimal" and result.makespan_ms == pytest.approx(6.0)
    assert result.stats is not None and result.stats.bounds_ms is not None
    assert result.stats.bounds_ms["cones_communication"] == pytest.approx(6.0, abs=1e-3)
    assert result.stats.tight_bound is not None and result.stats.tight_bound.startswith("cones_")
    assert result.stats.cone_solves and result.stats.cone_raised


def _cells(n: int) -> dict:
    """n cells of three parallel two-op branches, 1 ms per op, each cell reading the last two
    cells' joins (no op cuts the graph, so the series decomposition does not apply). On two
    GPUs whose link takes 10 ms per tensor the optimum runs everything on one device."""
    ops, edges, last, before = [("in", 1.0)], [], "in", "in"
    for c in range(n):
        for b in range(3):
            x, y = f"c{c}.b{b}.x", f"c{c}.b{b}.y"
            ops += [(x, 1.0), (y, 1.0)]
            edges += [(last if b < 2 else before, x, 10_000_000), (x, y, 10_000_000), (y, f"c{c}.join", 10_000_000)]
        ops.append((f"c{c}.join", 1.0))
        last, before = f"c{c}.join", last
    return graph(ops, edges)


def test_a_cone_pass_that_raised_the_bound_and_ran_out_of_time_goes_on() -> None:
    """20 cells (141 ops, optimum 141 ms), cone passes of 2% of a 5 s limit: passes that go
    on while they raise the bound prove the optimum; a single pass (and the leftover) does
    not in the whole limit."""
    hardware = parse_hardware(fully_connected(2, bandwidth_gb_per_s=1.0))
    options = PlaceOptions(time_limit_s=5, deterministic=True)
    results = {gain: place(parse_graph(_cells(20)), hardware, options,
                           strategy=Strategy(cone_share=0.02, cone_min_s=0.01, cones_extend_gain=gain,
                                             ancestral=NO_ANCESTRAL))
               for gain in (0.01, math.inf)}
    going_on, single = results[0.01], results[math.inf]
    assert going_on.status == "optimal" and going_on.makespan_ms == pytest.approx(141.0)
    assert going_on.stats is not None and going_on.stats.cone_passes is not None and going_on.stats.cone_passes > 2
    assert single.status == "feasible" and single.lower_bound_ms < 141.0 - 1.0


def test_a_cone_pass_stops_at_its_limits() -> None:
    g, hw = _two_branches()
    problem = build_problem(parse_graph(g), parse_hardware(hw))
    capped = raise_by_cones(problem, Budget(10.0, deterministic=True), 10.0, 0.0, ConeOptions(near=0.0, max_solves=1))
    assert capped.solves == 1 and capped.stopped_by == "solves"
    assert 5.0 - TOL <= capped.bound_ms <= 6.0 + TOL


def test_a_later_call_builds_on_an_earlier_one() -> None:
    """Joins solved with cones of the same size are not solved again; what they proved stays."""
    g, hw = _two_branches()
    problem = build_problem(parse_graph(g), parse_hardware(hw))
    first = raise_by_cones(problem, Budget(10.0, deterministic=True), 10.0, 0.0, EVERY_JOIN)
    again = raise_by_cones(problem, Budget(10.0, deterministic=True), 10.0, 0.0, EVERY_JOIN, earlier=first)
    assert first.solves > 0 and again.solves == 0 and again.bound_ms == pytest.approx(first.bound_ms)
    larger = raise_by_cones(problem, Budget(10.0, deterministic=True), 10.0, 0.0,
                            ConeOptions(near=0.0, cone_ops=120), earlier=first)
    assert larger.solves > 0 and larger.bound_ms >= first.bound_ms - TOL


def test_deterministic_mode_repeats_what_the_cones_prove() -> None:
    """A communication-heavy layered graph (CCR 3) whose cheap bound is weak: the cones run
    (15% of the limit) and raise it; two deterministic solves agree to the last digit."""
    from benchmarks.graphs import fully_connected_hardware, layered

    g, hw = parse_graph(layered(40, seed=1, ccr=3.0, width=6)), parse_hardware(fully_connected_hardware(4))
    options, strategy = PlaceOptions(time_limit_s=5, deterministic=True, threads=2), Strategy(ancestral=NO_ANCESTRAL)
    first, second = place(g, hw, options, strategy=strategy), place(g, hw, options, strategy=strategy)
    assert first.stats is not None and second.stats is not None and first.stats.bounds_ms is not None
    assert first.stats.cone_solves and first.stats.bounds_ms["cones_communication"] > \
        first.stats.bounds_ms["communication"] + 1.0
    assert (first.status, first.makespan_ms, first.lower_bound_ms, first.placement, first.stats.bounds_ms) == \
        (second.status, second.makespan_ms, second.lower_bound_ms, second.placement, second.stats.bounds_ms)


def test_a_pass_that_raises_nothing_gives_up() -> None:
    """Two fork-joins in series with free transfers: the cheap heads are exact, so no cone can
    raise them; with probe 0 each pass stops after its first sub-solve."""
    ops = [(name, 1.0) for name in ("s", "a", "b", "j", "c", "d", "k")]
    edges = [("s", "a", 0), ("s", "b", 0), ("a", "j", 0), ("b", "j", 0), ("j", "c", 0), ("j", "d", 0),
             ("c", "k", 0), ("d", "k", 0)]
    problem = build_problem(parse_graph(graph(ops, edges)), parse_hardware(fully_connected(2)))

    def run(probe: float) -> ConeBound:
        return raise_by_cones(problem, Budget(10.0, deterministic=True), 10.0, 0.0, ConeOptions(near=0.0, probe=probe))

    patient, impatient = run(1.0), run(0.0)
    assert patient.raised == 0 and patient.solves == 4 and patient.stopped_by == "done"
    assert impatient.solves == 2 and impatient.stopped_by == "no gain"
    assert impatient.bound_ms == pytest.approx(patient.bound_ms)
