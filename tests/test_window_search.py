"""Window search (placer.window_search): every answer valid, exact when the window holds the
whole graph, and never a longer incumbent.

Sub-solves run in deterministic mode (CP-SAT work limits), so the outcome does not depend on
the machine's load."""
from __future__ import annotations

import math
import random
from collections.abc import Callable

import pytest

from placer.budget import Budget
from placer.engine import PlaceOptions, Strategy, place
from placer.heuristics import heft, single_device
from placer.model import Problem
from placer.repair import is_placement_feasible
from placer.schedule import Schedule, Solution, retime
from placer.schema import parse_graph, parse_hardware
from placer.window_search import (
    WindowOptions,
    _hint_ticks,
    _Incumbent,
    _solve_window,
    _window,
    improve_by_windows,
    tails_ms,
)
from tests.reference import brute_force_makespan
from tests.conftest import RecordingBudget, fully_connected
from tests.test_bounds import _mirror_case, _problem, _random_case

TOL = 1e-6
CASES = [(_random_case, seed) for seed in range(0, 120, 3)] + [(_mirror_case, seed) for seed in range(0, 60, 3)]
IDS = [f"{m.__name__.strip('_')}-{s}" for m, s in CASES]


def _checked(problem: Problem, schedule: Schedule) -> Schedule:
    """The schedule, after checking it as the engine's gate does: a valid placement, and the
    times its own placement and order give."""
    assert is_placement_feasible(problem, schedule.solution.device)
    again = retime(problem, schedule.solution)
    assert again.start_ms == schedule.start_ms and again.end_ms == schedule.end_ms
    for e in problem.edges:
        assert schedule.start_ms[e.dst] >= schedule.end_ms[e.src] - TOL
    return schedule


def _search(problem: Problem, start: Schedule, options: WindowOptions, work: float = 50.0
            ) -> tuple[Schedule, dict[str, int]]:
    best = [start]

    def offer(schedule: Schedule, source: str) -> Schedule:
        assert schedule.makespan_ms < best[0].makespan_ms
        best[0] = _checked(problem, schedule)
        return schedule

    counts = improve_by_windows(problem, start, Budget(work, deterministic=True), work, 0, offer,
                                lambda s: False, options)
    return best[0], counts


@pytest.mark.parametrize(("make", "seed"), CASES, ids=IDS)
def test_tails_are_the_longest_paths_to_the_end(make: Callable, seed: int) -> None:
    g, hw, _ = make(seed)
    problem = _problem(g, hw)
    schedule = heft(problem)
    if schedule is None:
        pytest.skip("no placement fits memory")
    tail = tails_ms(problem, schedule)
    for k in range(problem.n_ops):
        assert schedule.end_ms[k] - schedule.start_ms[k] - TOL <= tail[k]
        assert schedule.start_ms[k] + tail[k] <= schedule.makespan_ms + TOL
    assert max(s + t for s, t in zip(schedule.start_ms, tail)) == pytest.approx(schedule.makespan_ms)


@pytest.mark.parametrize(("make", "seed"), CASES, ids=IDS)
def test_a_window_over_the_whole_graph_finds_the_optimum(make: Callable, seed: int) -> None:
    """From the single-device schedule (else HEFT's) a window holding every op re-places and
    re-orders everything: the exhaustive optimum, up to the model's rounding of durations."""
    g, hw, t = make(seed)
    optimum = brute_force_makespan(t["times"], t["edges"], t["delay"], t["memory"], t["capacity"], t["groups"])
    problem = _problem(g, hw)
    start = single_device(problem) or heft(problem)
    if optimum is None or start is None:
        pytest.skip("no placement fits memory")
    whole = WindowOptions(initial_ops=problem.n_ops, min_ops=problem.n_ops, step_s=10.0, max_steps=3)
    best, counts = _search(problem, start, whole)
    assert counts["closed"] >= 1
    assert optimum - TOL <= best.makespan_ms <= optimum * (1 + 1e-3) + TOL, (best.makespan_ms, optimum)


