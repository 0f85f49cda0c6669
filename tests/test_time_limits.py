"""Every back end keeps its time limit by construction: the MILP gets only the time the
heuristics left (building included), a solve past its deadline is killed, and the answer is
then the heuristic incumbent as `feasible`. (How close to the limit runs end is measured by
benchmarks/limits.py, never asserted here.)"""
from __future__ import annotations

import re
import time
from typing import Any

import pytest

from benchmarks.graphs import fully_connected_hardware, layered, training_step
from placer.ancestral_loads import AncestralOptions
from placer.bounds import lower_bound_ms
from placer.engine import PlaceOptions, Strategy, place
from placer.formulations.milp import build_milp
from placer.heuristics import heft
from placer.model import build_problem
from placer.progress import Progress
from placer.schema import parse_graph, parse_hardware
from placer.validate import check_result
from tests.conftest import EXACT

MILP = [s for s in ("cbc", "highs") if s in EXACT]
GRAPH = layered(24, seed=3)
HARDWARE = fully_connected_hardware(4)
# the ancestral loads prove GRAPH optimal before any MILP (one device is best there): off, the MILP runs
NO_ANCESTRAL = AncestralOptions(region_ops=0)


def _baselines_best(result: Any) -> float:
    return min(v for v in result.baselines.model_dump().values() if v is not None)