def test_windows_shorten_a_layered_graph_and_keep_memory() -> None:
    """A communication-heavy layered graph on memory-tight GPUs: small windows (10-20 ops of
    120) improve HEFT's answer, and every improvement is valid."""
    from benchmarks.graphs import fully_connected_hardware, layered, memory_tight

    g = layered(120, seed=3, ccr=2.0, width=6)
    for i, op in enumerate(g["ops"]):
        op["memory_bytes"] = 1_000_000 * (1 + i % 5)
    problem = _problem(g, memory_tight(fully_connected_hardware(4), g, slack=1.1))
    start = heft(problem)
    assert start is not None
    best, counts = _search(problem, start, WindowOptions(initial_ops=10, max_ops=20, step_s=0.5, max_steps=40))
    assert counts["steps"] == 40 and counts["improved"] >= 1
    assert best.makespan_ms < start.makespan_ms


def test_the_engine_reports_windows_and_repeats_them_in_deterministic_mode() -> None:
    from benchmarks.graphs import fully_connected_hardware, layered

    g, hw = parse_graph(layered(80, seed=2, ccr=2.0, width=6)), parse_hardware(fully_connected_hardware(4))
    options = PlaceOptions(time_limit_s=4, deterministic=True, threads=2)
    strategy = Strategy(windows_share=0.9)
    phases: list[str] = []
    first = place(g, hw, options, progress=lambda p: phases.append(p.phase), strategy=strategy)
    second = place(g, hw, options, strategy=strategy)
    assert "windows" in phases
    assert first.stats is not None and first.stats.windows_steps
    assert (first.status, first.makespan_ms, first.placement) == (second.status, second.makespan_ms, second.placement)
    assert first.baselines is not None and first.makespan_ms <= first.baselines.heft_ms + TOL


def test_a_window_pass_that_gains_is_followed_by_another() -> None:
    """`Strategy.windows_extend_gain`: at 0 every pass is followed by another while time is left;
    at 1 (a gain of 100%) none is. Cones are off: their time would change the passes' share."""
    from benchmarks.graphs import fully_connected_hardware, layered

    g, hw = parse_graph(layered(80, seed=2, ccr=2.0, width=6)), parse_hardware(fully_connected_hardware(4))
    options = PlaceOptions(time_limit_s=4, deterministic=True, threads=2)
    once = place(g, hw, options, strategy=Strategy(windows_share=0.3, windows_extend_gain=1.0, cone_share=0.0))
    again = place(g, hw, options, strategy=Strategy(windows_share=0.3, windows_extend_gain=0.0, cone_share=0.0))
    assert once.stats is not None and once.stats.windows_passes == 1
    assert again.stats is not None and again.stats.windows_passes is not None and again.stats.windows_passes >= 2
    assert again.stats.windows_steps is not None and once.stats.windows_steps is not None
    assert again.stats.windows_steps > once.stats.windows_steps


def _separated_chains_on_one_device() -> tuple[Problem, Schedule]:
    """Forward chain f0..f3 and backward chain b3..b0 of 1 ms ops, separate components, op i of
    each in group i (a separated training graph's shape), on 2 GPUs; the incumbent runs all of
    it on gpu0 in the order f0 b3 f1 b2 f2 b1 f3 b0 (8 ms). Group 0's ops come first and last."""
    fwd, bwd = [f"f{i}" for i in range(4)], [f"b{i}" for i in range(4)]
    ops = [{"id": x, "time_ms": 1.0, "group": f"g{x[1]}"} for x in fwd + bwd]
    edges = [{"src": a, "dst": b, "bytes": 0} for chain in (fwd, bwd[::-1]) for a, b in zip(chain, chain[1:])]
    g = {"format": "placer.graph/v1", "name": "separated-chains", "ops": ops, "edges": edges}
    problem = _problem(g, fully_connected(2))
    order = [problem.ops.index(x) for x in ("f0", "b3", "f1", "b2", "f2", "b1", "f3", "b0")]
    return problem, retime(problem, Solution(device=[0] * problem.n_ops, order=[order, []]))


def test_a_group_window_is_a_stretch_around_each_of_its_ops_far_apart() -> None:
    """Group 0's ops lie 8 positions apart: its window is two stretches (f0's, b0's), the six
    ops between them frozen. Moving the group to the idle gpu1 is the gain (8 -> 6 ms): b0
    must not take gpu0 while frozen f3 holds it, which is what makes gpu1 the better device."""
    problem, incumbent = _separated_chains_on_one_device()
    f0, b0 = problem.ops.index("f0"), problem.ops.index("b0")
    current = _Incumbent(incumbent, sorted(incumbent.start_ms), [f0], tails_ms(problem, incumbent))
    window = _window(problem, current, "group", 2, 8, random.Random(0))
    assert window == [(0.0, 1.0), (7.0, math.inf)]
    answer = _solve_window(problem, current, window, Budget(10, deterministic=True), 5.0)
    assert answer is not None
    moved, closed = answer
    _checked(problem, moved)
    assert closed and moved.solution.device[f0] == moved.solution.device[b0] == 1
    assert moved.makespan_ms == pytest.approx(6.0)


def test_a_window_is_solved_without_presolve_and_without_the_lp() -> None:
    """Window models minimise an exit time under enforced precedences: CP-SAT's LP relaxation
    of that is weak and costs each node (benchmarks/reports/2026-12-02-windows-without-lp)."""
    problem, incumbent = _separated_chains_on_one_device()
    budget = RecordingBudget(10)
    window = [(0.0, 1.0), (7.0, math.inf)]
    assert _solve_window(problem, _Incumbent.of(problem, incumbent), window, budget, 5.0) is not None
    assert budget.calls == [{"presolve": False, "linear_relaxation": False}]


def test_group_windows_on_separated_graphs_give_valid_answers_only() -> None:
    """Small windows on forward/backward copies (groups far apart in time, so group windows
    are several stretches with frozen ops between): every accepted answer is checked."""
    for seed in range(0, 60, 3):
        g, hw, _ = _mirror_case(seed)
        problem = _problem(g, hw)
        start = single_device(problem) or heft(problem)
        if start is None:
            continue
        best, counts = _search(problem, start, WindowOptions(initial_ops=2, min_ops=2, max_ops=4, max_steps=30))
        assert counts["steps"] >= 1 and best.makespan_ms <= start.makespan_ms + TOL


@pytest.mark.parametrize(("make", "seed"), CASES, ids=IDS)
def test_hints_keep_every_dependency_and_device_order_in_ticks(make: Callable, seed: int) -> None:
    """The hint of a window over the whole graph, in ticks that do not divide the durations:
    every input and every device predecessor ends (with its rounded-up transfer) before each
    op's hinted start, so the model accepts its own incumbent."""
    g, hw, _ = make(seed)
    problem = _problem(g, hw)
    schedule = heft(problem)
    if schedule is None:
        pytest.skip("no placement fits memory")
    tick = schedule.makespan_ms / 997

    def up(ms: float) -> int:
        return max(0, math.ceil(ms / tick - 1e-9))

    device = schedule.solution.device

    def delay(i: int, a: int, b: int) -> float:
        return problem.delay_ms(problem.edges[i], a, b) if a != b else 0.0

    hint = _hint_ticks(problem, schedule, list(range(problem.n_ops)), 0.0, up, delay)
    assert sorted(hint) == list(range(problem.n_ops))
    for k in range(problem.n_ops):
        assert hint[k] >= up(schedule.start_ms[k])
    for i, e in enumerate(problem.edges):
        assert hint[e.dst] >= hint[e.src] + up(problem.time_ms[e.src][device[e.src]]) \
            + up(delay(i, device[e.src], device[e.dst]))
    for seq in schedule.solution.order:
        for a, b in zip(seq, seq[1:]):
            assert hint[b] >= hint[a] + max(1, up(problem.time_ms[a][device[a]]))