@pytest.mark.parametrize("solver", MILP)
def test_a_killed_milp_answers_with_the_heuristic_incumbent(solver: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A solver that ignores its own limit (as CBC does while reading a big model). The limit
    leaves the heuristics and the build seconds to spare on a loaded machine: at 1 s, with two
    other solves running, the MILP was once skipped for want of time."""
    monkeypatch.setattr("solvers.pulp_milp._solve", lambda *args: time.sleep(3600))
    result = place(parse_graph(GRAPH), parse_hardware(HARDWARE), PlaceOptions(solver=solver, time_limit_s=5.0),
                   strategy=Strategy(ancestral=NO_ANCESTRAL))
    assert result.status == "feasible"
    assert result.stats.solver_reason == "killed at the hard deadline"
    assert result.makespan_ms is not None and result.makespan_ms <= _baselines_best(result)


@pytest.mark.parametrize("solver", MILP)
def test_the_milp_gets_only_the_time_left(solver: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import solvers.pulp_milp

    limits: list[float] = []
    real = solvers.pulp_milp.solve_milp

    def spy(prob: Any, backend: str, time_limit_s: float, **kwargs: Any) -> Any:
        limits.append(time_limit_s)
        return real(prob, backend, time_limit_s, **kwargs)

    monkeypatch.setattr(solvers.pulp_milp, "solve_milp", spy)
    strategy = Strategy(ancestral=NO_ANCESTRAL)
    result = place(parse_graph(GRAPH), parse_hardware(HARDWARE), PlaceOptions(solver=solver, time_limit_s=2.0),
                   strategy=strategy)
    assert result.status in ("optimal", "feasible")
    assert len(limits) == 1 and 0 < limits[0] <= 2.0 - strategy.milp_finish_s


@pytest.mark.parametrize("solver", MILP)
def test_no_time_left_for_the_milp_answers_with_the_heuristic_incumbent(solver: str) -> None:
    strategy = Strategy(milp_finish_s=10.0, ancestral=NO_ANCESTRAL)  # whatever the limit, nothing is left for the MILP
    result = place(parse_graph(GRAPH), parse_hardware(HARDWARE), PlaceOptions(solver=solver, time_limit_s=2.0),
                   strategy=strategy)
    assert result.status == "feasible"
    assert result.makespan_ms is not None and result.makespan_ms <= _baselines_best(result)
    assert result.stats.solver_reason.startswith("not run: no time left for the MILP")


def test_a_milp_past_its_build_deadline_is_not_built() -> None:
    p = build_problem(parse_graph(GRAPH), parse_hardware(HARDWARE))
    incumbent = heft(p)
    assert build_milp(p, "shortest", incumbent, lower_bound_ms(p), deadline=time.perf_counter() - 1.0) is None
    built = build_milp(p, "shortest", incumbent, lower_bound_ms(p), deadline=time.perf_counter() + 3600.0)
    assert built is not None and built.stats["disjunctions"] > 0


def test_time_the_polish_leaves_goes_to_cpsat_again() -> None:
    """Deterministic, so the same on any load: a 60-op training step on 2 GPUs ends unproven
    (12% gap); with the gap test of the leftover cones lifted, the time the polish leaves goes
    to a second CP-SAT solve from the polished incumbent (one more call), never to a worse
    answer than without it. Without the window search, whose second pass would take that time."""
    g, hw = parse_graph(training_step(layered(30, seed=2, width=4))), parse_hardware(fully_connected_hardware(2))
    options = PlaceOptions(time_limit_s=3.0, deterministic=True)
    once = place(g, hw, options, strategy=Strategy(cone_min_gap=1.0, cpsat_again_min_share=1.0, windows_share=0.0))
    again = place(g, hw, options, strategy=Strategy(cone_min_gap=1.0, windows_share=0.0))
    assert once.status == again.status == "feasible"
    assert once.stats.cpsat_again_s is None
    assert again.stats.cpsat_again_s is not None and again.stats.cpsat_again_s > 0
    assert again.stats.cpsat_calls == once.stats.cpsat_calls + 1
    assert again.makespan_ms <= once.makespan_ms
    check_result(g, hw, again)


def test_the_polish_kicks_only_after_an_unproductive_cpsat_solve() -> None:
    """Deterministic: the case above with CP-SAT judged productive whatever it gains, and
    never: only the second polish goes on with kicks after climbing (no window search, as above).
    One worker: the judge is cpsat_productive_gain_one_worker (the other gain says the opposite)."""
    g, hw = parse_graph(training_step(layered(30, seed=2, width=4))), parse_hardware(fully_connected_hardware(2))
    options = PlaceOptions(time_limit_s=3.0, deterministic=True)
    productive = place(g, hw, options, strategy=Strategy(cpsat_productive_gain_one_worker=0.0, cpsat_productive_gain=1.0,
                                                           windows_share=0.0))
    unproductive = place(g, hw, options, strategy=Strategy(cpsat_productive_gain_one_worker=1.0, cpsat_productive_gain=0.0,
                                                             windows_share=0.0))
    assert productive.stats.cpsat_productive is True and not productive.stats.moves_kicks
    assert unproductive.stats.cpsat_productive is False
    assert unproductive.stats.moves_kicks is not None and unproductive.stats.moves_kicks > 0
    for result in (productive, unproductive):
        assert result.status == "feasible"
        check_result(g, hw, result)


def _cpsat_limit_s(events: list[Progress]) -> float:
    """The monolithic CP-SAT solve's limit, as its progress message gives it."""
    (message,) = [e.message for e in events if e.phase == "cpsat" and e.message.startswith("solving")]
    return float(re.search(r"limit ([0-9.]+) s", message).group(1))


def test_one_cpsat_worker_leaves_half_the_time_after_it_to_the_polish() -> None:
    """Deterministic, so CP-SAT runs one worker and the time before its solve is the same work
    in both runs: on a graph up to big_model_ops the solve gets 1 - polish_share_one_worker of
    the time left, the polish the rest; with polish_share_one_worker = polish_share, the 10% of
    wall-clock mode with two workers (no window search, so that the solve runs)."""
    g, hw = parse_graph(training_step(layered(30, seed=2, width=4))), parse_hardware(fully_connected_hardware(2))
    options = PlaceOptions(time_limit_s=3.0, deterministic=True)
    limits = []
    for share in (0.5, Strategy().polish_share):
        events: list[Progress] = []
        result = place(g, hw, options, progress=events.append,
                       strategy=Strategy(polish_share_one_worker=share, windows_share=0.0))
        check_result(g, hw, result)
        limits.append(_cpsat_limit_s(events))
    assert Strategy().polish_share_one_worker == 0.5
    assert limits[0] / limits[1] == pytest.approx(0.5 / (1 - Strategy().polish_share), abs=0.05)


def test_an_unproductive_one_worker_cpsat_solve_is_followed_by_neighbourhood_search() -> None:
    """Deterministic, so CP-SAT runs one worker and none of its own LNS: the case above with
    CP-SAT judged productive whatever it gains, and never: only the second searches
    neighbourhoods of its incumbent (placer.neighbourhood) before the polish (no window search:
    its windows prove this graph optimal before)."""
    g, hw = parse_graph(training_step(layered(30, seed=2, width=4))), parse_hardware(fully_connected_hardware(2))
    options = PlaceOptions(time_limit_s=3.0, deterministic=True)
    both = {"lns_min_s": 0.01, "windows_share": 0.0}  # short neighbourhood steps, no windows
    productive = place(g, hw, options, strategy=Strategy(cpsat_productive_gain_one_worker=0.0, cpsat_productive_gain=1.0,
                                                           **both))
    unproductive = place(g, hw, options, strategy=Strategy(cpsat_productive_gain_one_worker=1.0, cpsat_productive_gain=0.0,
                                                             **both))
    assert productive.stats.neighbourhood_steps is None
    assert unproductive.stats.neighbourhood_steps is not None and unproductive.stats.neighbourhood_steps > 0
    for result in (productive, unproductive):
        assert result.status == "feasible"
        check_result(g, hw, result)


def test_a_big_graph_without_time_for_its_monolithic_model_still_gets_group_moves() -> None:
    """Deterministic: a decomposed graph treated as big (`monolithic_max_ops`), unproven after
    its decomposition, with less time left than `monolithic_min_share` asks for: the
    monolithic model is skipped, the group moves before it are not. (On a memory-tight
    machine the stitched answer may be lost, and they are all that improves on the
    heuristics: per-head BERT-12 on a tight DGX-1, 41.25 -> 40.32 ms.)"""
    from benchmarks.graphs import separated_training

    # (seed 2's moves meet the bound since the chain moves: proven before the skip)
    g = parse_graph(separated_training(training_step(layered(60, seed=1, ccr=1.0))))
    hw = parse_hardware(fully_connected_hardware(4, link_gb_per_s=10.0, latency_us=0))
    r = place(g, hw, PlaceOptions(time_limit_s=4, threads=1, deterministic=True),
              strategy=Strategy(monolithic_max_ops=50, monolithic_min_share=1.0))
    assert r.status == "feasible" and r.stats.decomposition_components
    assert r.stats.cpsat_skipped is not None and "too little time for the monolithic model" in r.stats.cpsat_skipped
    assert r.stats.moves_evaluations is not None and r.stats.moves_evaluations > 0
    assert check_result(g, hw, r) == []
